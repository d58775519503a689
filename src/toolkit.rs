//! CUDA toolkits (DESIGN.md §4): finding them, reading their CUDA version, and
//! where cuDNN files go inside them. The layout is data chosen by the
//! toolkit's content (and the host as a tie-breaker), so Linux tests exercise
//! Windows toolkits too.
//!
//! Sources of facts (cudnn-facts §7.4): Windows toolkits live in
//! `C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\vX.Y` with `bin`,
//! `include`, `lib\x64`, and the installer sets `CUDA_PATH` and
//! `CUDA_PATH_VX_Y`; Linux toolkits live in `/usr/local/cuda-X.Y` (with
//! `/usr/local/cuda` pointing at one of them) and keep their libraries in
//! `lib64 -> targets/<arch>/lib`. The CUDA version is in `version.json`
//! (11.1+), `version.txt` (up to 11.0) or `CUDA_VERSION` in `include/cuda.h`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use crate::env::{self, Env};
use crate::error::{Error, Kind, Result};
use crate::version::Version;

/// Which folder layout a toolkit uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// `bin`, `include`, `lib\x64` (NVIDIA's Windows installer).
    Windows,
    /// `include`, `lib64` (following `lib64 -> targets/x86_64-linux/lib`).
    Linux,
}

impl Layout {
    /// `windows` or `linux`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Layout::Windows => "windows",
            Layout::Linux => "linux",
        }
    }

    /// Whether a file name counts as a cuDNN file in this layout: it starts
    /// with `cudnn` or `libcudnn` (ASCII case-insensitive in the Windows
    /// layout, whose file systems ignore case) and reads as a cuDNN header or
    /// library ([`crate::names::is_cudnn_file`]) — not a
    /// cudnn-frontend header, a sample or a note that merely shares the prefix.
    pub fn is_cudnn_name(&self, name: &str) -> bool {
        let lower;
        let n = match self {
            Layout::Windows => {
                lower = name.to_ascii_lowercase();
                lower.as_str()
            }
            Layout::Linux => name,
        };
        (n.starts_with("cudnn") || n.starts_with("libcudnn")) && crate::names::is_cudnn_file(name)
    }
}

/// A CUDA toolkit root.
#[derive(Clone, Debug, Serialize)]
pub struct Toolkit {
    /// The toolkit root (`C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.2`, `/usr/local/cuda-12.4`).
    pub root: PathBuf,
    /// Its CUDA version (`11.2.152`, `8.0.61`; at least major.minor).
    pub cuda: Version,
    /// Folder layout.
    pub layout: Layout,
    /// How it was found (`--cuda-root`, `CUDA_PATH`, `nvcc on PATH`, `default folder`, …).
    pub found_by: String,
}

impl Toolkit {
    /// Where cuDNN DLLs go (`bin`), Windows layout only.
    pub fn bin_dir(&self) -> Option<PathBuf> {
        match self.layout {
            Layout::Windows => Some(self.root.join("bin")),
            Layout::Linux => None,
        }
    }

    /// Where cuDNN headers go.
    pub fn include_dir(&self) -> PathBuf {
        self.root.join("include")
    }

    /// Where cuDNN libraries go: `lib\x64` (Windows) or `lib64` (Linux).
    pub fn lib_dir(&self) -> PathBuf {
        match self.layout {
            Layout::Windows => self.root.join("lib").join("x64"),
            Layout::Linux => self.root.join("lib64"),
        }
    }

    /// Every folder that holds cuDNN files in this layout: `bin`, `include`,
    /// `lib\x64` (Windows); `include`, `lib64`, and on Linux also the host's
    /// `targets/<arch>/include` and `targets/<arch>/lib` when they are
    /// folders of their own. NVIDIA's toolkit links `lib64` and `include`
    /// to those, but a toolkit whose `lib64` is a real folder (copied,
    /// repackaged) has two library folders, and the loader finds the second
    /// through the `targets/<arch>/lib` line NVIDIA's packages add to
    /// `/etc/ld.so.conf.d`: a stale cuDNN left there is loaded instead of
    /// the deployed one. Cross-compilation targets (`targets/aarch64-linux`
    /// on an x86_64 host) are not the host's, and a `targets/<arch>/lib`
    /// that links out of the root is another package's: both are left alone.
    pub fn cudnn_dirs(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = self.bin_dir().into_iter().collect();
        v.push(self.include_dir());
        v.push(self.lib_dir());
        if self.layout == Layout::Linux
            && let Some(arch) = host_target_dir()
        {
            let target = self.root.join("targets").join(arch);
            let root = std::fs::canonicalize(&self.root).unwrap_or_else(|_| self.root.clone());
            for (sub, main) in [("include", self.include_dir()), ("lib", self.lib_dir())] {
                let dir = target.join(sub);
                // Only a folder of the toolkit's own: a link out of the root
                // (to /usr/lib/x86_64-linux-gnu, say) is another package's,
                // outside the toolkit lock.
                let Ok(real) = std::fs::canonicalize(&dir) else {
                    continue;
                };
                if real.starts_with(&root) && std::fs::canonicalize(&main).ok() != Some(real) {
                    v.push(dir);
                }
            }
        }
        v
    }

    /// The toolkit at `root`, `found_by` naming how it was found. The root is
    /// made absolute and its links resolved (`/usr/local/cuda` →
    /// `/usr/local/cuda-12.4`), so one toolkit has one identity.
    /// `windows_host` breaks the tie when the content does not show the layout.
    ///
    /// # Errors
    /// [`Kind::NotFound`] when `root` is not a folder or holds no CUDA version.
    pub fn at(root: &Path, found_by: &str, windows_host: bool) -> Result<Toolkit> {
        if std::fs::metadata(root).is_ok_and(|m| !m.is_dir()) {
            return Err(Error::new(
                Kind::NotFound,
                format!("'{}' is a file, not a CUDA toolkit folder", root.display()),
            )
            .hint("pass the toolkit root folder (the one holding include/ and lib64/ or lib\\x64\\), e.g. --cuda-root /usr/local/cuda-12.4; `cudnnm toolkits` lists those found"));
        }
        if !root.is_dir() {
            return Err(Error::new(
                Kind::NotFound,
                format!("CUDA toolkit folder '{}' does not exist", root.display()),
            )
            .hint("pass the toolkit root, e.g. --cuda-root /usr/local/cuda-12.4 or --cuda-root \"C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\"; `cudnnm toolkits` lists those found"));
        }
        let root = canonical(root);
        let layout = detect_layout(&root, windows_host);
        let cuda = read_cuda_version_for(&root, layout)?;
        Ok(Toolkit {
            root,
            cuda,
            layout,
            found_by: found_by.to_string(),
        })
    }

    /// `major.minor` of the toolkit's CUDA.
    pub fn cuda_major_minor(&self) -> (u32, u32) {
        (self.cuda.major(), self.cuda.minor())
    }

    /// The toolkit's CUDA as `X.Y`.
    pub fn cuda_short(&self) -> String {
        format!("{}.{}", self.cuda.major(), self.cuda.minor())
    }

    /// The cuDNN version its headers declare (`cudnn_version.h`, else
    /// `cudnn.h`), if it holds cuDNN headers at all. Whoever put them there.
    /// `include` first, then a `targets/<arch>/include` of its own (see
    /// [`Toolkit::cudnn_dirs`]).
    pub fn header_cudnn_version(&self) -> Option<Version> {
        self.cudnn_dirs()
            .iter()
            .filter(|d| d.file_name().is_some_and(|n| n == "include"))
            .find_map(|d| header_cudnn_version(d))
    }
}

/// Resolves links and makes `p` absolute, without Windows' `\\?\` prefix
/// ([`crate::fsops::canonical`]); `p` itself when it cannot be resolved.
fn canonical(p: &Path) -> PathBuf {
    crate::fsops::canonical_or_self(p)
}

/// The host's folder under a Linux toolkit's `targets/` (CUDA installation
/// guide for Linux: `x86_64-linux`, `sbsa-linux` for Arm servers,
/// `ppc64le-linux`); `None` on other architectures.
fn host_target_dir() -> Option<&'static str> {
    match std::env::consts::ARCH {
        "x86_64" => Some("x86_64-linux"),
        "aarch64" => Some("sbsa-linux"),
        "powerpc64" => Some("ppc64le-linux"),
        _ => None,
    }
}

/// The layout of the toolkit at `root`, by content: `lib/x64`, `bin/nvcc.exe`
/// or `bin/cudart64_*.dll` mean Windows; `lib64` or `targets/` mean Linux;
/// otherwise the host decides (`windows_host`).
pub fn detect_layout(root: &Path, windows_host: bool) -> Layout {
    if root.join("lib").join("x64").is_dir() || root.join("bin").join("nvcc.exe").is_file() {
        return Layout::Windows;
    }
    if let Ok(rd) = std::fs::read_dir(root.join("bin")) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().to_ascii_lowercase();
            if n.starts_with("cudart64_") && n.ends_with(".dll") {
                return Layout::Windows;
            }
        }
    }
    if root.join("lib64").exists() || root.join("targets").is_dir() {
        return Layout::Linux;
    }
    if windows_host {
        Layout::Windows
    } else {
        Layout::Linux
    }
}

/// Reads the CUDA version of the toolkit at `root`: `version.json` (11+),
/// `version.txt` (10.x and before), `CUDA_VERSION` in `include/cuda.h`, and
/// as a last resort `bin/nvcc --version`.
///
/// # Errors
/// [`Kind::NotFound`] when none of those gives a version (the causes name
/// what was tried and any file that could not be parsed).
pub fn read_cuda_version(root: &Path) -> Result<Version> {
    read_cuda_version_for(root, detect_layout(root, cfg!(windows)))
}

fn read_cuda_version_for(root: &Path, layout: Layout) -> Result<Version> {
    let mut causes = Vec::new();
    let json = root.join("version.json");
    if let Ok(text) = std::fs::read_to_string(&json) {
        match serde_json::from_str::<serde_json::Value>(&text) {
            Err(e) => causes.push(format!("'{}' is not valid JSON ({e})", json.display())),
            Ok(_) => match parse_version_json(&text) {
                Some(v) => return Ok(v),
                None => causes.push(format!("'{}' has no readable cuda.version", json.display())),
            },
        }
    }
    let txt = root.join("version.txt");
    if let Ok(text) = std::fs::read_to_string(&txt) {
        match parse_version_txt(&text) {
            Some(v) => return Ok(v),
            None => causes.push(format!(
                "'{}' has no 'CUDA Version X.Y' line",
                txt.display()
            )),
        }
    }
    let cuda_h = root.join("include").join("cuda.h");
    if let Ok(text) = std::fs::read_to_string(&cuda_h) {
        match parse_cuda_h(&text) {
            Some(v) => return Ok(v),
            None => causes.push(format!(
                "'{}' has no '#define CUDA_VERSION'",
                cuda_h.display()
            )),
        }
    }
    let nvcc = root.join("bin").join(match layout {
        Layout::Windows => "nvcc.exe",
        Layout::Linux => "nvcc",
    });
    if nvcc.is_file() {
        match Command::new(&nvcc).arg("--version").output() {
            Ok(out) => match parse_nvcc_output(&String::from_utf8_lossy(&out.stdout)) {
                Some(v) => return Ok(v),
                None => causes.push(format!(
                    "'{} --version' printed no 'release X.Y'",
                    nvcc.display()
                )),
            },
            Err(e) => causes.push(format!("could not run '{}': {e}", nvcc.display())),
        }
    }
    let mut err = Error::new(
        Kind::NotFound,
        format!("could not read the CUDA version of '{}'", root.display()),
    )
    .hint("a CUDA toolkit root holds version.json (CUDA 11+), version.txt (CUDA 10 and before) or include/cuda.h; pass the toolkit root itself, e.g. --cuda-root /usr/local/cuda-12.4");
    if causes.is_empty() {
        err = err.cause("it has no version.json, version.txt, include/cuda.h or bin/nvcc");
    }
    for c in causes {
        err = err.cause(c);
    }
    Err(err)
}

/// `version.json` (CUDA 11.1+): `{"cuda": {"name": "CUDA SDK", "version": "11.5.2"}, …}`.
/// Runfile installs may carry a date as the patch (`"11.8.20220929"`); such a
/// patch is dropped, keeping `11.8`.
pub fn parse_version_json(text: &str) -> Option<Version> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let s = v.get("cuda")?.get("version")?.as_str()?;
    parse_toolkit_version(s)
}

/// `version.txt` (CUDA ≤ 11.0): a line `CUDA Version 10.1.243`.
pub fn parse_version_txt(text: &str) -> Option<Version> {
    text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("CUDA Version")?;
        parse_toolkit_version(rest.trim())
    })
}

/// `include/cuda.h`: `#define CUDA_VERSION 11020` (major × 1000 + minor × 10).
pub fn parse_cuda_h(text: &str) -> Option<Version> {
    text.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        if w.next()? != "#define" || w.next()? != "CUDA_VERSION" {
            return None;
        }
        let n: u32 = w.next()?.parse().ok()?;
        if n < 1000 {
            return None;
        }
        Some(Version::from_parts(&[n / 1000, (n % 1000) / 10]))
    })
}

/// `nvcc --version`: `Cuda compilation tools, release 11.2, V11.2.152` →
/// `11.2.152` (the `V…` part when present, else the release).
pub fn parse_nvcc_output(text: &str) -> Option<Version> {
    let line = text.lines().find(|l| l.contains("release "))?;
    if let Some(i) = line.rfind(", V")
        && let Some(v) = parse_toolkit_version(line[i + 3..].trim())
    {
        return Some(v);
    }
    let rest = &line[line.find("release ")? + 8..];
    parse_toolkit_version(rest.split(',').next()?.trim())
}

/// `12.4.1` → `12.4.1`; `11.8.20220929` → `11.8`; needs at least major.minor.
fn parse_toolkit_version(s: &str) -> Option<Version> {
    let nums: Vec<u32> = s
        .split('.')
        .map(|p| p.trim().parse::<u32>().ok())
        .collect::<Option<Vec<_>>>()?;
    match nums.as_slice() {
        [ma, mi] => Some(Version::from_parts(&[*ma, *mi])),
        [ma, mi, pa, ..] if *pa < 10_000 => Some(Version::from_parts(&[*ma, *mi, *pa])),
        [ma, mi, ..] => Some(Version::from_parts(&[*ma, *mi])),
        _ => None,
    }
}

/// The cuDNN version declared by the headers in `include`: `CUDNN_MAJOR`,
/// `CUDNN_MINOR`, `CUDNN_PATCHLEVEL` from `cudnn_version.h` (cuDNN 8+), else
/// `cudnn.h` (cuDNN 7 and before) — field case F22. See [`crate::archive::header`].
pub fn header_cudnn_version(include: &Path) -> Option<Version> {
    crate::archive::header::version_in(include)
}

/// Where to look for toolkits besides the environment: parent folders whose
/// children named `prefix…` are toolkit roots, and single candidate roots.
#[derive(Clone, Debug, Default)]
pub struct DefaultFolders {
    /// Single roots tried first, in order (`/usr/local/cuda`).
    pub roots: Vec<PathBuf>,
    /// `(parent, prefix)`: every child of `parent` whose name starts with
    /// `prefix` (`/usr/local`, `cuda-`; `…\CUDA`, `v`), newest version first.
    pub scans: Vec<(PathBuf, String)>,
}

impl DefaultFolders {
    /// The platform's default install folders for `env`: Windows
    /// `%ProgramFiles%\NVIDIA GPU Computing Toolkit\CUDA\v*`; Linux
    /// `/usr/local/cuda`, `/usr/local/cuda-*`, `/opt/cuda`.
    pub fn for_env(env: &Env) -> DefaultFolders {
        if env.is_windows() {
            DefaultFolders {
                roots: Vec::new(),
                scans: vec![(windows_cuda_parent(env), "v".into())],
            }
        } else {
            DefaultFolders {
                roots: vec![PathBuf::from("/usr/local/cuda"), PathBuf::from("/opt/cuda")],
                scans: vec![(PathBuf::from("/usr/local"), "cuda-".into())],
            }
        }
    }
}

/// `%ProgramFiles%\NVIDIA GPU Computing Toolkit\CUDA` (default `C:\Program Files`).
fn windows_cuda_parent(env: &Env) -> PathBuf {
    let pf = env
        .var("ProgramFiles")
        .unwrap_or_else(|| r"C:\Program Files".to_string());
    PathBuf::from(pf)
        .join("NVIDIA GPU Computing Toolkit")
        .join("CUDA")
}

/// One place a toolkit might be, with how it was named.
#[derive(Clone, Debug)]
struct Candidate {
    root: PathBuf,
    found_by: String,
    /// Named by the user's environment (variables, nvcc on PATH) or the
    /// "current" link `/usr/local/cuda`, rather than a folder scan.
    preferred: bool,
}

/// Every toolkit found from the environment and the default install folders:
/// `CUDA_PATH`, `CUDA_HOME`, `CUDA_PATH_VX_Y`, the folder of `nvcc` on PATH,
/// then the defaults. One entry per resolved root, in that order; `found_by`
/// lists every source that named it.
pub fn discover(env: &Env) -> Vec<Toolkit> {
    discover_with(env, &DefaultFolders::for_env(env))
}

/// [`discover`] with explicit default folders (tests point them at a sandbox).
pub fn discover_with(env: &Env, defaults: &DefaultFolders) -> Vec<Toolkit> {
    discover_named_with(env, defaults)
        .into_iter()
        .map(|n| n.toolkit)
        .collect()
}

/// A toolkit found by [`discover_named`], with the paths that named it.
#[derive(Clone, Debug)]
pub struct Named {
    /// The toolkit (its root resolved, one identity per folder).
    pub toolkit: Toolkit,
    /// Every path that named it, as written (`CUDA_HOME=/usr/local/cuda`,
    /// not the resolved `/usr/local/cuda-12.4`), first source first, without
    /// duplicates. `doctor` reports a toolkit by the first, so that it reads
    /// like the variable that names it.
    pub names: Vec<PathBuf>,
}

/// [`discover`], keeping how each source spelled the root.
pub fn discover_named(env: &Env) -> Vec<Named> {
    discover_named_with(env, &DefaultFolders::for_env(env))
}

/// [`discover_named`] with explicit default folders.
pub fn discover_named_with(env: &Env, defaults: &DefaultFolders) -> Vec<Named> {
    let mut out: Vec<Named> = Vec::new();
    for c in candidates(env, defaults) {
        let Ok(t) = Toolkit::at(&c.root, &c.found_by, env.is_windows()) else {
            continue;
        };
        match out.iter_mut().find(|o| o.toolkit.root == t.root) {
            Some(o) => {
                if !o.toolkit.found_by.split(", ").any(|s| s == c.found_by) {
                    o.toolkit.found_by = format!("{}, {}", o.toolkit.found_by, c.found_by);
                }
                if !o.names.contains(&c.root) {
                    o.names.push(c.root);
                }
            }
            None => out.push(Named {
                toolkit: t,
                names: vec![c.root],
            }),
        }
    }
    out
}

fn candidates(env: &Env, defaults: &DefaultFolders) -> Vec<Candidate> {
    let mut v = Vec::new();
    for name in [env::CUDA_PATH, env::CUDA_HOME] {
        if let Some(p) = env.var(name) {
            v.push(Candidate {
                root: PathBuf::from(p),
                found_by: name.to_string(),
                preferred: true,
            });
        }
    }
    let mut versioned: Vec<(Version, String, PathBuf)> = env
        .vars()
        .filter_map(|(k, val)| {
            let k = k.to_str()?;
            let ver = cuda_path_var_version(k)?;
            Some((ver, k.to_string(), PathBuf::from(val)))
        })
        .collect();
    versioned.sort_by(|a, b| b.0.cmp(&a.0));
    for (_, k, p) in versioned {
        if !p.as_os_str().is_empty() {
            v.push(Candidate {
                root: p,
                found_by: k,
                preferred: false,
            });
        }
    }
    if let Some(root) = nvcc_root(env) {
        v.push(Candidate {
            root,
            found_by: "nvcc on PATH".into(),
            preferred: true,
        });
    }
    for r in &defaults.roots {
        v.push(Candidate {
            root: r.clone(),
            found_by: format!("default folder {}", r.display()),
            preferred: true,
        });
    }
    for (parent, prefix) in &defaults.scans {
        let Ok(rd) = std::fs::read_dir(parent) else {
            continue;
        };
        let mut found: Vec<(Option<Version>, PathBuf)> = rd
            .flatten()
            .filter_map(|e| {
                let n = e.file_name().to_str()?.to_string();
                let rest = n.strip_prefix(prefix.as_str())?;
                Some((rest.parse::<Version>().ok(), e.path()))
            })
            .collect();
        found.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (_, p) in found {
            v.push(Candidate {
                root: p,
                found_by: "default folder".into(),
                preferred: false,
            });
        }
    }
    v
}

/// `CUDA_PATH_V12_4` → `12.4` (the variables NVIDIA's Windows installer sets).
fn cuda_path_var_version(name: &str) -> Option<Version> {
    let rest = name
        .get(..11)
        .filter(|p| p.eq_ignore_ascii_case("CUDA_PATH_V"))
        .map(|_| &name[11..])?;
    let (ma, mi) = rest.split_once('_')?;
    Some(Version::from_parts(&[ma.parse().ok()?, mi.parse().ok()?]))
}

/// The toolkit root holding the first `nvcc` on PATH (`<root>/bin/nvcc`),
/// following links (`/usr/bin/nvcc -> /usr/local/cuda-12.4/bin/nvcc`). The
/// system prefixes `/usr` and `/` are not toolkit roots. When the PATH entry's
/// parent is that root under another name (`/usr/local/cuda/bin` with
/// `/usr/local/cuda -> cuda-12.4`), that spelling is kept.
fn nvcc_root(env: &Env) -> Option<PathBuf> {
    let exe = if env.is_windows() { "nvcc.exe" } else { "nvcc" };
    for dir in env.path_list(env::PATH) {
        let p = dir.join(exe);
        if p.is_file() {
            let real = canonical(&p);
            let root = real.parent()?.parent()?.to_path_buf();
            if root == Path::new("/usr") || root.parent().is_none() {
                return None;
            }
            if let Some(named) = dir.parent().filter(|d| d.is_absolute())
                && canonical(named) == root
            {
                return Some(named.to_path_buf());
            }
            return Some(root);
        }
    }
    None
}

/// How `use`, `rollback` and `current` pick one toolkit.
#[derive(Clone, Debug, Default)]
pub struct Selector<'a> {
    /// `--cuda-root PATH`.
    pub root: Option<&'a Path>,
    /// `--cuda X.Y`.
    pub cuda: Option<&'a str>,
    /// Toolkits known besides those discovered (the ones `deployments.toml`
    /// records, deployed to with `--cuda-root`): `--cuda X.Y` picks one of
    /// them too, as `cudnnm toolkits` lists them.
    pub known: &'a [Toolkit],
}

/// Picks the toolkit to work on: `--cuda-root`; else `--cuda X.Y` (Windows:
/// `CUDA_PATH_VX_Y`, then `%ProgramFiles%\…\CUDA\vX.Y`; Linux:
/// `/usr/local/cuda-X.Y`; then any discovered toolkit of that version); else
/// the toolkit named by `CUDA_PATH`/`CUDA_HOME`/`nvcc`/`/usr/local/cuda`,
/// or the only one found.
///
/// # Errors
/// [`Kind::NotFound`] when nothing matches; [`Kind::Usage`] when several
/// toolkits are found and none is preferred (the message lists them).
pub fn select(env: &Env, sel: &Selector) -> Result<Toolkit> {
    select_with(env, sel, &DefaultFolders::for_env(env))
}

/// [`select`] with explicit default folders.
pub fn select_with(env: &Env, sel: &Selector, defaults: &DefaultFolders) -> Result<Toolkit> {
    if let Some(root) = sel.root {
        let root = if root.is_absolute() {
            root.to_path_buf()
        } else {
            env.cwd().join(root)
        };
        return Toolkit::at(&root, "--cuda-root", env.is_windows());
    }
    if let Some(c) = sel.cuda {
        return select_cuda(env, c, defaults, sel.known);
    }
    let found = candidates(env, defaults);
    for c in found.iter().filter(|c| c.preferred) {
        if let Ok(t) = Toolkit::at(&c.root, &c.found_by, env.is_windows()) {
            return Ok(t);
        }
    }
    let all = discover_with(env, defaults);
    match all.len() {
        1 => Ok(all.into_iter().next().expect("one toolkit")),
        0 => {
            let mut e = Error::new(Kind::NotFound, "no CUDA toolkit found");
            // A variable that is set but names no toolkit is the usual cause
            // (a typo, quotes left by `setx`, an uninstalled version): show it.
            for c in found.iter().filter(|c| c.found_by.starts_with("CUDA_")) {
                let why = Toolkit::at(&c.root, &c.found_by, env.is_windows())
                    .err()
                    .map_or_else(String::new, |e| format!(": {}", e.message()));
                e = e.cause(format!("{}='{}'{why}", c.found_by, c.root.display()));
            }
            Err(e.hint(
                "pass --cuda-root PATH (the folder holding include/ and lib64/ or lib\\x64\\), or set CUDA_PATH / CUDA_HOME to it (without quotes)",
            ))
        }
        _ => Err(Error::new(
            Kind::Usage,
            format!(
                "{} CUDA toolkits found and none is marked current: {}",
                all.len(),
                all.iter()
                    .map(|t| format!("{} (CUDA {})", t.root.display(), t.cuda_short()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
        .hint("pick one with --cuda X.Y or --cuda-root PATH")),
    }
}

fn select_cuda(
    env: &Env,
    c: &str,
    defaults: &DefaultFolders,
    known: &[Toolkit],
) -> Result<Toolkit> {
    let want: Version = c.trim().trim_start_matches('v').parse().map_err(|_| {
        Error::new(Kind::Usage, format!("'{c}' is not a CUDA version"))
            .hint("write the toolkit version as X.Y, e.g. --cuda 12.4")
    })?;
    if want.parts().len() < 2 {
        return Err(
            Error::new(Kind::Usage, format!("--cuda {c}: give major.minor"))
                .hint(format!("e.g. --cuda {}.0", want.major())),
        );
    }
    let (ma, mi) = (want.major(), want.minor());
    let mut tries: Vec<(PathBuf, String)> = Vec::new();
    if env.is_windows() {
        let var = format!("CUDA_PATH_V{ma}_{mi}");
        if let Some(p) = env.var(&var) {
            tries.push((PathBuf::from(p), var));
        }
        tries.push((
            windows_cuda_parent(env).join(format!("v{ma}.{mi}")),
            "default folder".into(),
        ));
    } else {
        tries.push((
            PathBuf::from(format!("/usr/local/cuda-{ma}.{mi}")),
            "default folder".into(),
        ));
    }
    for (p, by) in &tries {
        if let Ok(t) = Toolkit::at(p, by, env.is_windows())
            && t.cuda_major_minor() == (ma, mi)
        {
            return Ok(t);
        }
    }
    let mut all = discover_with(env, defaults);
    for k in known {
        if !all.iter().any(|t| t.root == k.root) {
            all.push(k.clone());
        }
    }
    if let Some(t) = all.iter().find(|t| t.cuda_major_minor() == (ma, mi)) {
        return Ok(t.clone());
    }
    let seen = if all.is_empty() {
        "none".to_string()
    } else {
        all.iter()
            .map(|t| {
                format!(
                    "'{}' (CUDA {}, found by {})",
                    t.root.display(),
                    t.cuda,
                    t.found_by
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let sources = if env.is_windows() {
        "CUDA_PATH, CUDA_HOME, CUDA_PATH_V*_*, nvcc on PATH, the default folders"
    } else {
        "CUDA_PATH, CUDA_HOME, nvcc on PATH, the default folders"
    };
    let mut e = Error::new(
        Kind::NotFound,
        format!(
            "no CUDA {ma}.{mi} toolkit found (looked in {}, and among the toolkits named by {sources}{})",
            tries
                .iter()
                .map(|(p, _)| format!("'{}'", p.display()))
                .collect::<Vec<_>>()
                .join(", "),
            if known.is_empty() {
                ""
            } else {
                " and deployments.toml"
            }
        ),
    )
    .cause(format!("toolkits found: {seen}"));
    e = e.hint(match all.first() {
        Some(t) => format!(
            "pass the toolkit's folder with --cuda-root PATH (e.g. `--cuda-root '{}'` for CUDA {}), or --cuda with a version found",
            t.root.display(),
            t.cuda_short()
        ),
        None => "pass the toolkit's folder with --cuda-root PATH (the folder holding include/ and lib64/ or lib\\x64\\)".into(),
    });
    Err(e)
}

/// True for the names of files cuDNN puts into a toolkit (see [`Layout::is_cudnn_name`]).
pub fn is_cudnn_file_name(name: &OsStr, layout: Layout) -> bool {
    name.to_str().is_some_and(|n| layout.is_cudnn_name(n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn version_files_parse() {
        let json = r#"{"cuda": {"name": "CUDA SDK", "version": "11.5.2"}, "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "11.5.117"}}"#;
        assert_eq!(parse_version_json(json), Some(v("11.5.2")));
        assert_eq!(
            parse_version_json(r#"{"cuda": {"version": "11.8.20220929"}}"#),
            Some(v("11.8")),
            "runfile date patches are dropped"
        );
        assert_eq!(parse_version_json(r#"{"cudart": {}}"#), None);
        assert_eq!(parse_version_json("not json"), None);
        assert_eq!(
            parse_version_txt("CUDA Version 8.0.61\n"),
            Some(v("8.0.61"))
        );
        assert_eq!(
            parse_version_txt("CUDA Version 10.1.243"),
            Some(v("10.1.243"))
        );
        assert_eq!(parse_version_txt("garbage"), None);
        assert_eq!(
            parse_cuda_h("/* x */\n#define CUDA_VERSION 11020\n"),
            Some(v("11.2"))
        );
        assert_eq!(parse_cuda_h("#define CUDA_VERSION 9000"), Some(v("9.0")));
        assert_eq!(
            parse_nvcc_output(
                "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 11.2, V11.2.152\n"
            ),
            Some(v("11.2.152"))
        );
        assert_eq!(
            parse_nvcc_output("Cuda compilation tools, release 9.0"),
            Some(v("9.0"))
        );
    }

    fn make_linux_toolkit(root: &Path, version_json: &str) {
        #[cfg(unix)]
        {
            fs::create_dir_all(root.join("targets/x86_64-linux/lib")).unwrap();
            fs::create_dir_all(root.join("targets/x86_64-linux/include")).unwrap();
            std::os::unix::fs::symlink("targets/x86_64-linux/lib", root.join("lib64")).unwrap();
            std::os::unix::fs::symlink("targets/x86_64-linux/include", root.join("include"))
                .unwrap();
        }
        // No links without privileges on Windows: plain folders, and no
        // `targets/` (real folders there would be cuDNN folders too).
        #[cfg(not(unix))]
        {
            fs::create_dir_all(root.join("lib64")).unwrap();
            fs::create_dir_all(root.join("include")).unwrap();
        }
        fs::write(
            root.join("version.json"),
            format!(r#"{{"cuda": {{"name": "CUDA SDK", "version": "{version_json}"}}}}"#),
        )
        .unwrap();
    }

    fn make_windows_toolkit(root: &Path, version_txt: Option<&str>) {
        fs::create_dir_all(root.join("bin")).unwrap();
        fs::create_dir_all(root.join("include")).unwrap();
        fs::create_dir_all(root.join("lib/x64")).unwrap();
        match version_txt {
            Some(t) => fs::write(root.join("version.txt"), format!("CUDA Version {t}\n")).unwrap(),
            None => fs::write(root.join("include/cuda.h"), "#define CUDA_VERSION 11020\n").unwrap(),
        }
    }

    #[test]
    fn layouts_are_data_and_dirs_follow_them() {
        let d = tempfile::tempdir().unwrap();
        let w = d
            .path()
            .join("NVIDIA GPU Computing Toolkit (x86)/CUDA/v8.0 ünï");
        make_windows_toolkit(&w, Some("8.0.61"));
        let t = Toolkit::at(&w, "--cuda-root", false).unwrap();
        assert_eq!(t.layout, Layout::Windows, "content wins over the host");
        assert_eq!(t.cuda, v("8.0.61"));
        assert_eq!(
            t.cudnn_dirs(),
            vec![
                t.root.join("bin"),
                t.root.join("include"),
                t.root.join("lib/x64")
            ]
        );
        let l = d.path().join("cuda-12.4");
        make_linux_toolkit(&l, "12.4.1");
        let t = Toolkit::at(&l, "x", true).unwrap();
        assert_eq!(t.layout, Layout::Linux);
        assert_eq!(t.cuda_short(), "12.4");
        assert_eq!(
            t.cudnn_dirs(),
            vec![t.root.join("include"), t.root.join("lib64")]
        );
        assert!(Layout::Windows.is_cudnn_name("CUDNN64_8.DLL"));
        assert!(!Layout::Linux.is_cudnn_name("CUDNN64_8.DLL"));
        assert!(Layout::Linux.is_cudnn_name("libcudnn.so.9"));
        assert!(!Layout::Linux.is_cudnn_name("libcublas.so.12"));
        assert!(!Layout::Linux.is_cudnn_name("cudnn_frontend.h"));
        assert!(!Layout::Windows.is_cudnn_name("cudnn_samples.txt"));
        let empty = d.path().join("empty");
        fs::create_dir_all(&empty).unwrap();
        let e = Toolkit::at(&empty, "x", false).unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound);
        assert!(e.message().contains("empty"), "{e}");
        let e = Toolkit::at(&d.path().join("missing"), "x", false).unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound);
    }

    #[test]
    fn cuda_h_is_read_when_no_version_file() {
        let d = tempfile::tempdir().unwrap();
        make_windows_toolkit(d.path(), None);
        assert_eq!(read_cuda_version(d.path()).unwrap(), v("11.2"));
    }

    #[cfg(unix)]
    #[test]
    fn discovery_from_env_and_default_folders_dedupes_links() {
        let d = tempfile::tempdir().unwrap();
        let local = d.path().join("local");
        make_linux_toolkit(&local.join("cuda-12.4"), "12.4.1");
        make_linux_toolkit(&local.join("cuda-11.8"), "11.8.89");
        fs::create_dir_all(local.join("cuda-broken")).unwrap();
        std::os::unix::fs::symlink(local.join("cuda-12.4"), local.join("cuda")).unwrap();
        let bin = d.path().join("nvcc-bin");
        fs::create_dir_all(&bin).unwrap();
        fs::create_dir_all(local.join("cuda-11.8/bin")).unwrap();
        fs::write(local.join("cuda-11.8/bin/nvcc"), "").unwrap();
        std::os::unix::fs::symlink(local.join("cuda-11.8/bin/nvcc"), bin.join("nvcc")).unwrap();
        let defaults = DefaultFolders {
            roots: vec![local.join("cuda")],
            scans: vec![(local.clone(), "cuda-".into())],
        };
        let env = Env::from_vars(
            [
                ("CUDA_HOME", local.join("cuda").into_os_string()),
                ("PATH", bin.clone().into_os_string()),
            ],
            "/",
            false,
        );
        let found = discover_with(&env, &defaults);
        let roots: Vec<_> = found
            .iter()
            .map(|t| t.root.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(roots, vec!["cuda-12.4", "cuda-11.8"]);
        assert!(found[0].found_by.contains("CUDA_HOME"));
        assert!(found[0].found_by.contains("default folder"));
        assert_eq!(found[1].found_by, "nvcc on PATH, default folder");
        // Selection: CUDA_HOME wins; --cuda 11.8 finds the scanned one.
        let t = select_with(&env, &Selector::default(), &defaults).unwrap();
        assert_eq!(t.cuda_short(), "12.4");
        let t = select_with(
            &env,
            &Selector {
                cuda: Some("11.8"),
                ..Default::default()
            },
            &defaults,
        )
        .unwrap();
        assert_eq!(t.cuda, v("11.8.89"));
        let e = select_with(
            &env,
            &Selector {
                cuda: Some("10.2"),
                ..Default::default()
            },
            &defaults,
        )
        .unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound);
        assert!(e.to_string().contains("cuda-12.4"), "{e}");
        // Without preferred sources, two toolkits are ambiguous.
        let bare = Env::from_vars(Vec::<(String, String)>::new(), "/", false);
        let scan_only = DefaultFolders {
            roots: vec![],
            scans: defaults.scans.clone(),
        };
        let e = select_with(&bare, &Selector::default(), &scan_only).unwrap_err();
        assert_eq!(e.kind(), Kind::Usage);
        assert!(e.message().contains("2 CUDA toolkits"), "{e}");
    }

    #[test]
    fn no_toolkit_found_shows_the_variables_that_name_none() {
        let env = Env::from_vars([("CUDA_PATH", r#""C:\nope""#), ("PATH", "")], r"C:\", true);
        let e = select_with(&env, &Selector::default(), &DefaultFolders::default()).unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound);
        assert_eq!(e.message(), "no CUDA toolkit found");
        assert!(
            e.causes()
                .iter()
                .any(|c| c.starts_with(r#"CUDA_PATH='"C:\nope"': "#)),
            "{e}"
        );
        assert!(e.hint_text().unwrap().contains("without quotes"), "{e}");
    }

    #[test]
    fn cuda_path_variables_are_read_strictly_by_name() {
        for (name, want) in [
            ("CUDA_PATH_V11_2", Some("11.2")),
            ("cuda_path_v12_4", Some("12.4")), // Windows names ignore case
            ("CUDA_PATH_V11_2_OLD", None),
            ("CUDA_PATH_V11", None),
            ("CUDA_PATH_VX_Y", None),
            ("CUDA_PATHS", None),
            ("CUDA_PATH_V", None),
            ("CUDA_ROOT", None),
        ] {
            assert_eq!(cuda_path_var_version(name), want.map(v), "{name}");
        }
        // Decoys that merely start with CUDA name no toolkit; the real
        // variables do, each under its own name.
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("v11.2");
        let b = d.path().join("v12.4");
        let decoy = d.path().join("decoy");
        make_windows_toolkit(&a, None);
        make_windows_toolkit(&b, None);
        make_windows_toolkit(&decoy, None);
        let env = Env::from_vars(
            [
                ("CUDA_PATH_V11_2", a.clone().into_os_string()),
                ("CUDA_PATH_V12_4", b.clone().into_os_string()),
                ("CUDA_PATH_V12_4_OLD", decoy.clone().into_os_string()),
                ("CUDA_ROOT", decoy.clone().into_os_string()),
                ("CUDAPATH", decoy.into_os_string()),
            ],
            r"C:\",
            true,
        );
        let found = discover_with(&env, &DefaultFolders::default());
        let by: Vec<(PathBuf, &str)> = found
            .iter()
            .map(|t| (t.root.clone(), t.found_by.as_str()))
            .collect();
        assert_eq!(
            by,
            vec![
                (canonical(&b), "CUDA_PATH_V12_4"),
                (canonical(&a), "CUDA_PATH_V11_2")
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn named_discovery_keeps_each_sources_spelling() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("cuda-12.4");
        make_linux_toolkit(&real, "12.4.1");
        fs::create_dir_all(real.join("bin")).unwrap();
        fs::write(real.join("bin/nvcc"), "").unwrap();
        let link = d.path().join("cuda");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let env = Env::from_vars(
            [
                ("PATH", link.join("bin").into_os_string()),
                ("CUDA_PATH", real.clone().into_os_string()),
            ],
            "/",
            false,
        );
        let none = DefaultFolders::default();
        let found = discover_named_with(&env, &none);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].toolkit.root, canonical(&real));
        assert_eq!(found[0].toolkit.found_by, "CUDA_PATH, nvcc on PATH");
        assert_eq!(
            found[0].names,
            vec![real.clone(), link.clone()],
            "nvcc's PATH entry names the toolkit through the link"
        );
        let plain = discover_with(&env, &none);
        assert_eq!(plain.len(), 1);
        assert_eq!(plain[0].root, found[0].toolkit.root);
    }

    #[test]
    fn windows_env_variables_name_toolkits() {
        let d = tempfile::tempdir().unwrap();
        let pf = d.path().join("Program Files");
        let cuda = pf.join("NVIDIA GPU Computing Toolkit/CUDA");
        make_windows_toolkit(&cuda.join("v11.2"), None);
        make_windows_toolkit(&cuda.join("v8.0"), Some("8.0.61"));
        let other = d.path().join("D drive/CUDA 10.2 (custom)");
        make_windows_toolkit(&other, Some("10.2.89"));
        let env = Env::from_vars(
            [
                ("ProgramFiles", pf.clone().into_os_string()),
                ("cuda_path_v10_2", other.clone().into_os_string()),
            ],
            r"C:\work",
            true,
        );
        let defaults = DefaultFolders::for_env(&env);
        let found = discover_with(&env, &defaults);
        let versions: Vec<String> = found.iter().map(|t| t.cuda_short()).collect();
        assert_eq!(versions, vec!["10.2", "11.2", "8.0"]);
        assert!(found.iter().all(|t| t.layout == Layout::Windows));
        assert_eq!(found[0].found_by, "cuda_path_v10_2");
        let pick = |c: &str| {
            select_with(
                &env,
                &Selector {
                    cuda: Some(c),
                    ..Default::default()
                },
                &defaults,
            )
        };
        assert_eq!(pick("10.2").unwrap().root, canonical(&other));
        assert_eq!(pick("8.0").unwrap().cuda, v("8.0.61"));
        assert_eq!(pick("9.0").unwrap_err().kind(), Kind::NotFound);
        assert_eq!(pick("x").unwrap_err().kind(), Kind::Usage);
    }
}

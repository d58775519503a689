//! Gathering: fills a [`Snapshot`] from this machine. The only part of
//! `doctor` that looks at the host; the OS-specific bits (registry, Windows
//! version, write access) come from [`crate::platform`].
//!
//! Cost: one `read_dir` per folder examined, a few small reads per cuDNN
//! file (header macros, ELF/PE headers and dynamic tables through
//! `object::ReadCache`), no hashing. External programs (`ldconfig -p`,
//! `nvcc --version`, `nvidia-smi`) and the library loads (each in its own
//! child process, so that two copies of one soname never meet in one
//! process) all run at the same time. Every phase's time is recorded in
//! [`Snapshot::timings_ms`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::binfmt;
use super::names::{self, FileKind};
use super::snapshot::*;
use crate::archive::header;
use crate::deploy::Deployments;
use crate::env::{self, Env};
use crate::home::Home;
use crate::libcudnn::LibraryVersion;
use crate::store::{BrokenRelease, Release, Store};
use crate::toolkit::{self, Layout, Toolkit};
use crate::version::{CudaVariant, Version, release_id};

/// What loading a library told: its version, and the cuDNN files the
/// process had mapped while it was loaded (empty when unknown: not Linux).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loaded {
    /// `cudnnGetVersion()` and `cudnnGetCudartVersion()`.
    pub version: LibraryVersion,
    /// The cuDNN files mapped (the library itself and the sub-libraries it loaded).
    pub modules: Vec<String>,
}

/// Asks a batch of libraries for their version; one result per path, in order.
pub type Querier<'a> = &'a (dyn Fn(&[PathBuf]) -> Vec<Result<Loaded, String>> + Sync);

/// What to gather.
pub struct Options<'a> {
    /// Toolkit roots given with `--cuda-root`, examined first.
    pub cuda_roots: Vec<PathBuf>,
    /// How to load libraries; `None` skips loading (versions then come from
    /// file names and headers).
    pub query: Option<Querier<'a>>,
    /// Run `ldconfig -p`, `nvcc --version` and `nvidia-smi`.
    pub run_tools: bool,
}

/// How long an external program or library load may take.
const TOOL_TIMEOUT: Duration = Duration::from_secs(20);

/// Names kept in folder listings besides cuDNN files and needed libraries.
const WANTED: [&str; 9] = [
    names::VC_RUNTIME_DLLS[0],
    names::VC_RUNTIME_DLLS[1],
    names::VC_RUNTIME_DLLS[2],
    names::VC_RUNTIME_DLLS[3],
    names::UCRT_DLL,
    "ucrtbase.dll",
    names::ZLIBWAPI_DLL,
    "libz.so.1",
    "zlib1.dll",
];

/// The variables recorded in the snapshot (besides `PATH`/`LD_LIBRARY_PATH`, kept as lists).
fn keep_var(name: &str) -> bool {
    let u = name.to_ascii_uppercase();
    u.starts_with("CUDA_PATH")
        || u.starts_with("CUDNN")
        || matches!(
            u.as_str(),
            "CUDA_HOME"
                | "CUDA_ROOT"
                | "CONDA_PREFIX"
                | "CONDA_DEFAULT_ENV"
                | "VIRTUAL_ENV"
                | "SYSTEMROOT"
                | "WINDIR"
                | "PROCESSOR_ARCHITECTURE"
                | "PROCESSOR_ARCHITEW6432"
                | "PYTHONPATH"
        )
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Takes a snapshot of this machine.
pub fn gather(env: &Env, home: &Home, opts: &Options) -> Snapshot {
    let t0 = Instant::now();
    let mut clock = Instant::now();
    let mut snap = Snapshot {
        schema: SNAPSHOT_SCHEMA,
        taken_at: crate::store::now_rfc3339(),
        cudnnm_version: env!("CARGO_PKG_VERSION").to_string(),
        cwd: s(env.cwd()),
        ..Default::default()
    };
    let windows = cfg!(windows);
    let mut lap = |snap: &mut Snapshot, what: &str| {
        snap.timings_ms
            .push((what.to_string(), clock.elapsed().as_millis() as u64));
        clock = Instant::now();
    };

    // Start the slow external programs first; collect them at the end.
    let path_dirs = env.path_list(env::PATH);
    let nvcc_path = find_on(&path_dirs, if windows { "nvcc.exe" } else { "nvcc" });
    let smi_path = find_on(
        &path_dirs,
        if windows {
            "nvidia-smi.exe"
        } else {
            "nvidia-smi"
        },
    )
    .or_else(|| {
        windows
            .then(|| PathBuf::from(r"C:\Program Files\NVIDIA Corporation\NVSMI\nvidia-smi.exe"))
            .filter(|p| p.is_file())
    });
    let mut ldconfig = None;
    let mut nvcc_child = None;
    let mut smi_child = None;
    if opts.run_tools {
        if !windows {
            ldconfig = [
                "/sbin/ldconfig",
                "/usr/sbin/ldconfig",
                "/sbin/ldconfig.real",
            ]
            .iter()
            .find(|p| Path::new(p).is_file())
            .and_then(|p| Running::spawn(Command::new(p).arg("-p")));
        }
        nvcc_child = nvcc_path
            .as_ref()
            .and_then(|p| Running::spawn(Command::new(p).arg("--version")));
        smi_child = smi_path.as_ref().and_then(|p| {
            Running::spawn(Command::new(p).args([
                "--query-gpu=name,driver_version,compute_cap",
                "--format=csv,noheader",
            ]))
        });
    }

    snap.os = os_info(env);
    for (k, v) in env.vars() {
        let k = k.to_string_lossy();
        if keep_var(&k) {
            snap.env
                .insert(k.into_owned(), v.to_string_lossy().into_owned());
        }
    }
    snap.path = path_dirs.iter().map(|p| s(p)).collect();
    if !windows {
        snap.ld_library_path = env
            .path_list(env::LD_LIBRARY_PATH)
            .iter()
            .map(|p| s(p))
            .collect();
    }
    snap.system_dirs = system_dirs(env).iter().map(|p| s(p)).collect();
    if let Some((user, machine)) = crate::platform::registry_paths() {
        snap.registry = Some(RegistryPaths { user, machine });
    }
    lap(&mut snap, "environment");

    // Toolkits.
    let deployments = Deployments::load(home).unwrap_or_else(|e| {
        snap.notes.push(format!("deployments: {e}"));
        Deployments::default()
    });
    snap.toolkits = find_toolkits(env, opts, &deployments, &mut snap.notes);
    for t in &mut snap.toolkits {
        let root = Path::new(&t.root);
        t.unfinished_change =
            crate::deploy::inflight::foreign(home, root).map(|m| UnfinishedChange {
                finish: if m.home.as_os_str().is_empty() {
                    String::new()
                } else {
                    crate::deploy::inflight::finish_command(&m, root, env.is_windows())
                },
                home: s(&m.home),
                backup: m.backup,
                action: m.action,
                running: crate::lock::toolkit_busy(root),
            });
    }
    let (releases, damaged) = Store::new(home).scan().unwrap_or_else(|e| {
        snap.notes.push(format!("store: {e}"));
        Default::default()
    });
    lap(&mut snap, "toolkits");

    // Folders to examine.
    let mut scan = Scanner::default();
    for t in &snap.toolkits {
        let root = PathBuf::from(&t.root);
        for sub in ["", "bin", "bin/x64", "include", "lib", "lib/x64", "lib64"] {
            scan.add(&root.join(sub));
        }
        for (d, _) in subdirs(&root.join("targets")) {
            scan.add(&d.join("lib"));
            scan.add(&d.join("include"));
        }
    }
    let loader_entries: Vec<PathBuf> = if windows {
        path_dirs.clone()
    } else {
        env.path_list(env::LD_LIBRARY_PATH)
    };
    for d in &loader_entries {
        scan.add(d);
        probe_below(&mut scan, d, &snap.system_dirs);
    }
    for d in &snap.system_dirs {
        scan.add(Path::new(d));
    }
    if windows {
        scan.add(env.cwd());
    } else {
        for d in ["/usr/include", "/usr/local/include"] {
            scan.add(Path::new(d));
        }
        if let Some(t) = triplet() {
            scan.add(&Path::new("/usr/include").join(t));
        }
    }
    let sites = site_packages(env);
    for site in &sites {
        for sub in [
            "nvidia/cudnn/lib",
            "nvidia/cudnn/bin",
            "nvidia/cudnn/include",
            "nvidia/cudnn_jit/lib",
            "nvidia/cudnn_jit/include",
            "torch/lib",
        ] {
            scan.add(&site.join(sub));
        }
    }
    if let Some(c) = env.var("CONDA_PREFIX") {
        let c = PathBuf::from(c);
        for sub in [
            "lib",
            "include",
            "Library/bin",
            "Library/include",
            "Library/lib",
        ] {
            scan.add(&c.join(sub));
        }
    }
    lap(&mut snap, "folders");

    // The ld.so cache: folders of its cuDNN entries are examined too.
    let cache: Vec<LdCacheEntry> = ldconfig
        .map(|c| c.finish())
        .and_then(|o| o.ok())
        .map(|out| parse_ldconfig(&out))
        .unwrap_or_default();
    for e in cache.iter().filter(|e| names::is_cudnn_name(&e.name)) {
        if let Some(p) = Path::new(&e.path).parent() {
            scan.add(p);
        }
    }
    lap(&mut snap, "ldconfig");

    // Every cuDNN file.
    let ctx = Origins::new(env, home, &snap.toolkits);
    let mut bin_cache: HashMap<String, binfmt::BinInfo> = HashMap::new();
    for (dir, entries) in &scan.listed {
        for name in entries {
            if names::classify(name).is_none() {
                continue;
            }
            let path = dir.join(name);
            if let Some(f) = read_file(&path, &ctx, &mut bin_cache, windows) {
                snap.files.push(f);
            }
        }
    }
    lap(&mut snap, "files");

    // Which files are copies of a store release (its own evidence of version).
    mark_store_copies(&mut snap.files, &releases);
    lap(&mut snap, "store copies");

    // Load the main libraries (in child processes, all at once).
    if let Some(query) = opts.query {
        let host = binfmt::host_machine();
        let mut targets: Vec<String> = Vec::new();
        for f in &snap.files {
            let Some(n) = names::classify(file_name(&f.path)) else {
                continue;
            };
            let real = f.real_path.clone().unwrap_or_else(|| f.path.clone());
            if n.kind == FileKind::Shared
                && n.is_main()
                && n.windows == windows
                && !f.dangling
                && f.machine.as_deref() == Some(host)
                && !targets.contains(&real)
            {
                targets.push(real);
            }
        }
        let paths: Vec<PathBuf> = targets.iter().map(PathBuf::from).collect();
        let results = query(&paths);
        for (real, r) in targets.iter().zip(results) {
            for f in snap
                .files
                .iter_mut()
                .filter(|f| f.real_path.as_deref().unwrap_or(&f.path) == real)
            {
                match &r {
                    Ok(l) => {
                        f.library_version = Some(l.version.version());
                        f.cudart_version = (l.version.cudart > 0).then_some(l.version.cudart);
                        f.loaded_modules = l.modules.clone();
                    }
                    Err(e) => f.load_error = Some(e.clone()),
                }
            }
        }
    }
    lap(&mut snap, "library loads");

    // Listings: cuDNN files, runtimes, and everything a cuDNN file needs.
    let mut keep: BTreeSet<String> = WANTED.iter().map(|n| n.to_ascii_lowercase()).collect();
    for f in &snap.files {
        keep.extend(f.needed.iter().map(|n| n.to_ascii_lowercase()));
    }
    for (dir, entries) in &scan.listed {
        let names: Vec<String> = entries
            .iter()
            .filter(|n| names::is_cudnn_name(n) || keep.contains(&n.to_ascii_lowercase()))
            .cloned()
            .collect();
        snap.dirs.push(DirListing {
            path: s(dir),
            names,
        });
    }
    snap.ld_cache = cache
        .into_iter()
        .filter(|e| names::is_cudnn_name(&e.name) || keep.contains(&e.name.to_ascii_lowercase()))
        .collect();

    snap.frameworks = frameworks(&sites);
    snap.pin = match crate::pin::resolve_spec(None, env, home) {
        Ok(Some(r)) => Some(PinInfo {
            spec: r.spec.to_string(),
            source: describe_source(&r.source),
        }),
        Ok(None) => None,
        Err(e) => {
            snap.notes.push(format!("pin: {}", e.message()));
            None
        }
    };
    snap.store_damaged = damaged.iter().map(damaged_release).collect();
    snap.deployments = deployment_states(&releases, &deployments, windows);
    snap.store_changed = releases.iter().filter_map(changed_release).collect();
    lap(&mut snap, "frameworks, pin, deployments");

    if let (Some(p), Some(c)) = (&nvcc_path, nvcc_child) {
        let out = c.finish();
        let text = out.as_ref().ok().cloned();
        snap.nvcc = Some(Nvcc {
            path: s(p),
            release: text.as_deref().and_then(parse_nvcc_release),
            output: text.or_else(|| out.err()),
        });
    } else if let Some(p) = &nvcc_path {
        snap.nvcc = Some(Nvcc {
            path: s(p),
            output: None,
            release: None,
        });
    }
    if let (Some(p), Some(c)) = (&smi_path, smi_child) {
        match c.finish() {
            Ok(out) => snap.driver = Some(parse_nvidia_smi(&s(p), &out)),
            Err(e) => snap.notes.push(format!("nvidia-smi: {e}")),
        }
    }
    lap(&mut snap, "nvcc, nvidia-smi");
    snap.timings_ms
        .push(("total".into(), t0.elapsed().as_millis() as u64));
    snap
}

/// The last component of a host path string.
fn file_name(p: &str) -> &str {
    Path::new(p)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(p)
}

fn find_on(dirs: &[PathBuf], name: &str) -> Option<PathBuf> {
    dirs.iter().map(|d| d.join(name)).find(|p| p.is_file())
}

fn subdirs(dir: &Path) -> Vec<(PathBuf, String)> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<(PathBuf, String)> = rd
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir() || t.is_symlink()) && e.path().is_dir())
        .map(|e| (e.path(), e.file_name().to_string_lossy().into_owned()))
        .collect();
    v.sort();
    v
}

/// Folders already examined, with their entries, first spelling kept.
#[derive(Default)]
struct Scanner {
    seen: BTreeSet<PathBuf>,
    listed: Vec<(PathBuf, Vec<String>)>,
}

impl Scanner {
    fn add(&mut self, dir: &Path) {
        let key = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        if !self.seen.insert(key) {
            return;
        }
        let Ok(rd) = fs::read_dir(dir) else { return };
        let mut names: Vec<String> = rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        self.listed.push((dir.to_path_buf(), names));
    }
}

/// F01/F02: the folders just below a loader path entry where an unpacked
/// archive or NVIDIA's installer keeps its libraries (`bin`, `cuda\bin`,
/// `bin\<CUDA>`, `lib`, `lib64`, `<cudnn-…>\bin`). System folders are skipped.
fn probe_below(scan: &mut Scanner, entry: &Path, system: &[String]) {
    if system.iter().any(|d| entry.starts_with(d))
        || entry.starts_with("/usr")
        || entry == Path::new("/")
    {
        return;
    }
    let mut tops = vec![entry.to_path_buf(), entry.join("cuda")];
    for (d, name) in subdirs(entry) {
        let l = name.to_ascii_lowercase();
        if l.starts_with("cudnn") || l.ends_with("-archive") {
            tops.push(d.clone());
            tops.push(d.join("cuda"));
        }
    }
    for top in tops {
        for sub in ["bin", "bin/x64", "lib", "lib64", "lib/x64"] {
            let d = top.join(sub);
            if d.is_dir() && d != entry {
                scan.add(&d);
            }
        }
        for (d, name) in subdirs(&top.join("bin")) {
            if name.parse::<Version>().is_ok_and(|v| v.parts().len() == 2) {
                scan.add(&d);
            }
        }
    }
}

/// The GNU multiarch triplet of this host (`x86_64-linux-gnu`).
fn triplet() -> Option<&'static str> {
    match std::env::consts::ARCH {
        "x86_64" => Some("x86_64-linux-gnu"),
        "aarch64" => Some("aarch64-linux-gnu"),
        "powerpc64" => Some("powerpc64le-linux-gnu"),
        _ => None,
    }
}

/// The loader's fixed folders: Linux trusted folders; Windows `System32`
/// and the Windows folder.
fn system_dirs(env: &Env) -> Vec<PathBuf> {
    if cfg!(windows) {
        let root = env
            .var("SystemRoot")
            .or_else(|| env.var("windir"))
            .unwrap_or_else(|| r"C:\Windows".into());
        let root = PathBuf::from(root);
        return vec![root.join("System32"), root];
    }
    let mut v = Vec::new();
    if let Some(t) = triplet() {
        v.push(Path::new("/lib").join(t));
        v.push(Path::new("/usr/lib").join(t));
    }
    for d in ["/lib64", "/usr/lib64", "/lib", "/usr/lib"] {
        v.push(PathBuf::from(d));
    }
    v.retain(|d| d.is_dir());
    v
}

fn os_info(env: &Env) -> OsInfo {
    let family = std::env::consts::OS.to_string();
    if cfg!(windows) {
        let pa = env
            .var("PROCESSOR_ARCHITEW6432")
            .or_else(|| env.var("PROCESSOR_ARCHITECTURE"))
            .unwrap_or_default()
            .to_ascii_uppercase();
        let arch = match pa.as_str() {
            "AMD64" => "x86_64",
            "ARM64" => "aarch64",
            "X86" => "x86",
            _ => binfmt::host_machine(),
        };
        let (name, version) = match crate::platform::windows_version() {
            Some((n, v)) => (n, Some(v)),
            None => (None, None),
        };
        return OsInfo {
            family,
            name,
            version,
            arch: arch.into(),
            bits: bits_of(arch),
        };
    }
    let name = fs::read_to_string("/etc/os-release").ok().and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("PRETTY_NAME="))
            .map(|v| v.trim_matches('"').to_string())
    });
    let version = fs::read_to_string("/proc/sys/kernel/osrelease")
        .ok()
        .map(|v| v.trim().to_string());
    let arch = binfmt::host_machine();
    OsInfo {
        family,
        name,
        version,
        arch: arch.into(),
        bits: bits_of(arch),
    }
}

fn bits_of(arch: &str) -> u32 {
    match arch {
        "x86_64" | "aarch64" | "ppc64le" | "ppc64" => 64,
        _ => 32,
    }
}

/// Every toolkit to examine, each once, named as its first source spelled
/// it: the `--cuda-root` folders (kept even without a readable CUDA version,
/// with a note saying why), every toolkit [`toolkit::discover_named`] finds
/// (`CUDA_PATH`, `CUDA_HOME`, `CUDA_PATH_VX_Y`, `nvcc` on PATH, the default
/// folders), then those `deployments.toml` records elsewhere. A `--cuda-root`
/// folder is a toolkit exactly as for `cudnnm use --cuda-root`.
fn find_toolkits(
    env: &Env,
    opts: &Options,
    deployments: &Deployments,
    notes: &mut Vec<String>,
) -> Vec<ToolkitInfo> {
    let windows = env.is_windows();
    let mut out: Vec<ToolkitInfo> = Vec::new();
    let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
    let push =
        |out: &mut Vec<ToolkitInfo>, seen: &mut BTreeSet<PathBuf>, named: &Path, t: &Toolkit| {
            if seen.insert(t.root.clone()) {
                out.push(toolkit_info(named, t));
            }
        };
    for root in &opts.cuda_roots {
        match Toolkit::at(root, "--cuda-root", windows) {
            Ok(t) => push(&mut out, &mut seen, root, &t),
            Err(_) if !root.is_dir() => {
                notes.push(format!("--cuda-root {}: no such folder", root.display()));
            }
            Err(e) => {
                notes.push(format!("--cuda-root {}: {e}", root.display()));
                let key = fs::canonicalize(root).unwrap_or_else(|_| root.clone());
                if seen.insert(key) {
                    let layout = toolkit::detect_layout(root, windows);
                    out.push(ToolkitInfo {
                        root: s(root),
                        cuda: None,
                        layout: snapshot_layout(layout),
                        found_by: "--cuda-root".into(),
                        writable: writable(root),
                        unfinished_change: None,
                    });
                }
            }
        }
    }
    for n in toolkit::discover_named(env) {
        push(&mut out, &mut seen, &n.names[0], &n.toolkit);
    }
    for d in &deployments.entries {
        if let Ok(t) = Toolkit::at(&d.toolkit, "cudnnm deployment", windows) {
            push(&mut out, &mut seen, &d.toolkit, &t);
        }
    }
    out
}

/// The snapshot's record of toolkit `t`, reported under the path that named it.
fn toolkit_info(named: &Path, t: &Toolkit) -> ToolkitInfo {
    ToolkitInfo {
        root: s(named),
        cuda: Some(t.cuda.clone()),
        layout: snapshot_layout(t.layout),
        found_by: t.found_by.clone(),
        writable: writable(&t.root),
        unfinished_change: None,
    }
}

fn snapshot_layout(l: Layout) -> ToolkitLayout {
    match l {
        Layout::Windows => ToolkitLayout::Windows,
        Layout::Linux => ToolkitLayout::Linux,
    }
}

/// Whether this user may change the toolkit's cuDNN files (probed on `include`, else the root).
fn writable(root: &Path) -> Option<bool> {
    let probe = [root.join("include"), root.to_path_buf()]
        .into_iter()
        .find(|p| p.is_dir())
        .unwrap_or_else(|| root.to_path_buf());
    crate::platform::dir_writable(&probe)
}

/// What decides a file's origin.
struct Origins {
    toolkits: Vec<String>,
    home: PathBuf,
    system: Vec<PathBuf>,
}

impl Origins {
    fn new(env: &Env, home: &Home, toolkits: &[ToolkitInfo]) -> Origins {
        let mut system: Vec<PathBuf> = Vec::new();
        if cfg!(windows) {
            system.push(PathBuf::from(
                env.var("SystemRoot")
                    .unwrap_or_else(|| r"C:\Windows".into()),
            ));
        } else {
            for d in ["/usr/lib", "/lib", "/usr/lib64", "/lib64", "/usr/include"] {
                system.push(PathBuf::from(d));
            }
        }
        Origins {
            toolkits: toolkits.iter().map(|t| t.root.clone()).collect(),
            home: home.root().to_path_buf(),
            system,
        }
    }

    fn of(&self, path: &Path) -> (Origin, Option<String>) {
        if let Some(t) = self
            .toolkits
            .iter()
            .filter(|t| path.starts_with(t))
            .max_by_key(|t| t.len())
        {
            return (Origin::Toolkit, Some(t.clone()));
        }
        if path.starts_with(self.home.join("store")) || path.starts_with(self.home.join("current"))
        {
            return (Origin::CudnnmStore, None);
        }
        let comps: Vec<String> = path
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if let Some(i) = comps
            .iter()
            .position(|c| c == "site-packages" || c == "dist-packages")
        {
            let pkg = comps[i + 1..comps.len().saturating_sub(1)].join("/");
            return (Origin::PipWheel, Some(pkg));
        }
        for anc in path.ancestors().skip(1).take(5) {
            if anc.join("conda-meta").is_dir() {
                return (Origin::Conda, Some(s(anc)));
            }
        }
        let lower = s(path).to_ascii_lowercase().replace('\\', "/");
        if lower.contains("/nvidia/cudnn/v") {
            return (Origin::NvidiaInstaller, None);
        }
        if self.system.iter().any(|d| path.starts_with(d)) {
            return (Origin::System, None);
        }
        (Origin::Other, None)
    }
}

/// One cuDNN file: links, size, header version, binary details.
fn read_file(
    path: &Path,
    o: &Origins,
    bins: &mut HashMap<String, binfmt::BinInfo>,
    windows: bool,
) -> Option<CudnnFile> {
    let lmeta = fs::symlink_metadata(path).ok()?;
    if lmeta.is_dir() {
        return None;
    }
    let name = path.file_name()?.to_string_lossy().into_owned();
    let n = names::classify(&name)?;
    let link_target = lmeta
        .file_type()
        .is_symlink()
        .then(|| fs::read_link(path).ok().map(|t| s(&t)))
        .flatten();
    let meta = fs::metadata(path);
    let dangling = meta.is_err() && link_target.is_some();
    if meta.as_ref().is_ok_and(|m| m.is_dir()) {
        return None;
    }
    let real_path = crate::fsops::canonical(path).map(|p| s(&p));
    let (origin, origin_detail) = o.of(path);
    let mut f = CudnnFile {
        path: s(path),
        root: install_root(&s(path), windows),
        origin,
        origin_detail,
        kind: Some(n.kind),
        size: meta.as_ref().map(|m| m.len()).unwrap_or(0),
        real_path: real_path.clone(),
        link_target,
        dangling,
        ..Default::default()
    };
    if n.kind == FileKind::Header {
        if names::is_version_header(&name) {
            f.header_version = header::read_version(path);
        }
        return Some(f);
    }
    if n.kind == FileKind::Shared && !dangling {
        let key = real_path.unwrap_or_else(|| s(path));
        let info = bins
            .entry(key.clone())
            .or_insert_with(|| binfmt::read(Path::new(&key)));
        f.machine = info.machine.clone();
        f.soname = info.soname.clone();
        f.needed = info.needed.clone();
        f.rpath = info.rpath.clone();
        f.runpath = info.runpath.clone();
        f.file_version = info.file_version.clone();
    }
    Some(f)
}

/// Parses `ldconfig -p`: `\tlibcudnn.so.8 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.8`.
pub fn parse_ldconfig(out: &str) -> Vec<LdCacheEntry> {
    out.lines()
        .filter_map(|l| {
            let (left, path) = l.split_once(" => ")?;
            let name = left.split_whitespace().next()?;
            Some(LdCacheEntry {
                name: name.to_string(),
                path: path.trim().to_string(),
            })
        })
        .collect()
}

/// The CUDA release in `nvcc --version` output (`Cuda compilation tools, release 11.2, V11.2.152`).
pub fn parse_nvcc_release(out: &str) -> Option<Version> {
    let i = out.find("release ")?;
    let rest = &out[i + 8..];
    let v: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    v.trim_end_matches('.').parse().ok()
}

/// Parses `nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader`.
pub fn parse_nvidia_smi(tool: &str, out: &str) -> DriverInfo {
    let mut d = DriverInfo {
        tool: tool.to_string(),
        output: out.to_string(),
        ..Default::default()
    };
    for line in out.lines().filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split(',').map(str::trim).collect();
        if cols.len() < 2 {
            continue;
        }
        if d.version.is_none() {
            d.version = cols[1].parse().ok();
        }
        d.gpus.push(Gpu {
            name: cols[0].to_string(),
            compute_capability: cols.get(2).and_then(|c| c.parse().ok()),
        });
    }
    d
}

/// A child process whose output is read on a thread (so a full pipe never blocks it).
struct Running {
    child: Child,
    reader: std::thread::JoinHandle<String>,
    /// Standard error, for the message when the child fails (cuDNN prints
    /// "Unable to load any of {…}" there before it aborts).
    errors: std::thread::JoinHandle<String>,
}

impl Running {
    fn spawn(cmd: &mut Command) -> Option<Running> {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .ok()?;
        fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = r.read_to_end(&mut buf);
                String::from_utf8_lossy(&buf).into_owned()
            })
        }
        let reader = drain(child.stdout.take()?);
        let errors = drain(child.stderr.take()?);
        Some(Running {
            child,
            reader,
            errors,
        })
    }

    /// Waits for the child (killing it after [`TOOL_TIMEOUT`]); its output on success.
    fn finish(mut self) -> Result<String, String> {
        let start = Instant::now();
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(st)) => break st,
                Ok(None) if start.elapsed() < TOOL_TIMEOUT => {
                    std::thread::sleep(Duration::from_millis(2))
                }
                Ok(None) => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Err(format!("timed out after {} s", TOOL_TIMEOUT.as_secs()));
                }
                Err(e) => return Err(e.to_string()),
            }
        };
        let out = self.reader.join().unwrap_or_default();
        let errors = self.errors.join().unwrap_or_default();
        if status.success() {
            Ok(out)
        } else {
            // The last lines the child printed say why (stderr first).
            let lines = |t: &str| -> Vec<String> {
                t.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(String::from)
                    .collect()
            };
            let said = match lines(&errors) {
                e if e.is_empty() => lines(&out),
                e => e,
            };
            let tail = said[said.len().saturating_sub(3)..].join(" / ");
            Err(format!("exited with {status}: {tail}"))
        }
    }
}

/// Loads each library in its own child process (`<exe> doctor
/// --query-library PATH`), all at once, so that two copies with the same
/// soname never share a process (a second `libcudnn.so.8` would get the
/// first one's sub-libraries). The library's own folder is put first on the
/// child's loader path (`LD_LIBRARY_PATH`, Windows `PATH`): cuDNN's main
/// library loads its sub-libraries by name, and a build with `DT_RUNPATH`
/// (9.12's, unlike 9.27's `DT_RPATH`) would otherwise answer with the
/// sub-libraries of whatever set comes first — the mixing that
/// `sub-libraries-mixed` warns about, not this file's version. Results in
/// order of `paths`.
pub fn query_in_children(exe: &Path, paths: &[PathBuf]) -> Vec<Result<Loaded, String>> {
    let var = if cfg!(windows) {
        env::PATH
    } else {
        env::LD_LIBRARY_PATH
    };
    let running: Vec<Option<Running>> = paths
        .iter()
        .map(|p| {
            let mut dirs: Vec<PathBuf> = p.parent().map(Path::to_path_buf).into_iter().collect();
            dirs.extend(
                std::env::var_os(var)
                    .map(|v| std::env::split_paths(&v).collect::<Vec<_>>())
                    .unwrap_or_default(),
            );
            let joined = std::env::join_paths(dirs).unwrap_or_default();
            Running::spawn(
                Command::new(exe)
                    .args(["doctor", "--query-library"])
                    .arg(p)
                    .env(var, joined),
            )
        })
        .collect();
    running
        .into_iter()
        .map(|r| {
            let out = r
                .ok_or_else(|| "could not start a child process".to_string())?
                .finish()?;
            parse_query_output(&out)
        })
        .collect()
}

/// The one-line answer of `doctor --query-library`:
/// `{"cudnn":92700,"cudart":12090,"modules":["/x/libcudnn.so.9","/y/libcudnn_graph.so.9"]}`
/// or `{"error":"…"}`.
pub fn query_output(path: &Path) -> String {
    match crate::libcudnn::query_version_and_modules(path) {
        Ok((v, modules)) => serde_json::json!({
            "cudnn": v.cudnn,
            "cudart": v.cudart,
            "modules": modules.iter().map(|m| s(m)).collect::<Vec<_>>(),
        })
        .to_string(),
        Err(e) => serde_json::json!({"error": e.to_string()}).to_string(),
    }
}

fn parse_query_output(out: &str) -> Result<Loaded, String> {
    let v: serde_json::Value =
        serde_json::from_str(out.trim()).map_err(|e| format!("bad answer from the child: {e}"))?;
    if let Some(e) = v.get("error").and_then(|e| e.as_str()) {
        return Err(e.to_string());
    }
    Ok(Loaded {
        version: LibraryVersion {
            cudnn: v
                .get("cudnn")
                .and_then(|x| x.as_u64())
                .ok_or("no cudnn version")?,
            cudart: v.get("cudart").and_then(|x| x.as_u64()).unwrap_or(0),
        },
        modules: v
            .get("modules")
            .and_then(|m| m.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
    })
}

/// Loads in this process (tests and library callers without a cudnnm
/// binary). The modules are not listed: after the first library, this
/// process's map holds every library loaded so far.
pub fn query_in_process(paths: &[PathBuf]) -> Vec<Result<Loaded, String>> {
    paths
        .iter()
        .map(|p| {
            crate::libcudnn::query_version(p)
                .map(|version| Loaded {
                    version,
                    modules: Vec::new(),
                })
                .map_err(|e| e.to_string())
        })
        .collect()
}

/// The `site-packages` folders of the Python environments in sight:
/// `VIRTUAL_ENV`, `CONDA_PREFIX`, every Python on `PATH`, the user site.
fn site_packages(env: &Env) -> Vec<PathBuf> {
    let mut prefixes: Vec<PathBuf> = Vec::new();
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(v) = env.var(var) {
            prefixes.push(PathBuf::from(v));
        }
    }
    let mut sites: Vec<PathBuf> = Vec::new();
    for d in env.path_list(env::PATH) {
        let has_py = if cfg!(windows) {
            d.join("python.exe").is_file()
        } else {
            d.join("python3").exists() || d.join("python").exists()
        };
        if !has_py {
            continue;
        }
        let prefix = if cfg!(windows) {
            if d.file_name()
                .is_some_and(|n| n.eq_ignore_ascii_case("Scripts"))
            {
                d.parent().map(Path::to_path_buf)
            } else {
                Some(d.clone())
            }
        } else {
            d.parent().map(Path::to_path_buf)
        };
        prefixes.extend(prefix);
    }
    if cfg!(windows) {
        if let Some(a) = env.var("APPDATA") {
            for (d, name) in subdirs(&Path::new(&a).join("Python")) {
                if name.starts_with("Python3") {
                    sites.push(d.join("site-packages"));
                }
            }
        }
    } else if let Some(h) = env.var("HOME") {
        prefixes.push(Path::new(&h).join(".local"));
    }
    for p in prefixes {
        if cfg!(windows) {
            sites.push(p.join("Lib").join("site-packages"));
            continue;
        }
        for lib in ["lib", "lib64"] {
            for (d, name) in subdirs(&p.join(lib)) {
                if name.starts_with("python3") {
                    sites.push(d.join("site-packages"));
                    sites.push(d.join("dist-packages"));
                }
            }
        }
        sites.push(p.join("lib/python3/dist-packages"));
    }
    let mut seen = BTreeSet::new();
    sites.retain(|s| s.is_dir() && seen.insert(fs::canonicalize(s).unwrap_or_else(|_| s.clone())));
    sites
}

/// Whether a distribution matters to cuDNN.
fn interesting(name: &str) -> bool {
    name.starts_with("tensorflow")
        || name == "torch"
        || name.starts_with("nvidia-cudnn")
        || name.starts_with("jax")
        || name == "paddlepaddle-gpu"
        || name == "onnxruntime-gpu"
        || name.starts_with("cupy-cuda")
        || name == "ctranslate2"
}

/// Frameworks and cuDNN wheels in the `site-packages` folders, from their
/// `*.dist-info` (name, version, an exact `nvidia-cudnn-*==` requirement).
fn frameworks(sites: &[PathBuf]) -> Vec<Framework> {
    let mut out = Vec::new();
    for site in sites {
        let Ok(rd) = fs::read_dir(site) else { continue };
        let mut infos: Vec<(String, String, PathBuf)> = Vec::new();
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            let Some(base) = n.strip_suffix(".dist-info") else {
                continue;
            };
            let Some((name, version)) = base.split_once('-') else {
                continue;
            };
            let name = name.to_ascii_lowercase().replace(['_', '.'], "-");
            if interesting(&name) {
                infos.push((name, version.to_string(), e.path()));
            }
        }
        infos.sort();
        let installed: BTreeMap<String, String> = infos
            .iter()
            .map(|(n, v, _)| (n.clone(), v.clone()))
            .collect();
        for (name, version, dir) in infos {
            let requirement = if name.starts_with("nvidia-cudnn") {
                None
            } else {
                cudnn_requirement(&dir.join("METADATA"), &installed)
            };
            out.push(Framework {
                name,
                version,
                location: s(site),
                cudnn_requirement: requirement,
            });
        }
    }
    out
}

/// `Requires-Dist: nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux"`
/// → `nvidia-cudnn-cu12==9.1.0.70`. A requirement behind an extra
/// (`extra == "and-cuda"`) counts only when that wheel is installed.
fn cudnn_requirement(metadata: &Path, installed: &BTreeMap<String, String>) -> Option<String> {
    let f = fs::File::open(metadata).ok()?;
    let mut text = String::new();
    f.take(2 << 20).read_to_string(&mut text).ok()?;
    for line in text.lines() {
        if line.is_empty() {
            break;
        }
        let Some(req) = line.strip_prefix("Requires-Dist:") else {
            continue;
        };
        let (spec, marker) = match req.split_once(';') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (req.trim(), ""),
        };
        let spec = spec.replace(' ', "");
        let Some((pkg, ver)) = spec.split_once("==") else {
            continue;
        };
        let pkg = pkg.to_ascii_lowercase().replace('_', "-");
        if !pkg.starts_with("nvidia-cudnn") {
            continue;
        }
        if marker.contains("extra") && !installed.contains_key(&pkg) {
            continue;
        }
        if marker.contains("platform_system")
            && !marker.contains(if cfg!(windows) { "Windows" } else { "Linux" })
        {
            continue;
        }
        return Some(format!("{pkg}=={ver}"));
    }
    None
}

fn describe_source(s: &crate::pin::SpecSource) -> String {
    use crate::pin::SpecSource;
    match s {
        SpecSource::Flag => "--version".into(),
        SpecSource::EnvVar => "CUDNNM_VERSION".into(),
        SpecSource::PinFile { path, line } => format!("{}:{line}", path.display()),
        SpecSource::Default { path } => format!("default in {}", path.display()),
    }
}

/// Copies of a main library larger than this are not hashed to find their
/// store release (cuDNN 7's single library is hundreds of MB; its real name
/// carries the version anyway).
const STORE_MATCH_MAX: u64 = 64 << 20;

/// Sets [`CudnnFile::store_copy`]: for a library inside the store (through
/// its links), the release whose folder holds it; for a main library
/// elsewhere, the release with a file of the same name, size and SHA-256 —
/// a copy taken from the store keeps its version however it is named.
/// Only files whose name and size match a receipt's are hashed.
fn mark_store_copies(files: &mut [CudnnFile], releases: &[Release]) {
    let mut by_name_size: HashMap<(String, u64), Vec<(&Release, &crate::store::FileRecord)>> =
        HashMap::new();
    for r in releases {
        for rec in r.receipt.files.iter().filter(|x| !x.entry.is_link()) {
            let name = rec.path.rsplit('/').next().unwrap_or(&rec.path).to_string();
            by_name_size
                .entry((name, rec.entry.size()))
                .or_default()
                .push((r, rec));
        }
    }
    let copy = |r: &Release, rec: &crate::store::FileRecord, inside: bool| StoreCopy {
        release: r.id(),
        version: r.version().clone(),
        file: rec.path.clone(),
        inside,
    };
    let mut hashes: HashMap<String, Option<crate::hash::Sha256Hex>> = HashMap::new();
    for f in files.iter_mut() {
        let Some(n) = names::classify(file_name(&f.path)) else {
            continue;
        };
        if n.kind != FileKind::Shared || f.dangling {
            continue;
        }
        let real = f.real_path.clone().unwrap_or_else(|| f.path.clone());
        let real_p = Path::new(&real);
        if let Some(r) = releases.iter().find(|r| real_p.starts_with(&r.dir)) {
            let rel = crate::deploy::plan::rel_path(&r.dir, real_p);
            if let Some(rec) = r.receipt.files.iter().find(|x| x.path == rel) {
                f.store_copy = Some(copy(r, rec, true));
            }
            continue;
        }
        if !n.is_main() || f.size > STORE_MATCH_MAX {
            continue;
        }
        let key = (file_name(&real).to_string(), f.size);
        let Some(cands) = by_name_size.get(&key) else {
            continue;
        };
        let sha = hashes
            .entry(real.clone())
            .or_insert_with(|| crate::hash::sha256_file(real_p).ok().map(|(_, h)| h))
            .clone();
        let Some(sha) = sha else { continue };
        if let Some((r, rec)) = cands
            .iter()
            .find(|(_, rec)| rec.entry.sha256() == Some(&sha))
        {
            f.store_copy = Some(copy(r, rec, false));
        }
    }
}

/// The snapshot's record of a store folder without a readable receipt.
fn damaged_release(b: &BrokenRelease) -> DamagedRelease {
    let cuda = b
        .dir
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("cuda-"))
        .and_then(|c| c.parse::<CudaVariant>().ok());
    let version = b
        .dir
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.parse::<Version>().ok());
    DamagedRelease {
        dir: s(&b.dir),
        release: version.zip(cuda).map(|(v, c)| release_id(&v, &c)),
        error: b.error.to_string(),
    }
}

/// A store release whose files differ from its receipt by size, link
/// target or presence (hashing is `verify`'s: cheap checks only here).
fn changed_release(r: &Release) -> Option<ChangedRelease> {
    let mut files = Vec::new();
    for f in &r.receipt.files {
        let p = r.dir.join(&f.path);
        let problem = match (fs::symlink_metadata(&p), f.entry.link_target()) {
            (Err(_), _) => Some("missing".to_string()),
            (Ok(m), Some(want)) if !m.file_type().is_symlink() => {
                Some(format!("a regular file, expected a link to {want}"))
            }
            (Ok(_), Some(want)) => {
                let got = fs::read_link(&p).map(|t| s(&t)).unwrap_or_default();
                (got != want).then(|| format!("links to {got}, expected {want}"))
            }
            (Ok(m), None) if m.file_type().is_symlink() => Some("a link, expected a file".into()),
            (Ok(m), None) => {
                let size = f.entry.size();
                (m.len() != size).then(|| format!("{} bytes, expected {size}", m.len()))
            }
        };
        if let Some(pr) = problem {
            files.push(format!("{}: {pr}", f.path));
        }
    }
    if files.is_empty() {
        return None;
    }
    let (reinstall, reinstall_is_file) = super::verify::reinstall_arg(&r.id(), &r.receipt.source);
    Some(ChangedRelease {
        release: r.id(),
        dir: s(&r.dir),
        files,
        reinstall,
        reinstall_is_file,
    })
}

/// What is at each path cudnnm placed, against what it placed.
fn deployment_states(
    releases: &[Release],
    deployments: &Deployments,
    windows: bool,
) -> Vec<DeploymentState> {
    deployments
        .entries
        .iter()
        .map(|d| {
            let release = releases.iter().find(|r| r.release_id() == d.release);
            let receipt = release.map(|r| &r.receipt);
            let files = d
                .files
                .iter()
                .map(|p| {
                    let state = match fs::symlink_metadata(&p.path) {
                        Err(_) => FileState::Missing,
                        Ok(m) if m.file_type().is_symlink() => FileState::Link {
                            target: fs::read_link(&p.path).map(|t| s(&t)).unwrap_or_default(),
                        },
                        Ok(m) => FileState::File { size: m.len() },
                    };
                    // A file a rollback restored is expected as recorded.
                    let restored = crate::deploy::status::restored_from_backup(p, receipt);
                    let from = p.from.release_path();
                    let expected_size = if p.entry.is_link() {
                        None
                    } else if restored.is_some() {
                        Some(p.entry.size())
                    } else {
                        receipt
                            .and_then(|r| r.files.iter().find(|f| Some(f.path.as_str()) == from))
                            .map(|f| f.entry.size())
                    };
                    let store_file = matches!(state, FileState::File { .. })
                        && release.is_some_and(|r| {
                            from.is_some_and(|from| {
                                crate::platform::same_file(&p.path, &r.dir.join(from))
                            })
                        });
                    PlacedState {
                        store_file,
                        path: s(&p.path),
                        from: p.from.to_string(),
                        expected_link: p.entry.link_target().map(str::to_string),
                        expected_size,
                        restored,
                        state,
                    }
                })
                .collect();
            // Found where `use` looks (`targets/<arch>/…` included), as
            // `current` and `verify` find them.
            let extra = Toolkit::at(&d.toolkit, "deployments.toml", windows)
                .map(|t| crate::deploy::status::extra_files(d, &t))
                .unwrap_or_default()
                .iter()
                .map(|p| s(p))
                .collect();
            DeploymentState {
                toolkit: s(&d.toolkit),
                release: d.release.to_string(),
                mode: format!("{:?}", d.mode).to_ascii_lowercase(),
                files,
                extra,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_failed_child_is_described_by_what_it_printed_last() {
        // As cuDNN does before it aborts: the reason goes to stderr.
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            "echo partial; echo 'Unable to load any of {libcudnn_graph.so.9.1.0}' >&2; kill -ABRT $$",
        ]);
        let err = Running::spawn(&mut cmd).unwrap().finish().unwrap_err();
        assert!(err.contains("SIGABRT"), "{err}");
        assert!(
            err.ends_with(": Unable to load any of {libcudnn_graph.so.9.1.0}"),
            "{err}"
        );
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo only stdout; exit 3"]);
        let err = Running::spawn(&mut cmd).unwrap().finish().unwrap_err();
        assert!(err.ends_with(": only stdout"), "{err}");
    }

    #[test]
    fn parses_tool_outputs() {
        let ld = "1234 libs found in cache `/etc/ld.so.cache'\n\tlibcudnn.so.8 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.8\n\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1\nCache generated by: ldconfig (GNU libc) stable release version 2.36\n";
        let e = parse_ldconfig(ld);
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].name, "libcudnn.so.8");
        assert_eq!(e[1].path, "/lib/x86_64-linux-gnu/libz.so.1");
        let nv = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 11.2, V11.2.152\nBuild cuda_11.2.r11.2/compiler.29618528_0\n";
        assert_eq!(parse_nvcc_release(nv).unwrap().to_string(), "11.2");
        let smi = "NVIDIA GeForce RTX 3080, 550.54.15, 8.6\nTesla K80, 550.54.15, 3.7\n";
        let d = parse_nvidia_smi("nvidia-smi", smi);
        assert_eq!(d.version.unwrap().to_string(), "550.54.15");
        assert_eq!(d.gpus.len(), 2);
        assert_eq!(
            d.gpus[1].compute_capability.as_ref().unwrap().to_string(),
            "3.7"
        );
        assert!(parse_nvidia_smi("x", "garbage").version.is_none());
        assert!(parse_query_output("{\"error\":\"nope\"}").is_err());
        assert_eq!(
            parse_query_output("{\"cudnn\":92700,\"cudart\":12090}")
                .unwrap()
                .version
                .cudnn,
            92700
        );
        let l = parse_query_output(
            "{\"cudnn\":91200,\"cudart\":12090,\"modules\":[\"/a/libcudnn.so.9\",\"/b/libcudnn_graph.so.9\"]}",
        )
        .unwrap();
        assert_eq!(
            l.modules,
            vec!["/a/libcudnn.so.9", "/b/libcudnn_graph.so.9"]
        );
        assert!(parse_query_output("not json").is_err());
    }

    /// A CUDA 12.4.1 toolkit folder (`version.json`, `include/`, `lib64/`).
    #[cfg(unix)]
    fn toolkit_folder(root: &Path) {
        fs::create_dir_all(root.join("include")).unwrap();
        fs::create_dir_all(root.join("lib64")).unwrap();
        fs::write(
            root.join("version.json"),
            r#"{"cuda":{"name":"CUDA SDK","version":"12.4.1"}}"#,
        )
        .unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn toolkits_come_from_the_toolkit_module_named_as_their_source_wrote_them() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("cuda-12.4");
        toolkit_folder(&real);
        let link = d.path().join("cuda");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let versionless = d.path().join("no-version");
        fs::create_dir_all(versionless.join("include")).unwrap();
        let missing = d.path().join("missing");
        let deployed = d.path().join("deployed-elsewhere");
        toolkit_folder(&deployed);
        let env = Env::from_vars([("CUDA_HOME", link.clone().into_os_string())], "/", false);
        let opts = Options {
            cuda_roots: vec![versionless.clone(), missing.clone(), real.clone()],
            query: None,
            run_tools: false,
        };
        let deployments = Deployments {
            entries: vec![crate::deploy::Deployment {
                toolkit: deployed.clone(),
                release: "9.27.0.42_cuda12".parse().unwrap(),
                mode: crate::deploy::Mode::Symlink,
                deployed_at: "2026-01-01T00:00:00Z".into(),
                backup: None,
                source: None,
                files: Vec::new(),
            }],
        };
        let mut notes = Vec::new();
        let found: Vec<ToolkitInfo> = find_toolkits(&env, &opts, &deployments, &mut notes)
            .into_iter()
            .filter(|t| t.root.starts_with(&*d.path().to_string_lossy()))
            .collect();
        let roots: Vec<&str> = found.iter().map(|t| t.root.as_str()).collect();
        assert_eq!(
            roots,
            vec![
                s(&versionless).as_str(),
                s(&real).as_str(),
                s(&deployed).as_str()
            ],
            "CUDA_HOME names the --cuda-root toolkit through a link: listed once"
        );
        assert_eq!(found[0].cuda, None);
        assert_eq!(found[0].found_by, "--cuda-root");
        assert_eq!(found[1].cuda, Some("12.4.1".parse().unwrap()));
        assert_eq!(found[1].layout, ToolkitLayout::Linux);
        assert_eq!(found[2].found_by, "cudnnm deployment");
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            notes[0].contains("could not read the CUDA version") && notes[0].contains("no-version"),
            "{notes:?}"
        );
        assert_eq!(
            notes[1],
            format!("--cuda-root {}: no such folder", missing.display())
        );

        // Without --cuda-root the variable's own spelling is kept, so checks
        // that compare CUDA_HOME with the toolkit roots find it.
        let opts = Options {
            cuda_roots: Vec::new(),
            query: None,
            run_tools: false,
        };
        let mut notes = Vec::new();
        let found = find_toolkits(&env, &opts, &Deployments::default(), &mut notes);
        let t = found
            .iter()
            .find(|t| t.root.starts_with(&*d.path().to_string_lossy()))
            .unwrap();
        assert_eq!(t.root, s(&link));
        assert_eq!(t.found_by, "CUDA_HOME");
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn requirement_markers() {
        let d = tempfile::tempdir().unwrap();
        let m = d.path().join("METADATA");
        fs::write(&m, "Name: torch\nRequires-Dist: filelock\nRequires-Dist: nvidia-cudnn-cu12 ==9.1.0.70; platform_system == \"Linux\" and platform_machine == \"x86_64\"\n\nbody Requires-Dist: nvidia-cudnn-cu12==1\n").unwrap();
        let none = BTreeMap::new();
        let want = if cfg!(windows) {
            None
        } else {
            Some("nvidia-cudnn-cu12==9.1.0.70".to_string())
        };
        assert_eq!(cudnn_requirement(&m, &none), want);
        fs::write(
            &m,
            "Name: tensorflow\nRequires-Dist: nvidia-cudnn-cu12==8.9.4.25; extra == \"and-cuda\"\n",
        )
        .unwrap();
        assert_eq!(cudnn_requirement(&m, &none), None);
        let mut with = BTreeMap::new();
        with.insert("nvidia-cudnn-cu12".to_string(), "8.9.4.25".to_string());
        assert_eq!(
            cudnn_requirement(&m, &with).unwrap(),
            "nvidia-cudnn-cu12==8.9.4.25"
        );
    }
}

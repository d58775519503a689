//! Finding toolkits: the environment (`CUDA_PATH`, `CUDA_HOME`,
//! `CUDA_PATH_VX_Y`, `nvcc` on PATH) and the default install folders.

use std::path::{Path, PathBuf};

use super::{Toolkit, canonical};
use crate::env::{self, Env};
use crate::version::Version;

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
pub(super) fn windows_cuda_parent(env: &Env) -> PathBuf {
    let pf = env
        .var("ProgramFiles")
        .unwrap_or_else(|| r"C:\Program Files".to_string());
    PathBuf::from(pf)
        .join("NVIDIA GPU Computing Toolkit")
        .join("CUDA")
}

/// One place a toolkit might be, with how it was named.
#[derive(Clone, Debug)]
pub(super) struct Candidate {
    /// The root as named.
    pub(super) root: PathBuf,
    /// What named it (`CUDA_PATH`, `default folder`).
    pub(super) found_by: String,
    /// Named by the user's environment (variables, nvcc on PATH) or the
    /// "current" link `/usr/local/cuda`, rather than a folder scan.
    pub(super) preferred: bool,
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

/// Every place a toolkit might be, in the order [`discover`] reports them.
pub(super) fn candidates(env: &Env, defaults: &DefaultFolders) -> Vec<Candidate> {
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
pub(super) fn cuda_path_var_version(name: &str) -> Option<Version> {
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

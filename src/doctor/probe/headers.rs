//! The cuDNN headers a compiler finds, in the order it searches. First the
//! `include` folder of the toolkit in use, which `nvcc` adds itself as a
//! `-I` (its `nvcc.profile`: `INCLUDES += "-I$(TOP)/$(_TARGET_DIR_)/include"`)
//! and `-I` folders come before every variable (source `nvcc -I`; a build
//! without nvcc skips it); then on Linux the folders of `CPATH`,
//! `C_INCLUDE_PATH` and `CPLUS_INCLUDE_PATH` (gcc's documented order after
//! `-I`, <https://gcc.gnu.org/onlinedocs/cpp/Environment-Variables.html>), on
//! Windows those of `INCLUDE` (MSVC,
//! <https://learn.microsoft.com/en-us/cpp/build/reference/cl-environment-variables>);
//! then the other toolkits' `include` folders (a build's own `-I`), then the
//! system folders (`/usr/local/include`, `/usr/include/<triplet>`,
//! `/usr/include`, gcc's default order).

use std::path::{Path, PathBuf};

use super::environment::triplet;
use super::s;
use crate::archive::header;
use crate::doctor::snapshot::{CompilerHeader, Snapshot};
use crate::env::Env;

/// The header names looked for in each folder, the one a build includes first.
const NAMES: [&str; 2] = ["cudnn.h", "cudnn_version.h"];

/// Fills [`Snapshot::compiler_headers`]; call after the toolkits are known.
pub(crate) fn probe(snap: &mut Snapshot, env: &Env) {
    let windows = env.is_windows();
    let mut dirs: Vec<(String, PathBuf)> = Vec::new();
    let vars: &[&str] = if windows {
        &["INCLUDE"]
    } else {
        &["CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH"]
    };
    if let Some(inc) = nvcc_include(snap, env) {
        dirs.push(("nvcc -I".into(), inc));
    }
    for var in vars {
        for d in env.path_list(var) {
            dirs.push((var.to_string(), d));
        }
    }
    for t in &snap.toolkits {
        dirs.push(("toolkit".into(), Path::new(&t.root).join("include")));
    }
    if !windows {
        dirs.push(("system".into(), PathBuf::from("/usr/local/include")));
        if let Some(t) = triplet() {
            dirs.push(("system".into(), Path::new("/usr/include").join(t)));
        }
        dirs.push(("system".into(), PathBuf::from("/usr/include")));
    }
    let mut seen: Vec<PathBuf> = Vec::new();
    for (source, dir) in dirs {
        // One folder under two spellings (a toolkit through its link) once.
        let key = crate::fsops::canonical_or_self(&dir);
        if dir.as_os_str().is_empty() || seen.contains(&key) {
            continue;
        }
        seen.push(key);
        for name in NAMES {
            let path = dir.join(name);
            if !path.is_file() {
                continue;
            }
            snap.compiler_headers.push(CompilerHeader {
                source: source.clone(),
                path: s(&path),
                chain: chain(&path).iter().map(|p| s(p)).collect(),
                version: header::read_version(&path),
            });
        }
    }
}

/// The `include` folder `nvcc` adds with its own `-I`: that of the toolkit
/// whose `bin` holds the `nvcc` on `PATH`, else of the one `CUDA_PATH` /
/// `CUDA_HOME` names, when it is one of the toolkits found.
fn nvcc_include(snap: &Snapshot, env: &Env) -> Option<PathBuf> {
    let exe = if env.is_windows() { "nvcc.exe" } else { "nvcc" };
    let root = super::find_on(&env.path_list(crate::env::PATH), exe)
        .and_then(|n| n.parent()?.parent().map(Path::to_path_buf))
        .or_else(|| {
            ["CUDA_PATH", "CUDA_HOME"]
                .iter()
                .find_map(|v| env.var(v))
                .map(PathBuf::from)
        })?;
    let known = snap
        .toolkits
        .iter()
        .any(|t| crate::fsops::canonical(Path::new(&t.root)) == crate::fsops::canonical(&root));
    known.then(|| root.join("include"))
}

/// The links followed from `path` (`/usr/include/cudnn.h` →
/// `/etc/alternatives/libcudnn` → `/usr/include/x86_64-linux-gnu/cudnn_v7.h`);
/// empty when it is no link. At most 40 steps, as the kernel allows.
fn chain(path: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut cur = path.to_path_buf();
    for _ in 0..40 {
        let Ok(t) = std::fs::read_link(&cur) else {
            break;
        };
        let next = match cur.parent() {
            Some(p) if t.is_relative() => p.join(&t),
            _ => t,
        };
        out.push(next.clone());
        cur = next;
    }
    out
}

#[cfg(all(test, unix))]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;

    #[test]
    fn chain_follows_relative_and_absolute_links() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("x/cudnn_v7.h");
        std::fs::create_dir_all(real.parent().unwrap()).unwrap();
        std::fs::write(&real, "#define CUDNN_MAJOR 7\n").unwrap();
        let alt = d.path().join("alt");
        std::os::unix::fs::symlink(&real, &alt).unwrap();
        let h = d.path().join("cudnn.h");
        std::os::unix::fs::symlink("alt", &h).unwrap();
        assert_eq!(chain(&h), vec![alt, real.clone()]);
        assert!(chain(&real).is_empty());
    }
}

//! The identity probe: which folders the snapshot names are one folder
//! under two spellings (`/usr/local/cuda/lib64` through the link
//! `/usr/local/cuda -> cuda-12.4`), and which do not exist. Checks compare
//! places by what they are ([`crate::doctor::Snapshot::same_place`]), never
//! by how they are spelled; the resolved paths are recorded so that a saved
//! snapshot is judged the same way on another machine.

use std::collections::BTreeSet;
use std::path::Path;

use super::s;
use crate::doctor::snapshot::{FolderIdentity, Snapshot};
use crate::doctor::spath;
use crate::env::Env;

/// Path-list variables whose entries name folders worth resolving.
pub(crate) const LIST_VARS: [&str; 10] = [
    "CPATH",
    "C_INCLUDE_PATH",
    "CPLUS_INCLUDE_PATH",
    "LIBRARY_PATH",
    "INCLUDE",
    "LIB",
    "CUDNN_PATH",
    "CUDNN_HOME",
    "CUDNN_INCLUDE_DIR",
    "CUDNN_LIBRARY_DIR",
];

/// Fills [`Snapshot::folders`]; call last, when every path is in the snapshot.
pub(crate) fn probe(snap: &mut Snapshot, env: &Env) {
    let w = env.is_windows();
    let mut named: Vec<String> = Vec::new();
    named.extend(snap.dirs.iter().map(|d| d.path.clone()));
    named.extend(snap.toolkits.iter().map(|t| t.root.clone()));
    named.extend(snap.ld_library_path.iter().cloned());
    named.extend(snap.path.iter().cloned());
    named.extend(snap.system_dirs.iter().cloned());
    named.extend(snap.deployments.iter().map(|d| d.toolkit.clone()));
    named.extend(snap.frameworks.iter().map(|f| f.location.clone()));
    named.extend(
        snap.files
            .iter()
            .filter_map(|f| spath::parent(&f.path, w))
            .chain(snap.files.iter().map(|f| f.root.clone())),
    );
    named.extend(
        snap.compiler_headers
            .iter()
            .filter_map(|h| spath::parent(&h.path, w)),
    );
    named.extend(
        snap.ld_cache
            .iter()
            .filter_map(|e| spath::parent(&e.path, w)),
    );
    named.extend(snap.modules.iter().flat_map(|m| m.folders.iter().cloned()));
    if let Some(n) = &snap.nvcc {
        named.extend(spath::parent(&n.path, w));
    }
    for var in [
        "CUDA_PATH",
        "CUDA_HOME",
        "CUDA_ROOT",
        "CONDA_PREFIX",
        "VIRTUAL_ENV",
    ] {
        named.extend(env.var(var));
    }
    for var in LIST_VARS {
        named.extend(env.path_list(var).iter().map(|p| s(p)));
    }
    if !snap.cwd.is_empty() {
        named.push(snap.cwd.clone());
    }
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for p in named {
        if p.is_empty() || !seen.insert(spath::key(&p, w)) {
            continue;
        }
        if let Some(id) = identity(&p, w) {
            snap.folders.push(id);
        }
    }
}

/// What `path` is, when it is worth recording: a folder whose resolved path
/// is spelled otherwise, or a path that does not exist. `None` for a path
/// that is already its own resolved path.
fn identity(path: &str, w: bool) -> Option<FolderIdentity> {
    let p = Path::new(path);
    match crate::fsops::canonical(p) {
        Some(real) => {
            let real = s(&real);
            (!spath::same(&real, path, w)).then(|| FolderIdentity {
                path: path.to_string(),
                real: Some(real),
            })
        }
        // Gone (or a dangling link): recorded as missing. A path this user
        // may not resolve is left out rather than called missing.
        None => (std::fs::symlink_metadata(p)
            .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
            || (p.is_symlink() && !p.exists()))
        .then(|| FolderIdentity {
            path: path.to_string(),
            real: None,
        }),
    }
}

#[cfg(all(test, unix))]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;

    #[test]
    fn a_link_to_a_toolkit_is_recorded_with_its_real_folder() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("cuda-12.4");
        std::fs::create_dir_all(real.join("lib64")).unwrap();
        std::os::unix::fs::symlink("cuda-12.4", d.path().join("cuda")).unwrap();
        let base = crate::fsops::canonical(d.path()).unwrap();
        let link = s(&base.join("cuda/lib64"));
        let got = identity(&link, false).unwrap();
        assert_eq!(
            got.real.as_deref(),
            Some(s(&base.join("cuda-12.4/lib64")).as_str())
        );
        assert_eq!(identity(&s(&base.join("cuda-12.4/lib64")), false), None);
        let gone = identity(&s(&base.join("removed")), false).unwrap();
        assert_eq!(gone.real, None);
    }
}

//! The probes [`super::gather`] runs: each looks at one part of the machine
//! and fills its part of the [`super::Snapshot`]. Which OS the snapshot
//! describes is the injected [`crate::env::Env`]'s to say
//! ([`crate::env::Env::is_windows`]), never the build's; what differs by host
//! (registry, Windows version, write access) comes from [`crate::platform`].
//! Text tools' outputs are read by pure parsers with tests beside them.
//!
//! - `environment.rs`: OS, the variables that matter, `PATH` /
//!   `LD_LIBRARY_PATH`, the loader's fixed folders, the registry `PATH`.
//! - `toolkits.rs`: CUDA toolkits, unfinished changes to them, `nvcc`.
//! - `folders.rs`: which folders to list (toolkits, loader path entries and
//!   what is just below them, system and Python folders).
//! - `ldcache.rs`: the ld.so cache (`ldconfig -p`).
//! - `files.rs`: every cuDNN file (links, headers, binary details, origin)
//!   and the folder listings.
//! - `store.rs`: the cudnnm store (copies of its releases, damage).
//! - `deployments.rs`: what cudnnm placed in toolkits, against what is there.
//! - `loads.rs`: each main library loaded in a child process.
//! - `python.rs`: `site-packages` folders, frameworks and cuDNN wheels.
//! - `consumers.rs`: the frameworks' own libraries that load cuDNN.
//! - `pin.rs`: the release pinned for the working folder.
//! - `netfs.rs`: cudnnm's folders on network file systems.
//! - `gpu.rs`: the driver and GPUs (`nvidia-smi`).
//! - `headers.rs`: the cuDNN headers a compiler finds, in its search order.
//! - `identity.rs`: which folders are one folder under two spellings, and
//!   which are gone.

pub(super) mod consumers;
pub(super) mod deployments;
pub(super) mod environment;
pub(super) mod files;
pub(super) mod folders;
pub(super) mod gpu;
pub(super) mod headers;
pub(super) mod identity;
pub(super) mod ldcache;
pub(super) mod loads;
pub(super) mod netfs;
pub(super) mod pin;
pub(super) mod python;
pub(super) mod store;
pub(super) mod toolkits;

use std::fs;
use std::path::{Path, PathBuf};

/// A host path as snapshot text.
fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The last component of a host path string.
fn file_name(p: &str) -> &str {
    Path::new(p)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(p)
}

/// The first `name` in `dirs` that is a file.
fn find_on(dirs: &[PathBuf], name: &str) -> Option<PathBuf> {
    dirs.iter().map(|d| d.join(name)).find(|p| p.is_file())
}

/// The folders in `dir` (links to folders included), with their names, sorted.
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

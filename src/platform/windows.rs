//! Windows implementations: junctions for folder links (no admin needed),
//! retries for files held by scanners, volume checks for hard links.

use std::fs::Metadata;
use std::io;
use std::os::windows::fs::MetadataExt;
use std::path::{Component, Path};

const ERROR_ACCESS_DENIED: i32 = 5;
const ERROR_SHARING_VIOLATION: i32 = 32;
const ERROR_LOCK_VIOLATION: i32 = 33;
const ERROR_NOT_SAME_DEVICE: i32 = 17;
const FILE_ATTRIBUTE_REPARSE_POINT: u32 = 0x400;

/// True for errors that mean "the file is busy for a moment" (a scanner or
/// indexer holding a freshly written file): sharing/lock violation, access denied.
pub fn is_transient_busy(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(ERROR_SHARING_VIOLATION) | Some(ERROR_LOCK_VIOLATION) | Some(ERROR_ACCESS_DENIED)
    )
}

/// True when a rename failed because the paths are on different volumes.
pub fn is_cross_device(e: &io::Error) -> bool {
    e.raw_os_error() == Some(ERROR_NOT_SAME_DEVICE) || e.kind() == io::ErrorKind::CrossesDevices
}

/// Creates a symbolic link to a file (needs Developer Mode or admin on Windows).
pub fn symlink_file(target: &Path, link: &Path) -> io::Result<()> {
    std::os::windows::fs::symlink_file(target, link)
}

/// Creates a folder link: a junction where the filesystem supports it (no
/// admin needed), else a directory symbolic link.
pub fn link_dir(target: &Path, link: &Path) -> io::Result<()> {
    match junction::create(target, link) {
        Ok(()) => Ok(()),
        Err(_) => {
            let _ = std::fs::remove_dir(link);
            std::os::windows::fs::symlink_dir(target, link)
        }
    }
}

/// True when `meta` describes a symbolic link or a junction (any reparse point).
pub fn is_link(meta: &Metadata, _path: &Path) -> bool {
    meta.file_type().is_symlink() || meta.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0
}

/// Removes a link: folder links with `remove_dir`, file links with `remove_file`.
pub fn remove_link(path: &Path, meta: &Metadata) -> io::Result<()> {
    if meta.is_dir() {
        std::fs::remove_dir(path)
    } else {
        std::fs::remove_file(path)
    }
}

/// True when `a` and `b` are on the same volume (same drive letter or UNC share).
pub fn same_volume(a: &Path, b: &Path) -> bool {
    fn prefix(p: &Path) -> Option<String> {
        let p = std::fs::canonicalize(p).ok()?;
        match p.components().next()? {
            Component::Prefix(x) => Some(x.as_os_str().to_string_lossy().to_ascii_lowercase()),
            _ => None,
        }
    }
    matches!((prefix(a), prefix(b)), (Some(x), Some(y)) if x == y)
}

/// The parent process's name. Not looked up on Windows (it would need the
/// Tool Help API); `env` falls back to PowerShell unless `--shell` says otherwise.
pub fn parent_process_name() -> Option<String> {
    None
}

/// Creates a folder link and says which kind was made: a junction (no admin
/// needed), else a directory symbolic link (Developer Mode or admin) where
/// junctions are unsupported (e.g. wine, some network shares).
pub fn link_dir_kind(target: &Path, link: &Path) -> io::Result<super::DirLinkKind> {
    match junction::create(target, link) {
        Ok(()) => Ok(super::DirLinkKind::Junction),
        Err(_) => {
            let _ = std::fs::remove_dir(link);
            std::os::windows::fs::symlink_dir(target, link).map(|()| super::DirLinkKind::Symlink)
        }
    }
}

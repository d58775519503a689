//! Removal of what cudnnm owns: single files and links, whole trees (read-only
//! bits lifted only where the OS insists), and folders left empty.

#![allow(clippy::disallowed_methods)] // the one place files change
use std::fs;
use std::io;
use std::path::Path;

use super::{retry_busy, set_readonly};
use crate::error::{Error, IoResultExt, Result};
use crate::platform;

/// Removes one file or link (never a folder), making it writable first when
/// needed (Windows refuses to delete read-only files).
pub fn remove_file(path: &Path) -> Result<()> {
    match retry_busy(|| fs::remove_file(path)) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            let _ = set_readonly(path, false);
            retry_busy(|| fs::remove_file(path)).with_path("remove", path)
        }
        Err(e) => Err(Error::io("remove", path, e)),
    }
}

/// Removes a folder tree that cudnnm owns (store release, partial import,
/// backup). Missing is fine. Read-only bits are cleared only when the
/// removal is refused for them (Windows will not delete a read-only file;
/// Unix does not care): a file in the tree may be a hard link to a store
/// file — a backup of a hardlink deployment — and clearing the bit of one
/// link clears it for the store's file too. The tree is walked through
/// folder handles without following a link ([`platform::dir::Dir`]): a
/// link put in place of a folder of it is removed as a link, and nothing
/// outside the tree changes, whoever runs this.
pub fn remove_dir_all(path: &Path) -> Result<()> {
    remove_tree_at(path)
}

/// Removes a folder tree that cudnnm wrote and that holds no hard link
/// to anything else (an `export dir` folder, all copies), as
/// [`remove_dir_all`] does: a folder a user made read-only (`chmod a-w`)
/// is made writable by its owner first, through its handle, so it does not
/// stop the removal; nothing is followed through a link. Missing is fine.
///
/// # Errors
/// When the tree cannot be removed even so (a folder owned by another
/// user, a mount point, a read-only file system).
pub fn remove_own_tree(path: &Path) -> Result<()> {
    remove_tree_at(path)
}

/// Removes `path` (a folder tree, a file or a link) relative to a handle
/// of the folder holding it.
fn remove_tree_at(path: &Path) -> Result<()> {
    let Some(name) = path.file_name() else {
        return Err(Error::msg(format!(
            "could not remove '{}': it names no entry of a folder",
            path.display()
        )));
    };
    let parent = super::parent_of(path);
    let dir = match platform::dir::Dir::open(parent) {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("open", parent, e)),
    };
    retry_busy(|| dir.remove_tree(name)).with_path("remove", path)
}

/// Removes `dir` when it is an empty folder; returns whether it did.
/// Missing or non-empty folders are left alone without error.
pub fn remove_dir_if_empty(dir: &Path) -> bool {
    fs::remove_dir(dir).is_ok()
}

/// Removes the temporary files of [`super::write_atomic`] (`.tmp-*`) that a
/// killed process left in `dir`: only plain files not changed for
/// `older_than`, so that no write in progress (milliseconds long) loses its
/// file. Returns how many it removed. Best effort.
pub fn sweep_stale_temps(dir: &Path, older_than: std::time::Duration) -> usize {
    let Ok(rd) = fs::read_dir(dir) else {
        return 0;
    };
    let now = std::time::SystemTime::now();
    let mut n = 0;
    for e in rd.flatten() {
        if !e.file_name().to_string_lossy().starts_with(".tmp-") {
            continue;
        }
        let Ok(meta) = e.path().symlink_metadata() else {
            continue;
        };
        let old = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age >= older_than);
        if meta.is_file() && old && fs::remove_file(e.path()).is_ok() {
            n += 1;
        }
    }
    n
}

//! Removal of what cudnnm owns: single files and links, whole trees (read-only
//! bits lifted only where the OS insists), and folders left empty.

#![allow(clippy::disallowed_methods)] // the one place files change
use std::fs;
use std::io;
use std::path::Path;

use super::{retry_busy, set_readonly};
use crate::error::{Error, IoResultExt, Result};

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
/// link clears it for the store's file too.
pub fn remove_dir_all(path: &Path) -> Result<()> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("inspect", path, e)),
        Ok(_) => {}
    }
    match retry_busy(|| fs::remove_dir_all(path)) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {}
        Err(e) => return Err(Error::io("remove", path, e)),
    }
    for entry in walkdir::WalkDir::new(path).into_iter().flatten() {
        if entry.file_type().is_file() {
            let _ = set_readonly(entry.path(), false);
        }
    }
    retry_busy(|| fs::remove_dir_all(path)).with_path("remove", path)
}

/// Removes a folder tree that cudnnm wrote and that holds no hard link
/// to anything else (an `export dir` folder, all copies): every folder and
/// file in it is made writable by its owner first, so a folder a user
/// made read-only (`chmod a-w`) does not stop the removal. Missing is fine.
///
/// # Errors
/// When the tree cannot be removed even so (a folder owned by another
/// user, a mount point, a read-only file system).
pub fn remove_own_tree(path: &Path) -> Result<()> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("inspect", path, e)),
        Ok(m) if !m.is_dir() => return super::remove_file(path),
        Ok(_) => {}
    }
    // Top-down (walkdir's order), so each folder is writable before its
    // entries go; links are left alone (their targets are not ours).
    for entry in walkdir::WalkDir::new(path).into_iter().flatten() {
        if !entry.file_type().is_symlink() {
            let _ = set_readonly(entry.path(), false);
        }
    }
    retry_busy(|| fs::remove_dir_all(path)).with_path("remove", path)
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

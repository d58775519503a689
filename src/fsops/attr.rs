//! File attributes cudnnm sets (the read-only bit, modification times) and
//! the probe that a folder accepts new entries.

#![allow(clippy::disallowed_methods)] // the one place files change
use std::fs::{self, File};
use std::io;
use std::path::Path;
use std::time::Duration;

use crate::error::{Error, IoResultExt, Result};
use crate::platform;

/// Sets or clears the read-only permission of a file (not of a link's target).
pub fn set_readonly(path: &Path, readonly: bool) -> Result<()> {
    let meta = fs::symlink_metadata(path).with_path("inspect", path)?;
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    let mut perm = meta.permissions();
    platform::set_readonly_bits(&mut perm, readonly);
    fs::set_permissions(path, perm).with_path("change permissions of", path)
}

/// Makes the tree at `dir` readable by every user and read-only: folders
/// 0755, files 0444 (0555 when executable), links left alone; on Windows
/// files read-only. Each entry is changed through the handle of the folder
/// holding it, without following a link ([`platform::dir::Dir`]), the
/// folder itself last.
///
/// # Errors
/// When an entry cannot be listed or its permissions set.
pub fn make_tree_shared(dir: &Path) -> Result<()> {
    let top = platform::dir::Dir::open(dir).with_path("open", dir)?;
    make_tree_shared_at(&top)
}

/// [`make_tree_shared`] for a folder held open.
///
/// # Errors
/// As [`make_tree_shared`].
pub fn make_tree_shared_at(top: &platform::dir::Dir) -> Result<()> {
    let dir = top.path();
    top.walk(&mut |d, name, kind| {
        let mode = match kind {
            platform::dir::EntryKind::Dir => 0o755,
            platform::dir::EntryKind::File if d.mode(name)? & 0o111 != 0 => 0o555,
            platform::dir::EntryKind::File => 0o444,
            _ => return Ok(()),
        };
        d.set_mode(name, mode)
    })
    .with_path("change permissions in", dir)?;
    top.set_own_mode(0o755)
        .with_path("change permissions of", dir)
}

/// Makes the one folder or file at `path` readable by every user (see
/// [`make_tree_shared`]): the folders above a system release.
///
/// # Errors
/// When its permissions cannot be set.
pub fn make_shared(path: &Path) -> Result<()> {
    let meta = fs::symlink_metadata(path).with_path("inspect", path)?;
    platform::make_shared_read_only(path, &meta).with_path("change permissions of", path)
}

/// After a command that root ran on a home owned by another user (`sudo
/// cudnnm --home ~user/… use …`, as the rights hint for a root-owned toolkit
/// says): gives what it created there — folders, records, store files, the
/// lock — to the home's owner, so that the user's own commands can read and
/// change their home afterwards. The files inside a backup
/// (`backups/<id>/files/…`) keep their owner: they are a toolkit's files,
/// and a rollback puts them back as they were. Best effort (an entry that
/// cannot be changed is left); nothing happens unless this process runs as
/// root and the home is another user's.
pub fn give_home_to_its_owner(root: &Path) {
    let Some((uid, gid)) = platform::foreign_owner_under_root(root) else {
        return;
    };
    // Through folder handles, never following a link: the home is the
    // user's, who could otherwise swap a folder for a link to a file of
    // root's between two steps of the walk.
    let Ok(top) = platform::dir::Dir::open(root) else {
        return;
    };
    let _ = top.walk(&mut |d, name, kind| {
        if !is_backup_payload(
            root,
            &d.path().join(name),
            kind == platform::dir::EntryKind::Dir,
        ) {
            let _ = d.set_owner(name, uid, gid);
        }
        Ok(())
    });
}

/// Whether `path` is a file or link inside a backup's `files/` folder.
fn is_backup_payload(root: &Path, path: &Path, dir: bool) -> bool {
    let Ok(rel) = path.strip_prefix(root) else {
        return false;
    };
    let parts: Vec<_> = rel.components().collect();
    !dir && parts.len() > 3 && parts[0].as_os_str() == "backups" && parts[2].as_os_str() == "files"
}

/// Keeps the system home at `root` writable only by administrators
/// ([`platform::protect_system_home`]: on Windows its own DACL, Users read
/// and execute; on Unix the modes already do it).
///
/// # Errors
/// When the ACL cannot be set (names the folder).
pub fn protect_system_home(root: &Path) -> Result<()> {
    platform::protect_system_home(root).with_path("set the permissions of", root)
}

/// Sets the modification time of the file at `path` to `mtime_ns`
/// (nanoseconds since the Unix epoch), as `cp -p` keeps it. Works on
/// read-only files (the read-only bit is lifted for the call on Windows).
///
/// # Errors
/// When the file cannot be opened or its time set.
pub fn set_mtime(path: &Path, mtime_ns: i64) -> Result<()> {
    let t = std::time::UNIX_EPOCH + Duration::from_nanos(mtime_ns.max(0) as u64);
    let set = || -> io::Result<()> {
        let f = if crate::platform::HOST_WINDOWS {
            File::options().write(true).open(path)?
        } else {
            File::open(path)?
        };
        f.set_modified(t)
    };
    match set() {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            let ro = fs::metadata(path).is_ok_and(|m| m.permissions().readonly());
            set_readonly(path, false)?;
            let r = set().with_path("set the modification time of", path);
            if ro {
                set_readonly(path, true)?;
            }
            r
        }
        Err(e) => Err(Error::io("set the modification time of", path, e)),
    }
}

/// Checks that entries can be created and removed in `dir`, leaving
/// nothing behind: on Linux with an unnamed `O_TMPFILE` file (which needs
/// the same write permission and has no name a kill could strand),
/// elsewhere by creating and removing `.cudnnm-probe` (a stale one from a
/// killed probe is replaced). Returns the new file's owner (the effective
/// user id on Unix; 0 elsewhere) so callers can reason about ownership.
///
/// # Errors
/// The OS error of the create or remove (`PermissionDenied`, `ReadOnlyFilesystem`).
pub fn probe_dir_writable(dir: &Path) -> io::Result<u32> {
    if let Some(f) = platform::open_unnamed_temp(dir)? {
        return Ok(platform::file_owner(&f));
    }
    let probe = dir.join(".cudnnm-probe");
    let f = match File::options().write(true).create_new(true).open(&probe) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            fs::remove_file(&probe)?;
            File::options().write(true).create_new(true).open(&probe)?
        }
        Err(e) => return Err(e),
    };
    let uid = platform::file_owner(&f);
    drop(f);
    fs::remove_file(&probe)?;
    Ok(uid)
}

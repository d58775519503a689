//! Changes inside a folder held open ([`Dir`]): what `export dir` and
//! `export lmod|tcl` write below a folder other users may write (a sticky
//! `/tmp`, a shared modulefile tree), as root too. Every name is created,
//! replaced or removed relative to the handle, never through a link
//! (`platform::dir`); errors name the path for the user.

#![allow(clippy::disallowed_methods)] // the one place files change
use std::ffi::OsStr;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::{Error, IoResultExt, Result};
use crate::hash::{Hasher, Sha256Hex};
pub use crate::platform::dir::{Dir, EntryKind};

/// Opens the folder `path` as the anchor of the changes below it.
///
/// # Errors
/// When it is not a folder or cannot be opened (names it).
pub fn open_dir(path: &Path) -> Result<Dir> {
    Dir::open(path).with_path("open", path)
}

/// The folder `name` in `parent`, made (with `mode`, set through its handle
/// whatever the umask) when missing; a link or a file there is refused.
///
/// # Errors
/// When it cannot be made or opened, or is not a folder.
pub fn dir_in(parent: &Dir, name: &OsStr, mode: u32) -> Result<Dir> {
    let path = parent.path().join(name);
    match parent.create_dir(name, mode) {
        Ok(d) => {
            d.set_own_mode(mode)
                .with_path("change permissions of", &path)?;
            Ok(d)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => parent.open_dir(name).map_err(|e| {
            Error::io("open", &path, e).hint(format!(
                "'{}' must be a folder (not a link)",
                path.display()
            ))
        }),
        Err(e) => Err(Error::io("create", &path, e)),
    }
}

/// The folders of `rel` (`/`-separated) below `top`, each made with `mode`
/// when missing ([`dir_in`]); the last one.
///
/// # Errors
/// As [`dir_in`], for the first folder that fails.
pub fn dirs_in(top: &Dir, rel: &str, mode: u32) -> Result<Dir> {
    let mut parts = rel.split('/').filter(|p| !p.is_empty() && *p != ".");
    let Some(first) = parts.next() else {
        return open_dir(top.path());
    };
    let mut d = dir_in(top, OsStr::new(first), mode)?;
    for p in parts {
        d = dir_in(&d, OsStr::new(p), mode)?;
    }
    Ok(d)
}

/// The folder `path`, made with its missing parents, each new one with
/// mode 0755 set through its handle whatever the umask (a folder other
/// users read from: a modulepath); folders that exist keep their mode.
///
/// # Errors
/// When a folder cannot be made or opened.
pub fn create_dirs_shared(path: &Path) -> Result<Dir> {
    let mut missing = Vec::new();
    let mut base = path;
    while std::fs::symlink_metadata(base).is_err() {
        let Some(name) = base.file_name() else { break };
        missing.push(name.to_os_string());
        base = super::parent_of(base);
    }
    let mut d = open_dir(base)?;
    for name in missing.iter().rev() {
        d = dir_in(&d, name, 0o755)?;
    }
    Ok(d)
}

/// Writes the new file `name` in `dir` with `bytes` and `mode`, synced.
///
/// # Errors
/// When it exists already, or cannot be written.
pub fn write_new_in(dir: &Dir, name: &OsStr, bytes: &[u8], mode: u32) -> Result<()> {
    let path = dir.path().join(name);
    let mut f = dir.create_file(name, mode).with_path("create", &path)?;
    f.write_all(bytes).with_path("write", &path)?;
    f.sync_all().with_path("write", &path)
}

/// Copies the file at `src` (a store file, trusted) to the new file `name`
/// in `dir` with `mode`, returning the size and SHA-256 of what was written.
///
/// # Errors
/// When `src` cannot be read or the copy written.
pub fn copy_hashed_in(src: &Path, dir: &Dir, name: &OsStr, mode: u32) -> Result<(u64, Sha256Hex)> {
    let path = dir.path().join(name);
    let mut from = std::fs::File::open(src).with_path("read", src)?;
    let mut to = dir.create_file(name, mode).with_path("create", &path)?;
    let mut hasher = Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = from.read(&mut buf).with_path("read", src)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        to.write_all(&buf[..n]).with_path("write", &path)?;
        size += n as u64;
    }
    to.sync_all().with_path("write", &path)?;
    Ok((size, hasher.finish()))
}

/// A name for a temporary entry in a folder, unique in this process.
fn temp_name(name: &OsStr) -> std::ffi::OsString {
    static N: AtomicU32 = AtomicU32::new(0);
    let mut t = std::ffi::OsString::from(format!(
        ".tmp-{}-{}-",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    t.push(name);
    t
}

/// Replaces the file `name` in `dir` with `bytes` (mode `mode`)
/// atomically: a new temporary file beside it, synced, renamed over it. A
/// link at `name` is replaced, never written through.
///
/// # Errors
/// When the folder cannot be written; the temporary file is removed.
pub fn write_atomic_in(dir: &Dir, name: &OsStr, bytes: &[u8], mode: u32) -> Result<()> {
    let tmp = temp_name(name);
    let done = write_new_in(dir, &tmp, bytes, mode)
        .and_then(|()| {
            // The mode through the handle: the umask narrowed the create.
            dir.set_mode(&tmp, mode)
                .with_path("change permissions of", &dir.path().join(&tmp))
        })
        .and_then(|()| {
            super::retry_busy(|| dir.rename(&tmp, dir, name))
                .with_path("replace", &dir.path().join(name))
        });
    if done.is_err() {
        let _ = dir.remove_file(&tmp);
    }
    done
}

/// Points the link `name` in `dir` at `target`, replacing what is there
/// (a new link beside it, renamed over it).
///
/// # Errors
/// When the folder cannot be written.
pub fn replace_link_in(dir: &Dir, name: &OsStr, target: &Path) -> Result<()> {
    let tmp = temp_name(name);
    let path = dir.path().join(name);
    let done = dir
        .symlink(target, &tmp)
        .with_path("create the link", &path)
        .and_then(|()| {
            super::retry_busy(|| dir.rename(&tmp, dir, name)).with_path("replace", &path)
        });
    if done.is_err() {
        let _ = dir.remove_file(&tmp);
    }
    done
}

/// Makes the link `name` → `target` in `dir` (new).
///
/// # Errors
/// When it exists or the folder cannot be written.
pub fn symlink_in(dir: &Dir, name: &OsStr, target: &Path) -> Result<()> {
    dir.symlink(target, name)
        .with_path("create the link", &dir.path().join(name))
}

/// Removes the file or link `name` in `dir` (never a folder). Missing is fine.
///
/// # Errors
/// When it cannot be removed.
pub fn remove_in(dir: &Dir, name: &OsStr) -> Result<()> {
    match dir.remove_file(name) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other.with_path("remove", &dir.path().join(name)),
    }
}

/// Removes the entry `name` in `dir` and, for a folder, everything in it,
/// never following a link (`Dir::remove_tree`). Missing is fine.
///
/// # Errors
/// When something in it cannot be removed.
pub fn remove_tree_in(dir: &Dir, name: &OsStr) -> Result<()> {
    super::retry_busy(|| dir.remove_tree(name)).with_path("remove", &dir.path().join(name))
}

/// Renames `from` to `to`, both in `dir`, replacing a file or an empty
/// folder at `to`.
///
/// # Errors
/// When the rename fails (names both).
pub fn rename_in(dir: &Dir, from: &OsStr, to: &OsStr) -> Result<()> {
    super::retry_busy(|| dir.rename(from, dir, to)).map_err(|e| {
        Error::io("rename", &dir.path().join(from), e).context(format!(
            "could not move '{}' to '{}'",
            dir.path().join(from).display(),
            dir.path().join(to).display()
        ))
    })
}

/// Swaps the entries `a` and `b` of `dir` in one step; `Ok(false)` where
/// the system cannot (then nothing changed).
///
/// # Errors
/// When the swap fails otherwise.
pub fn exchange_in(dir: &Dir, a: &OsStr, b: &OsStr) -> Result<bool> {
    match dir.exchange(a, b) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::Unsupported => Ok(false),
        Err(e) => Err(Error::io("swap", &dir.path().join(a), e).context(format!(
            "could not swap '{}' and '{}'",
            dir.path().join(a).display(),
            dir.path().join(b).display()
        ))),
    }
}

//! Writes that readers never see half done: one file or a batch replaced
//! atomically, a file created and synced once, an append-only log, and the
//! growing file of a resumable download.

#![allow(clippy::disallowed_methods)] // the one place files change
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::{create_dir_all, parent_of, rename, sync_dir};
use crate::error::{IoResultExt, Result};

/// Writes `bytes` to `path` atomically: temp file in the same folder, fsync,
/// rename over `path`, fsync the folder. Readers see the old or the new file,
/// never a mix. A replaced file keeps its permissions; a new one gets what
/// any new file gets (on Unix `0666` less the umask), not the temporary
/// file's owner-only mode — pins, lock files and the system home's
/// `config.toml` are read by other users.
///
/// # Errors
/// When the folder is not writable or the disk is full; the temp file is removed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_all(&[(path, bytes)])
}

/// Writes several files atomically as one batch: every temp file is written
/// and fsynced first, then all are renamed over their targets, then their
/// folders are fsynced. Each file is old or new, never a mix; the batch costs
/// about as many disk flushes as one [`write_atomic`] (what matters when
/// other processes keep the disk busy).
///
/// # Errors
/// As [`write_atomic`]; temp files of a failed batch are removed.
pub fn write_atomic_all(files: &[(&Path, &[u8])]) -> Result<()> {
    let mut temps = Vec::new();
    for (path, bytes) in files {
        let dir = parent_of(path);
        fs::create_dir_all(dir).with_path("create", dir)?;
        // The target's permissions when it exists, else a new file's.
        let keep = fs::metadata(path).ok().map(|m| m.permissions());
        let mut builder = tempfile::Builder::new();
        builder.prefix(".tmp-");
        if let Some(p) = keep.clone().or_else(crate::platform::new_file_permissions) {
            builder.permissions(p);
        }
        let mut tmp = builder
            .tempfile_in(dir)
            .with_path("create a temporary file in", dir)?;
        tmp.write_all(bytes).with_path("write", tmp.path())?;
        if let Some(p) = keep {
            // Created through the umask: set the kept mode exactly.
            fs::set_permissions(tmp.path(), p).with_path("set the permissions of", tmp.path())?;
        }
        temps.push((tmp, *path));
    }
    for (tmp, _) in &temps {
        tmp.as_file().sync_all().with_path("sync", tmp.path())?;
    }
    let mut dirs = Vec::new();
    for (tmp, path) in temps {
        let tmp_path = tmp.into_temp_path();
        rename(&tmp_path, path)?;
        let _ = tmp_path.keep();
        let dir = parent_of(path).to_path_buf();
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    for d in dirs {
        sync_dir(&d);
    }
    Ok(())
}

/// Creates the new file `path` with `bytes`, failing when anything is at
/// `path` already — so a link put in its place is never written through.
/// Not synced (for markers whose loss costs only a guard: the deploy's
/// in-flight marker).
///
/// # Errors
/// When `path` exists or cannot be written; a partial file is removed.
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = File::options()
        .write(true)
        .create_new(true)
        .open(path)
        .with_path("create", path)?;
    let r = f.write_all(bytes).with_path("write", path);
    if r.is_err() {
        drop(f);
        let _ = fs::remove_file(path);
    }
    r
}

/// Creates `path` with `bytes` and fsyncs it, only if nothing is there
/// (`O_EXCL`, honoured by NFS v3 and later): `Ok(false)` when something is.
/// The exclusive lock file of file systems that cannot lock.
///
/// # Errors
/// When `path` cannot be created or written; a partial file is removed.
pub fn create_exclusive(path: &Path, bytes: &[u8]) -> Result<bool> {
    let f = match create_new_file(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(crate::error::Error::io("create", path, e)),
    };
    fill_synced(f, path, bytes).map(|()| true)
}

/// Writes `bytes` into the new file `f` at `path` and fsyncs it; on failure
/// the partial file is removed.
fn fill_synced(mut f: File, path: &Path, bytes: &[u8]) -> Result<()> {
    let r = f
        .write_all(bytes)
        .and_then(|()| f.sync_all())
        .with_path("write", path);
    if r.is_err() {
        drop(f);
        let _ = fs::remove_file(path);
    }
    r
}

/// Creates `path` (which must not exist) with `bytes`, fsyncs it, then
/// fsyncs its folder: one flush instead of [`write_atomic`]'s two. Not
/// atomic: a crash before it returns can leave a partial file, so use it
/// only for files whose readers can tell (the deploy journal's plan).
///
/// # Errors
/// When `path` exists or cannot be written; a partial file is removed.
pub fn write_new_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let f = create_new_file(path).with_path("create", path)?;
    fill_synced(f, path, bytes)?;
    sync_dir(parent_of(path));
    Ok(())
}

/// Opens `path` for appending, creating it when missing: the growing file of
/// a resumable download. Returns the handle and the current length.
///
/// # Errors
/// When the file cannot be created or opened (names the file).
pub fn open_append(path: &Path) -> Result<(File, u64)> {
    create_dir_all(parent_of(path))?;
    let f = File::options()
        .create(true)
        .append(true)
        .open(path)
        .with_path("open", path)?;
    let len = f.metadata().with_path("inspect", path)?.len();
    Ok((f, len))
}

/// Empties a file opened with [`open_append`] (a download that must start over).
///
/// # Errors
/// When the file cannot be truncated.
pub fn truncate(file: &File, path: &Path) -> Result<()> {
    file.set_len(0).with_path("truncate", path)
}

/// An append-only text log (the deploy journal's step log). Each
/// [`AppendLog::append`] is one `write` of a whole line, visible to the next
/// process even if this one is killed; [`AppendLog::sync`] makes everything
/// so far durable across power loss.
#[derive(Debug)]
pub struct AppendLog {
    file: File,
    path: PathBuf,
}

impl AppendLog {
    /// Opens (creating) the log at `path` for appending.
    ///
    /// # Errors
    /// When the file cannot be created.
    pub fn open(path: &Path) -> Result<AppendLog> {
        let file = File::options()
            .append(true)
            .create(true)
            .open(path)
            .with_path("open the journal log", path)?;
        Ok(AppendLog {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Appends `line` and a newline in one write.
    ///
    /// # Errors
    /// When the write fails (disk full).
    pub fn append(&mut self, line: &str) -> Result<()> {
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        self.file.write_all(&buf).with_path("write", &self.path)
    }

    /// Flushes the log to disk (fsync).
    ///
    /// # Errors
    /// When the sync fails.
    pub fn sync(&self) -> Result<()> {
        self.file.sync_data().with_path("sync", &self.path)
    }
}

/// Opens a new file for writing at `path`; fails if anything is already
/// there (`create_new`), so an unpack never overwrites a file it did not make.
///
/// # Errors
/// When `path` exists or cannot be created.
pub fn create_new_file(path: &Path) -> io::Result<File> {
    File::options().write(true).create_new(true).open(path)
}

/// Opens the lock file `path` read and write to hold an OS lock on it,
/// creating it empty when absent. What it holds is left as it is: a lock
/// file's holder record is written over in place, never truncated.
///
/// # Errors
/// When the file cannot be created or opened.
pub fn open_lock_file(path: &Path) -> io::Result<File> {
    File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
}

/// Opens the existing file `path` read and write to try its lock (to learn
/// whether another process holds it); never creates it.
///
/// # Errors
/// When there is no such file, or it cannot be opened.
pub fn open_to_try_lock(path: &Path) -> io::Result<File> {
    File::options().read(true).write(true).open(path)
}

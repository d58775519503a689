//! The one module that changes the filesystem. Everything else asks it, so
//! the safety rules live in one place (STYLE.md, after mise and uv):
//! - state files are written to a temporary file beside the target, synced,
//!   then renamed over it, and the folder is synced;
//! - renames retry briefly on Windows sharing violations (antivirus scanners
//!   hold freshly written files for a moment);
//! - links are replaced atomically (new link, rename over), and a function
//!   that means to remove a link refuses to remove anything else;
//! - moves across volumes copy, sync, verify the hash, and only then remove.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, IoResultExt, Kind, Result};
use crate::hash::{self, Sha256Hex};
use crate::platform;

/// Writes `bytes` to `path` atomically: temp file in the same folder, fsync,
/// rename over `path`, fsync the folder. Readers see the old or the new file,
/// never a mix.
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
        let mut tmp = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempfile_in(dir)
            .with_path("create a temporary file in", dir)?;
        tmp.write_all(bytes).with_path("write", tmp.path())?;
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

/// Creates `path` (which must not exist) with `bytes`, fsyncs it, then
/// fsyncs its folder: one flush instead of [`write_atomic`]'s two. Not
/// atomic: a crash before it returns can leave a partial file, so use it
/// only for files whose readers can tell (the deploy journal's plan).
///
/// # Errors
/// When `path` exists or cannot be written; a partial file is removed.
pub fn write_new_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = File::options()
        .write(true)
        .create_new(true)
        .open(path)
        .with_path("create", path)?;
    let r = f
        .write_all(bytes)
        .and_then(|()| f.sync_all())
        .with_path("write", path);
    if r.is_err() {
        drop(f);
        let _ = fs::remove_file(path);
        return r;
    }
    sync_dir(parent_of(path));
    Ok(())
}

/// Renames `from` to `to`, replacing a file at `to`. Retries for up to about
/// two seconds on Windows when another process briefly holds a file.
///
/// # Errors
/// The last OS error, naming both paths.
pub fn rename(from: &Path, to: &Path) -> Result<()> {
    retry_busy(|| fs::rename(from, to)).map_err(|e| {
        Error::io("rename", from, e).context(format!(
            "could not move '{}' to '{}'",
            from.display(),
            to.display()
        ))
    })
}

/// Runs `op`, retrying on errors that mean "busy for a moment" on Windows
/// (sharing violation, access denied from a scanner). Elsewhere runs once.
pub fn retry_busy<T>(op: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    retry_if(platform::is_transient_busy, op)
}

/// Runs `op`, retrying while its error satisfies `busy`, for about two
/// seconds in all (backoff from 10 ms to 250 ms); then returns the last error.
pub fn retry_if<T>(
    busy: impl Fn(&io::Error) -> bool,
    mut op: impl FnMut() -> io::Result<T>,
) -> io::Result<T> {
    let mut delay = Duration::from_millis(10);
    let mut waited = Duration::ZERO;
    loop {
        match op() {
            Ok(v) => return Ok(v),
            Err(e) if busy(&e) && waited < Duration::from_secs(2) => {
                std::thread::sleep(delay);
                waited += delay;
                delay = (delay * 2).min(Duration::from_millis(250));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Flushes a folder's entries to disk (Unix); a no-op where unsupported.
pub fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(f) = File::open(dir) {
        let _ = f.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// Creates `dir` and its parents.
pub fn create_dir_all(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).with_path("create", dir)
}

/// Copies `src` to a new file `dst` (which must not exist), syncs it, and
/// returns the size and SHA-256 of the bytes written.
///
/// # Errors
/// When `dst` exists, or on any I/O error; a partly written `dst` is removed.
pub fn copy_file_hashed(src: &Path, dst: &Path) -> Result<(u64, Sha256Hex)> {
    let mut input = File::open(src).with_path("open", src)?;
    let mut out = File::options()
        .write(true)
        .create_new(true)
        .open(dst)
        .with_path("create", dst)?;
    let result = (|| {
        let mut hasher = hash::Hasher::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut total = 0u64;
        loop {
            let n = input.read(&mut buf).with_path("read", src)?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            out.write_all(&buf[..n]).with_path("write", dst)?;
            total += n as u64;
        }
        out.sync_all().with_path("sync", dst)?;
        Ok((total, hasher.finish()))
    })();
    if result.is_err() {
        drop(out);
        let _ = fs::remove_file(dst);
    }
    result
}

/// Moves a file: rename when on the same volume; otherwise copy, sync, verify
/// the copy's SHA-256 against `expected` (or the source's), then remove the source.
///
/// # Errors
/// When the copy does not verify (the source is kept), or on I/O errors.
pub fn move_file(from: &Path, to: &Path, expected: Option<&Sha256Hex>) -> Result<()> {
    match retry_busy(|| fs::rename(from, to)) {
        Ok(()) => Ok(()),
        Err(e) if platform::is_cross_device(&e) => {
            let meta = fs::symlink_metadata(from).with_path("inspect", from)?;
            if meta.file_type().is_symlink() {
                let target = fs::read_link(from).with_path("read the link", from)?;
                platform::symlink_file(&target, to).with_path("create the link", to)?;
                return remove_file(from);
            }
            let want = match expected {
                Some(h) => h.clone(),
                None => hash::sha256_file(from)?.1,
            };
            let (_, got) = copy_file_hashed(from, to)?;
            let (_, reread) = hash::sha256_file(to)?;
            if got != want || reread != want {
                let _ = fs::remove_file(to);
                return Err(Error::new(
                    Kind::Integrity,
                    format!(
                        "copy of '{}' to '{}' does not match its SHA-256",
                        from.display(),
                        to.display()
                    ),
                )
                .hint("the source was kept; check the destination disk and retry"));
            }
            remove_file(from)
        }
        Err(e) => Err(Error::io("move", from, e).context(format!(
            "could not move '{}' to '{}'",
            from.display(),
            to.display()
        ))),
    }
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

/// Sets or clears the read-only permission of a file (not of a link's target).
pub fn set_readonly(path: &Path, readonly: bool) -> Result<()> {
    let meta = fs::symlink_metadata(path).with_path("inspect", path)?;
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    let mut perm = meta.permissions();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = perm.mode();
        perm.set_mode(if readonly {
            mode & !0o222
        } else {
            mode | 0o200
        });
    }
    #[cfg(not(unix))]
    perm.set_readonly(readonly);
    fs::set_permissions(path, perm).with_path("change permissions of", path)
}

/// Points `link` at `target` atomically: a new link is made beside `link` and
/// renamed over it. Refuses when `link` exists and is not a link (a real
/// folder or file is never replaced here).
///
/// `dir` selects a folder link (a junction on Windows where supported).
pub fn replace_link(target: &Path, link: &Path, dir: bool) -> Result<()> {
    replace_link_with(link, |tmp| {
        if dir {
            platform::link_dir(target, tmp)
        } else {
            platform::symlink_file(target, tmp)
        }
    })
}

/// Like [`replace_link`] for a folder link, and says which kind was made
/// (junction or symbolic link on Windows, symbolic link on Unix) so callers
/// can report it. Same guarantees: new link beside `link`, renamed over it;
/// a real file or folder at `link` is refused.
///
/// # Errors
/// [`Kind::Conflict`] when `link` is not a link; the OS error when no kind
/// of folder link can be made there (the temporary link is removed).
pub fn replace_dir_link(target: &Path, link: &Path) -> Result<platform::DirLinkKind> {
    replace_link_with(link, |tmp| platform::link_dir_kind(target, tmp))
}

/// The shared steps of [`replace_link`] and [`replace_dir_link`]: refuse a
/// real file or folder at `link`, `make` the new link at a sibling
/// temporary name, rename it over `link`, sync the folder.
fn replace_link_with<T>(link: &Path, make: impl FnOnce(&Path) -> io::Result<T>) -> Result<T> {
    if let Ok(meta) = fs::symlink_metadata(link)
        && !platform::is_link(&meta, link)
    {
        return Err(Error::new(
            Kind::Conflict,
            format!(
                "'{}' exists and is not a link; cudnnm will not replace it",
                link.display()
            ),
        )
        .hint("move it aside yourself, then run the command again"));
    }
    let parent = parent_of(link);
    create_dir_all(parent)?;
    let tmp = sibling(link, "tmp-link");
    let _ = remove_link(&tmp);
    let made = make(&tmp).with_path("create the link", &tmp)?;
    if let Err(e) = rename_link_over(&tmp, link) {
        let _ = remove_link(&tmp);
        return Err(e);
    }
    sync_dir(parent);
    Ok(made)
}

fn rename_link_over(tmp: &Path, link: &Path) -> Result<()> {
    // Windows cannot rename a directory link over an existing one; remove the old link first.
    if cfg!(windows) && fs::symlink_metadata(link).is_ok() {
        remove_link(link)?;
    }
    rename(tmp, link)
}

/// Removes `path` only if it is a symbolic link or junction; refuses otherwise.
///
/// # Errors
/// [`Kind::Conflict`] when `path` is a real file or folder.
pub fn remove_link(path: &Path) -> Result<()> {
    let meta = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("inspect", path, e)),
        Ok(m) => m,
    };
    if !platform::is_link(&meta, path) {
        return Err(Error::new(
            Kind::Conflict,
            format!("'{}' is not a link; refusing to remove it", path.display()),
        ));
    }
    platform::remove_link(path, &meta).with_path("remove the link", path)
}

/// Creates a hard link `dst` to the existing file `src` (same volume only).
///
/// # Errors
/// When `dst` exists, the volumes differ, or the file system has no hard links.
pub fn hard_link(src: &Path, dst: &Path) -> Result<()> {
    retry_busy(|| fs::hard_link(src, dst)).map_err(|e| {
        Error::io("create the hard link", dst, e).context(format!(
            "could not hard-link '{}' to '{}'",
            dst.display(),
            src.display()
        ))
    })
}

/// Creates a symbolic link `link` whose target is `target`, written as given
/// (a relative target stays relative; nothing is resolved).
///
/// # Errors
/// When `link` exists, or (Windows) the process may not create symbolic
/// links (needs Developer Mode or admin rights).
pub fn symlink(target: &Path, link: &Path) -> Result<()> {
    platform::symlink_file(target, link).map_err(|e| {
        let err = Error::io("create the link", link, e);
        if cfg!(windows) {
            err.hint("creating symbolic links on Windows needs Developer Mode or an Administrator terminal; use --mode hardlink or --mode copy instead")
        } else {
            err
        }
    })
}

/// Copies `src` to `dst` (created or truncated; a temporary name the caller
/// owns) the way `cp` does: by the OS's fastest path (`copy_file_range` on
/// Linux, `CopyFileEx` on Windows), keeping the source's permissions, not
/// fsynced, and without reading the bytes back. Returns the bytes copied.
///
/// # Errors
/// On any I/O error; a partly written `dst` is removed.
pub fn copy_file(src: &Path, dst: &Path) -> Result<u64> {
    remove_file(dst)?;
    // The size is read back from `dst`: on Windows `fs::copy` reports what
    // CopyFileEx's progress callback saw, which not every implementation
    // calls (wine reports 0).
    retry_busy(|| fs::copy(src, dst))
        .and_then(|_| fs::metadata(dst).map(|m| m.len()))
        .map_err(|e| {
            let _ = fs::remove_file(dst);
            Error::io("copy", src, e).context(format!(
                "could not copy '{}' to '{}'",
                src.display(),
                dst.display()
            ))
        })
}

/// Copies `src` to `dst` (created or truncated; a temporary name the caller
/// owns) while a second thread hashes `src`, so the copy costs about as much
/// as `cp` does and the bytes copied are still checked. Returns the size
/// copied and the SHA-256 of the source. The copy keeps the source's
/// permissions (store files are read-only, so copies are too) and is not
/// fsynced; callers that must survive power loss re-verify after a crash.
///
/// The copy itself uses the OS's fastest path (`copy_file_range` on Linux,
/// `CopyFileEx` on Windows).
///
/// # Errors
/// On any I/O error; a partly written `dst` is removed.
pub fn copy_file_checked(src: &Path, dst: &Path) -> Result<(u64, Sha256Hex)> {
    remove_file(dst)?;
    let (copied, hashed) = std::thread::scope(|s| {
        let h = s.spawn(|| hash::sha256_file(src));
        // The size is read back from `dst` (see `copy_file`).
        let c = retry_busy(|| fs::copy(src, dst)).and_then(|_| fs::metadata(dst).map(|m| m.len()));
        (c, h.join())
    });
    let result = (|| {
        let n = copied.map_err(|e| {
            Error::io("copy", src, e).context(format!(
                "could not copy '{}' to '{}'",
                src.display(),
                dst.display()
            ))
        })?;
        let (size, sha) =
            hashed.map_err(|_| Error::msg(format!("hashing '{}' failed", src.display())))??;
        if size != n {
            return Err(Error::new(
                Kind::Integrity,
                format!("'{}' changed while it was copied", src.display()),
            ));
        }
        Ok((n, sha))
    })();
    if result.is_err() {
        let _ = remove_file(dst);
    }
    result
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
        let f = if cfg!(windows) {
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
    fn owner(f: &File) -> u32 {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            f.metadata().map(|m| m.uid()).unwrap_or(0)
        }
        #[cfg(not(unix))]
        {
            let _ = f;
            0
        }
    }
    if let Some(f) = platform::open_unnamed_temp(dir)? {
        return Ok(owner(&f));
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
    let uid = owner(&f);
    drop(f);
    fs::remove_file(&probe)?;
    Ok(uid)
}

/// Removes `dir` when it is an empty folder; returns whether it did.
/// Missing or non-empty folders are left alone without error.
pub fn remove_dir_if_empty(dir: &Path) -> bool {
    fs::remove_dir(dir).is_ok()
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

/// `fs::canonicalize` without Windows' verbatim prefix (`\\?\C:\…` →
/// `C:\…`, `\\?\UNC\server\share` → `\\server\share`), so real paths read
/// like the ones users type; `None` when the path cannot be resolved.
pub fn canonical(p: &Path) -> Option<PathBuf> {
    fs::canonicalize(p).ok().map(strip_verbatim)
}

fn strip_verbatim(c: PathBuf) -> PathBuf {
    let t = c.to_string_lossy();
    match (t.strip_prefix(r"\\?\UNC\"), t.strip_prefix(r"\\?\")) {
        (Some(rest), _) => PathBuf::from(format!(r"\\{rest}")),
        (None, Some(rest)) => PathBuf::from(rest),
        _ => c,
    }
}

/// [`canonical`], or `p` itself when it cannot be resolved (gone, no access).
pub fn canonical_or_self(p: &Path) -> PathBuf {
    canonical(p).unwrap_or_else(|| p.to_path_buf())
}

/// The folder holding `path` (`.` for a bare name).
pub fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A unique sibling name for `path` with `tag`, e.g. `store/.trash-1234-8.1.0.77`.
pub fn sibling(path: &Path, tag: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    parent_of(path).join(format!(".{tag}-{}-{name}", std::process::id()))
}

// ---------------------------------------------------------------------------
// Changes the deploy code, the store and the home made with `std::fs`
// directly before (issue 17 §5): the in-flight marker, the home folder.
// ---------------------------------------------------------------------------

/// Creates the new file `path` with `bytes`, failing when anything is at
/// `path` already — so a link put in its place is never written through.
/// Not synced (for markers whose loss costs only a guard).
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

/// Creates `dir` and its parents; a failure says `could not <what> '<dir>'`
/// (`create the cudnnm home`).
///
/// # Errors
/// When the folder cannot be created (read-only or full disk).
pub fn create_dir_all_as(dir: &Path, what: &str) -> Result<()> {
    fs::create_dir_all(dir).with_path(what, dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_paths_read_like_typed_ones() {
        let v = |s: &str| strip_verbatim(PathBuf::from(s));
        assert_eq!(v(r"\\?\C:\CUDA\v12.4"), PathBuf::from(r"C:\CUDA\v12.4"));
        assert_eq!(
            v(r"\\?\UNC\srv\share\cuda"),
            PathBuf::from(r"\\srv\share\cuda")
        );
        assert_eq!(
            v("/usr/local/cuda-12.4"),
            PathBuf::from("/usr/local/cuda-12.4")
        );
        let d = tempfile::tempdir().unwrap();
        assert_eq!(canonical(&d.path().join("missing")), None);
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("state.toml");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn copy_hashes_what_it_writes() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        fs::write(&a, b"abc").unwrap();
        let (n, h) = copy_file_hashed(&a, &d.path().join("b")).unwrap();
        assert_eq!(n, 3);
        assert_eq!(
            h.as_str(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(
            copy_file_hashed(&a, &d.path().join("b")).is_err(),
            "never overwrites"
        );
    }

    #[cfg(unix)]
    #[test]
    fn links_are_replaced_but_real_files_are_not() {
        let d = tempfile::tempdir().unwrap();
        let (t1, t2, link) = (
            d.path().join("t1"),
            d.path().join("t2"),
            d.path().join("cur"),
        );
        fs::create_dir(&t1).unwrap();
        fs::create_dir(&t2).unwrap();
        replace_link(&t1, &link, true).unwrap();
        replace_link(&t2, &link, true).unwrap();
        assert_eq!(fs::read_link(&link).unwrap(), t2);
        let real = d.path().join("real");
        fs::create_dir(&real).unwrap();
        assert_eq!(
            replace_link(&t1, &real, true).unwrap_err().kind(),
            Kind::Conflict
        );
        assert_eq!(remove_link(&real).unwrap_err().kind(), Kind::Conflict);
        assert!(real.is_dir());
        remove_link(&link).unwrap();
        assert!(t2.is_dir(), "removing a link keeps its target");
    }

    #[test]
    fn mtime_is_set_on_read_only_files() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        fs::write(&p, b"x").unwrap();
        set_readonly(&p, true).unwrap();
        set_mtime(&p, 1_600_000_000_123_456_789).unwrap();
        let m = fs::metadata(&p).unwrap();
        let ns = m
            .modified()
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        // NTFS keeps times in 100 ns ticks.
        let want = if cfg!(windows) {
            1_600_000_000_123_456_700
        } else {
            1_600_000_000_123_456_789
        };
        assert_eq!(ns, want);
        assert!(m.permissions().readonly());
    }

    #[test]
    fn batch_atomic_write_writes_every_file() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a.toml"), d.path().join("sub/b.toml"));
        write_atomic(&a, b"old").unwrap();
        write_atomic_all(&[(&a, b"new a"), (&b, b"new b")]).unwrap();
        assert_eq!(fs::read(&a).unwrap(), b"new a");
        assert_eq!(fs::read(&b).unwrap(), b"new b");
        assert_eq!(
            fs::read_dir(d.path()).unwrap().count(),
            2,
            "no temp files left"
        );
    }

    #[test]
    fn checked_copy_hashes_the_source_and_keeps_permissions() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        fs::write(&a, vec![7u8; 3 << 20]).unwrap();
        set_readonly(&a, true).unwrap();
        let b = d.path().join(".tmp-b");
        fs::write(&b, b"stale").unwrap();
        let (n, h) = copy_file_checked(&a, &b).unwrap();
        assert_eq!(n, 3 << 20);
        assert_eq!(h, hash::sha256_file(&b).unwrap().1);
        assert!(fs::metadata(&b).unwrap().permissions().readonly());
        assert!(copy_file_checked(&d.path().join("missing"), &b).is_err());
        assert!(!b.exists(), "a failed copy leaves no file");
    }

    #[test]
    fn plain_copy_keeps_bytes_and_permissions() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        fs::write(&a, b"bytes").unwrap();
        set_readonly(&a, true).unwrap();
        let b = d.path().join("b");
        assert_eq!(copy_file(&a, &b).unwrap(), 5);
        assert_eq!(fs::read(&b).unwrap(), b"bytes");
        assert!(fs::metadata(&b).unwrap().permissions().readonly());
        assert_eq!(copy_file(&a, &b).unwrap(), 5, "replaces its own temp file");
    }

    #[test]
    fn probe_leaves_nothing_and_log_appends_lines() {
        let d = tempfile::tempdir().unwrap();
        probe_dir_writable(d.path()).unwrap();
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0);
        assert!(probe_dir_writable(&d.path().join("missing")).is_err());
        let p = d.path().join("log");
        let mut log = AppendLog::open(&p).unwrap();
        log.append("one").unwrap();
        log.append("two").unwrap();
        log.sync().unwrap();
        let mut again = AppendLog::open(&p).unwrap();
        again.append("three").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "one\ntwo\nthree\n");
        let sub = d.path().join("sub");
        fs::create_dir(&sub).unwrap();
        fs::write(sub.join("x"), b"x").unwrap();
        assert!(!remove_dir_if_empty(&sub));
        fs::remove_file(sub.join("x")).unwrap();
        assert!(remove_dir_if_empty(&sub));
    }

    #[cfg(unix)]
    #[test]
    fn links_are_written_as_given() {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("libx.so.9"), b"x").unwrap();
        symlink(Path::new("libx.so.9"), &d.path().join("libx.so")).unwrap();
        assert_eq!(
            fs::read_link(d.path().join("libx.so")).unwrap(),
            Path::new("libx.so.9")
        );
        hard_link(&d.path().join("libx.so.9"), &d.path().join("h")).unwrap();
        assert!(platform::same_file(
            &d.path().join("libx.so.9"),
            &d.path().join("h")
        ));
        assert!(!platform::same_file(
            &d.path().join("libx.so.9"),
            &d.path().join("libx.so")
        ));
        assert!(hard_link(&d.path().join("libx.so.9"), &d.path().join("h")).is_err());
    }

    #[test]
    fn remove_dir_all_clears_read_only_files() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path().join("rel");
        fs::create_dir_all(r.join("lib")).unwrap();
        fs::write(r.join("lib/x"), b"x").unwrap();
        set_readonly(&r.join("lib/x"), true).unwrap();
        remove_dir_all(&r).unwrap();
        assert!(!r.exists());
    }

    #[cfg(unix)]
    #[test]
    fn remove_dir_all_leaves_hard_linked_store_files_read_only() {
        // A backup of a hardlink deployment holds links to store files.
        let d = tempfile::tempdir().unwrap();
        let store_file = d.path().join("store-lib");
        fs::write(&store_file, b"x").unwrap();
        set_readonly(&store_file, true).unwrap();
        let b = d.path().join("backup");
        fs::create_dir_all(b.join("files/lib64")).unwrap();
        fs::hard_link(&store_file, b.join("files/lib64/libcudnn.so.9")).unwrap();
        remove_dir_all(&b).unwrap();
        assert!(!b.exists());
        assert!(
            fs::metadata(&store_file).unwrap().permissions().readonly(),
            "the store's file stays read-only"
        );
    }
}

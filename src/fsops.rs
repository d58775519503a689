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
    let dir = parent_of(path);
    fs::create_dir_all(dir).with_path("create", dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .with_path("create a temporary file in", dir)?;
    tmp.write_all(bytes).with_path("write", tmp.path())?;
    tmp.as_file().sync_all().with_path("sync", tmp.path())?;
    let tmp_path = tmp.into_temp_path();
    rename(&tmp_path, path)?;
    // The temp path no longer exists; keep TempPath from trying to delete `path`.
    let _ = tmp_path.keep();
    sync_dir(dir);
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
pub fn retry_busy<T>(mut op: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    let mut delay = Duration::from_millis(10);
    let mut waited = Duration::ZERO;
    loop {
        match op() {
            Ok(v) => return Ok(v),
            Err(e) if platform::is_transient_busy(&e) && waited < Duration::from_secs(2) => {
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
/// backup), clearing read-only bits first. Missing is fine.
pub fn remove_dir_all(path: &Path) -> Result<()> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("inspect", path, e)),
        Ok(_) => {}
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
    let tmp = parent.join(format!(
        ".tmp-link-{}-{}",
        std::process::id(),
        link.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    ));
    let _ = remove_link(&tmp);
    let made = if dir {
        platform::link_dir(target, &tmp)
    } else {
        platform::symlink_file(target, &tmp)
    };
    made.with_path("create the link", &tmp)?;
    if let Err(e) = rename_link_over(&tmp, link) {
        let _ = remove_link(&tmp);
        return Err(e);
    }
    sync_dir(parent);
    Ok(())
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
    let kind = platform::link_dir_kind(target, &tmp).with_path("create the link", &tmp)?;
    if let Err(e) = rename_link_over(&tmp, link) {
        let _ = remove_link(&tmp);
        return Err(e);
    }
    sync_dir(parent);
    Ok(kind)
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn remove_dir_all_clears_read_only_files() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path().join("rel");
        fs::create_dir_all(r.join("lib")).unwrap();
        fs::write(r.join("lib/x"), b"x").unwrap();
        set_readonly(&r.join("lib/x"), true).unwrap();
        remove_dir_all(&r).unwrap();
        assert!(!r.exists());
    }
}

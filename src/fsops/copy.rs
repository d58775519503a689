//! Copies: hashed while written, by the OS's fastest path, and the move
//! that falls back to copy, verify, remove across volumes.

#![allow(clippy::disallowed_methods)] // the one place files change
use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::Path;

use super::{remove_file, retry_busy};
use crate::error::{Error, IoResultExt, Kind, Result};
use crate::hash::{self, Sha256Hex};
use crate::platform;

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

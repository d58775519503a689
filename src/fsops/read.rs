//! Reading a file someone else may have placed (a project's pin or lock, a
//! catalog, an index given with `--from`) as bounded data: only a regular
//! file, only up to a size, and without ever blocking on a FIFO or reading a
//! device without end (`.cudnn-version.lock -> /dev/zero`). The
//! errors name the file and its size, never its content.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::Path;

use crate::error::{Error, Kind, Result};

/// Reads `path` whole when it is a regular file of at most `max` bytes;
/// `what` names what it should be (`a lock file`) in errors.
///
/// # Errors
/// [`Kind::Usage`] when it is not a regular file (a folder, a FIFO, a
/// device) or larger than `max`, naming the file, what it is or its size,
/// and what was expected; I/O errors naming it (a missing file too).
pub fn read_bounded(path: &Path, max: u64, what: &str) -> Result<Vec<u8>> {
    // Judged before it is opened: opening a FIFO waits for a writer.
    let meta = fs::metadata(path).map_err(|e| Error::io("read", path, e))?;
    check(path, &meta, max, what)?;
    let file = open_nonblocking(path).map_err(|e| Error::io("read", path, e))?;
    // The name may have been swapped between the two looks: the open file decides.
    let meta = file.metadata().map_err(|e| Error::io("read", path, e))?;
    check(path, &meta, max, what)?;
    let mut out = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1)
        .read_to_end(&mut out)
        .map_err(|e| Error::io("read", path, e))?;
    if out.len() as u64 > max {
        return Err(too_large(path, out.len() as u64, max, what));
    }
    Ok(out)
}

/// [`read_bounded`], `Ok(None)` when nothing is at `path` (a dangling link
/// is not nothing: it is an error naming the file).
///
/// # Errors
/// As [`read_bounded`].
pub fn read_bounded_if_exists(path: &Path, max: u64, what: &str) -> Result<Option<Vec<u8>>> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        _ => read_bounded(path, max, what).map(Some),
    }
}

/// [`read_bounded`] as UTF-8 text.
///
/// # Errors
/// As [`read_bounded`], and [`Kind::Usage`] for bytes that are not UTF-8
/// (naming the file and its size, not its bytes).
pub fn read_bounded_text(path: &Path, max: u64, what: &str) -> Result<String> {
    let bytes = read_bounded(path, max, what)?;
    let len = bytes.len();
    String::from_utf8(bytes).map_err(|_| {
        Error::new(
            Kind::Usage,
            format!(
                "could not read '{}' ({len} bytes): it is not UTF-8 text, so not {what}",
                path.display()
            ),
        )
        .hint(format!("is '{}' the right file?", path.display()))
    })
}

fn check(path: &Path, meta: &fs::Metadata, max: u64, what: &str) -> Result<()> {
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a folder"
        } else {
            special_kind(meta)
        };
        return Err(Error::new(
            Kind::Usage,
            format!(
                "could not read '{}': it is {kind}, not a regular file holding {what}",
                path.display()
            ),
        )
        .hint(format!(
            "remove or rename '{}', or make it a regular file",
            path.display()
        )));
    }
    if meta.len() > max {
        return Err(too_large(path, meta.len(), max, what));
    }
    Ok(())
}

fn too_large(path: &Path, len: u64, max: u64, what: &str) -> Error {
    Error::new(
        Kind::Usage,
        format!(
            "could not read '{}': it is {len} bytes, more than the {} {what} may be",
            path.display(),
            human(max)
        ),
    )
    .hint(format!("is '{}' the right file?", path.display()))
}

/// `64 KiB`, `4 MiB`: a limit as the documentation writes it.
fn human(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(unix)]
fn special_kind(meta: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &fs::Metadata) -> &'static str {
    "a device or another special file"
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_up_to_the_limit_are_read() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        crate::fsops::write_atomic(&p, b"0123456789").unwrap();
        assert_eq!(read_bounded(&p, 10, "a pin").unwrap(), b"0123456789");
        let e = read_bounded(&p, 9, "a pin").unwrap_err();
        assert_eq!(e.kind(), Kind::Usage);
        assert_eq!(
            e.message(),
            format!(
                "could not read '{}': it is 10 bytes, more than the 9 bytes a pin may be",
                p.display()
            )
        );
        assert!(
            read_bounded_if_exists(&d.path().join("none"), 9, "a pin")
                .unwrap()
                .is_none()
        );
        let e = read_bounded(d.path(), 9, "a pin").unwrap_err();
        assert!(e.message().contains("it is a folder"), "{e}");
        assert_eq!(human(256 << 10), "256 KiB");
        assert_eq!(human(32 << 20), "32 MiB");
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_refused_without_waiting() {
        let d = tempfile::tempdir().unwrap();
        let link = d.path().join(".cudnn-version.lock");
        crate::fsops::symlink(Path::new("/dev/zero"), &link).unwrap();
        let t = std::time::Instant::now();
        let e = read_bounded(&link, 1 << 20, "a lock file").unwrap_err();
        assert!(
            e.message()
                .contains("it is a character device, not a regular file"),
            "{e}"
        );
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_bounded(&fifo, 1 << 20, "a lock file").unwrap_err();
        assert!(e.message().contains("it is a FIFO"), "{e}");
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
        // A dangling link is an error, not "no file".
        let dangling = d.path().join("dangling");
        crate::fsops::symlink(&d.path().join("gone"), &dangling).unwrap();
        assert!(read_bounded_if_exists(&dangling, 9, "a pin").is_err());
    }
}

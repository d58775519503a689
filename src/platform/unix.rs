//! Unix implementations (Linux first; macOS builds but cuDNN no longer ships for it).

use std::fs::Metadata;
use std::io;
use std::path::Path;

/// True for errors that mean "the file is busy for a moment". Unix has none.
pub fn is_transient_busy(_e: &io::Error) -> bool {
    false
}

/// True when a rename failed because source and target are on different filesystems (EXDEV).
pub fn is_cross_device(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::CrossesDevices
}

/// Creates a symbolic link to a file.
pub fn symlink_file(target: &Path, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// Creates a link to a folder (a symbolic link on Unix).
pub fn link_dir(target: &Path, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// True when `meta` (from `symlink_metadata`) describes a link.
pub fn is_link(meta: &Metadata, _path: &Path) -> bool {
    meta.file_type().is_symlink()
}

/// Removes a link (never its target).
pub fn remove_link(path: &Path, _meta: &Metadata) -> io::Result<()> {
    std::fs::remove_file(path)
}

/// True when `a` and `b` (existing paths) are on the same filesystem, so a
/// rename or hard link between them works.
pub fn same_volume(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev(),
        _ => false,
    }
}

/// True when `a` and `b` are the same file on disk (same device and inode),
/// as hard links are. Links are not followed: a symbolic link is never the
/// same file as its target.
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::symlink_metadata(a), std::fs::symlink_metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Opens an unnamed temporary file in `dir` (Linux `O_TMPFILE`): it needs
/// the same write permission as creating a file there, but has no name, so
/// nothing is left behind even if the process is killed. `Ok(None)` where
/// unsupported (other systems, or a file system without `O_TMPFILE`).
pub fn open_unnamed_temp(dir: &Path) -> io::Result<Option<std::fs::File>> {
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // __O_TMPFILE | O_DIRECTORY on these architectures.
        const O_TMPFILE: i32 = 0o20_200_000;
        match std::fs::File::options()
            .write(true)
            .mode(0o600)
            .custom_flags(O_TMPFILE)
            .open(dir)
        {
            Ok(f) => Ok(Some(f)),
            // EOPNOTSUPP (file system) or EISDIR (kernel before 3.11).
            Err(e) if matches!(e.raw_os_error(), Some(95) | Some(21)) => Ok(None),
            Err(e) => Err(e),
        }
    }
    #[cfg(not(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )))]
    {
        let _ = dir;
        Ok(None)
    }
}

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

/// The short name of the parent process (`bash`, `zsh`, `fish`), read from
/// `/proc/<ppid>/comm` on Linux; `None` where unavailable. Used by `env` to
/// pick the shell syntax when `--shell` is not given.
pub fn parent_process_name() -> Option<String> {
    let ppid = std::os::unix::process::parent_id();
    let comm = std::fs::read_to_string(format!("/proc/{ppid}/comm")).ok()?;
    let name = comm.trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// Creates a folder link and says which kind it is (always a symbolic link on Unix).
pub fn link_dir_kind(target: &Path, link: &Path) -> io::Result<super::DirLinkKind> {
    std::os::unix::fs::symlink(target, link).map(|()| super::DirLinkKind::Symlink)
}

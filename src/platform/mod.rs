//! The only code that differs by operating system. Each function has the same
//! signature in `unix.rs` and `windows.rs` (after Volta), so the logic around
//! them stays platform-neutral and testable on Linux.

#![allow(clippy::disallowed_methods)] // the one place files change
#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

pub mod acl;
pub mod dir;

/// Whether this binary was built for Windows. Logic that must know the host
/// (rather than the OS a snapshot or a toolkit layout describes) asks this
/// constant, so `cfg!(windows)` appears only in this module.
pub const HOST_WINDOWS: bool = cfg!(windows);

/// Which file on disk a path is, and how many names (hard links) it has:
/// two paths with the same `volume` and `index` share their bytes, which
/// the disk holds once, and deleting a name frees them only when it was the
/// last of `links` (`file_identity`, per OS).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileIdentity {
    /// The device (Unix `st_dev`; Windows: the volume serial number).
    pub volume: u64,
    /// The file on that device (Unix `st_ino`; Windows: the file index).
    pub index: u64,
    /// Its hard links (Unix `st_nlink`; Windows `nNumberOfLinks`).
    pub links: u64,
}

/// What a program run to its end had mapped (`doctor -- CMD`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunMaps {
    /// Its exit code; `None` when a signal ended it or it was not waited for.
    pub exit: Option<i32>,
    /// The program file the run ended in (after any `exec`), when known.
    pub exe: Option<std::path::PathBuf>,
    /// Every file mapped into the program, and into each process it
    /// started, when it ended (Linux), or every DLL loaded during the run
    /// (Windows); each once, in the order first seen.
    pub files: Vec<std::path::PathBuf>,
}

/// A running process's environment, working folder and program
/// (`doctor --pid PID`), as far as this OS tells.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcessEnv {
    /// Its environment variables.
    pub vars: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    /// Its working folder.
    pub cwd: Option<std::path::PathBuf>,
    /// Its program file.
    pub exe: Option<std::path::PathBuf>,
}

/// The bytes an unprivileged process may still write on the file system
/// holding `dir` (`statvfs`'s `f_bavail × f_frsize`, `GetDiskFreeSpaceExW`'s
/// caller-available bytes, through the `fs4` crate); `None` when the system
/// does not say.
pub fn available_space(dir: &std::path::Path) -> Option<u64> {
    fs4::available_space(dir).ok()
}

/// Which kind of folder link [`link_dir_kind`] made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirLinkKind {
    /// An NTFS junction (Windows).
    Junction,
    /// A symbolic link.
    Symlink,
}

impl std::fmt::Display for DirLinkKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DirLinkKind::Junction => "junction",
            DirLinkKind::Symlink => "symlink",
        })
    }
}

/// Creates a folder link, whichever kind [`link_dir_kind`] can make here.
pub fn link_dir(target: &std::path::Path, link: &std::path::Path) -> std::io::Result<()> {
    link_dir_kind(target, link).map(drop)
}

/// The release target this binary was built for, as the release artifacts
/// name it (`x86_64-unknown-linux-gnu`, `aarch64-unknown-linux-gnu`,
/// `x86_64-pc-windows-gnu`); `None` where no release is published.
pub fn release_target() -> Option<&'static str> {
    if cfg!(all(
        target_os = "linux",
        target_arch = "x86_64",
        target_env = "gnu"
    )) {
        Some("x86_64-unknown-linux-gnu")
    } else if cfg!(all(
        target_os = "linux",
        target_arch = "aarch64",
        target_env = "gnu"
    )) {
        Some("aarch64-unknown-linux-gnu")
    } else if cfg!(all(windows, target_arch = "x86_64")) {
        Some("x86_64-pc-windows-gnu")
    } else {
        None
    }
}

/// Puts the executable `new` in place of the running program's file. On
/// Windows the running `.exe` cannot be overwritten, so it is renamed aside
/// first (and removed once it exits); elsewhere `new` is renamed over it.
/// `new` should sit in the same folder as the running program.
#[cfg(feature = "self-update")]
pub fn replace_running_exe(new: &std::path::Path) -> std::io::Result<()> {
    self_replace::self_replace(new)
}

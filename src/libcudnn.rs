//! Asking a cuDNN library what it is: load it and call `cudnnGetVersion()` and
//! `cudnnGetCudartVersion()`. Both answer without a GPU or CUDA driver
//! (cudnn-facts §3.4), which lets `verify`, `doctor` and the tests check the
//! version a library really reports, not what its file name claims.

use std::path::{Path, PathBuf};

use crate::error::{Error, Kind, Result};
use crate::version::Version;

/// What a loaded cuDNN library reports about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibraryVersion {
    /// `cudnnGetVersion()`: the `CUDNN_VERSION` integer (`91200` for 9.12.0, `8100` for 8.1.0).
    pub cudnn: u64,
    /// `cudnnGetCudartVersion()`: the CUDA runtime version it was built with (`12090` = 12.9).
    pub cudart: u64,
}

impl LibraryVersion {
    /// The cuDNN version as `major.minor.patch`.
    pub fn version(&self) -> Version {
        Version::from_cudnn_version_number(self.cudnn)
    }
}

/// Loads the cuDNN library at `path` (`libcudnn.so.9`, `cudnn64_8.dll`) and
/// asks its version. The library stays loaded only for the call.
///
/// # Errors
/// When the file cannot be loaded on this platform (wrong OS or architecture,
/// a missing dependency) or lacks the version functions.
pub fn query_version(path: &Path) -> Result<LibraryVersion> {
    query(path, || ()).map(|(v, ())| v)
}

/// Like [`query_version`], plus the cuDNN files mapped into this process
/// while the library is still loaded (Linux, from `/proc/self/maps`; empty
/// elsewhere): the sub-libraries it really got. cuDNN 9's main library is a
/// small shim that loads `libcudnn_graph.so.9` by name, and the graph
/// library answers `cudnnGetVersion()` — so the version alone does not say
/// whose it is.
///
/// # Errors
/// As [`query_version`].
pub fn query_version_and_modules(path: &Path) -> Result<(LibraryVersion, Vec<PathBuf>)> {
    query(path, mapped_cudnn_files)
}

/// The cuDNN files (`libcudnn*`) mapped into this process, in map order.
fn mapped_cudnn_files() -> Vec<PathBuf> {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = Vec::new();
    for line in maps.lines() {
        // `addr perms offset dev inode      /path/to/file`
        let Some(i) = line.find(" /") else { continue };
        let p = PathBuf::from(line[i + 1..].trim_end());
        let cudnn = p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("libcudnn"));
        if cudnn && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// Loads `path`, asks its version, then runs `while_loaded` before unloading it.
fn query<T>(path: &Path, while_loaded: impl FnOnce() -> T) -> Result<(LibraryVersion, T)> {
    // SAFETY: loading a library runs its initialisers; cuDNN's are side-effect
    // free apart from registering its own state, and we call only two
    // argument-less functions with the C ABI documented in cudnn.h.
    unsafe {
        let lib = libloading::Library::new(path).map_err(|e| {
            Error::new(Kind::Failure, format!("could not load '{}'", path.display()))
                .cause(crate::error::error_chain(&e))
                .hint("the library may be for another platform, or one of its dependencies is missing (`cudnnm doctor` names it)")
        })?;
        let get_version: libloading::Symbol<unsafe extern "C" fn() -> usize> =
            lib.get(b"cudnnGetVersion\0").map_err(|e| {
                Error::new(
                    Kind::Integrity,
                    format!("'{}' has no cudnnGetVersion()", path.display()),
                )
                .cause(e)
            })?;
        let cudnn = get_version() as u64;
        let cudart = match lib.get::<unsafe extern "C" fn() -> usize>(b"cudnnGetCudartVersion\0") {
            Ok(f) => f() as u64,
            Err(_) => 0,
        };
        let extra = while_loaded();
        drop(lib);
        Ok((LibraryVersion { cudnn, cudart }, extra))
    }
}

/// Like [`query_version`], but in a child process (`<exe> probe-library
/// PATH`, a hidden command of the cudnnm binary `exe`).
///
/// Needed whenever one process looks at more than one cuDNN: the loader
/// shares libraries by soname, so after one `libcudnn.so.9` is loaded a
/// second one (another release) resolves its sub-libraries
/// (`libcudnn_graph.so.9`, …) to the first release's copies and reports the
/// first release's version.
///
/// # Errors
/// When the child cannot start, or reports that the library does not load.
pub fn query_version_isolated(exe: &Path, path: &Path) -> Result<LibraryVersion> {
    let out = std::process::Command::new(exe)
        .arg("probe-library")
        .arg(path)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| {
            Error::msg(format!(
                "could not run '{}' to load '{}'",
                exe.display(),
                path.display()
            ))
            .cause(e)
        })?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("error: ");
        return Err(Error::new(
            Kind::Failure,
            format!("could not load '{}'", path.display()),
        )
        .cause(first.to_string()));
    }
    let mut it = text.split_whitespace().map(str::parse::<u64>);
    match (it.next(), it.next()) {
        (Some(Ok(cudnn)), Some(Ok(cudart))) => Ok(LibraryVersion { cudnn, cudart }),
        _ => Err(Error::msg(format!(
            "unexpected answer from probe-library: '{}'",
            text.trim()
        ))),
    }
}

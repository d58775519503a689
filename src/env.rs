//! The process environment, read once at start-up, and the name of every
//! environment variable cudnnm reads or sets (one documented place, as uv does).
//!
//! Logic takes an [`Env`] value instead of calling `std::env`, so tests (and
//! `doctor` snapshots) can describe any machine, Windows included, as data.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// `CUDNNM_HOME`: the cudnnm home folder (store, backups, config); overrides the platform data folder.
pub const CUDNNM_HOME: &str = "CUDNNM_HOME";
/// `CUDNNM_SYSTEM_HOME`: the system home (releases installed for every
/// user with `install --system`); overrides `/opt/cudnnm` / `%ProgramData%\cudnnm`.
pub const CUDNNM_SYSTEM_HOME: &str = "CUDNNM_SYSTEM_HOME";
/// `ProgramData`: Windows' folder for data shared by all users (`C:\ProgramData`).
pub const PROGRAM_DATA: &str = "ProgramData";
/// `CUDNNM_VERSION`: the spec to use in this shell, above any `.cudnn-version`.
pub const CUDNNM_VERSION: &str = "CUDNNM_VERSION";
/// `CUDNNM_INDEX_URL`: the package index cuDNN wheels come from (after
/// `--index-url`; before `config.toml` and pip's settings).
pub const CUDNNM_INDEX_URL: &str = "CUDNNM_INDEX_URL";
/// `PIP_INDEX_URL`: pip's index, read as pip's configuration.
pub const PIP_INDEX_URL: &str = "PIP_INDEX_URL";
/// `PIP_NO_INDEX`: pip told to use no index (only its `find-links`).
pub const PIP_NO_INDEX: &str = "PIP_NO_INDEX";
/// `PIP_CONFIG_FILE`: pip's first configuration file (`/dev/null`: none).
pub const PIP_CONFIG_FILE: &str = "PIP_CONFIG_FILE";
/// `CUDNNM_MIRROR`: base URL replacing NVIDIA's download server.
pub const CUDNNM_MIRROR: &str = "CUDNNM_MIRROR";
/// `CUDNNM_INSTALL_BASE`: the release folder (URL or local folder) that `self update`,
/// `install.sh` and `install.ps1` download cudnnm from.
pub const CUDNNM_INSTALL_BASE: &str = "CUDNNM_INSTALL_BASE";
/// `CUDNNM_ACTIVE`: set by `exec`/`env` to the id of the release activated for this process.
pub const CUDNNM_ACTIVE: &str = "CUDNNM_ACTIVE";
/// `CUDNNM_PYTHON`: the Python used for `install pip:…` (default `python3`, or `python` on Windows).
pub const CUDNNM_PYTHON: &str = "CUDNNM_PYTHON";
/// `CUDNNM_FAULT_AFTER_STEP`: test-only, read by debug builds alone: `use` and
/// `rollback` abort right after journal step K (crash-safety tests);
/// `install --force` over an installed release right after step K of its swap.
pub const CUDNNM_FAULT_AFTER_STEP: &str = "CUDNNM_FAULT_AFTER_STEP";
/// `CUDNNM_TEST_PAUSE_AFTER_STEP`: test-only, read by debug builds alone:
/// `use` and `rollback` pause right after journal step K, while the file
/// `CUDNNM_TEST_PAUSE_FILE` exists (they create it), so a test can signal or
/// race a change in flight; with K = 0, `install` pauses so, its release
/// extracted in `store/.partial-*` and not yet committed.
pub const CUDNNM_TEST_PAUSE_AFTER_STEP: &str = "CUDNNM_TEST_PAUSE_AFTER_STEP";
/// `CUDNNM_TEST_PAUSE_AFTER_DOWNLOAD`: test-only, read by debug builds
/// alone: `install` of a catalog or locked archive pauses after the download
/// (the archive held in the cache), before it takes the home lock to import
/// it, while the file `CUDNNM_TEST_PAUSE_FILE` exists.
pub const CUDNNM_TEST_PAUSE_AFTER_DOWNLOAD: &str = "CUDNNM_TEST_PAUSE_AFTER_DOWNLOAD";
/// `CUDNNM_TEST_PAUSE_FILE`: see [`CUDNNM_TEST_PAUSE_AFTER_STEP`].
pub const CUDNNM_TEST_PAUSE_FILE: &str = "CUDNNM_TEST_PAUSE_FILE";
/// `CUDNNM_TEST_DENY_WRITE`: test-only, read by debug builds alone: folders
/// (path-list) the deploy preflight treats as not writable, so the refusal
/// path is tested even when tests run as root.
pub const CUDNNM_TEST_DENY_WRITE: &str = "CUDNNM_TEST_DENY_WRITE";
/// `CUDNNM_TEST_LOCK_UNSUPPORTED`: test-only, read by debug builds alone:
/// the home lock and the toolkit locks act as if the file system could not
/// lock, so the exclusive lock file fallback runs on a local disk.
pub const CUDNNM_TEST_LOCK_UNSUPPORTED: &str = "CUDNNM_TEST_LOCK_UNSUPPORTED";
/// `CUDNN_PATH`: the root of the active cuDNN (read by CMake scripts and frameworks).
pub const CUDNN_PATH: &str = "CUDNN_PATH";
/// `CUDNN_INCLUDE_DIR`: the folder holding `cudnn.h`.
pub const CUDNN_INCLUDE_DIR: &str = "CUDNN_INCLUDE_DIR";
/// `CUDNN_LIBRARY_DIR`: the folder holding the libraries / import libraries.
pub const CUDNN_LIBRARY_DIR: &str = "CUDNN_LIBRARY_DIR";
/// `CUDA_PATH`: the CUDA toolkit root set by NVIDIA's Windows installer.
pub const CUDA_PATH: &str = "CUDA_PATH";
/// `CUDA_HOME`: the CUDA toolkit root used on Linux by many build systems.
pub const CUDA_HOME: &str = "CUDA_HOME";
/// `PATH`: executables, and on Windows the DLL search path.
pub const PATH: &str = "PATH";
/// `LD_LIBRARY_PATH`: the Linux loader's search path.
pub const LD_LIBRARY_PATH: &str = "LD_LIBRARY_PATH";
/// `CPATH`: extra include folders for gcc/clang.
pub const CPATH: &str = "CPATH";
/// `LIBRARY_PATH`: extra link folders for gcc/clang.
pub const LIBRARY_PATH: &str = "LIBRARY_PATH";
/// `INCLUDE`: MSVC's include folders.
pub const INCLUDE: &str = "INCLUDE";
/// `LIB`: MSVC's library folders.
pub const LIB: &str = "LIB";

/// `SHELL`: the user's login shell (Unix); a fallback when `env` cannot see its parent shell.
pub const SHELL: &str = "SHELL";
/// Prefix of the variables where `env`/`exec` keep a user's own value of
/// `CUDNN_PATH`, `CUDNN_INCLUDE_DIR` and `CUDNN_LIBRARY_DIR` while a release
/// is active (`CUDNNM_ORIG_CUDNN_PATH`), so that deactivating restores it.
pub const CUDNNM_ORIG_PREFIX: &str = "CUDNNM_ORIG_";
/// `HTTPS_PROXY` / `https_proxy`: proxy for HTTPS downloads.
pub const HTTPS_PROXY: &str = "HTTPS_PROXY";
/// `HTTP_PROXY` / `http_proxy`: proxy for plain-HTTP downloads (a lab mirror).
pub const HTTP_PROXY: &str = "HTTP_PROXY";
/// `ALL_PROXY` / `all_proxy`: proxy for every download without a more specific one.
pub const ALL_PROXY: &str = "ALL_PROXY";
/// `NO_PROXY` / `no_proxy`: hosts (comma-separated) reached without a proxy.
pub const NO_PROXY: &str = "NO_PROXY";

/// A snapshot of environment variables and the working folder.
#[derive(Clone, Debug, Default)]
pub struct Env {
    vars: BTreeMap<OsString, OsString>,
    cwd: PathBuf,
    windows: bool,
}

impl Env {
    /// Reads the real process environment and working folder.
    pub fn from_process() -> Env {
        Env {
            vars: std::env::vars_os().collect(),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            windows: crate::platform::HOST_WINDOWS,
        }
    }

    /// An environment given as data; `windows` selects `;` as the path-list
    /// separator and case-insensitive variable names.
    pub fn from_vars<K, V>(
        vars: impl IntoIterator<Item = (K, V)>,
        cwd: impl Into<PathBuf>,
        windows: bool,
    ) -> Env
    where
        K: Into<OsString>,
        V: Into<OsString>,
    {
        Env {
            vars: vars
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            cwd: cwd.into(),
            windows,
        }
    }

    /// The value of `name`, if set (case-insensitively on Windows).
    pub fn var_os(&self, name: &str) -> Option<&OsStr> {
        if let Some(v) = self.vars.get(OsStr::new(name)) {
            return Some(v);
        }
        if self.windows {
            return self
                .vars
                .iter()
                .find(|(k, _)| k.to_string_lossy().eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_os_str());
        }
        None
    }

    /// The value of `name` as UTF-8, if set, valid and not empty.
    pub fn var(&self, name: &str) -> Option<String> {
        self.var_os(name)
            .and_then(|v| v.to_str())
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    }

    /// The entries of a path-list variable (`PATH`, `LD_LIBRARY_PATH`), in
    /// order, empty entries dropped.
    pub fn path_list(&self, name: &str) -> Vec<PathBuf> {
        match self.var_os(name) {
            None => Vec::new(),
            Some(v) => split_path_list(v, self.windows),
        }
    }

    /// All variables, sorted by name.
    pub fn vars(&self) -> impl Iterator<Item = (&OsStr, &OsStr)> {
        self.vars
            .iter()
            .map(|(k, v)| (k.as_os_str(), v.as_os_str()))
    }

    /// The working folder at start-up.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Whether this environment follows Windows rules (`;` separator, case-insensitive names).
    pub fn is_windows(&self) -> bool {
        self.windows
    }

    /// The machine's platform as this environment says it: a Windows
    /// environment is a Windows x86-64 machine; elsewhere the platform this
    /// binary runs on. `None` where cuDNN is not published.
    pub fn platform(&self) -> Option<crate::version::Platform> {
        use crate::version::Platform;
        if self.windows {
            Some(Platform::WindowsX86_64)
        } else {
            Platform::host().filter(|p| !p.is_windows())
        }
    }

    /// The path-list separator: `;` on Windows, `:` elsewhere.
    pub fn path_separator(&self) -> char {
        if self.windows { ';' } else { ':' }
    }
}

/// Splits a path list by the platform's separator, dropping empty entries.
pub fn split_path_list(v: &OsStr, windows: bool) -> Vec<PathBuf> {
    let sep = if windows { ';' } else { ':' };
    v.to_string_lossy()
        .split(sep)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_env_is_case_insensitive_and_uses_semicolons() {
        let e = Env::from_vars(
            [
                ("Path", r"C:\a;;C:\Program Files\b"),
                ("CUDA_PATH", r"C:\cuda"),
            ],
            r"C:\work",
            true,
        );
        assert_eq!(e.var("PATH").unwrap(), r"C:\a;;C:\Program Files\b");
        assert_eq!(
            e.path_list("PATH"),
            vec![PathBuf::from(r"C:\a"), PathBuf::from(r"C:\Program Files\b")]
        );
        let u = Env::from_vars([("Path", "/a:/b")], "/", false);
        assert!(u.var("PATH").is_none());
        assert_eq!(u.path_list("Path").len(), 2);
    }
}

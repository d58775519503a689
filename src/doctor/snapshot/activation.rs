//! What activates a cuDNN release outside the toolkits, and can go stale
//! when the release or folder it names is removed: the home's stable
//! `current/cuda-<variant>` links, environment modules loaded in the shell,
//! and the project's lock file.

use serde::{Deserialize, Serialize};

use crate::version::ReleaseId;

/// A `current/cuda-<variant>` entry of the cudnnm home (`cudnnm default`):
/// a link, or a `.path` file recording the release folder.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct CurrentLink {
    /// The link (or `.path` file).
    pub path: String,
    /// The folder it leads to, as written.
    pub target: Option<String>,
    /// The folder it leads to does not exist.
    pub gone: bool,
}

/// An environment module loaded in the shell doctor runs in (Lmod and
/// Environment Modules list them in `LOADEDMODULES` and their files in
/// `_LMFILES_`), with the folders its file puts on path variables.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct LoadedModule {
    /// Its name (`cudnn/9.27.0.42_cuda12`).
    pub name: String,
    /// Its modulefile, when `_LMFILES_` names it.
    pub file: Option<String>,
    /// The modulefile is gone.
    pub file_gone: bool,
    /// The folders its modulefile sets (`prepend-path`, `setenv`, Lua's
    /// `prepend_path`/`setenv`), as written.
    pub folders: Vec<String>,
}

/// The project's `.cudnn-version.lock` beside the pin that applies.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LockInfo {
    /// The lock file.
    pub path: String,
    /// The exact release it records.
    pub release: ReleaseId,
}

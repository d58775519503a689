//! Toolkit records: a CUDA toolkit found, its layout, and another home's
//! unfinished change to it.

use serde::{Deserialize, Serialize};

use crate::doctor::spath;
use crate::version::Version;

/// A toolkit's folder layout.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ToolkitLayout {
    /// `bin`, `include`, `lib\x64`.
    Windows,
    /// `include`, `lib64` (or `targets/<arch>/{include,lib}`).
    #[default]
    Linux,
}

/// A CUDA toolkit.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct ToolkitInfo {
    /// The toolkit root.
    pub root: String,
    /// Its CUDA version, when readable.
    pub cuda: Option<Version>,
    /// Its layout.
    pub layout: ToolkitLayout,
    /// How it was found (`--cuda-root`, `CUDA_PATH`, `nvcc on PATH`, …).
    pub found_by: String,
    /// Whether this user may change its cuDNN folders, when known.
    pub writable: Option<bool>,
    /// A change a cudnnm home (another, or this one) began here and has not finished (its
    /// in-flight marker, [`crate::deploy::inflight`]), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unfinished_change: Option<UnfinishedChange>,
}

/// Another home's unfinished change to a toolkit.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct UnfinishedChange {
    /// The home whose journal holds it (empty when the marker could not be read).
    pub home: String,
    /// Its backup id.
    pub backup: u64,
    /// What had been asked (`use 9.27.0.42_cuda12`).
    pub action: String,
    /// The command that finishes it (run with that home); empty when the
    /// marker belongs to another user and could not be read.
    pub finish: String,
    /// Whether a cudnnm process holds the toolkit's lock now: the change
    /// is running, not interrupted.
    pub running: bool,
    /// True when the change is this home's own (its journal is in the home
    /// doctor examines): any cudnnm command with this home finishes it.
    pub own_home: bool,
}

impl ToolkitInfo {
    /// True when the root is spelled the Windows way (`C:\…`, `\\server\…`),
    /// so paths below it are joined with `\`. The layout does not decide
    /// this: a Windows-layout toolkit examined on Linux has a `/` root.
    pub fn windows_paths(&self) -> bool {
        let b = self.root.as_bytes();
        self.root.contains('\\') || (b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic())
    }

    /// `sub` (`/`-separated) below the root, spelled like the root.
    fn below(&self, sub: &str) -> String {
        spath::join(&self.root, sub, self.windows_paths())
    }

    /// Where cuDNN DLLs go: `bin` (Windows layout only).
    pub fn bin_dir(&self) -> Option<String> {
        (self.layout == ToolkitLayout::Windows).then(|| self.below("bin"))
    }

    /// Where cuDNN headers go.
    pub fn include_dir(&self) -> String {
        self.below("include")
    }

    /// Where cuDNN libraries go: `lib\x64` or `lib64`.
    pub fn lib_dir(&self) -> String {
        match self.layout {
            ToolkitLayout::Windows => self.below("lib/x64"),
            ToolkitLayout::Linux => self.below("lib64"),
        }
    }

    /// The folder the loader must search for this toolkit's cuDNN: `bin` or `lib64`.
    pub fn loader_dir(&self) -> String {
        self.bin_dir().unwrap_or_else(|| self.lib_dir())
    }

    /// True for the Windows layout.
    pub fn is_windows(&self) -> bool {
        self.layout == ToolkitLayout::Windows
    }
}

//! CUDA toolkits (DESIGN.md §4): finding them, reading their CUDA version, and
//! where cuDNN files go inside them. The layout is data chosen by the
//! toolkit's platform, so Linux tests exercise Windows toolkits too.
//!
//! (Filled in by the switching issue; the types here are the contract other
//! modules use.)

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::env::Env;
use crate::error::{Error, Kind, Result};
use crate::version::Version;

/// Which folder layout a toolkit uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// `bin`, `include`, `lib\x64` (NVIDIA's Windows installer).
    Windows,
    /// `include`, `lib64` (following `lib64 -> targets/x86_64-linux/lib`).
    Linux,
}

/// A CUDA toolkit root.
#[derive(Clone, Debug, Serialize)]
pub struct Toolkit {
    /// The toolkit root (`C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.2`, `/usr/local/cuda-12.4`).
    pub root: PathBuf,
    /// Its CUDA version (`11.2.152`, `8.0.61`; at least major.minor).
    pub cuda: Version,
    /// Folder layout.
    pub layout: Layout,
    /// How it was found (`--cuda-root`, `CUDA_PATH`, `nvcc on PATH`, `default folder`, …).
    pub found_by: String,
}

impl Toolkit {
    /// Where cuDNN DLLs go (`bin`), Windows layout only.
    pub fn bin_dir(&self) -> Option<PathBuf> {
        match self.layout {
            Layout::Windows => Some(self.root.join("bin")),
            Layout::Linux => None,
        }
    }

    /// Where cuDNN headers go.
    pub fn include_dir(&self) -> PathBuf {
        self.root.join("include")
    }

    /// Where cuDNN libraries go: `lib\x64` (Windows) or `lib64` (Linux).
    pub fn lib_dir(&self) -> PathBuf {
        match self.layout {
            Layout::Windows => self.root.join("lib").join("x64"),
            Layout::Linux => self.root.join("lib64"),
        }
    }

    /// Every folder that holds cuDNN files in this layout.
    pub fn cudnn_dirs(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = self.bin_dir().into_iter().collect();
        v.push(self.include_dir());
        v.push(self.lib_dir());
        v
    }
}

/// Reads the CUDA version of the toolkit at `root`: `version.json` (11+),
/// `version.txt` (10.x and before), `CUDA_VERSION` in `include/cuda.h`.
///
/// # Errors
/// [`Kind::NotFound`] when none of those files gives a version.
pub fn read_cuda_version(root: &Path) -> Result<Version> {
    Err(Error::new(
        Kind::NotFound,
        format!("no CUDA version found in '{}'", root.display()),
    ))
}

/// Every toolkit found from the environment and the default install folders.
pub fn discover(_env: &Env) -> Vec<Toolkit> {
    Vec::new()
}

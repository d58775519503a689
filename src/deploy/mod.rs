//! Deploying a release into a CUDA toolkit (DESIGN.md §5): plan, journal,
//! backup, place, verify, record — and recovery and rollback.
//!
//! (Filled in by the switching issue; [`Deployments`] is the contract that
//! `uninstall`, `verify` and `doctor` read.)

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::hash::Sha256Hex;
use crate::home::Home;

/// How files were placed in a toolkit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Symbolic links into the store.
    Symlink,
    /// Hard links to store files (same volume).
    Hardlink,
    /// Copies.
    Copy,
}

/// One file placed in a toolkit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacedFile {
    /// Absolute path in the toolkit.
    pub path: PathBuf,
    /// The store file it came from (relative to the release folder, `lib/libcudnn.so.9`).
    pub from: String,
    /// SHA-256 of the content (absent for a symlink that belongs to the release's own chain).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sha256: Option<Sha256Hex>,
    /// For links: the link target as written.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub link: Option<String>,
}

/// The release active in one toolkit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deployment {
    /// The toolkit root.
    pub toolkit: PathBuf,
    /// The release id (`8.9.7.29_cuda12`).
    pub release: String,
    /// Placement mode.
    pub mode: Mode,
    /// RFC 3339 time of the deployment.
    pub deployed_at: String,
    /// The backup holding what was there before.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub backup: Option<String>,
    /// Every file placed.
    #[serde(rename = "file", default)]
    pub files: Vec<PlacedFile>,
}

/// `deployments.toml`: every toolkit cudnnm manages.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deployments {
    /// One entry per toolkit root.
    #[serde(rename = "deployment", default)]
    pub entries: Vec<Deployment>,
}

impl Deployments {
    /// Reads `deployments.toml`; missing means none.
    ///
    /// # Errors
    /// When the file exists but cannot be read or parsed.
    pub fn load(home: &Home) -> Result<Deployments> {
        let path = home.deployments_file();
        match std::fs::read_to_string(&path) {
            Ok(s) => toml::from_str(&s).map_err(|e| {
                Error::msg(format!("could not parse '{}'", path.display())).cause(e.message())
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Deployments::default()),
            Err(e) => Err(Error::io("read", &path, e)),
        }
    }

    /// The deployment in the toolkit at `root`, if any.
    pub fn for_toolkit(&self, root: &Path) -> Option<&Deployment> {
        self.entries.iter().find(|d| d.toolkit == root)
    }

    /// Toolkits where release `id` is deployed.
    pub fn toolkits_using(&self, id: &str) -> Vec<&Deployment> {
        self.entries.iter().filter(|d| d.release == id).collect()
    }
}

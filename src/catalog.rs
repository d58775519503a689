//! The release catalog (DESIGN.md §3): `manifest.toml` embedded in the binary,
//! overlaid by a user catalog from NVIDIA's `redistrib_*.json`, and downloads.
//!
//! (Filled in by the catalog issue; the types here are the contract `doctor` uses.)

use crate::error::Result;
use crate::home::Home;
use crate::version::Version;

/// A framework build: which CUDA and cuDNN a framework release was built with.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameworkBuild {
    /// `tensorflow` or `pytorch`.
    pub framework: String,
    /// First framework version of the row (`2.5.0`).
    pub first: Version,
    /// Last framework version of the row (`2.11.0`).
    pub last: Version,
    /// `Some("windows")` / `Some("linux")` when the row is platform-specific.
    pub os: Option<String>,
    /// CUDA the build uses (`11.2`).
    pub cuda: Version,
    /// cuDNN the build uses (`8.1`, `9.1.0.70`).
    pub cudnn: Version,
}

/// The catalog of releases, driver floors and framework builds.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    frameworks: Vec<FrameworkBuild>,
}

impl Catalog {
    /// The catalog embedded in the binary, overlaid by the user catalog in `home`.
    pub fn load(_home: &Home) -> Result<Catalog> {
        Ok(Catalog::default())
    }

    /// Minimum driver version for a CUDA toolkit version (`windows` selects
    /// the Windows column), from NVIDIA's CUDA release notes Table 3.
    pub fn min_driver(&self, _cuda: &Version, _windows: bool) -> Option<Version> {
        None
    }

    /// Framework build rows.
    pub fn frameworks(&self) -> &[FrameworkBuild] {
        &self.frameworks
    }
}

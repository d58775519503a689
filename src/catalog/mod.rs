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

/// What `cudnnm install SPEC` asks the catalog for.
#[derive(Clone, Debug)]
pub struct FetchRequest {
    /// The requested release (`8.1.0.77`, `9.1`, `8.9.7.29_cuda12`).
    pub spec: crate::version::Spec,
    /// `--cuda`: the CUDA variant wanted, when given.
    pub cuda: Option<crate::version::CudaVariant>,
    /// The platform to download for (`--platform`, default the host).
    pub platform: crate::version::Platform,
    /// `--mirror` / `CUDNNM_MIRROR` / `mirror` in config: replaces NVIDIA's base URL.
    pub mirror: Option<String>,
    /// `--sha256`: the hash the user expects (needed for archives without a published hash).
    pub sha256: Option<crate::hash::Sha256Hex>,
    /// `--allow-unverified`: accept an archive with no published hash.
    pub allow_unverified: bool,
}

/// A downloaded (or cached) archive, verified, ready for import.
#[derive(Clone, Debug)]
pub struct Fetched {
    /// The archive in `downloads/`.
    pub path: std::path::PathBuf,
    /// Its original file name (`cudnn-11.2-windows-x64-v8.1.0.77.zip`), which the importer reads.
    pub name: String,
    /// Its SHA-256 (verified against the catalog or `--sha256`, or computed when unverified).
    pub sha256: crate::hash::Sha256Hex,
    /// The URL it came from.
    pub url: String,
    /// The catalog's CUDA variant for it.
    pub cuda: crate::version::CudaVariant,
    /// The catalog's release version.
    pub version: Version,
}

/// Resolves `req` against the catalog and downloads the archive into the
/// cache (`downloads/`, by hash), verifying SHA-256 while streaming; a cached
/// archive is not downloaded again.
///
/// # Errors
/// Unknown version ([`crate::error::Kind::NotFound`], naming the nearest
/// known ones), hash mismatch, HTTP and network failures (with hints).
pub fn fetch(
    _home: &Home,
    _env: &crate::env::Env,
    req: &FetchRequest,
    _progress: &dyn crate::progress::Progress,
) -> Result<Fetched> {
    Err(crate::error::Error::new(
        crate::error::Kind::NotFound,
        format!("cuDNN {} is not in the catalog of this build", req.spec),
    )
    .hint("download the archive yourself and run `cudnnm install PATH`"))
}

//! What one catalog entry says: an archive and the hashes published for it,
//! a support-matrix row, a driver floor, a framework build, a PyPI package.

use serde::Serialize;

use super::{is_absolute_url, normalize_base};
use crate::hash::Sha256Hex;
use crate::version::{CudaVariant, DriverVersion, Flavour, Platform, ReleaseId, Version};

/// A framework build: which CUDA and cuDNN a framework release was built with
/// (TensorFlow's tested build configurations, PyTorch's release matrix;
/// docs/releases.md#framework-builds).
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

/// Which catalog file an entry came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CatalogLayer {
    /// `manifest.toml`, embedded in the binary.
    Embedded,
    /// `$CUDNNM_HOME/catalog.toml`.
    User,
}

/// A SHA-256 that a named source published for an archive.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PublishedHash {
    /// The digest.
    pub sha256: Sha256Hex,
    /// Who published it (`NVIDIA redistrib_9.1.0.json`, `conda-forge cudnn-feedstock a4be42d`).
    pub source: String,
}

/// One downloadable archive of a release.
#[derive(Clone, Debug, Serialize)]
pub struct Archive {
    /// The release version (`8.1.0.77`, `7.1.3`).
    pub version: Version,
    /// The CUDA the archive is built for (`11.2`, `12`).
    pub cuda: CudaVariant,
    /// The platform of its binaries.
    pub platform: Platform,
    /// Which build: NVIDIA's `cudnn` or `cudnn_jit` component.
    pub flavour: Flavour,
    /// Path relative to [`Archive::base`] (`redist/cudnn/v8.1.0/cudnn-11.2-windows-x64-v8.1.0.77.zip`),
    /// or an absolute URL.
    pub path: String,
    /// Further paths holding the same bytes, tried in order after a 404.
    pub alt_paths: Vec<String>,
    /// The base URL of the catalog file that listed it (normally [`super::NVIDIA_BASE_URL`]).
    pub base: String,
    /// Size in bytes, when published.
    pub size: Option<u64>,
    /// Every accepted SHA-256; empty when none was published.
    pub hashes: Vec<PublishedHash>,
    /// Where the path (URL) comes from.
    pub source: String,
    /// Which catalog file listed it.
    pub origin: CatalogLayer,
}

impl Archive {
    /// The file name (`cudnn-11.2-windows-x64-v8.1.0.77.zip`).
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    /// The release id, `8.1.0.77_cuda11.2` (`9.27.0.42_cuda12+jit` for a JIT build).
    pub fn id(&self) -> String {
        self.release_id().to_string()
    }

    /// The release it carries.
    pub fn release_id(&self) -> ReleaseId {
        ReleaseId::new(self.version.clone(), self.cuda).with_flavour(self.flavour)
    }

    /// Whether a source published a SHA-256 for it.
    pub fn is_verifiable(&self) -> bool {
        !self.hashes.is_empty()
    }

    /// The URLs to try, in order: `path` then `alt_paths`, each under `mirror`
    /// when given (absolute URLs are kept as they are), else under [`Archive::base`].
    pub fn urls(&self, mirror: Option<&str>) -> Vec<String> {
        let base = mirror.map(normalize_base);
        std::iter::once(&self.path)
            .chain(&self.alt_paths)
            .map(|p| {
                if is_absolute_url(p) {
                    p.clone()
                } else {
                    format!("{}{p}", base.as_deref().unwrap_or(&self.base))
                }
            })
            .collect()
    }

    /// [`Archive::urls`] with who named each ([`super::download::Trust`]):
    /// one under `mirror` (the user's), or listed by the user catalog, may
    /// be `http://` or `file://`; one the embedded catalog lists is HTTPS only.
    pub fn locations(&self, mirror: Option<&str>) -> Vec<super::download::Location> {
        let base = mirror.map(normalize_base);
        std::iter::once(&self.path)
            .chain(&self.alt_paths)
            .map(|p| {
                let by_user = self.origin == CatalogLayer::User;
                if is_absolute_url(p) {
                    super::download::Location::new(p.clone(), by_user)
                } else {
                    match &base {
                        Some(m) => super::download::Location::new(format!("{m}{p}"), true),
                        None => {
                            super::download::Location::new(format!("{}{p}", self.base), by_user)
                        }
                    }
                }
            })
            .collect()
    }
}

/// A row of NVIDIA's support matrix, for an inclusive range of releases.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SupportRow {
    /// First release of the range (compared on major.minor.patch).
    pub first: Version,
    /// Last release of the range.
    pub last: Version,
    /// Limits the row to builds for this CUDA (`11` = every 11.x build); `None` = every build.
    pub cuda: Option<CudaVariant>,
    /// CUDA toolkit versions NVIDIA lists as supported (major.minor).
    pub toolkits: Vec<Version>,
    /// Minimum GPU compute capability (`3.5`, `5.0`).
    pub min_compute: Option<Version>,
    /// The published matrix the row comes from.
    pub source: String,
}

impl SupportRow {
    pub(super) fn applies(&self, version: &Version, cuda: &CudaVariant) -> bool {
        let v = version.triple();
        if v < self.first.triple() || v > self.last.triple() {
            return false;
        }
        match &self.cuda {
            None => true,
            Some(c) => {
                c.major() == cuda.major() && (c.minor().is_none() || c.minor() == cuda.minor())
            }
        }
    }
}

/// Minimum driver of one CUDA toolkit release (NVIDIA CUDA release notes, Table 3).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DriverRow {
    /// Toolkit version: major.minor.update from CUDA 11 (`12.2.2`), NVIDIA's full version before (`10.1.105`).
    pub cuda: Version,
    /// Minimum Linux x86_64 driver (`535.104.05`).
    pub linux: DriverVersion,
    /// Minimum Windows x86_64 driver; `None` where NVIDIA says N/A (CUDA 13+).
    pub windows: Option<DriverVersion>,
    /// NVIDIA's row label (`12.2 Update 2`).
    pub label: String,
    /// A release candidate row (11.0.1 RC), never chosen as a family's floor.
    pub prerelease: bool,
}

/// One of NVIDIA's cuDNN packages on PyPI and the files its index lists
/// (docs/releases.md#pip-wheels): a `[[wheel]]` table of the catalog.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WheelList {
    /// The package as PyPI normalizes its name (`nvidia-cudnn-cu12`).
    pub package: String,
    /// The CUDA it is built for (the package name's major: `12`).
    pub cuda: CudaVariant,
    /// The build it carries (`nvidia-cudnn-jit-*`: JIT).
    pub flavour: Flavour,
    /// Every cuDNN release it carries, oldest first (yanked ones too).
    pub versions: Vec<Version>,
    /// Where the list comes from.
    pub source: String,
    /// When the index was read (`2026-12-03`), when the catalog says.
    pub read: Option<String>,
    /// Every wheel file with its identity, in the index's order; empty for
    /// a list that records versions only.
    pub files: Vec<WheelFile>,
}

/// One wheel file of a [`WheelList`], as the package index publishes it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WheelFile {
    /// The cuDNN release it carries (`9.0.0.312` of `9.0.0.312.post1`).
    pub version: Version,
    /// The package version as published (`9.0.0.312.post1`): what a pip
    /// requirement names.
    pub dist_version: String,
    /// The platform its binaries are for.
    pub platform: Platform,
    /// Its platform tag (`manylinux_2_27_aarch64`).
    pub tag: String,
    /// Its file name.
    pub filename: String,
    /// Where the index serves it.
    pub url: String,
    /// Its size in bytes.
    pub size: u64,
    /// The SHA-256 the index publishes for the `.whl` file.
    pub sha256: Sha256Hex,
    /// `Some(reason)` when the index marks it yanked (PEP 592; the reason
    /// empty when none was given): never picked by a prefix, range or `latest`.
    pub yanked: Option<String>,
}

/// What GPUs of one architecture need of a cuDNN build: the first cuDNN
/// release that supports them, the CUDA toolkit that first compiles for
/// them (so a build for an older CUDA, or a toolkit older than this, cannot
/// run there), and the driver that CUDA needs. From NVIDIA's cuDNN support
/// matrices (docs/releases.md#gpu-ceilings); a `[[gpu]]` row of the catalog.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GpuRow {
    /// The architecture (`Blackwell`).
    pub architecture: String,
    /// The lowest compute capability of the row (`10.0`).
    pub first: Version,
    /// The highest compute capability of the row (`12.9`).
    pub last: Version,
    /// The first cuDNN release supporting it (`9.7.0`, compared on major.minor.patch).
    pub cudnn: Version,
    /// The first CUDA toolkit supporting it (`12.8`).
    pub cuda: Version,
    /// The minimum Linux driver (`570.26`), when the matrix gives one.
    pub driver_linux: Option<DriverVersion>,
    /// The minimum Windows driver (`570.65`), when the matrix gives one.
    pub driver_windows: Option<DriverVersion>,
    /// The published matrix the row comes from.
    pub source: String,
}

impl GpuRow {
    /// Whether a GPU of compute capability `cc` is of this row.
    pub fn holds(&self, cc: &Version) -> bool {
        let c = (cc.major(), cc.minor());
        (self.first.major(), self.first.minor()) <= c && c <= (self.last.major(), self.last.minor())
    }
}

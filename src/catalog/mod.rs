//! The release catalog: which cuDNN archives exist, where to
//! download them and which SHA-256 values prove them genuine; NVIDIA's support
//! matrix, the CUDA driver table and framework builds for `doctor`.
//!
//! Sources, in order of precedence:
//! 1. the user catalog `$CUDNNM_HOME/catalog.toml`, written by
//!    `cudnnm manifest refresh` from NVIDIA's `redistrib_*.json` files;
//! 2. `manifest.toml`, embedded in the binary, transcribed from the sources its
//!    comments name.
//!
//! An archive is keyed by release version, CUDA variant and platform. When both
//! catalogs list the same key for the same file name, the user entry's path,
//! size and source win and the accepted SHA-256 values are the union of both
//! (each still carrying the source that published it), so an archive NVIDIA
//! re-uploaded with new bytes installs from either copy. When the file names
//! differ, the user entry replaces the embedded one. Support, driver, framework
//! and wheel rows of the user catalog are consulted before the embedded ones.
//!
//! Mirrors: `--mirror URL`, `CUDNNM_MIRROR` or `mirror` in `config.toml`
//! replace the base URL [`NVIDIA_BASE_URL`] (`https://developer.download.nvidia.com/compute/`)
//! of every archive; paths below it are kept, so a mirror is a copy of NVIDIA's
//! tree under `compute/` (what `wget -x` makes under
//! `developer.download.nvidia.com/compute/`). A mirror may also be a local
//! folder or `file://` URL holding that tree.
//!
//! Known-bad releases live in their own embedded file, read by [`advisory`].
//!
//! By concern: the entry types in `entry`, reading catalog files in
//! `manifest` and [`redist`], writing the user catalog in [`refresh`], spec
//! resolution in [`resolve`], mirrors in `mirror`, fetching an archive in
//! `fetch` and the cache and HTTP transfer in [`download`]. Their public
//! items are re-exported here (`catalog::Archive`, `catalog::fetch`).

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::hash::Sha256Hex;
use crate::home::Home;
use crate::version::{CudaVariant, DriverVersion, Platform, Spec, Version};

pub mod advisory;
pub mod download;
mod entry;
mod fetch;
pub mod index;
mod manifest;
mod mirror;
pub mod offer;
pub mod pip;
pub mod redist;
pub mod refresh;
pub mod resolve;
#[cfg(test)]
mod sources_test;
#[cfg(test)]
mod tests;

pub use entry::{
    Archive, CatalogLayer, DriverRow, FrameworkBuild, PublishedHash, SupportRow, WheelFile,
    WheelList,
};
pub use fetch::{
    Check, FetchRequest, Fetched, MachineFit, fetch, fetch_archive, fetch_for, passed_over_note,
};
pub use mirror::{effective_mirror, mirror_url};
pub(crate) use mirror::{is_absolute_url, normalize_base};

/// The catalog schema version this build reads and writes (`schema = 1`).
pub const SCHEMA: u32 = 1;

/// NVIDIA's download base; every catalog path is relative to it unless the
/// catalog file sets another `base_url`. A mirror replaces it.
pub const NVIDIA_BASE_URL: &str = "https://developer.download.nvidia.com/compute/";

/// `manifest.toml` as embedded at build time.
pub const EMBEDDED_MANIFEST: &str = include_str!("../../manifest.toml");

/// The catalog of releases, driver floors and framework builds.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    archives: Vec<Archive>,
    support: Vec<SupportRow>,
    drivers: Vec<DriverRow>,
    frameworks: Vec<FrameworkBuild>,
    wheels: Vec<WheelList>,
    warnings: Vec<String>,
    user_file: Option<PathBuf>,
}

impl Catalog {
    /// The catalog embedded in the binary, overlaid by the user catalog in
    /// `home` (see the module documentation for precedence). Problems in either
    /// file become [`Catalog::warnings`]; the rest stays usable.
    ///
    /// # Errors
    /// None today; the `Result` leaves room for a catalog that must not be ignored.
    pub fn load(home: &Home) -> Result<Catalog> {
        let path = home.user_catalog_file();
        let mut warnings = Vec::new();
        let user = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                warnings.push(format!(
                    "could not read the user catalog '{}' ({e}); using the embedded catalog only",
                    path.display()
                ));
                None
            }
        };
        let mut c = Catalog::from_texts(
            EMBEDDED_MANIFEST,
            user.as_deref().map(|t| (t, path.as_path())),
        );
        warnings.append(&mut c.warnings);
        c.warnings = warnings;
        Ok(c)
    }

    /// The embedded catalog alone.
    pub fn embedded() -> Catalog {
        Catalog::from_texts(EMBEDDED_MANIFEST, None)
    }

    /// A catalog from the text of a base manifest and an optional user catalog
    /// (its text and path, for messages).
    pub fn from_texts(embedded: &str, user: Option<(&str, &Path)>) -> Catalog {
        let mut warnings = Vec::new();
        let base = manifest::parse(
            embedded,
            "manifest.toml",
            CatalogLayer::Embedded,
            &mut warnings,
        );
        let mut c = Catalog {
            archives: base.archives,
            support: base.support,
            drivers: base.drivers,
            frameworks: base.frameworks,
            wheels: base.wheels,
            warnings: Vec::new(),
            user_file: None,
        };
        if let Some((text, path)) = user {
            let label = format!("user catalog '{}'", path.display());
            let u = manifest::parse(text, &label, CatalogLayer::User, &mut warnings);
            c.overlay_archives(u.archives);
            c.support.splice(0..0, u.support);
            c.drivers.splice(0..0, u.drivers);
            c.frameworks.splice(0..0, u.frameworks);
            c.wheels.splice(0..0, u.wheels);
            c.user_file = Some(path.to_path_buf());
        }
        c.dedupe_archives(&mut warnings);
        c.archives.sort_by(|a, b| {
            (&a.version, a.platform, a.cuda).cmp(&(&b.version, b.platform, b.cuda))
        });
        c.warnings = warnings;
        c
    }

    /// Puts `user` archives over the current ones (module docs: precedence).
    fn overlay_archives(&mut self, user: Vec<Archive>) {
        for mut u in user {
            match self.archives.iter().position(|a| same_key(a, &u)) {
                Some(i) if self.archives[i].name() == u.name() => {
                    let old = self.archives.remove(i);
                    for h in old.hashes {
                        if !u.hashes.iter().any(|x| x.sha256 == h.sha256) {
                            u.hashes.push(h);
                        }
                    }
                    // The embedded URLs stay as fall-backs, resolved against their own base.
                    for p in std::iter::once(old.path).chain(old.alt_paths) {
                        let full = if is_absolute_url(&p) || old.base == u.base {
                            p
                        } else {
                            format!("{}{p}", old.base)
                        };
                        if full != u.path && !u.alt_paths.contains(&full) {
                            u.alt_paths.push(full);
                        }
                    }
                    self.archives.push(u);
                }
                Some(i) => self.archives[i] = u,
                None => self.archives.push(u),
            }
        }
    }

    /// Two entries of one file with the same key: the later one is dropped with a warning.
    fn dedupe_archives(&mut self, warnings: &mut Vec<String>) {
        let mut kept: Vec<Archive> = Vec::with_capacity(self.archives.len());
        for a in std::mem::take(&mut self.archives) {
            if kept.iter().any(|k| same_key(k, &a)) {
                warnings.push(format!(
                    "the catalog lists {} for {} twice; the second entry ({}) was ignored",
                    a.id(),
                    a.platform,
                    a.name()
                ));
            } else {
                kept.push(a);
            }
        }
        self.archives = kept;
    }

    /// Every archive, sorted by version, platform, CUDA variant.
    pub fn archives(&self) -> &[Archive] {
        &self.archives
    }

    /// Problems found while reading the catalog files (each names the file and entry).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The user catalog that was overlaid, if one was found.
    pub fn user_file(&self) -> Option<&Path> {
        self.user_file.as_deref()
    }

    /// The archive of exactly `version` for `cuda` on `platform`.
    pub fn archive(
        &self,
        version: &Version,
        cuda: &CudaVariant,
        platform: Platform,
    ) -> Option<&Archive> {
        self.archives
            .iter()
            .find(|a| &a.version == version && &a.cuda == cuda && a.platform == platform)
    }

    /// The CUDA toolkit versions (major.minor) NVIDIA's support matrix lists for
    /// a build of `version` for `cuda`, newest first; `None` when the catalog
    /// has no matrix for that release.
    pub fn supported_toolkits(
        &self,
        version: &Version,
        cuda: &CudaVariant,
    ) -> Option<Vec<Version>> {
        let mut out: Vec<Version> = Vec::new();
        let mut any = false;
        for row in self.support.iter().filter(|r| r.applies(version, cuda)) {
            if row.toolkits.is_empty() {
                continue;
            }
            any = true;
            for t in &row.toolkits {
                if cuda.fits(t.major(), t.minor()) && !out.contains(t) {
                    out.push(t.clone());
                }
            }
        }
        out.sort_by(|a, b| b.cmp(a));
        any.then_some(out)
    }

    /// The minimum GPU compute capability for a build of `version` for `cuda`
    /// (`3.5`, `5.0`), when the support matrix gives one.
    pub fn min_compute(&self, version: &Version, cuda: &CudaVariant) -> Option<Version> {
        self.support
            .iter()
            .filter(|r| r.applies(version, cuda))
            .find_map(|r| r.min_compute.clone())
    }

    /// Support-matrix rows, user catalog first.
    pub fn support(&self) -> &[SupportRow] {
        &self.support
    }

    /// Minimum driver version for a CUDA toolkit version (`windows` selects
    /// the Windows column), from NVIDIA's CUDA release notes Table 3. An exact
    /// row (`12.2.2`, `9.2.148`) wins; otherwise the lowest non-prerelease row
    /// of the same major.minor (the GA driver). `None` for unknown toolkits and
    /// for Windows from CUDA 13 (NVIDIA: N/A).
    pub fn min_driver(&self, cuda: &Version, windows: bool) -> Option<DriverVersion> {
        let pick = |r: &DriverRow| {
            if windows {
                r.windows.clone()
            } else {
                Some(r.linux.clone())
            }
        };
        if cuda.parts().len() >= 3
            && let Some(r) = self
                .drivers
                .iter()
                .find(|r| r.cuda.triple() == cuda.triple())
        {
            return pick(r);
        }
        self.drivers
            .iter()
            .filter(|r| {
                !r.prerelease && r.cuda.major() == cuda.major() && r.cuda.minor() == cuda.minor()
            })
            .min_by(|a, b| a.cuda.cmp(&b.cuda))
            .and_then(pick)
    }

    /// Driver rows, user catalog first.
    pub fn drivers(&self) -> &[DriverRow] {
        &self.drivers
    }

    /// Framework build rows.
    pub fn frameworks(&self) -> &[FrameworkBuild] {
        &self.frameworks
    }

    /// cuDNN packages on PyPI.
    pub fn wheels(&self) -> &[WheelList] {
        &self.wheels
    }

    /// The SHA-256 digests the catalog records as published for the wheel
    /// of PyPI package `package` (as PyPI spells it, `nvidia-cudnn-jit-cu12`)
    /// at `version` for `platform`; empty when it records none.
    pub fn wheel_hashes(
        &self,
        package: &str,
        version: &Version,
        platform: Platform,
    ) -> Vec<&Sha256Hex> {
        self.wheels
            .iter()
            .filter(|w| {
                w.package
                    .replace(['_', '.'], "-")
                    .eq_ignore_ascii_case(package)
            })
            .flat_map(|w| &w.files)
            .filter(|f| &f.version == version && f.platform == platform)
            .map(|f| &f.sha256)
            .collect()
    }

    /// The PyPI package and version carrying `version` for `cuda`, if listed
    /// (`nvidia-cudnn-cu12`, `9.12.0.46`).
    pub fn wheel_for(&self, spec: &Spec) -> Option<(&WheelList, &Version)> {
        self.wheels
            .iter()
            .flat_map(|w| w.versions.iter().map(move |v| (w, v)))
            .filter(|(w, v)| spec.matches(v, &w.cuda))
            .max_by(|a, b| a.1.cmp(b.1).then(a.0.cuda.cmp(&b.0.cuda)))
    }
}

fn same_key(a: &Archive, b: &Archive) -> bool {
    a.version == b.version && a.cuda == b.cuda && a.platform == b.platform
}

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
//! An archive is keyed by release version, CUDA variant, flavour and platform. When both
//! catalogs list the same key for the same file name, the user entry's path,
//! size and source win and the accepted SHA-256 values are the union of both
//! (each still carrying the source that published it), so an archive NVIDIA
//! re-uploaded with new bytes installs from either copy. When the file names
//! differ, the user entry replaces the embedded one. A package's `[[wheel]]`
//! list in the user catalog replaces the embedded one (the index's answer is
//! the whole list, yanks included). Support, GPU, driver and framework rows
//! of the user catalog are consulted before the embedded ones.
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
//! `manifest`, NVIDIA's and PyPI's indexes in [`redist`] and [`pypi`], the
//! rows written from them in [`generate`], the user catalog in [`refresh`], spec
//! resolution in [`resolve`], mirrors in `mirror`, fetching an archive in
//! `fetch` and the cache and HTTP transfer in [`download`]. Their public
//! items are re-exported here (`catalog::Archive`, `catalog::fetch`).

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::hash::Sha256Hex;
use crate::home::Home;
use crate::version::{CudaVariant, DriverVersion, Flavour, Platform, ReleaseId, Spec, Version};

pub mod advisory;
pub mod download;

/// The largest user catalog (`catalog.toml`) read, in bytes (4 MiB; one
/// refreshed from every NVIDIA index is a few hundred KiB).
pub const MAX_CATALOG_BYTES: u64 = 4 << 20;
mod entry;
mod fetch;
pub mod generate;
mod gpus;
pub mod index;
mod manifest;
mod mirror;
pub mod offer;
pub mod pip;
pub mod pypi;
pub mod redist;
pub mod refresh;
pub mod resolve;
#[cfg(test)]
mod sources_test;
#[cfg(test)]
mod tests;

pub use entry::{
    Archive, CatalogLayer, DriverRow, FrameworkBuild, GpuRow, PublishedHash, SupportRow, WheelFile,
    WheelList,
};
pub use fetch::{
    AskedBy, Check, FetchRequest, Fetched, MachineFit, fetch, fetch_archive, fetch_for,
    passed_over_note,
};
pub use gpus::{Fit, Lacks, TooNew, row_for, too_new_in};
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
    gpus: Vec<GpuRow>,
    warnings: Vec<String>,
    user_file: Option<PathBuf>,
    /// `written` of the user catalog (RFC 3339), when it says.
    user_written: Option<String>,
    /// Releases a package index marks yanked though the catalog's own rows
    /// do not (yanked after the catalog was written), with the reason
    /// [`Catalog::yanked`] gives ([`Catalog::note_index_yank`]).
    index_yanked: Vec<(ReleaseId, String)>,
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
        let user = match crate::fsops::read_bounded_if_exists(
            &path,
            MAX_CATALOG_BYTES,
            "a user catalog",
        ) {
            Ok(bytes) => bytes.map(|b| String::from_utf8_lossy(&b).into_owned()),
            Err(e) => {
                warnings.push(format!("{}; using the embedded catalog only", e.message()));
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
        let mut archives = base.archives;
        for r in &base.redists {
            archives.extend(r.archives(&base.base, CatalogLayer::Embedded));
        }
        let mut c = Catalog {
            archives,
            support: base.support,
            drivers: base.drivers,
            frameworks: base.frameworks,
            wheels: base.wheels,
            gpus: base.gpus,
            warnings: Vec::new(),
            user_file: None,
            user_written: None,
            index_yanked: Vec::new(),
        };
        if let Some((text, path)) = user {
            let label = format!("user catalog '{}'", path.display());
            let u = manifest::parse(text, &label, CatalogLayer::User, &mut warnings);
            let mut archives = u.archives;
            for r in &u.redists {
                archives.extend(r.archives(&u.base, CatalogLayer::User));
            }
            c.overlay_archives(archives);
            c.support.splice(0..0, u.support);
            c.gpus.splice(0..0, u.gpus);
            c.drivers.splice(0..0, u.drivers);
            c.frameworks.splice(0..0, u.frameworks);
            c.wheels
                .retain(|w| !u.wheels.iter().any(|x| x.package == w.package));
            c.wheels.splice(0..0, u.wheels);
            c.user_file = Some(path.to_path_buf());
            c.user_written = u.written;
        }
        c.dedupe_archives(&mut warnings);
        c.archives.sort_by(|a, b| {
            (&a.version, a.platform, a.cuda, a.flavour)
                .cmp(&(&b.version, b.platform, b.cuda, b.flavour))
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

    /// The archive of exactly `version` for `cuda` on `platform` (the full build).
    pub fn archive(
        &self,
        version: &Version,
        cuda: &CudaVariant,
        platform: Platform,
    ) -> Option<&Archive> {
        self.archive_of(&ReleaseId::new(version.clone(), *cuda), platform)
    }

    /// The archive of release `id` (its flavour included) on `platform`.
    pub fn archive_of(&self, id: &ReleaseId, platform: Platform) -> Option<&Archive> {
        self.archives.iter().find(|a| {
            a.version == id.version
                && a.cuda == id.cuda
                && a.flavour == id.flavour
                && a.platform == platform
        })
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
        let package = crate::version::python_name(package, '-');
        self.wheels
            .iter()
            .filter(|w| w.package == package)
            .flat_map(|w| &w.files)
            .filter(|f| &f.version == version && f.platform == platform)
            .map(|f| &f.sha256)
            .collect()
    }

    /// The wheel file the catalog records under `filename`
    /// (`nvidia_cudnn_cu12-8.9.2.26-py3-none-manylinux1_x86_64.whl`), from
    /// any of its packages: an index serves one file per name.
    pub fn wheel_named(&self, filename: &str) -> Option<&WheelFile> {
        self.wheels
            .iter()
            .flat_map(|w| &w.files)
            .find(|f| f.filename == filename)
    }

    /// The wheel list of `flavour` for CUDA major `cuda`, if the catalog has one.
    pub fn wheel_list(&self, flavour: Flavour, cuda: u32) -> Option<&WheelList> {
        self.wheels
            .iter()
            .find(|w| w.flavour == flavour && w.cuda.major() == cuda)
    }

    /// The wheel files of release `id` (its CUDA major and flavour name the
    /// package) for `platform`, in the index's order: one, or several
    /// builds of one release (`9.0.0.312` and its `.post1`).
    pub fn wheel_files(&self, id: &ReleaseId, platform: Platform) -> Vec<&WheelFile> {
        self.wheel_list(id.flavour, id.cuda.major())
            .filter(|w| w.cuda == id.cuda)
            .map(|w| {
                w.files
                    .iter()
                    .filter(|f| f.version == id.version && f.platform == platform)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `Some(reason)` when PyPI has yanked release `id`: every wheel its
    /// package lists for that version is yanked (the reason of one of them,
    /// empty when none was given). NVIDIA's archive of a yanked release is
    /// marked too: the same bytes, withdrawn for the same reason.
    pub fn yanked(&self, id: &ReleaseId) -> Option<&str> {
        if let Some((_, reason)) = self.index_yanked.iter().find(|(i, _)| i == id) {
            return Some(reason);
        }
        let list = self.wheel_list(id.flavour, id.cuda.major())?;
        let mut files = list
            .files
            .iter()
            .filter(|f| f.version == id.version)
            .peekable();
        files.peek()?;
        let mut reason: Option<&str> = None;
        for f in files {
            let r = f.yanked.as_deref()?;
            if reason.is_none_or(str::is_empty) {
                reason = Some(r);
            }
        }
        reason
    }

    /// Records that the package index in use marks every wheel of `id` (for
    /// the platform asked) yanked: from now on this catalog treats it as
    /// yanked ([`Catalog::yanked`]), so a prefix passes over it. For this
    /// run only; `cudnnm manifest refresh` writes the index's state.
    pub fn note_index_yank(&mut self, id: ReleaseId, reason: String) {
        self.index_yanked.push((id, reason));
    }

    /// Every platform the catalog has release `id` for (archives and
    /// wheels), in [`Platform::ALL`] order.
    pub fn platforms_of(&self, id: &ReleaseId) -> Vec<Platform> {
        Platform::ALL
            .into_iter()
            .filter(|p| self.archive_of(id, *p).is_some() || !self.wheel_files(id, *p).is_empty())
            .collect()
    }

    /// The PyPI package and version carrying the newest release `spec`
    /// names (`nvidia-cudnn-cu12`, `9.12.0.46`): its flavour (the full build
    /// unless the spec says `+jit`), never a yanked release unless the spec
    /// names it exactly.
    pub fn wheel_for(&self, spec: &Spec) -> Option<(&WheelList, &Version)> {
        let flavour = spec.wanted_flavour();
        self.wheels
            .iter()
            .filter(|w| w.flavour == flavour)
            .flat_map(|w| w.versions.iter().map(move |v| (w, v)))
            .filter(|(w, v)| spec.matches(v, &w.cuda))
            .filter(|(w, v)| {
                spec.names_exactly(v)
                    || self
                        .yanked(&ReleaseId::new((*v).clone(), w.cuda).with_flavour(w.flavour))
                        .is_none()
            })
            .max_by(|a, b| a.1.cmp(b.1).then(a.0.cuda.cmp(&b.0.cuda)))
    }

    /// GPU architecture rows (the newest architectures' needs), user catalog first.
    pub fn gpus(&self) -> &[GpuRow] {
        &self.gpus
    }

    /// How old the catalog's data is: the user catalog's `written`
    /// (RFC 3339) when it has one, else the newest `read` date of the wheel
    /// lists (the day the maintainer read PyPI), with which catalog it is.
    pub fn data_date(&self) -> Option<(String, CatalogLayer)> {
        if let Some(w) = &self.user_written {
            return Some((w.clone(), CatalogLayer::User));
        }
        self.wheels
            .iter()
            .filter_map(|w| w.read.clone())
            .max()
            .map(|d| (d, CatalogLayer::Embedded))
    }
}

fn same_key(a: &Archive, b: &Archive) -> bool {
    a.version == b.version && a.cuda == b.cuda && a.platform == b.platform && a.flavour == b.flavour
}

//! The release catalog (DESIGN.md §3): which cuDNN archives exist, where to
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
//! Downloads live in [`download`]; spec resolution in [`resolve`].

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::env::Env;
use crate::error::{Error, Kind, Result};
use crate::hash::Sha256Hex;
use crate::home::Home;
use crate::progress::Progress;
use crate::version::{self, CudaVariant, Platform, Spec, Version};

pub mod download;
mod manifest;
pub mod offer;
pub mod redist;
pub mod refresh;
pub mod resolve;

/// The catalog schema version this build reads and writes (`schema = 1`).
pub const SCHEMA: u32 = 1;

/// NVIDIA's download base; every catalog path is relative to it unless the
/// catalog file sets another `base_url`. A mirror replaces it.
pub const NVIDIA_BASE_URL: &str = "https://developer.download.nvidia.com/compute/";

/// `manifest.toml` as embedded at build time.
pub const EMBEDDED_MANIFEST: &str = include_str!("../../manifest.toml");

/// A framework build: which CUDA and cuDNN a framework release was built with
/// (TensorFlow's tested build configurations, PyTorch's release matrix;
/// cudnn-facts §6).
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
pub enum Origin {
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
    /// Path relative to [`Archive::base`] (`redist/cudnn/v8.1.0/cudnn-11.2-windows-x64-v8.1.0.77.zip`),
    /// or an absolute URL.
    pub path: String,
    /// Further paths holding the same bytes, tried in order after a 404.
    pub alt_paths: Vec<String>,
    /// The base URL of the catalog file that listed it (normally [`NVIDIA_BASE_URL`]).
    pub base: String,
    /// Size in bytes, when published.
    pub size: Option<u64>,
    /// Every accepted SHA-256; empty when none was published.
    pub hashes: Vec<PublishedHash>,
    /// Where the path (URL) comes from.
    pub source: String,
    /// Which catalog file listed it.
    pub origin: Origin,
}

impl Archive {
    /// The file name (`cudnn-11.2-windows-x64-v8.1.0.77.zip`).
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    /// The release id, `8.1.0.77_cuda11.2`.
    pub fn id(&self) -> String {
        version::release_id(&self.version, &self.cuda)
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
    fn applies(&self, version: &Version, cuda: &CudaVariant) -> bool {
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
    pub linux: Version,
    /// Minimum Windows x86_64 driver; `None` where NVIDIA says N/A (CUDA 13+).
    pub windows: Option<Version>,
    /// NVIDIA's row label (`12.2 Update 2`).
    pub label: String,
    /// A release candidate row (11.0.1 RC), never chosen as a family's floor.
    pub prerelease: bool,
}

/// cuDNN releases published on PyPI as one package.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WheelList {
    /// The package (`nvidia-cudnn-cu12`).
    pub package: String,
    /// The CUDA it is built for.
    pub cuda: CudaVariant,
    /// Versions on the index.
    pub versions: Vec<Version>,
    /// Where the list comes from.
    pub source: String,
}

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
        let base = manifest::parse(embedded, "manifest.toml", Origin::Embedded, &mut warnings);
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
            let u = manifest::parse(text, &label, Origin::User, &mut warnings);
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
    pub fn min_driver(&self, cuda: &Version, windows: bool) -> Option<Version> {
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

/// True for `http://`, `https://` and `file://` URLs.
pub(crate) fn is_absolute_url(s: &str) -> bool {
    let l = s.get(..8).unwrap_or(s).to_ascii_lowercase();
    l.starts_with("http://") || l.starts_with("https://") || l.starts_with("file://")
}

/// A base URL with exactly one trailing `/`.
pub(crate) fn normalize_base(s: &str) -> String {
    format!("{}/", s.trim().trim_end_matches('/'))
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
    /// The archive in `downloads/` (named by its SHA-256, no extension).
    pub path: std::path::PathBuf,
    /// Its original file name (`cudnn-11.2-windows-x64-v8.1.0.77.zip`), which the importer reads.
    pub name: String,
    /// Its SHA-256 (verified against the catalog or `--sha256`, or computed when unverified).
    pub sha256: crate::hash::Sha256Hex,
    /// The URL it came from (for a cache hit: the URL it was first downloaded from).
    pub url: String,
    /// The catalog's CUDA variant for it.
    pub cuda: crate::version::CudaVariant,
    /// The catalog's release version.
    pub version: Version,
    /// True when the archive came from the cache without a download.
    pub cached: bool,
    /// Lines the CLI must show the user: what was not verified, catalog problems.
    pub warnings: Vec<String>,
}

/// Resolves `req` against the catalog and downloads the archive into the
/// cache (`downloads/`, by hash), verifying SHA-256 while streaming; a cached
/// archive is not downloaded again. The mirror is `req.mirror`, else
/// `CUDNNM_MIRROR` in `env`, else `mirror` in `config.toml`.
///
/// # Errors
/// Unknown version ([`Kind::NotFound`], naming the nearest known ones), several
/// CUDA variants and none chosen ([`Kind::Usage`]), no published hash without
/// `--sha256`/`--allow-unverified` and hash mismatch ([`Kind::Integrity`]),
/// HTTP and network failures ([`Kind::Network`], with hints).
pub fn fetch(
    home: &Home,
    env: &crate::env::Env,
    req: &FetchRequest,
    progress: &dyn crate::progress::Progress,
) -> Result<Fetched> {
    let catalog = Catalog::load(home)?;
    let toolkits = crate::toolkit::discover(env);
    let archive = resolve::select(&catalog, req, &toolkits)?;
    let mirror = effective_mirror(req.mirror.as_deref(), env, home)?;
    let mut warnings: Vec<String> = catalog.warnings().to_vec();
    let mut fetched = fetch_archive(home, env, archive, req, mirror.as_deref(), progress)?;
    warnings.append(&mut fetched.warnings);
    fetched.warnings = warnings;
    Ok(fetched)
}

/// The mirror in effect: the request's, else `CUDNNM_MIRROR`, else `config.toml`.
///
/// # Errors
/// When `config.toml` exists but cannot be parsed.
pub fn effective_mirror(flag: Option<&str>, env: &Env, home: &Home) -> Result<Option<String>> {
    let raw = match flag.filter(|m| !m.trim().is_empty()) {
        Some(m) => Some(m.trim().to_string()),
        None => match env.var(crate::env::CUDNNM_MIRROR) {
            Some(m) => Some(m),
            None => home.config()?.mirror.filter(|m| !m.trim().is_empty()),
        },
    };
    raw.map(|m| mirror_url(&m, env)).transpose()
}

/// A mirror as a base URL ending in `/`: `http(s)://` and `file://` URLs as
/// given, a folder (relative to the working folder) as a `file://` URL.
///
/// # Errors
/// [`Kind::Usage`] for another URL scheme or a path that cannot be a URL.
pub fn mirror_url(m: &str, env: &Env) -> Result<String> {
    let m = m.trim();
    if is_absolute_url(m) {
        return Ok(normalize_base(m));
    }
    let bad = || {
        Error::new(Kind::Usage, format!("mirror '{m}' is neither an http(s):// or file:// URL nor a folder"))
            .hint("write it as https://host/path/ (a copy of https://developer.download.nvidia.com/compute/) or as a folder path")
    };
    if m.contains("://") {
        return Err(bad());
    }
    let p = Path::new(m);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        env.cwd().join(p)
    };
    reqwest::Url::from_directory_path(&abs)
        .map(|u| u.to_string())
        .map_err(|_| bad())
}

/// Downloads one catalog archive (or finds it in the cache) and checks it
/// against its published hashes, `req.sha256`, or nothing when
/// `req.allow_unverified`.
///
/// # Errors
/// As [`fetch`].
pub fn fetch_archive(
    home: &Home,
    env: &Env,
    archive: &Archive,
    req: &FetchRequest,
    mirror: Option<&str>,
    progress: &dyn Progress,
) -> Result<Fetched> {
    let mut warnings = Vec::new();
    let expect: Vec<Sha256Hex> = match &req.sha256 {
        Some(h) => {
            if archive.is_verifiable() && !archive.hashes.iter().any(|p| &p.sha256 == h) {
                warnings.push(format!(
                    "--sha256 {} is not a hash any source published for {}; accepting only your value",
                    h.short(),
                    archive.name()
                ));
            }
            vec![h.clone()]
        }
        None if archive.is_verifiable() => {
            archive.hashes.iter().map(|p| p.sha256.clone()).collect()
        }
        None if req.allow_unverified => {
            warnings.push(format!(
                "NOT VERIFIED: no source published a SHA-256 for {} ({} for {}); --allow-unverified skipped the integrity check, so cudnnm cannot tell a damaged or substituted file from the genuine one",
                archive.name(),
                archive.id(),
                archive.platform
            ));
            Vec::new()
        }
        None => {
            return Err(Error::new(
                Kind::Integrity,
                format!(
                    "no published SHA-256 for {} (cuDNN {} for CUDA {}, {}); refusing to install it unverified",
                    archive.name(),
                    archive.version,
                    archive.cuda,
                    archive.platform
                ),
            )
            .hint(format!(
                "pass `--sha256 HEX` with a hash you trust for that file, or `--allow-unverified` to install it without a check (URL: {})",
                archive.urls(mirror).join(" or ")
            )));
        }
    };
    let urls = archive.urls(mirror);
    let job = download::Job {
        urls: &urls,
        name: archive.name(),
        size: archive.size,
        expect: &expect,
        identity: download::Identity {
            version: &archive.version,
            cuda: &archive.cuda,
            platform: archive.platform,
        },
    };
    let got = download::download(home, env, &job, progress)?;
    if expect.is_empty() {
        warnings.push(format!(
            "the unverified archive {} has SHA-256 {}; record it to check future installs (`--sha256 {}`)",
            archive.name(),
            got.sha256,
            got.sha256
        ));
    }
    Ok(Fetched {
        path: got.path,
        name: archive.name().to_string(),
        sha256: got.sha256,
        url: got.url,
        cuda: archive.cuda,
        version: archive.version.clone(),
        cached: got.cached,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn c(s: &str) -> CudaVariant {
        s.parse().unwrap()
    }

    #[test]
    fn embedded_manifest_is_clean_and_covers_the_required_releases() {
        let cat = Catalog::embedded();
        assert!(cat.warnings().is_empty(), "{:#?}", cat.warnings());
        assert!(cat.archives().len() >= 200, "{}", cat.archives().len());
        let w = Platform::WindowsX86_64;
        let l = Platform::LinuxX86_64;
        let a = cat
            .archive(&v("7.1.3"), &c("8.0"), w)
            .expect("7.1.3 for CUDA 8.0 on Windows");
        assert!(
            !a.is_verifiable(),
            "no hash was published for the 7.1.3 Windows zip"
        );
        assert_eq!(a.name(), "cudnn-8.0-windows7-x64-v7.1.zip");
        assert_eq!(
            a.urls(None),
            vec![
                "https://developer.download.nvidia.com/compute/redist/cudnn/v7.1.3/cudnn-8.0-windows7-x64-v7.1.zip"
            ]
        );
        let a = cat.archive(&v("8.1.0.77"), &c("11.2"), w).unwrap();
        assert_eq!(
            a.hashes[0].sha256.as_str(),
            "f5a23402ebed5b2add2ae0dc79df42f055f5851bbb3b1d0f6aa9dcdeeb9346ce"
        );
        assert!(a.hashes[0].source.contains("a4be42d"));
        for (ver, cu, p) in [
            ("8.9.7.29", "12", l),
            ("8.9.7.29", "12", w),
            ("8.9.7.29", "11", l),
            ("9.10.0.56", "12", w),
            ("9.25.0.15", "13", l),
            ("9.25.0.15", "12", w),
        ] {
            let a = cat
                .archive(&v(ver), &c(cu), p)
                .unwrap_or_else(|| panic!("{ver} {cu} {p}"));
            assert!(a.is_verifiable());
            assert!(a.hashes.iter().all(|h| !h.source.is_empty()));
            assert!(!a.source.is_empty());
        }
        let a = cat.archive(&v("8.9.7.29"), &c("12"), l).unwrap();
        assert_eq!(a.size, Some(864984964));
        assert_eq!(
            a.urls(Some("http://lab.example/nv")),
            vec![
                "http://lab.example/nv/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz"
            ]
        );
        let a = cat.archive(&v("8.4.1.50"), &c("11.6"), l).unwrap();
        assert_eq!(
            a.urls(None).len(),
            2,
            "old and new path hold the same bytes"
        );
        let versions: std::collections::BTreeSet<_> =
            cat.archives().iter().map(|a| a.version.clone()).collect();
        assert!(versions.len() >= 60, "{}", versions.len());
        let hashes: usize = cat.archives().iter().map(|a| a.hashes.len()).sum();
        assert!(hashes >= 200, "{hashes}");
    }

    #[test]
    fn support_matrix_and_compute_capability() {
        let cat = Catalog::embedded();
        let t = cat.supported_toolkits(&v("8.9.7.29"), &c("12")).unwrap();
        assert_eq!(t, vec![v("12.2"), v("12.1"), v("12.0")]);
        let t = cat.supported_toolkits(&v("8.9.7.29"), &c("11")).unwrap();
        assert_eq!(t.first(), Some(&v("11.8")));
        assert_eq!(t.last(), Some(&v("11.0")));
        let t = cat.supported_toolkits(&v("7.6.5.32"), &c("10.2")).unwrap();
        assert_eq!(t, vec![v("10.2")]);
        assert_eq!(
            cat.supported_toolkits(&v("7.6.5.32"), &c("9.1")),
            Some(vec![])
        );
        assert_eq!(cat.supported_toolkits(&v("8.1.0.77"), &c("11.2")), None);
        assert_eq!(cat.min_compute(&v("8.1.0.77"), &c("11.2")), Some(v("3.5")));
        assert_eq!(cat.min_compute(&v("8.1.0.77"), &c("10.2")), Some(v("3.0")));
        assert_eq!(cat.min_compute(&v("7.1.3"), &c("8.0")), Some(v("3.0")));
        assert_eq!(cat.min_compute(&v("9.1.0.70"), &c("12")), Some(v("5.0")));
        assert_eq!(cat.min_compute(&v("9.22.0.52"), &c("13")), None);
    }

    #[test]
    fn driver_floors_follow_table_3() {
        let cat = Catalog::embedded();
        assert_eq!(cat.min_driver(&v("12.2.2"), false), Some(v("535.104.05")));
        assert_eq!(cat.min_driver(&v("12.2"), false), Some(v("535.54.03")));
        assert_eq!(cat.min_driver(&v("12.2"), true), Some(v("536.25")));
        assert_eq!(
            cat.min_driver(&v("12.6.20241114"), false),
            Some(v("560.28.03"))
        );
        assert_eq!(
            cat.min_driver(&v("11.0"), false),
            Some(v("450.51.05")),
            "GA, not RC"
        );
        assert_eq!(cat.min_driver(&v("10.1.243"), true), Some(v("418.96")));
        assert_eq!(cat.min_driver(&v("9.2.148"), false), Some(v("396.37")));
        assert_eq!(cat.min_driver(&v("8.0"), true), Some(v("369.30")));
        assert_eq!(
            cat.min_driver(&v("13.0"), true),
            None,
            "N/A on Windows from CUDA 13"
        );
        assert_eq!(cat.min_driver(&v("13.0"), false), Some(v("580.65.06")));
        assert_eq!(cat.min_driver(&v("12.7"), false), None);
    }

    #[test]
    fn frameworks_and_wheels() {
        let cat = Catalog::embedded();
        let tf = cat
            .frameworks()
            .iter()
            .find(|f| {
                f.framework == "tensorflow"
                    && f.os.as_deref() == Some("windows")
                    && f.first == v("2.5.0")
            })
            .unwrap();
        assert_eq!(
            (tf.last.clone(), tf.cuda.clone(), tf.cudnn.clone()),
            (v("2.10.0"), v("11.2"), v("8.1"))
        );
        let pt: Vec<_> = cat
            .frameworks()
            .iter()
            .filter(|f| f.framework == "pytorch" && f.first == v("2.4"))
            .map(|f| (f.cuda.to_string(), f.cudnn.to_string()))
            .collect();
        assert_eq!(pt.len(), 3);
        assert!(pt.contains(&("12.1".into(), "9.1.0.70".into())));
        let (w, ver) = cat.wheel_for(&"9.12".parse().unwrap()).unwrap();
        assert_eq!(
            (w.package.as_str(), ver.to_string()),
            ("nvidia-cudnn-cu12", "9.12.0.46".into())
        );
    }

    const HASH_A: &str = "475333625c7e42a7af3ca0b2f7506a106e30c93b1aa0081cd9c13efb6e21e3bb";
    const HASH_B: &str = "1111111111111111111111111111111111111111111111111111111111111111";

    #[test]
    fn user_catalog_overlays_and_unions_hashes() {
        let user = format!(
            r#"schema = 1
[[archive]]
version = "8.9.7.29"
cuda = "12"
platform = "linux-x86_64"
path = "mirror-only/cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz"
size = 10
source = "lab"
hashes = [{{ sha256 = "{HASH_B}", source = "lab re-upload" }}, {{ sha256 = "{HASH_A}", source = "dup" }}]

[[archive]]
version = "9.99.0.1"
cuda = "12"
platform = "linux-x86_64"
path = "cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-9.99.0.1_cuda12-archive.tar.xz"
hashes = []

[[archive]]
version = "8.1.0.77"
cuda = "11.2"
platform = "windows-x86_64"
path = "renamed.zip"
hashes = []
"#
        );
        let cat = Catalog::from_texts(
            EMBEDDED_MANIFEST,
            Some((&user, Path::new("/h/catalog.toml"))),
        );
        assert!(cat.warnings().is_empty(), "{:?}", cat.warnings());
        let a = cat
            .archive(&v("8.9.7.29"), &c("12"), Platform::LinuxX86_64)
            .unwrap();
        assert_eq!(a.origin, Origin::User);
        assert_eq!(a.size, Some(10));
        let hs: Vec<_> = a
            .hashes
            .iter()
            .map(|h| (h.sha256.as_str(), h.source.as_str()))
            .collect();
        assert_eq!(hs.len(), 2, "{hs:?}");
        assert_eq!(hs[0], (HASH_B, "lab re-upload"));
        assert_eq!(hs[1].0, HASH_A);
        assert_eq!(
            a.urls(None)[1],
            "https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz",
            "the embedded path stays as a fall-back"
        );
        assert!(
            cat.archive(&v("9.99.0.1"), &c("12"), Platform::LinuxX86_64)
                .is_some()
        );
        let r = cat
            .archive(&v("8.1.0.77"), &c("11.2"), Platform::WindowsX86_64)
            .unwrap();
        assert_eq!(r.name(), "renamed.zip");
        assert!(r.hashes.is_empty(), "a different file replaces the entry");
        assert_eq!(cat.user_file(), Some(Path::new("/h/catalog.toml")));
    }

    #[test]
    fn broken_user_catalog_leaves_the_embedded_one_usable() {
        let cat = Catalog::from_texts(
            EMBEDDED_MANIFEST,
            Some(("schema = [", Path::new("/h/catalog.toml"))),
        );
        assert_eq!(cat.warnings().len(), 1);
        assert!(cat.warnings()[0].contains("/h/catalog.toml"));
        assert!(cat.archives().len() >= 200);
    }
}

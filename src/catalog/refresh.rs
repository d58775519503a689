//! `cudnnm manifest refresh`: read PyPI's file lists of NVIDIA's cuDNN
//! packages and NVIDIA's `redistrib_*.json` files, and write the user
//! catalog `$CUDNNM_HOME/catalog.toml` that overlays the embedded one, with
//! the generator the maintainer uses for `manifest.toml` ([`super::generate`]).
//!
//! Sources, each of which may be given more than once with `--from`:
//! - a file: a `redistrib_*.json`, or a package index's JSON answer for one
//!   of NVIDIA's cuDNN packages (PEP 691, or PyPI's `/pypi/NAME/json`),
//!   told apart by what it holds;
//! - a folder: every such file in it and in its subfolders one level down
//!   (`pypi/`, `redist/`, as `tests/fixtures/catalog` lays them out);
//! - an `http(s)://` or `file://` URL of one such file;
//! - a URL ending in `/simple/` (a package index): each of NVIDIA's cuDNN
//!   packages below it, asked for PEP 691 JSON; a URL ending in
//!   `/simple/<package>/`: that package;
//! - another URL ending in `/` (a directory listing such as NVIDIA's
//!   `https://developer.download.nvidia.com/compute/cudnn/redist/`): every
//!   `redistrib_*.json` it lists;
//! - nothing: the package index in effect ([`index_for`]: `--index-url`,
//!   `CUDNNM_INDEX_URL`, `index_url`, pip's index-url, else PyPI; none when
//!   a mirror is set and no index is named), each of NVIDIA's cuDNN
//!   packages asked for as PEP 691 JSON, and the listing of `cudnn/redist/`
//!   under the mirror, else NVIDIA.
//!
//! A file found through a folder or listing that is no index is skipped
//! with a warning; a file named with `--from`, and every answer of a package
//! index, must be one: a hostile or malformed answer (HTML, a missing hash,
//! a URL that is not HTTPS, a path in a file name, an absurd size) stops the
//! refresh naming the index. Tables read now replace those of the existing
//! user catalog for the same package or release; the rest is kept. Nothing
//! is written unless every source was read; the file is replaced atomically.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::generate::{self, Skipped, UserParts};
use super::index::{Index, setting::without_credentials};
use super::redist::RedistTable;
use super::{
    CatalogLayer, NVIDIA_BASE_URL, WheelList, download, is_absolute_url, manifest, pypi, redist,
};
use crate::env::Env;
use crate::error::{Error, IoResultExt, Kind, Result};
use crate::fsops;
use crate::home::Home;
use crate::version::{Package, Version};

/// One index answer that was read.
#[derive(Clone, Debug, Serialize)]
pub struct IndexRead {
    /// The file or URL.
    pub from: String,
    /// `redist` (NVIDIA's `redistrib_*.json`) or `pypi` (a package's file list).
    pub kind: &'static str,
    /// The release label (`9.27.0`), or the package (`nvidia-cudnn-cu13`).
    pub label: String,
    /// The cuDNN version a redist file describes; the newest release of a package.
    pub version: Option<Version>,
    /// Archives (redist) or wheel files (pypi) taken from it.
    pub archives: usize,
    /// Releases a package lists (0 for redist).
    pub releases: usize,
    /// Yanked wheel files (0 for redist).
    pub yanked: usize,
}

/// What a refresh did.
#[derive(Clone, Debug, Serialize)]
pub struct RefreshReport {
    /// The user catalog written.
    pub catalog: PathBuf,
    /// Every index read, in order.
    pub read: Vec<IndexRead>,
    /// Archives in the user catalog now.
    pub archives: usize,
    /// Wheel files in the user catalog now.
    pub wheels: usize,
    /// Entries skipped and other problems.
    pub warnings: Vec<String>,
}

/// A file read, and whether the user named it (then it must be an index).
struct Read {
    from: String,
    bytes: Vec<u8>,
    named: bool,
    /// The package asked for, for a package index's answer.
    package: Option<Package>,
}

/// The package index `manifest refresh` reads when no `--from` is given:
/// the index in effect ([`super::index::setting::effective`]), except that
/// with a mirror set and no index named anywhere (PyPI by default) none —
/// an offline lab's mirror holds NVIDIA's listing, not PyPI's — and none
/// where pip is configured with `no-index`.
///
/// # Errors
/// As [`super::index::setting::effective`].
pub fn index_for(
    flag: Option<&str>,
    mirror_set: bool,
    env: &Env,
    home: &Home,
) -> Result<Option<Index>> {
    Ok(match super::index::setting::effective(flag, env, home)? {
        super::index::Setting::Index(i)
            if mirror_set && i.from == super::index::IndexFrom::Default =>
        {
            None
        }
        super::index::Setting::Index(i) => Some(i),
        super::index::Setting::PipNoIndex(_) => None,
    })
}

/// Reads `sources` (see the module documentation) and writes the user catalog.
/// When `sources` is empty: the package index `index` when given (its
/// `/simple/` root, [`pypi::PYPI_SIMPLE`] for PyPI) and the redist listing
/// under `mirror` (a base URL, see [`super::mirror_url`]; `None`: NVIDIA's).
///
/// # Errors
/// When a source cannot be read, is not an index, or is refused as hostile;
/// when a listing links no index; when the catalog cannot be written.
/// Nothing is written then.
pub fn refresh(
    home: &Home,
    env: &Env,
    sources: &[String],
    mirror: Option<&str>,
    index: Option<&Index>,
) -> Result<RefreshReport> {
    let mut warnings = Vec::new();
    let mut files: Vec<Read> = Vec::new();
    if sources.is_empty() {
        if let Some(index) = index {
            read_index(env, index, &mut files, &mut warnings)?;
        }
        // NVIDIA's own listing is read over HTTPS only; a mirror the user
        // named may be http:// or file://.
        let (listing, trust) = match mirror {
            Some(m) => (format!("{m}{}", redist::REDIST_DIR), download::Trust::Named),
            None => (
                format!("{NVIDIA_BASE_URL}{}", redist::REDIST_DIR),
                download::Trust::HttpsOnly,
            ),
        };
        read_source(env, &listing, trust, &mut files, &mut warnings)?;
    } else {
        for s in sources {
            read_source(env, s, download::Trust::Named, &mut files, &mut warnings)?;
        }
    }
    let sources: Vec<String> = if sources.is_empty() {
        files.iter().map(|f| f.from.clone()).collect()
    } else {
        sources.to_vec()
    };
    let mut read = Vec::new();
    let mut redists: Vec<RedistTable> = Vec::new();
    let mut wheels: Vec<WheelList> = Vec::new();
    let today = crate::store::now_rfc3339();
    let today = today.get(..10).unwrap_or(&today).to_string();
    for f in &files {
        let text = String::from_utf8_lossy(&f.bytes);
        if f.package.is_some() || looks_like_package_index(&text) {
            // A package's answer that is malformed or hostile stops everything.
            let idx = pypi::parse(&text, &f.from, f.package)?;
            let mut skipped = Skipped::default();
            let list = generate::wheel_list(&idx, &f.from, Some(&today), &mut skipped);
            read.push(IndexRead {
                from: f.from.clone(),
                kind: "pypi",
                label: list.package.clone(),
                version: list.versions.last().cloned(),
                archives: list.files.len(),
                releases: list.versions.len(),
                yanked: list.files.iter().filter(|x| x.yanked.is_some()).count(),
            });
            wheels.retain(|w| w.package != list.package);
            wheels.push(list);
            continue;
        }
        let table = match redist::parse(&text, &f.from, None, &mut warnings) {
            Ok(t) => t,
            // A file a folder or listing holds that is no cuDNN index at all;
            // one that is (it has a `cudnn` component) but is malformed stops everything.
            Err(e) if !f.named && !has_cudnn_component(&text) => {
                warnings.push(format!("skipped {}: {e}", f.from));
                continue;
            }
            Err(e) => return Err(e),
        };
        read.push(IndexRead {
            from: f.from.clone(),
            kind: "redist",
            label: table.label.clone(),
            version: Some(table.version.clone()),
            archives: table.files.len(),
            releases: 0,
            yanked: 0,
        });
        redists.retain(|r| r.version != table.version);
        redists.push(table);
    }

    if read.is_empty() {
        return Err(Error::new(
            Kind::Integrity,
            format!(
                "none of the files read from {} is an index of cuDNN releases",
                sources.join(", ")
            ),
        )
        .cause(warnings.join("; "))
        .hint("pass a redistrib_<version>.json or a package index's JSON answer (https://pypi.org/simple/nvidia-cudnn-cu13/) with --from"));
    }
    let path = home.user_catalog_file();
    let mut parts =
        match fsops::read_bounded_if_exists(&path, super::MAX_CATALOG_BYTES, "a user catalog")? {
            Some(bytes) => {
                let label = format!("user catalog '{}'", path.display());
                let text = String::from_utf8_lossy(&bytes);
                let p = manifest::parse(&text, &label, CatalogLayer::User, &mut warnings);
                UserParts {
                    archives: p.archives,
                    redists: p.redists,
                    wheels: p.wheels,
                }
            }
            None => UserParts::default(),
        };
    for r in redists {
        // Rows an earlier refresh wrote one by one give way to the file's table.
        parts.archives.retain(|a| {
            !r.files.iter().any(|f| {
                a.version == r.version
                    && a.cuda == f.cuda
                    && a.platform == f.platform
                    && a.flavour == f.flavour
            })
        });
        parts.redists.retain(|x| x.version != r.version);
        parts.redists.push(r);
    }
    for w in wheels {
        parts.wheels.retain(|x| x.package != w.package);
        parts.wheels.push(w);
    }
    parts.redists.sort_by(|a, b| a.version.cmp(&b.version));
    parts.wheels.sort_by_key(|w| {
        w.package
            .parse::<Package>()
            .map(|p| {
                Package::PUBLISHED
                    .iter()
                    .position(|x| *x == p)
                    .unwrap_or(99)
            })
            .unwrap_or(99)
    });
    parts.archives.sort_by(|a, b| {
        (&a.version, a.platform, a.cuda, a.flavour)
            .cmp(&(&b.version, b.platform, b.cuda, b.flavour))
    });
    let text = generate::user_catalog(&parts, NVIDIA_BASE_URL, &crate::store::now_rfc3339());
    home.ensure()?;
    fsops::write_atomic(&path, text.as_bytes())?;
    Ok(RefreshReport {
        catalog: path,
        read,
        archives: parts.archives.len() + parts.redists.iter().map(|r| r.files.len()).sum::<usize>(),
        wheels: parts.wheels.iter().map(|w| w.files.len()).sum(),
        warnings,
    })
}

/// Whether `text` is JSON with a `cudnn` component: a redist file, good or bad.
fn has_cudnn_component(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| v.get("cudnn").is_some())
}

/// Whether `text` is a package index's JSON answer rather than a redist file.
fn looks_like_package_index(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| {
        v.get("files").is_some() || (v.get("releases").is_some() && v.get("info").is_some())
    })
}

/// Adds `index`'s page of each of NVIDIA's cuDNN packages to `out`, asked
/// for as PEP 691 JSON (a `file://` index is a folder of recorded answers).
/// A package the index does not carry (404: a mirror of some of them) is
/// skipped with a warning; any other failure stops the refresh.
fn read_index(
    env: &Env,
    index: &Index,
    out: &mut Vec<Read>,
    warnings: &mut Vec<String>,
) -> Result<()> {
    if index.url.starts_with("file://") {
        return read_source(env, &index.url, index.trust(), out, warnings);
    }
    for p in Package::PUBLISHED {
        let url = index.project_url(&p.name());
        match download::fetch_page(
            env,
            &url,
            index.trust(),
            pypi::ACCEPT,
            super::index::MAX_PAGE,
        ) {
            Ok(page) => out.push(Read {
                from: without_credentials(&url),
                bytes: page.body,
                named: true,
                package: Some(p),
            }),
            Err(e) if e.kind() == Kind::NotFound => warnings.push(format!(
                "the package index {} has no {p}; its releases were not refreshed",
                index.shown()
            )),
            Err(e) => {
                return Err(e.context(format!(
                    "could not read the package index {} for {p}",
                    index.shown()
                )));
            }
        }
    }
    Ok(())
}

/// Adds the index files `s` names to `out`.
fn read_source(
    env: &Env,
    s: &str,
    trust: download::Trust,
    out: &mut Vec<Read>,
    warnings: &mut Vec<String>,
) -> Result<()> {
    // A `file://` URL (a mirror folder, as `--mirror DIR` becomes) is read as
    // the folder or file it names: a folder has no listing to fetch.
    let local = s
        .starts_with("file://")
        .then(|| download::check_scheme(s, trust))
        .transpose()?
        .and_then(|()| url::Url::parse(s).ok()?.to_file_path().ok());
    if let Some(p) = &local {
        return read_local(p, out);
    }
    if is_absolute_url(s) {
        let trimmed = s.trim_end_matches('/');
        let mut segs = trimmed.rsplit('/');
        let (last, before) = (segs.next().unwrap_or(""), segs.next().unwrap_or(""));
        if s.ends_with('/') && last == "simple" {
            // A package index's root: its cuDNN packages, one it lacks skipped.
            let index = Index {
                url: s.to_string(),
                from: super::index::IndexFrom::Flag,
            };
            return read_index(env, &index, out, warnings);
        }
        if s.ends_with('/') && before == "simple" {
            let p: Package = last.parse()?;
            let bytes = download::fetch_bytes_accepting(env, s, trust, pypi::ACCEPT)?;
            out.push(Read {
                from: without_credentials(s),
                bytes,
                named: true,
                package: Some(p),
            });
            return Ok(());
        }
        if s.ends_with('/') {
            let listing = download::fetch_bytes(env, s, trust)?;
            let links = redist::index_links(&String::from_utf8_lossy(&listing));
            if links.is_empty() {
                return Err(Error::new(
                    Kind::NotFound,
                    format!("{s} lists no redistrib_*.json file"),
                )
                .hint(
                    "give the URL of one index file with --from URL, or a folder that holds them",
                ));
            }
            for l in links {
                let url = format!("{s}{l}");
                let bytes = download::fetch_bytes(env, &url, trust)?;
                out.push(Read {
                    from: without_credentials(&url),
                    bytes,
                    named: false,
                    package: None,
                });
            }
        } else {
            let bytes = download::fetch_bytes_accepting(env, s, trust, pypi::ACCEPT)?;
            out.push(Read {
                from: without_credentials(s),
                bytes,
                named: true,
                package: None,
            });
        }
        return Ok(());
    }
    let p = Path::new(s);
    let p = if p.is_absolute() {
        p.to_path_buf()
    } else {
        env.cwd().join(p)
    };
    read_local(&p, out)
}

/// Adds the file `p`, or every index file of the folder `p` and its
/// subfolders one level down, to `out`.
fn read_local(p: &Path, out: &mut Vec<Read>) -> Result<()> {
    let p = p.to_path_buf();
    let meta = std::fs::metadata(&p).with_path("read", &p).map_err(|e| {
        e.hint("--from takes a redistrib_*.json file, a package index's JSON answer, a folder of them, or an http(s):// URL")
    })?;
    if !meta.is_dir() {
        let bytes = read_index_file(&p)?;
        out.push(Read {
            from: p.display().to_string(),
            bytes,
            named: true,
            package: None,
        });
        return Ok(());
    }
    let mut names: Vec<PathBuf> = Vec::new();
    for dir in std::iter::once(p.clone()).chain(
        std::fs::read_dir(&p)
            .with_path("list", &p)?
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path()),
    ) {
        for e in std::fs::read_dir(&dir).with_path("list", &dir)?.flatten() {
            let f = e.path();
            if e.file_type().is_ok_and(|t| t.is_file())
                && f.extension().is_some_and(|x| x == "json")
            {
                names.push(f);
            }
        }
    }
    names.sort();
    if names.is_empty() {
        return Err(Error::new(
            Kind::NotFound,
            format!("'{}' holds no index file (*.json)", p.display()),
        )
        .hint(
            "download redistrib_*.json from https://developer.download.nvidia.com/compute/cudnn/redist/ or a package's answer from https://pypi.org/simple/nvidia-cudnn-cu13/",
        ));
    }
    for f in names {
        let bytes = read_index_file(&f)?;
        out.push(Read {
            from: f.display().to_string(),
            bytes,
            named: false,
            package: None,
        });
    }
    Ok(())
}

/// An index file on disk, bounded as one from a server is (`--from
/// /dev/zero` is refused, not read without end).
fn read_index_file(p: &Path) -> Result<Vec<u8>> {
    fsops::read_bounded(p, download::MAX_INDEX_BYTES, "an index file").map_err(|e| {
        e.hint("--from takes a redistrib_*.json file, a package index's JSON answer, a folder of them, or an http(s):// URL")
    })
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    #[test]
    fn refresh_from_a_folder_overlays_and_keeps_older_entries() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path().join("home"));
        let src = d.path().join("idx");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("redistrib_9.1.0.json"), redist::tests::SAMPLE_B).unwrap();
        std::fs::write(src.join("notes.txt"), "not an index").unwrap();
        std::fs::write(src.join("redistrib_0.0.1.json"), "{}").unwrap();
        let env = Env::from_vars(Vec::<(String, String)>::new(), d.path(), false);
        let r = refresh(&home, &env, &["idx".into()], None, None).unwrap();
        assert_eq!(r.read.len(), 1);
        assert_eq!(r.read[0].archives, 4);
        assert_eq!(r.archives, 4);
        assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
        assert!(
            r.warnings
                .iter()
                .any(|w| w.starts_with("skipped ") && w.contains("redistrib_0.0.1.json"))
        );
        let cat = Catalog::load(&home).unwrap();
        assert!(cat.warnings().is_empty(), "{:?}", cat.warnings());
        let a = cat
            .archive(
                &"9.1.0.70".parse().unwrap(),
                &"12".parse().unwrap(),
                crate::version::Platform::LinuxX86_64,
            )
            .unwrap();
        assert_eq!(a.origin, CatalogLayer::User);
        assert_eq!(
            a.hashes.len(),
            1,
            "the same hash from both catalogs counts once"
        );
        assert!(a.hashes[0].source.contains("redistrib_9.1.0.json"));

        // A second refresh with another release keeps the first one's entries.
        let other = redist::tests::SAMPLE_B
            .replace("9.1.0.70", "9.1.1.17")
            .replace("\"9.1.0\"", "\"9.1.1\"");
        std::fs::write(d.path().join("redistrib_9.1.1.json"), other).unwrap();
        let r = refresh(&home, &env, &["redistrib_9.1.1.json".into()], None, None).unwrap();
        assert_eq!(r.archives, 8);
        let e = refresh(&home, &env, &["missing.json".into()], None, None).unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound);
        std::fs::write(d.path().join("bad.json"), "<html>").unwrap();
        let before = std::fs::read(home.user_catalog_file()).unwrap();
        let e = refresh(
            &home,
            &env,
            &["redistrib_9.1.1.json".into(), "bad.json".into()],
            None,
            None,
        )
        .unwrap_err();
        assert_eq!(e.kind(), Kind::Integrity);
        assert_eq!(
            std::fs::read(home.user_catalog_file()).unwrap(),
            before,
            "nothing written"
        );
    }

    /// With no `--from`, a folder mirror (`--mirror DIR`, a `file://` URL)
    /// is read through its `cudnn/redist/` folder, which has no listing page.
    #[test]
    fn refresh_reads_a_folder_mirror() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path().join("home"));
        let redist_dir = d.path().join("mirror").join(redist::REDIST_DIR);
        std::fs::create_dir_all(&redist_dir).unwrap();
        std::fs::write(
            redist_dir.join("redistrib_9.1.0.json"),
            redist::tests::SAMPLE_B,
        )
        .unwrap();
        let env = Env::from_vars(Vec::<(String, String)>::new(), d.path(), false);
        let mirror = super::super::mirror_url("mirror", &env).unwrap();
        assert!(mirror.starts_with("file://"), "{mirror}");
        // The package index: a folder holding one recorded answer.
        let index = d.path().join("simple");
        std::fs::create_dir_all(&index).unwrap();
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/catalog/pypi/nvidia-cudnn-cu13.json"),
            index.join("nvidia-cudnn-cu13.json"),
        )
        .unwrap();
        let index = Index {
            url: format!("{}/", super::super::mirror_url("simple", &env).unwrap()),
            from: super::super::index::IndexFrom::Flag,
        };
        let r = refresh(&home, &env, &[], Some(&mirror), Some(&index)).unwrap();
        assert_eq!(r.read.len(), 2, "{r:?}");
        assert_eq!(r.archives, 4);
        assert_eq!(
            (r.read[0].kind, r.read[0].releases, r.read[0].yanked),
            ("pypi", 29, 3)
        );
        assert!(r.read[1].from.ends_with("redistrib_9.1.0.json"), "{r:?}");
        let cat = Catalog::load(&home).unwrap();
        assert!(cat.warnings().is_empty(), "{:?}", cat.warnings());
        assert_eq!(cat.data_date().map(|d| d.1), Some(CatalogLayer::User));
    }
}

//! `cudnnm manifest refresh`: read NVIDIA's `redistrib_*.json` files and
//! write the user catalog `$CUDNNM_HOME/catalog.toml` that overlays the
//! embedded one.
//!
//! Sources, each of which may be given more than once with `--from`:
//! - a `redistrib_*.json` file, or an `http(s)://` / `file://` URL of one;
//! - a folder, or a URL ending in `/` (a directory listing such as NVIDIA's
//!   `https://developer.download.nvidia.com/compute/cudnn/redist/`): every
//!   `redistrib_*.json` it lists;
//! - nothing: the listing of `cudnn/redist/` under the mirror, else NVIDIA.
//!
//! A file found through a folder or listing that is not an index is skipped
//! with a warning; a file named with `--from` must be one. Entries read now replace entries of the existing user catalog with the same
//! release, CUDA variant and platform; the others are kept. The file is
//! written atomically; nothing is written when a source cannot be read.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{Archive, CatalogLayer, NVIDIA_BASE_URL, download, is_absolute_url, manifest, redist};
use crate::env::Env;
use crate::error::{Error, IoResultExt, Kind, Result};
use crate::fsops;
use crate::home::Home;
use crate::version::Version;

/// One index file that was read.
#[derive(Clone, Debug, Serialize)]
pub struct IndexRead {
    /// The file or URL.
    pub from: String,
    /// Its `release_label`.
    pub label: String,
    /// The cuDNN version it describes.
    pub version: Version,
    /// Archives taken from it.
    pub archives: usize,
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
    /// Entries skipped and other problems.
    pub warnings: Vec<String>,
}

/// Reads `sources` (see the module documentation) and writes the user catalog.
/// `mirror` is a base URL (see [`super::mirror_url`]) used when `sources` is empty.
///
/// # Errors
/// When a source cannot be read or is not a redistrib index, when a listing
/// links no index, or when the catalog cannot be written; nothing is written then.
pub fn refresh(
    home: &Home,
    env: &Env,
    sources: &[String],
    mirror: Option<&str>,
) -> Result<RefreshReport> {
    let mut warnings = Vec::new();
    // (where, bytes, named by the user): a file found through a listing that is
    // not an index is skipped with a warning; one the user named is an error.
    let mut files: Vec<(String, Vec<u8>, bool)> = Vec::new();
    let default_index;
    let sources: &[String] = if sources.is_empty() {
        default_index = vec![format!(
            "{}{}",
            mirror.unwrap_or(NVIDIA_BASE_URL),
            redist::REDIST_DIR
        )];
        &default_index
    } else {
        sources
    };
    // NVIDIA's own listing is read over HTTPS only; a source or mirror the
    // user named may be http:// or file://.
    let trust = if sources.is_empty() && mirror.is_none() {
        download::Trust::HttpsOnly
    } else {
        download::Trust::Named
    };
    for s in sources {
        read_source(env, s, trust, &mut files)?;
    }
    let mut read = Vec::new();
    let mut fresh: Vec<Archive> = Vec::new();
    for (from, bytes, named) in &files {
        let text = String::from_utf8_lossy(bytes);
        let idx = match redist::parse(&text, from, &mut warnings) {
            Ok(idx) => idx,
            Err(e) if !named => {
                warnings.push(format!("skipped {from}: {e}"));
                continue;
            }
            Err(e) => return Err(e),
        };
        read.push(IndexRead {
            from: from.clone(),
            label: idx.label.clone(),
            version: idx.version.clone(),
            archives: idx.archives.len(),
        });
        for a in idx.archives {
            replace_or_push(&mut fresh, a);
        }
    }

    if read.is_empty() {
        return Err(Error::new(
            Kind::Integrity,
            format!(
                "none of the files read from {} is an NVIDIA redistrib index",
                sources.join(", ")
            ),
        )
        .cause(warnings.join("; "))
        .hint("pass a redistrib_<version>.json file or URL with --from"));
    }
    let path = home.user_catalog_file();
    let mut merged: Vec<Archive> =
        match fsops::read_bounded_if_exists(&path, super::MAX_CATALOG_BYTES, "a user catalog")? {
            Some(bytes) => {
                let label = format!("user catalog '{}'", path.display());
                let text = String::from_utf8_lossy(&bytes);
                manifest::parse(&text, &label, CatalogLayer::User, &mut warnings).archives
            }
            None => Vec::new(),
        };
    for a in fresh {
        replace_or_push(&mut merged, a);
    }
    merged.sort_by(|a, b| (&a.version, a.platform, a.cuda).cmp(&(&b.version, b.platform, b.cuda)));
    let text =
        manifest::render_user_catalog(&merged, NVIDIA_BASE_URL, &crate::store::now_rfc3339());
    home.ensure()?;
    fsops::write_atomic(&path, text.as_bytes())?;
    Ok(RefreshReport {
        catalog: path,
        read,
        archives: merged.len(),
        warnings,
    })
}

fn replace_or_push(list: &mut Vec<Archive>, a: Archive) {
    match list
        .iter_mut()
        .find(|x| x.version == a.version && x.cuda == a.cuda && x.platform == a.platform)
    {
        Some(slot) => *slot = a,
        None => list.push(a),
    }
}

/// Adds the index files `s` names to `out` as (where, bytes).
fn read_source(
    env: &Env,
    s: &str,
    trust: download::Trust,
    out: &mut Vec<(String, Vec<u8>, bool)>,
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
                out.push((url, bytes, false));
            }
        } else {
            let bytes = download::fetch_bytes(env, s, trust)?;
            out.push((s.to_string(), bytes, true));
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

/// Adds the index file `p`, or every index file of the folder `p`, to `out`.
fn read_local(p: &Path, out: &mut Vec<(String, Vec<u8>, bool)>) -> Result<()> {
    let p = p.to_path_buf();
    let meta = std::fs::metadata(&p).with_path("read", &p).map_err(|e| {
        e.hint("--from takes a redistrib_*.json file, a folder of them, or an http(s):// URL")
    })?;
    if meta.is_dir() {
        let mut names: Vec<PathBuf> = std::fs::read_dir(&p)
            .with_path("list", &p)?
            .flatten()
            .map(|e| e.path())
            .filter(|f| {
                f.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("redistrib_") && n.ends_with(".json"))
            })
            .collect();
        names.sort();
        if names.is_empty() {
            return Err(Error::new(
                Kind::NotFound,
                format!("'{}' holds no redistrib_*.json file", p.display()),
            )
            .hint(
                "download one from https://developer.download.nvidia.com/compute/cudnn/redist/",
            ));
        }
        for f in names {
            let bytes = read_index_file(&f)?;
            out.push((f.display().to_string(), bytes, false));
        }
    } else {
        let bytes = read_index_file(&p)?;
        out.push((p.display().to_string(), bytes, true));
    }
    Ok(())
}

/// An index file on disk, bounded as one from a server is (`--from
/// /dev/zero` is refused, not read without end).
fn read_index_file(p: &Path) -> Result<Vec<u8>> {
    fsops::read_bounded(p, download::MAX_INDEX_BYTES, "an NVIDIA redistrib index").map_err(|e| {
        e.hint("--from takes a redistrib_*.json file, a folder of them, or an http(s):// URL")
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
        let r = refresh(&home, &env, &["idx".into()], None).unwrap();
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
        let r = refresh(&home, &env, &["redistrib_9.1.1.json".into()], None).unwrap();
        assert_eq!(r.archives, 8);
        let e = refresh(&home, &env, &["missing.json".into()], None).unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound);
        std::fs::write(d.path().join("bad.json"), "<html>").unwrap();
        let before = std::fs::read(home.user_catalog_file()).unwrap();
        let e = refresh(
            &home,
            &env,
            &["redistrib_9.1.1.json".into(), "bad.json".into()],
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
        let r = refresh(&home, &env, &[], Some(&mirror)).unwrap();
        assert_eq!(r.read.len(), 1, "{r:?}");
        assert_eq!(r.archives, 4);
        assert!(r.read[0].from.ends_with("redistrib_9.1.0.json"), "{r:?}");
    }
}

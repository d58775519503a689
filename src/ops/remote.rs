//! `list --remote`: what the catalog offers for a platform — NVIDIA's
//! archives and PyPI's wheels, each with its size and SHA-256, the JIT
//! builds beside the full ones, yanked releases marked — each marked
//! installed when this home holds that build for that platform; and how
//! old the catalog's data is.

use std::collections::HashSet;
use std::path::PathBuf;

use serde::Serialize;

use super::{Event, Session};
use crate::catalog::index::{self, Index};
use crate::catalog::{self, Catalog, CatalogLayer, PublishedHash, resolve};
use crate::error::Result;
use crate::store::{Release, Store};
use crate::version::{CudaVariant, Flavour, Platform, ReleaseId, Version};

/// Whether a row is an NVIDIA archive or a PyPI wheel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RowKind {
    /// An NVIDIA archive (the redist tree).
    Archive,
    /// A PyPI wheel, which `cudnnm install` fetches with pip.
    Pip,
}

/// One line of the listing (text and `--json` come from the same rows).
#[derive(Debug, Serialize)]
pub struct Row {
    /// `8.1.0.77_cuda11.2`, `9.27.0.42_cuda12+jit`.
    pub id: String,
    /// The release version.
    pub version: Version,
    /// The CUDA variant it is built for.
    pub cuda: CudaVariant,
    /// `full` or `jit`.
    pub flavour: Flavour,
    /// NVIDIA's platform name (`pypi` for a wheel list that names versions only).
    pub platform: String,
    /// `archive` (NVIDIA's redist tree) or `pip` (a PyPI wheel).
    pub kind: RowKind,
    /// Archive file name, or the pip requirement.
    pub name: String,
    /// A wheel's package (`nvidia-cudnn-cu12`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// A wheel's file name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Download URLs (mirror applied for archives; the index's for wheels).
    pub urls: Vec<String>,
    /// The file's size in bytes, when known.
    pub size: Option<u64>,
    /// Accepted SHA-256 values and who published each.
    pub sha256: Vec<PublishedHash>,
    /// Why PyPI yanked the release, when it did (empty: no reason given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yanked: Option<String>,
    /// Whether this home holds this build for this platform.
    pub installed: bool,
    /// `embedded` or `user`.
    pub origin: Option<CatalogLayer>,
    /// Toolkits NVIDIA's support matrix lists for this build, when known.
    pub supported_toolkits: Option<Vec<Version>>,
    /// Minimum GPU compute capability, when known.
    pub min_compute: Option<Version>,
    /// Whether the package index read (see [`Listing::index`]) serves this
    /// wheel's file; `None` when no index was read, and for archives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_index: Option<bool>,
}

/// How old the catalog's data is ([`Catalog::data_date`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogAge {
    /// The day its data was read (`2026-12-03`).
    pub day: String,
    /// Which layer says so: the embedded catalog or the user's `catalog.toml`.
    pub layer: CatalogLayer,
    /// Whole days since then, when the day parses and is not in the future.
    pub days_old: Option<u64>,
}

/// What `list --remote` shows.
#[derive(Debug)]
pub struct Listing {
    /// The rows, by version, platform, CUDA and flavour.
    pub rows: Vec<Row>,
    /// The platforms listed.
    pub platforms: Vec<Platform>,
    /// The CUDA asked for, if any.
    pub cuda: Option<CudaVariant>,
    /// The user catalog over the embedded one, when there is one.
    pub user_catalog: Option<PathBuf>,
    /// How old the catalog's data is; `None` when the catalog does not say.
    pub age: Option<CatalogAge>,
    /// The package index the wheel rows were checked against (without
    /// credentials), when one was named ([`index_in_effect`]).
    pub index: Option<String>,
}

impl Listing {
    /// Keeps only the rows `spec` matches (`list --remote 9.12`: both
    /// builds; `9.12+jit`: the JIT build alone).
    pub fn retain_matching(&mut self, spec: &crate::version::Spec) {
        self.rows
            .retain(|r| spec.matches(&r.version, &r.cuda) && spec.admits_flavour(r.flavour));
    }
}

/// The platforms `--platform` names: one, `all`, or (none given) the
/// machine's as `session`'s environment says, else all.
///
/// # Errors
/// An unknown platform name.
pub fn platforms(session: &Session<'_>, arg: Option<&str>) -> Result<Vec<Platform>> {
    Ok(match arg {
        Some("all") => Platform::ALL.to_vec(),
        Some(p) => vec![p.parse()?],
        None => match session.env.platform() {
            Some(p) => vec![p],
            None => Platform::ALL.to_vec(),
        },
    })
}

/// The catalog for `platforms`, releases for CUDA `cuda` only when given;
/// the catalog's warnings reported.
///
/// # Errors
/// The catalog, the mirror setting or the store cannot be read.
pub fn list(
    session: &Session<'_>,
    platforms: Vec<Platform>,
    cuda: Option<CudaVariant>,
    index_url: Option<&str>,
) -> Result<Listing> {
    let cat = Catalog::load(session.home)?;
    for w in cat.warnings() {
        session.report.event(&Event::Warning(w));
    }
    let mirror = catalog::effective_mirror(None, session.env, session.home)?;
    let releases = Store::new(session.home).releases()?;
    let serves = |c: &CudaVariant| cuda.as_ref().is_none_or(|w| resolve::cuda_serves(w, c));
    let installed = installed_builds(&releases);
    let mut rows = archive_rows(&cat, &installed, &platforms, mirror.as_deref(), &serves);
    rows.extend(wheel_rows(&cat, &installed, &platforms, &serves));
    let mut index = index_in_effect(session, index_url)?;
    if let Some(i) = &index
        && !check_on_index(session, i, index_url.is_some(), &mut rows)?
    {
        index = None;
    }
    rows.sort_by(|a, b| {
        (&a.version, &a.platform, a.cuda, a.flavour).cmp(&(
            &b.version,
            &b.platform,
            b.cuda,
            b.flavour,
        ))
    });
    Ok(Listing {
        rows,
        platforms,
        cuda,
        user_catalog: cat.user_file().map(PathBuf::from),
        age: age(&cat, std::time::SystemTime::now()),
        index: index.map(|i| i.shown()),
    })
}

/// The package index `list --remote` checks wheel rows against: the one
/// in effect ([`index::setting::effective`]) when it was named anywhere
/// (`--index-url`, `CUDNNM_INDEX_URL`, `index_url`, pip's index-url); none
/// for PyPI by default — the catalog is PyPI's file lists already — or
/// where pip is told `no-index`.
///
/// # Errors
/// As [`index::setting::effective`].
pub fn index_in_effect(session: &Session<'_>, flag: Option<&str>) -> Result<Option<Index>> {
    Ok(
        match index::setting::effective(flag, session.env, session.home)? {
            index::Setting::Index(i) if i.from != index::IndexFrom::Default => Some(i),
            _ => None,
        },
    )
}

/// Replaces the catalog's URL, size and SHA-256 of each wheel row with
/// what `index` serves under the same file name, and marks the rows it
/// does not serve. An index that cannot be read fails when `named` on the
/// command line; else (a setting, perhaps for another network) the rows
/// stay the catalog's, with a warning, and this returns `false`.
fn check_on_index(
    session: &Session<'_>,
    index: &Index,
    named: bool,
    rows: &mut [Row],
) -> Result<bool> {
    let mut packages: Vec<&str> = Vec::new();
    for r in rows.iter() {
        if let (Some(p), Some(_)) = (&r.package, &r.file)
            && !packages.contains(&p.as_str())
        {
            packages.push(p);
        }
    }
    let mut listings = Vec::new();
    for p in packages {
        match index::read(session.env, index, p) {
            Ok(l) => listings.push(l),
            // A mirror of some of NVIDIA's packages: their rows are not served.
            Err(e) if e.kind() == crate::error::Kind::NotFound => listings.push(index::Listing {
                index: index.clone(),
                project: p.to_string(),
                files: Vec::new(),
            }),
            Err(e) if named => return Err(e),
            Err(e) => {
                let w = format!("{e}; wheel rows show the catalog's PyPI URLs");
                session.report.event(&Event::Warning(&w));
                return Ok(false);
            }
        }
    }
    for r in rows.iter_mut() {
        let (Some(p), Some(file)) = (&r.package, &r.file) else {
            continue;
        };
        let Some(l) = listings.iter().find(|l| &l.project == p) else {
            continue;
        };
        match l.files.iter().find(|f| &f.filename == file) {
            Some(f) => {
                r.urls = vec![index::setting::without_credentials(&f.url)];
                r.size = f.size.or(r.size);
                if let Some(h) = &f.sha256 {
                    r.sha256 = vec![PublishedHash {
                        sha256: h.clone(),
                        source: index.shown(),
                    }];
                }
                r.on_index = Some(true);
                // Yanked on the index though not in the catalog (yet).
                if f.yanked && r.yanked.is_none() {
                    r.yanked = Some(format!("on the package index {}", index.shown()));
                }
            }
            None => r.on_index = Some(false),
        }
    }
    Ok(true)
}

/// Installed builds: by release, flavour and platform (a JIT build never
/// marks the full build's row, whatever folder an older cudnnm put it in).
type Installed = HashSet<(Version, CudaVariant, Flavour, Platform)>;

fn installed_builds(releases: &[Release]) -> Installed {
    releases
        .iter()
        .map(|r| (r.version().clone(), *r.cuda(), r.flavour(), r.platform()))
        .collect()
}

/// How old `cat`'s data is at `now`.
fn age(cat: &Catalog, now: std::time::SystemTime) -> Option<CatalogAge> {
    let (when, layer) = cat.data_date()?;
    let day = when.get(..10).unwrap_or(&when).to_string();
    let days_old = humantime::parse_rfc3339(&format!("{day}T00:00:00Z"))
        .ok()
        .and_then(|t| now.duration_since(t).ok())
        .map(|d| d.as_secs() / 86_400);
    Some(CatalogAge {
        day,
        layer,
        days_old,
    })
}

/// The catalog's archives for `platforms` whose CUDA `serves` takes.
fn archive_rows(
    cat: &Catalog,
    installed: &Installed,
    platforms: &[Platform],
    mirror: Option<&str>,
    serves: &dyn Fn(&CudaVariant) -> bool,
) -> Vec<Row> {
    cat.archives()
        .iter()
        .filter(|a| platforms.contains(&a.platform) && serves(&a.cuda))
        .map(|a| Row {
            id: a.id(),
            version: a.version.clone(),
            cuda: a.cuda,
            flavour: a.flavour,
            platform: a.platform.to_string(),
            kind: RowKind::Archive,
            name: a.name().to_string(),
            package: None,
            file: None,
            urls: a.urls(mirror),
            size: a.size,
            sha256: a.hashes.clone(),
            yanked: cat.yanked(&a.release_id()).map(str::to_owned),
            installed: installed.contains(&(a.version.clone(), a.cuda, a.flavour, a.platform)),
            origin: Some(a.origin),
            supported_toolkits: cat.supported_toolkits(&a.version, &a.cuda),
            min_compute: cat.min_compute(&a.version, &a.cuda),
            on_index: None,
        })
        .collect()
}

/// The wheels PyPI publishes for `platforms` where NVIDIA has no archive
/// of that build there, whose CUDA `serves` takes: one row per wheel, with
/// the URL, size and SHA-256 the index gives (a list that names versions
/// only: one row per version).
fn wheel_rows(
    cat: &Catalog,
    installed: &Installed,
    platforms: &[Platform],
    serves: &dyn Fn(&CudaVariant) -> bool,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for w in cat.wheels() {
        if !serves(&w.cuda) {
            continue;
        }
        for f in w.files.iter().filter(|f| platforms.contains(&f.platform)) {
            let id = ReleaseId::new(f.version.clone(), w.cuda).with_flavour(w.flavour);
            let has_archive = cat.archives().iter().any(|a| {
                a.version == f.version
                    && a.cuda.major() == w.cuda.major()
                    && a.flavour == w.flavour
                    && a.platform == f.platform
            });
            // One row per release and platform (a `.post1` rebuild beside
            // the first build: the newer one).
            let newer = w.files.iter().any(|g| {
                g.version == f.version
                    && g.platform == f.platform
                    && g.dist_version > f.dist_version
            });
            if has_archive || newer {
                continue;
            }
            rows.push(Row {
                id: id.to_string(),
                version: f.version.clone(),
                cuda: w.cuda,
                flavour: w.flavour,
                platform: f.platform.to_string(),
                kind: RowKind::Pip,
                name: format!("pip:{}=={}", w.package, f.dist_version),
                package: Some(w.package.clone()),
                file: Some(f.filename.clone()),
                urls: vec![f.url.clone()],
                size: Some(f.size),
                sha256: vec![PublishedHash {
                    sha256: f.sha256.clone(),
                    source: w.source.clone(),
                }],
                yanked: cat.yanked(&id).map(str::to_owned),
                installed: installed.contains(&(f.version.clone(), w.cuda, w.flavour, f.platform)),
                origin: None,
                supported_toolkits: cat.supported_toolkits(&f.version, &w.cuda),
                min_compute: cat.min_compute(&f.version, &w.cuda),
                on_index: None,
            });
        }
        // A list that names versions only (no files): one row each.
        if w.files.is_empty() {
            for v in &w.versions {
                let has_archive = cat
                    .archives()
                    .iter()
                    .any(|a| &a.version == v && a.cuda.major() == w.cuda.major());
                if has_archive {
                    continue;
                }
                rows.push(Row {
                    id: ReleaseId::new(v.clone(), w.cuda)
                        .with_flavour(w.flavour)
                        .to_string(),
                    version: v.clone(),
                    cuda: w.cuda,
                    flavour: w.flavour,
                    platform: "pypi".into(),
                    kind: RowKind::Pip,
                    name: format!("pip:{}=={v}", w.package),
                    package: Some(w.package.clone()),
                    file: None,
                    urls: Vec::new(),
                    size: None,
                    sha256: Vec::new(),
                    yanked: None,
                    installed: installed.iter().any(|(iv, ic, fl, _)| {
                        iv == v && ic.major() == w.cuda.major() && *fl == w.flavour
                    }),
                    origin: None,
                    supported_toolkits: cat.supported_toolkits(v, &w.cuda),
                    min_compute: cat.min_compute(v, &w.cuda),
                    on_index: None,
                });
            }
        }
    }
    rows
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;
    use crate::ops::testing::{Fixture, folder};
    use crate::shape::Shape;
    use crate::store::{Distribution, Source};

    const CATALOG: &str = r#"
[[wheel]]
package = "nvidia-cudnn-cu12"
cuda = "12"
source = "test"
read = "2026-12-01"
versions = ["9.27.0.42", "9.28.0.42"]

[[wheel]]
package = "nvidia-cudnn-jit-cu12"
cuda = "12"
source = "test"
versions = ["9.27.0.42"]
"#;

    /// A wheel's receipt source; its `*.dist-info` names `package`.
    fn wheel(package: &str, version: &str) -> Source {
        Source {
            kind: Shape::Wheel,
            name: "x.whl".into(),
            sha256: None,
            size: 0,
            from: crate::store::Provenance::Pip(format!("{package}=={version}").parse().unwrap()),
            dist: Some(Distribution {
                name: package.into(),
                version: version.into(),
                tags: Vec::new(),
            }),
        }
    }

    fn rows(releases: &[Release]) -> Vec<Row> {
        let cat = Catalog::from_texts(CATALOG, None);
        wheel_rows(
            &cat,
            &installed_builds(releases),
            &[Platform::LinuxX86_64],
            &|_| true,
        )
    }

    fn row<'a>(rows: &'a [Row], id: &str) -> &'a Row {
        rows.iter().find(|r| r.id == id).unwrap()
    }

    #[test]
    fn a_pip_row_is_installed_by_its_own_build_however_the_package_is_spelt() {
        let f = Fixture::new();
        let r = f.release("9.27.0.42", "12", wheel("nvidia_cudnn_CU12", "9.27.0.42"));
        let rows = rows(&[r]);
        let full = row(&rows, "9.27.0.42_cuda12");
        assert_eq!(full.kind, RowKind::Pip);
        assert_eq!(full.flavour, Flavour::Full);
        assert_eq!(full.name, "pip:nvidia-cudnn-cu12==9.27.0.42");
        assert!(full.installed);
        // Neither the JIT build of it nor the other version is installed.
        assert!(!row(&rows, "9.27.0.42_cuda12+jit").installed);
        assert!(!row(&rows, "9.28.0.42_cuda12").installed);
    }

    #[test]
    fn a_jit_build_installs_the_jit_row_only_whatever_folder_holds_it() {
        // An older cudnnm put the JIT wheel in the full build's folder.
        let f = Fixture::new();
        let r = f.release(
            "9.27.0.42",
            "12",
            wheel("nvidia-cudnn-jit-cu12", "9.27.0.42"),
        );
        let rows = rows(&[r]);
        let jit = row(&rows, "9.27.0.42_cuda12+jit");
        assert_eq!(jit.flavour, Flavour::Jit);
        assert_eq!(jit.name, "pip:nvidia-cudnn-jit-cu12==9.27.0.42");
        assert!(jit.installed);
        assert!(!row(&rows, "9.27.0.42_cuda12").installed);
    }

    #[test]
    fn a_release_from_no_wheel_installs_the_pip_row_of_its_version() {
        // NVIDIA's archive of the release (or a folder) holds the same files.
        let f = Fixture::new();
        let r = f.release("9.28.0.42", "12", folder("cudnn-9.28"));
        let rows = rows(&[r]);
        assert!(row(&rows, "9.28.0.42_cuda12").installed);
        assert!(!row(&rows, "9.27.0.42_cuda12").installed);
    }

    #[test]
    fn the_listing_is_sorted_and_filtered_by_platform_and_cuda() {
        let f = Fixture::new();
        let cuda: CudaVariant = "11".parse().unwrap();
        let l = list(
            &f.session(),
            vec![Platform::WindowsX86_64],
            Some(cuda),
            None,
        )
        .unwrap();
        assert!(!l.rows.is_empty());
        for r in &l.rows {
            assert_eq!(r.cuda.major(), 11, "{}", r.id);
            assert!(
                r.platform == "windows-x86_64" || r.platform == "pypi",
                "{}",
                r.platform
            );
        }
        let keys: Vec<_> = l
            .rows
            .iter()
            .map(|r| (&r.version, &r.platform, r.cuda, r.flavour))
            .collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
    }

    #[test]
    fn platforms_are_one_all_or_this_machines() {
        let f = Fixture::new();
        let s = f.session();
        assert_eq!(platforms(&s, Some("all")).unwrap(), Platform::ALL.to_vec());
        assert_eq!(
            platforms(&s, Some("windows-x86_64")).unwrap(),
            vec![Platform::WindowsX86_64]
        );
        assert!(platforms(&s, Some("amiga")).is_err());
        let host = platforms(&s, None).unwrap();
        assert_eq!(
            host,
            f.env
                .platform()
                .map(|p| vec![p])
                .unwrap_or(Platform::ALL.to_vec())
        );
    }

    #[test]
    fn the_catalogs_age_is_counted_in_whole_days_from_its_read_date() {
        let cat = Catalog::from_texts(CATALOG, None);
        let day = humantime::parse_rfc3339("2026-12-04T13:00:00Z").unwrap();
        assert_eq!(
            age(&cat, day),
            Some(CatalogAge {
                day: "2026-12-01".into(),
                layer: CatalogLayer::Embedded,
                days_old: Some(3),
            })
        );
        // A date in the future is said without an age.
        let before = humantime::parse_rfc3339("2026-11-30T00:00:00Z").unwrap();
        assert_eq!(age(&cat, before).unwrap().days_old, None);
        assert_eq!(age(&Catalog::from_texts("", None), day), None);
    }
}

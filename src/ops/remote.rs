//! `list --remote`: what the catalog offers for a platform — NVIDIA's
//! archives, and the releases published only as PyPI wheels — each marked
//! installed when this home holds it (a wheel row only by its own
//! package's wheel, or by NVIDIA's archive of the release).

use std::collections::HashSet;
use std::path::PathBuf;

use serde::Serialize;

use super::{Event, Session};
use crate::catalog::{self, Catalog, CatalogLayer, PublishedHash, resolve};
use crate::error::Result;
use crate::store::{Release, Store};
use crate::version::{self, CudaVariant, Platform, Version};

/// Whether a row is an NVIDIA archive or a release published only on PyPI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RowKind {
    /// An NVIDIA archive.
    Archive,
    /// A PyPI wheel, installed with `install pip:…`.
    Pip,
}

/// One line of the listing (text and `--json` come from the same rows).
#[derive(Debug, Serialize)]
pub struct Row {
    /// `8.1.0.77_cuda11.2`.
    pub id: String,
    /// The release version.
    pub version: Version,
    /// The CUDA variant it is built for.
    pub cuda: CudaVariant,
    /// NVIDIA's platform name, or `pypi` for a release published only as wheels.
    pub platform: String,
    /// `archive` or `pip`.
    pub kind: RowKind,
    /// Archive file name, or the pip requirement.
    pub name: String,
    /// Download URLs (mirror applied), empty for pip rows.
    pub urls: Vec<String>,
    /// The archive's size in bytes, when known.
    pub size: Option<u64>,
    /// Accepted SHA-256 values and who published each.
    pub sha256: Vec<PublishedHash>,
    /// Whether this home holds it.
    pub installed: bool,
    /// For a pip row that is not installed: the installed release of the
    /// same id that came from another package (`pip:nvidia-cudnn-jit-cu12==9.12.0.46`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub installed_from_other_package: Option<String>,
    /// `embedded` or `user`.
    pub origin: Option<CatalogLayer>,
    /// Toolkits NVIDIA's support matrix lists for this build, when known.
    pub supported_toolkits: Option<Vec<Version>>,
    /// Minimum GPU compute capability, when known.
    pub min_compute: Option<Version>,
}

/// What `list --remote` shows.
#[derive(Debug)]
pub struct Listing {
    /// The rows, by version, platform and CUDA.
    pub rows: Vec<Row>,
    /// The platforms listed.
    pub platforms: Vec<Platform>,
    /// The CUDA asked for, if any.
    pub cuda: Option<CudaVariant>,
    /// The user catalog over the embedded one, when there is one.
    pub user_catalog: Option<PathBuf>,
}

impl Listing {
    /// Keeps only the rows `spec` matches (`list --remote 9.12`).
    pub fn retain_matching(&mut self, spec: &crate::version::Spec) {
        self.rows.retain(|r| spec.matches(&r.version, &r.cuda));
    }
}

/// The platforms `--platform` names: one, `all`, or (none given) this
/// machine's, else all.
///
/// # Errors
/// An unknown platform name.
pub fn platforms(arg: Option<&str>) -> Result<Vec<Platform>> {
    Ok(match arg {
        Some("all") => Platform::ALL.to_vec(),
        Some(p) => vec![p.parse()?],
        None => match Platform::host() {
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
) -> Result<Listing> {
    let cat = Catalog::load(session.home)?;
    for w in cat.warnings() {
        session.report.event(&Event::Warning(w));
    }
    let mirror = catalog::effective_mirror(None, session.env, session.home)?;
    let releases = Store::new(session.home).releases()?;
    let serves = |c: &CudaVariant| cuda.as_ref().is_none_or(|w| resolve::cuda_serves(w, c));
    let mut rows = archive_rows(&cat, &releases, &platforms, mirror.as_deref(), &serves);
    // Releases published only on PyPI (wheels carry Linux and Windows x86_64 builds).
    if platforms
        .iter()
        .any(|p| matches!(p, Platform::LinuxX86_64 | Platform::WindowsX86_64))
    {
        rows.extend(wheel_rows(&cat, &releases, &serves));
    }
    rows.sort_by(|a, b| (&a.version, &a.platform, a.cuda).cmp(&(&b.version, &b.platform, b.cuda)));
    Ok(Listing {
        rows,
        platforms,
        cuda,
        user_catalog: cat.user_file().map(PathBuf::from),
    })
}

/// The catalog's archives for `platforms` whose CUDA `serves` takes.
fn archive_rows(
    cat: &Catalog,
    releases: &[Release],
    platforms: &[Platform],
    mirror: Option<&str>,
    serves: &dyn Fn(&CudaVariant) -> bool,
) -> Vec<Row> {
    let installed: HashSet<(Version, CudaVariant, Platform)> = releases
        .iter()
        .map(|r| (r.version().clone(), *r.cuda(), r.platform()))
        .collect();
    cat.archives()
        .iter()
        .filter(|a| platforms.contains(&a.platform) && serves(&a.cuda))
        .map(|a| Row {
            id: a.id(),
            version: a.version.clone(),
            cuda: a.cuda,
            platform: a.platform.to_string(),
            kind: RowKind::Archive,
            name: a.name().to_string(),
            urls: a.urls(mirror),
            size: a.size,
            sha256: a.hashes.clone(),
            installed: installed.contains(&(a.version.clone(), a.cuda, a.platform)),
            installed_from_other_package: None,
            origin: Some(a.origin),
            supported_toolkits: cat.supported_toolkits(&a.version, &a.cuda),
            min_compute: cat.min_compute(&a.version, &a.cuda),
        })
        .collect()
}

/// The PyPI package release `r` came from (`nvidia-cudnn-cu12`, PEP 503
/// normalized), or `None` when it came from no wheel.
fn package_of(r: &Release) -> Option<String> {
    let (arg, _) = r.receipt.source.reinstall_arg(&r.id());
    arg.strip_prefix("pip:").map(|req| {
        let project = req.split("==").next().unwrap_or(req);
        version::python_name(project, '-')
    })
}

/// The releases the catalog knows only as PyPI wheels, whose CUDA `serves`
/// takes. A pip row is installed only by its own package, or by NVIDIA's
/// archive of the release, never by another package's wheel
/// (`nvidia-cudnn-jit-cu12` is not `nvidia-cudnn-cu12`).
fn wheel_rows(
    cat: &Catalog,
    releases: &[Release],
    serves: &dyn Fn(&CudaVariant) -> bool,
) -> Vec<Row> {
    let from_pip: Vec<(Version, CudaVariant, Option<String>)> = releases
        .iter()
        .map(|r| (r.version().clone(), *r.cuda(), package_of(r)))
        .collect();
    let mut rows = Vec::new();
    for w in cat.wheels() {
        for v in &w.versions {
            let has_archive = cat
                .archives()
                .iter()
                .any(|a| &a.version == v && a.cuda.major() == w.cuda.major());
            if has_archive || !serves(&w.cuda) {
                continue;
            }
            let same_release: Vec<&Option<String>> = from_pip
                .iter()
                .filter(|(iv, ic, _)| iv == v && ic.major() == w.cuda.major())
                .map(|(_, _, p)| p)
                .collect();
            let package = version::python_name(&w.package, '-');
            let is_installed = same_release
                .iter()
                .any(|p| p.as_deref().is_none_or(|p| p == package));
            let other = same_release
                .iter()
                .find_map(|p| p.as_deref().filter(|p| *p != package))
                .filter(|_| !is_installed)
                .map(|p| format!("pip:{p}=={v}"));
            rows.push(Row {
                id: version::release_id(v, &w.cuda),
                version: v.clone(),
                cuda: w.cuda,
                platform: "pypi".into(),
                kind: RowKind::Pip,
                name: format!("pip:{}=={v}", w.package),
                urls: Vec::new(),
                size: None,
                sha256: Vec::new(),
                installed: is_installed,
                installed_from_other_package: other,
                origin: None,
                supported_toolkits: cat.supported_toolkits(v, &w.cuda),
                min_compute: cat.min_compute(v, &w.cuda),
            });
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
    use crate::store::Source;

    const CATALOG: &str = r#"
[[wheel]]
package = "nvidia-cudnn-cu12"
cuda = "12"
source = "test"
versions = ["9.27.0.42", "9.28.0.42"]
"#;

    fn wheel(requirement: &str) -> Source {
        Source {
            kind: Shape::Wheel,
            name: "x.whl".into(),
            sha256: None,
            size: 0,
            url: Some(format!("pip:{requirement}")),
            dist: None,
        }
    }

    fn rows(releases: &[Release]) -> Vec<Row> {
        let cat = Catalog::from_texts(CATALOG, None);
        wheel_rows(&cat, releases, &|_| true)
    }

    #[test]
    fn a_pip_row_is_installed_by_its_own_package_however_its_name_is_spelt() {
        let f = Fixture::new();
        let r = f.release("9.27.0.42", "12", wheel("nvidia_cudnn_CU12==9.27.0.42"));
        let rows = rows(&[r]);
        let row = rows.iter().find(|r| r.id == "9.27.0.42_cuda12").unwrap();
        assert_eq!(row.kind, RowKind::Pip);
        assert_eq!(row.name, "pip:nvidia-cudnn-cu12==9.27.0.42");
        assert!(row.installed);
        assert_eq!(row.installed_from_other_package, None);
        // The other version is not installed.
        let other = rows.iter().find(|r| r.id == "9.28.0.42_cuda12").unwrap();
        assert!(!other.installed);
    }

    #[test]
    fn another_packages_wheel_does_not_install_a_pip_row_but_is_named() {
        let f = Fixture::new();
        let r = f.release("9.27.0.42", "12", wheel("nvidia-cudnn-jit-cu12==9.27.0.42"));
        let rows = rows(&[r]);
        let row = rows.iter().find(|r| r.id == "9.27.0.42_cuda12").unwrap();
        assert!(!row.installed);
        assert_eq!(
            row.installed_from_other_package.as_deref(),
            Some("pip:nvidia-cudnn-jit-cu12==9.27.0.42")
        );
    }

    #[test]
    fn a_release_from_no_wheel_installs_the_pip_row_of_its_version() {
        // NVIDIA's archive of the release (or a folder) holds the same files.
        let f = Fixture::new();
        let r = f.release("9.28.0.42", "12", folder("cudnn-9.28"));
        let rows = rows(&[r]);
        assert!(
            rows.iter()
                .find(|r| r.id == "9.28.0.42_cuda12")
                .unwrap()
                .installed
        );
        assert!(
            !rows
                .iter()
                .find(|r| r.id == "9.27.0.42_cuda12")
                .unwrap()
                .installed
        );
    }

    #[test]
    fn the_listing_is_sorted_and_filtered_by_platform_and_cuda() {
        let f = Fixture::new();
        let cuda: CudaVariant = "11".parse().unwrap();
        let l = list(&f.session(), vec![Platform::WindowsX86_64], Some(cuda)).unwrap();
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
            .map(|r| (&r.version, &r.platform, r.cuda))
            .collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
    }

    #[test]
    fn platforms_are_one_all_or_this_machines() {
        assert_eq!(platforms(Some("all")).unwrap(), Platform::ALL.to_vec());
        assert_eq!(
            platforms(Some("windows-x86_64")).unwrap(),
            vec![Platform::WindowsX86_64]
        );
        assert!(platforms(Some("amiga")).is_err());
        let host = platforms(None).unwrap();
        assert_eq!(
            host,
            Platform::host()
                .map(|p| vec![p])
                .unwrap_or(Platform::ALL.to_vec())
        );
    }
}

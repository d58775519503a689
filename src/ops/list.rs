//! `list`: the installed releases (the user's store, then the system
//! store's), each with where it is deployed and whether it is the default
//! or the release pinned here; and the store's folders whose receipt
//! cannot be read.

use serde::Serialize;

use super::Session;
use crate::deploy::Deployments;
use crate::error::Result;
use crate::store::{BrokenRelease, Release, Source, Store, StoreOrigin};
use crate::version::{CudaVariant, Spec};

/// One installed release as `list --json` and `install --json` print it.
#[derive(Clone, Debug, Serialize)]
pub struct InstalledRelease {
    /// `9.12.0.46_cuda12`.
    pub id: String,
    /// The release version.
    pub version: String,
    /// The CUDA variant it is built for.
    pub cuda: String,
    /// `full` or `jit`: which build its files are.
    pub flavour: crate::version::Flavour,
    /// The platform it is built for.
    pub platform: String,
    /// The version its headers declare.
    pub header_version: String,
    /// Bytes of all files.
    pub size: u64,
    /// Its folder in the store.
    pub path: String,
    /// When it was installed (RFC 3339).
    pub installed_at: String,
    /// Where it came from (its receipt's record).
    pub source: Source,
    /// Toolkit roots where this release is deployed.
    pub deployed_in: Vec<String>,
    /// Whether it is the release the default selects.
    pub default: bool,
    /// Whether it is the release the pin here selects.
    pub pinned: bool,
    /// Which store holds it: `user` or `system`.
    pub origin: StoreOrigin,
}

impl InstalledRelease {
    /// Release `r` of `store`, deployed in the toolkits `deployed_in`.
    pub fn new(
        r: &Release,
        store: &Store,
        deployed_in: Vec<String>,
        default: bool,
        pinned: bool,
    ) -> InstalledRelease {
        InstalledRelease {
            id: r.id(),
            version: r.version().to_string(),
            cuda: r.cuda().to_string(),
            flavour: r.flavour(),
            platform: r.platform().to_string(),
            header_version: r.receipt.header_version.to_string(),
            size: r.receipt.total_size(),
            path: r.dir.display().to_string(),
            installed_at: r.receipt.installed_at.clone(),
            source: r.receipt.source.clone(),
            deployed_in,
            default,
            pinned,
            origin: store.origin(r),
        }
    }
}

/// What `list` shows.
#[derive(Debug)]
pub struct Listing {
    /// The installed releases, oldest first.
    pub releases: Vec<InstalledRelease>,
    /// Folders of the store whose receipt cannot be read (hidden from the list).
    pub broken: Vec<BrokenRelease>,
}

impl Listing {
    /// Keeps only the releases `spec` matches (`list 9.12`).
    pub fn retain_matching(&mut self, spec: &crate::version::Spec) {
        self.releases.retain(|r| {
            r.id.parse::<crate::version::ReleaseId>()
                .is_ok_and(|id| spec.matches(&id.version, &id.cuda))
        });
    }
}

/// The installed releases for CUDA `cuda` (a major, or a major.minor; all
/// when `None`), after recovering what a crash left.
///
/// # Errors
/// The store, `deployments.toml` or `config.toml` cannot be read.
pub fn installed(session: &Session<'_>, cuda: Option<&CudaVariant>) -> Result<Listing> {
    session.recover_if_pending()?;
    let store = Store::new(session.home);
    let (all, broken) = store.scan()?;
    let releases: Vec<Release> = all
        .into_iter()
        .filter(|r| {
            cuda.is_none_or(|w| {
                w.major() == r.cuda().major()
                    && (w.minor().is_none() || w.minor() == r.cuda().minor())
            })
        })
        .collect();
    let deployments = Deployments::load(session.home)?;
    let default_spec: Option<Spec> = session.home.config()?.default.and_then(|s| s.parse().ok());
    // As the store picks (`Store::newest_matching`): the spec's flavours
    // only, and at one version and CUDA the full build before the JIT one.
    let newest = |spec: &Spec| {
        releases
            .iter()
            .filter(|r| spec.matches(r.version(), r.cuda()) && spec.admits_flavour(r.flavour()))
            .min_by(|a, b| crate::store::newest_first(&a.release_id(), &b.release_id()))
            .map(|r| r.id())
    };
    let default_id = default_spec.as_ref().and_then(newest);
    // A broken pin file must not break `list`; `current` reports it.
    let pinned_id = crate::pin::resolve_spec(None, session.env, session.home)
        .ok()
        .flatten()
        .filter(|r| matches!(r.source, crate::pin::SpecSource::PinFile { .. }))
        .and_then(|r| newest(&r.spec));
    let releases = releases
        .iter()
        .map(|r| {
            let id = r.id();
            let deployed: Vec<String> = deployments
                .toolkits_using(&r.release_id())
                .iter()
                .map(|d| d.toolkit.display().to_string())
                .collect();
            let is_default = default_id.as_deref() == Some(id.as_str());
            let is_pinned = pinned_id.as_deref() == Some(id.as_str());
            InstalledRelease::new(r, &store, deployed, is_default, is_pinned)
        })
        .collect();
    Ok(Listing { releases, broken })
}

//! `install SPEC`: the newest catalog release SPEC names for this machine —
//! its toolkits' CUDA (or `--cuda`) and the oldest GPU in use
//! ([`crate::catalog::resolve::pick`]) — among NVIDIA's archives (fetched
//! and unpacked while they download) and PyPI wheels (fetched with pip).

use super::stream::StreamedInstall;
use super::{AlreadyWhy, Installed, OtherPackage, Request, pause_after_download, platform_of};
use crate::archive::ImportRequest;
use crate::catalog::{self, Catalog, FetchRequest, index, resolve};
use crate::error::Result;
use crate::ops::gpu::GpuGate;
use crate::ops::{Event, Session};
use crate::store::{Provenance, Release, Store};
use crate::toolkit::Toolkit;
use crate::version::{CudnnPackage, Spec};

/// Installs the catalog's pick for `spec`; a release already installed is
/// a no-op (unless `--force`).
pub(super) fn install_catalog(
    session: &Session<'_>,
    req: &Request,
    spec: Spec,
    base: ImportRequest,
    gate: &GpuGate,
) -> Result<Installed> {
    let platform = platform_of(req)?;
    let fetch = FetchRequest {
        spec,
        cuda: base.cuda,
        platform,
        // `--mirror`; else `CUDNNM_MIRROR`, else config.toml (`catalog::effective_mirror`).
        mirror: req.mirror.clone(),
        sha256: base.expected_sha256.clone(),
        allow_unverified: req.allow_unverified,
        asked_by: catalog::AskedBy::Install,
    };
    // The CUDA build for the toolkit `use` would deploy into (found, or
    // known to this home), as `use` picks it, and said.
    let toolkits =
        crate::ops::toolkits::for_pick(session, &fetch.spec, fetch.cuda.as_ref(), platform)
            .toolkits;
    // Archives and PyPI wheels alike: most cuDNN 9 releases are wheels only.
    let mut cat = Catalog::load(session.home)?;
    let setting = index::setting::effective(req.index_url.as_deref(), session.env, session.home)?;
    let gpu = gate.oldest().map(|g| &g.compute);
    let super::IndexedPick {
        pick,
        archive_too,
        listing,
        host,
    } = super::pick_through_index(session, &mut cat, &fetch, &toolkits, gpu, &setting)?;
    // A yanked release is picked only when named exactly: say so, and why.
    if let Some(w) = pick.yanked_warning() {
        session.report.event(&Event::Warning(&w));
    }
    let (version, cuda) = pick.release();
    if !req.force
        && let Some(r) =
            Store::new(session.home).get_build(version, cuda, pick.release_id().flavour)?
    {
        let why = AlreadyWhy::CatalogPick {
            spec: fetch.spec.clone(),
            other_package: other_package(&pick, &r),
        };
        return Ok(Installed::already(&r, why));
    }
    if let resolve::Pick::Wheel(w) = &pick {
        // Refused before pip runs (a wheel is up to 1 GB), as the archive
        // path refuses before its download (`MachineFit::check`).
        gate.check(&w.version, &w.cuda, req.force, "install")?;
        note_passed_over(session, &cat, &fetch, &toolkits, w, gate, host);
        let index = match setting {
            index::Setting::Index(index) => index,
            // pip is told to use no index but its own find-links: pip fetches.
            index::Setting::PipNoIndex(_) => return via_pip(session, w, base, gate),
        };
        let want = super::index::Wanted {
            project: &w.package,
            version: &w.version,
            cuda: &w.cuda,
            platform,
            flavour: w.flavour,
            locked: None,
            exact: fetch.spec.names_exactly(&w.version),
        };
        let listed = listing.unwrap_or_else(|| index::read(session.env, &index, want.project));
        let file = match listed.and_then(|l| super::index::find_in(session, &index, &l, &want)) {
            Ok(f) => Some(f),
            Err(e) if archive_too && e.kind() == crate::error::Kind::NotFound => {
                let w = format!(
                    "{}; fetching NVIDIA's archive of the release instead",
                    e.message()
                );
                session.report.event(&Event::Warning(&w));
                None
            }
            Err(e) => return Err(e),
        };
        if let Some(file) = file {
            // Yanked on the index though not in the catalog: said as the catalog's are.
            if file.yanked && pick.yanked().is_none() {
                let note = format!(
                    "the package index {} marks {} yanked; installing it because {} was named exactly (a prefix, range or `latest` never picks it)",
                    index.shown(),
                    file.filename,
                    w.version
                );
                session.report.event(&Event::Warning(&note));
            }
            return from_index(session, &index, &want, &file, base);
        }
    }
    let streamed = StreamedInstall::new(session, false);
    let fit = catalog::MachineFit {
        toolkits: &toolkits,
        gpu: gate.oldest(),
        check: &|v, c| gate.check(v, c, req.force, "install"),
    };
    let fetched = catalog::fetch_for(
        session.home,
        session.env,
        &fetch,
        session.report.progress(),
        &fit,
        &streamed,
    )?;
    for w in &fetched.warnings {
        session.report.event(&Event::Warning(w));
    }
    for n in &fetched.notes {
        session.report.event(&Event::Note(n));
    }
    session.report.event(&Event::Downloaded {
        name: &fetched.name,
        url: &fetched.url,
        cached: fetched.cached,
    });
    pause_after_download(session);
    // The archive stays held (`cache clean` leaves it) until the import has read it.
    let hold = fetched.hold;
    let done = streamed.import(
        ImportRequest {
            source: fetched.path,
            name: Some(fetched.name),
            cuda: Some(fetched.cuda),
            expected_sha256: Some(fetched.sha256),
            from: Provenance::Url(fetched.url),
            force: req.force,
            ..Default::default()
        },
        fetched.cached,
    );
    drop(hold);
    done
}

/// Installs `file`, the index's wheel of `want`, once it is the one a
/// `--sha256` given names.
fn from_index(
    session: &Session<'_>,
    index: &index::Index,
    want: &super::index::Wanted<'_>,
    file: &index::IndexFile,
    base: ImportRequest,
) -> Result<Installed> {
    if let Some(given) = &base.expected_sha256
        && file.sha256.as_ref() != Some(given)
    {
        return Err(crate::error::Error::new(
            crate::error::Kind::Integrity,
            format!(
                "the package index {} publishes {} with another SHA-256 than --sha256 {given}; nothing was downloaded",
                index.shown(),
                file.filename
            ),
        )
        .hint("check the hash you gave, or drop --sha256 to trust the index's"));
    }
    super::index::install_file(session, index, want, file, base)
}

/// A wheel pick fetched with the user's pip (`install pip:REQ`), for a pip
/// configured with `no-index` and its own `find-links`.
fn via_pip(
    session: &Session<'_>,
    w: &resolve::WheelPick,
    base: ImportRequest,
    gate: &GpuGate,
) -> Result<Installed> {
    let requirement = w.pip_requirement()?;
    session.report.event(&Event::PublishedAsWheel {
        version: &w.version,
        cuda: &w.cuda,
        requirement: &requirement,
    });
    super::pip::install_pip(session, &requirement, base, gate)
}

/// The same release installed from another package than the catalog's
/// wheel (the JIT-only wheel has no precompiled engines): which, and how
/// to have the catalog's.
fn other_package(pick: &resolve::Pick, r: &Release) -> Option<OtherPackage> {
    let resolve::Pick::Wheel(w) = pick else {
        return None;
    };
    let installed = r.receipt.source.exact_pip_requirement(r.version())?;
    let package = installed.package();
    (Some(package) != CudnnPackage::from_name(&w.package)).then(|| OtherPackage {
        installed_from: package.to_string(),
        catalog: w.package.clone(),
        requirement: w.requirement(),
    })
}

/// A prefix whose wheel pick passed over a newer release for the GPU:
/// says which and why (an archive pick says so in the download's notes).
fn note_passed_over(
    session: &Session<'_>,
    cat: &Catalog,
    fetch: &FetchRequest,
    toolkits: &[Toolkit],
    w: &resolve::WheelPick,
    gate: &GpuGate,
    host: Option<crate::version::Platform>,
) {
    if let Some(g) = gate.oldest()
        && let Ok(best) = resolve::pick_on(cat, fetch, toolkits, None, host)
        && best.release() != (&w.version, &w.cuda)
    {
        let note =
            catalog::passed_over_note(cat, &fetch.spec, (&w.version, &w.cuda), best.release(), g);
        session.report.event(&Event::Note(&note));
    }
}

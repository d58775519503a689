//! `install pip:REQUIREMENT`: a wheel fetched with the user's own pip
//! ([`crate::catalog::pip`]) and imported; a wheel `cudnnm lock` kept in
//! the download cache for the requirement is imported from there, without
//! pip.

use super::{AlreadyWhy, Installed, import_file};
use crate::archive::ImportRequest;
use crate::catalog::{self, download};
use crate::error::Result;
use crate::ops::gpu::GpuGate;
use crate::ops::{Event, Session};
use crate::store::{Provenance, Store};
use crate::version::{PipRequirement, Platform};

/// Fetches and imports the wheel `requirement` names; the one of the
/// locked SHA-256 (when `base` expects one), or the one kept for this
/// requirement, from the download cache instead. An exact requirement
/// names its release, which `gate` judges before pip runs: the same
/// refusal (exit 8) the import would give after the download, and the
/// same `--force` (whose warning the import gives).
///
/// # Errors
/// pip failing, a wheel whose SHA-256 is not the lock's, or the import's.
pub(super) fn install_pip(
    session: &Session<'_>,
    requirement: &PipRequirement,
    base: ImportRequest,
    gate: &GpuGate,
) -> Result<Installed> {
    let pinned = requirement.release();
    // `nvidia-cudnn-cu12==9.27.0.42` names its release: installed, no pip run.
    if !base.force
        && let Some(r) = Store::new(session.home).get_id(&pinned)?
    {
        return Ok(Installed::already(
            &r,
            AlreadyWhy::Requirement(format!("pip:{requirement}")),
        ));
    }
    gate.check(&pinned.version, &pinned.cuda, base.force, "install")?;
    // The wheel `cudnnm lock` fetched and kept: the locked SHA-256's file
    // when a lock gives one, else the one kept for this requirement.
    let url = format!("pip:{requirement}");
    if let Some(platform) = Platform::host()
        && let Some((got, rec)) =
            download::find_kept(session.home, &url, platform, base.expected_sha256.as_ref())?
    {
        session.report.event(&Event::KeptWheel {
            name: &rec.name,
            requirement,
        });
        // Held (`cache clean` leaves it) until the import has read it.
        let hold = got.hold;
        let done = import_file(
            session,
            ImportRequest {
                source: got.path,
                name: Some(rec.name),
                from: Provenance::Pip(requirement.clone()),
                ..base
            },
        );
        drop(hold);
        return done;
    }
    let python = catalog::pip::python(session.env);
    let tmp = catalog::pip::download_folder(session.home)?;
    session.report.event(&Event::FetchingWithPip {
        requirement,
        python: &python,
    });
    let wheel = catalog::pip::download(
        &python,
        requirement,
        tmp.path(),
        session.report.pip_output(),
        base.expected_sha256.as_ref(),
    )?;
    let name = wheel.file_name().map(|n| n.to_string_lossy().into_owned());
    import_file(
        session,
        ImportRequest {
            source: wheel,
            name,
            from: Provenance::Pip(requirement.clone()),
            ..base
        },
    )
}

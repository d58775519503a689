//! `install` without an argument: the spec that applies here (the pin,
//! then the default), installed exactly as the lock file beside the pin
//! records it when that lock still satisfies the pin, else resolved against
//! the catalog for this machine as `install SPEC` does.

use std::path::Path;

use super::stream::StreamedInstall;
use super::{AlreadyWhy, Installed, Request, pause_after_download, platform_of};
use crate::archive::ImportRequest;
use crate::catalog::{self, Catalog, download};
use crate::command::CommandLine;
use crate::error::{Error, Kind, Result};
use crate::hash::Sha256Hex;
use crate::ops::gpu::GpuGate;
use crate::ops::{Event, Session};
use crate::pin::lockfile::{self, LockedSource, ProjectLock};
use crate::pin::{self, SpecSource};
use crate::store::{Provenance, Release, Store};
use crate::version::Platform;

/// Installs what applies here; see the module documentation.
pub(super) fn install_here(
    session: &Session<'_>,
    req: &Request,
    base: ImportRequest,
    gate: &GpuGate,
) -> Result<Installed> {
    let resolved = pin::resolve_spec(None, session.env, session.home)?.ok_or_else(|| {
        Error::new(Kind::NotFound, "no cuDNN release is named for this folder")
            .cause("no CUDNNM_VERSION, no .cudnn-version here or above, no default")
            .hint(format!(
                "name one: `{}`, or pin one with `cudnnm pin SPEC --force` and run `cudnnm install` again",
                CommandLine::install("SPEC".to_string()).for_host(session.env.is_windows())
            ))
    })?;
    let spec = &resolved.spec;
    let lock_file = match &resolved.source {
        SpecSource::PinFile { path, .. } => Some(lockfile::lock_path(path)),
        _ => None,
    };
    let lock = match &lock_file {
        Some(p) => ProjectLock::read(p)?.map(|l| (l, p.clone())),
        None => None,
    };
    if req.locked && lock.is_none() {
        let r#where = match &lock_file {
            Some(p) => format!("there is no lock file '{}'", p.display()),
            None => format!(
                "the spec comes from {}, not from a pin file a lock sits beside",
                resolved.source
            ),
        };
        return Err(
            Error::new(Kind::Integrity, format!("install --locked: {where}")).hint(
                "write one beside the pin with `cudnnm lock` (and commit it), or drop --locked",
            ),
        );
    }
    match lock {
        Some((l, path)) if l.satisfies(spec) => {
            // Said only when there is something to install.
            if req.force || Store::new(session.home).get_id(&l.release)?.is_none() {
                session.report.event(&Event::InstallingLocked {
                    release: &l.release,
                    lock: &path,
                    spec,
                    source: &resolved.source,
                });
            }
            install_locked(session, req, &l, &path, base, gate)
        }
        Some((l, path)) => {
            let msg = format!(
                "the lock '{}' names {}, which does not satisfy the pin {spec} ({})",
                path.display(),
                l.release,
                resolved.source
            );
            if req.locked {
                return Err(Error::new(Kind::Integrity, format!("install --locked: {msg}"))
                    .hint("lock the pin again with `cudnnm lock` (and commit the lock), or restore the pin the lock was written for"));
            }
            session.report.event(&Event::LockIgnored {
                release: &l.release,
                lock: &path,
                spec,
                source: &resolved.source,
            });
            resolve_and_install(session, req, &resolved, base, gate)
        }
        None => resolve_and_install(session, req, &resolved, base, gate),
    }
}

/// The pin without a lock: the newest installed match is a no-op, else the
/// newest catalog match for this machine is installed.
fn resolve_and_install(
    session: &Session<'_>,
    req: &Request,
    resolved: &pin::Resolved,
    base: ImportRequest,
    gate: &GpuGate,
) -> Result<Installed> {
    let spec = &resolved.spec;
    if !req.force
        && let Some(r) = Store::new(session.home).newest_matching(spec)?
    {
        let why = AlreadyWhy::MatchesPin {
            spec: spec.clone(),
            source: resolved.source.clone(),
        };
        return Ok(Installed::already(&r, why));
    }
    super::catalog::install_catalog(session, req, spec.clone(), base, gate)
}

/// Installs exactly the bytes the lock records for this platform, or fails
/// with [`Kind::Integrity`] naming the lock file and the hash — also when
/// the locked release is installed already from other bytes (without
/// `--force`, which replaces them).
fn install_locked(
    session: &Session<'_>,
    req: &Request,
    l: &ProjectLock,
    path: &Path,
    base: ImportRequest,
    gate: &GpuGate,
) -> Result<Installed> {
    let platform = platform_of(req)?;
    let src = locked_source(l, path, platform)?;
    let want = src.sha256().clone();
    if !req.force
        && let Some(r) = Store::new(session.home).get_id(&l.release)?
    {
        // A bare install honours the lock: the installed release must be
        // the locked bytes, or nothing counts as done.
        check_locked_bytes(session, req.locked, l, path, &r, &want)?;
        return Ok(Installed::already(
            &r,
            AlreadyWhy::AsLocked(path.to_path_buf()),
        ));
    }
    // The lock names the release: judged for the GPUs before any download.
    gate.check(&l.release.version, &l.release.cuda, req.force, "install")?;
    let mismatch = |e: Error, from: &str| {
        if e.kind() == Kind::Integrity {
            Error::new(
                Kind::Integrity,
                format!(
                    "{from} is not the archive the lock '{}' records (SHA-256 {want}); nothing was installed",
                    path.display()
                ),
            )
            .cause(e.to_string())
            .hint("the bytes behind that source changed: find out why; if the new archive is genuine, lock again with `cudnnm lock`")
        } else {
            e
        }
    };
    match src {
        LockedSource::Pip { pip, wheel, .. } => {
            let base = ImportRequest {
                expected_sha256: Some(want.clone()),
                // The lock names these bytes, as the index published them.
                published_sha256: Some(want.clone()),
                ..base
            };
            let setting = catalog::index::setting::effective(
                req.index_url.as_deref(),
                session.env,
                session.home,
            )?;
            let catalog::index::Setting::Index(index) = setting else {
                // pip is told to use no index but its own find-links: pip fetches.
                return super::pip::install_pip(session, pip, base, gate)
                    .map_err(|e| mismatch(e, &format!("pip:{pip}")));
            };
            // The lock names the file and its bytes; the index in effect
            // (never a URL from the lock) serves them.
            let want = super::index::Wanted {
                project: pip.package().as_str(),
                version: &l.release.version,
                cuda: &l.release.cuda,
                platform,
                flavour: l.release.flavour,
                locked: Some((wheel.as_str(), &want)),
                exact: true,
            };
            let file = super::index::find(session, &index, &want)?;
            super::index::install_file(session, &index, &want, &file, base)
                .map_err(|e| mismatch(e, &format!("{wheel} from {}", index.shown())))
        }
        LockedSource::Catalog {
            url,
            path: rel,
            size,
            ..
        } => {
            let mirror =
                catalog::effective_mirror(req.mirror.as_deref(), session.env, session.home)?;
            // A lock is hostile input: it picks bytes, never a host. Where
            // the catalog has this archive, the lock's SHA-256 must be one it
            // publishes, fetched from the catalog's URL (the mirror
            // applied); where it has not (a lock newer than this catalog),
            // only from the mirror or NVIDIA's own server, by the lock's
            // path — unless the user says `--allow-unverified`.
            let cat = catalog::Catalog::load(session.home)?;
            let known = cat
                .archives()
                .iter()
                .find(|a| a.release_id() == l.release && a.platform == platform);
            let refuse = |why: String| {
                Error::new(
                    Kind::Integrity,
                    format!(
                        "the lock '{}' names an archive of {} for {platform} {why}; nothing was downloaded",
                        path.display(),
                        l.release
                    ),
                )
                .hint("a lock may only name bytes NVIDIA or your catalog published, from NVIDIA or your mirror: lock again with `cudnnm lock` (if the lock is newer than this catalog, `cudnnm manifest refresh` first); `--allow-unverified` fetches it from the lock's URL anyway")
            };
            let nvidia = |u: &str| u.starts_with(catalog::NVIDIA_BASE_URL) && !u.contains("/../");
            let (from, named) = match (known, &mirror, rel) {
                (Some(a), _, _)
                    if a.hashes.is_empty() || a.hashes.iter().any(|h| h.sha256 == want) =>
                {
                    match a.urls(mirror.as_deref()).into_iter().next() {
                        Some(u) => (u, mirror.is_some()),
                        None => return Err(refuse("that the catalog lists without a URL".into())),
                    }
                }
                (Some(_), _, _) if !req.allow_unverified => {
                    return Err(refuse(format!(
                        "with another SHA-256 ({want}) than the catalog publishes"
                    )));
                }
                // The user's mirror may be http:// or a folder; the lock's own URL is HTTPS only.
                (_, Some(m), Some(rel)) => (format!("{m}{rel}"), true),
                (None, _, _) if nvidia(url) => (url.clone(), false),
                _ if req.allow_unverified => (url.clone(), false),
                _ => {
                    return Err(refuse(
                        "from a host that is not NVIDIA's, of a release the catalog does not know"
                            .into(),
                    ));
                }
            };
            let locked = Download {
                lock: l,
                from: &from,
                named,
                size: *size,
                want: &want,
                platform,
            };
            let from = format!("'{from}'");
            fetch_locked(session, &locked, base, &|e| mismatch(e, &from))
        }
    }
}

/// The lock's source for `platform`, or [`Kind::Integrity`] naming the
/// platforms it has.
fn locked_source<'l>(
    l: &'l ProjectLock,
    path: &Path,
    platform: Platform,
) -> Result<&'l LockedSource> {
    l.source(platform).ok_or_else(|| {
        Error::new(
            Kind::Integrity,
            format!(
                "the lock '{}' records no archive of {} for {platform}",
                path.display(),
                l.release
            ),
        )
        .cause(format!(
            "it has {}",
            if l.platform.is_empty() {
                "none".to_string()
            } else {
                l.platform.keys().cloned().collect::<Vec<_>>().join(", ")
            }
        ))
        .hint("run `cudnnm lock` on this platform to add it (and commit the lock)")
    })
}

/// The locked release `r` is installed: it must be the locked bytes
/// (`want`), its files unchanged since (size and time, reading only a file
/// whose time changed), or [`Kind::Integrity`] says which and how to
/// replace them.
fn check_locked_bytes(
    session: &Session<'_>,
    locked: bool,
    l: &ProjectLock,
    path: &Path,
    r: &Release,
    want: &Sha256Hex,
) -> Result<()> {
    let verb = if locked {
        "install --locked"
    } else {
        "install"
    };
    let installed = match &r.receipt.source.sha256 {
        Some(h) if h == want => None,
        Some(h) => Some(format!("an archive with SHA-256 {h}")),
        None => Some(format!(
            "the folder '{}', which has no archive SHA-256 to compare",
            r.receipt.source.name
        )),
    };
    let host = |c: CommandLine| session.printed(c);
    if let Some(installed) = installed {
        return Err(Error::new(
            Kind::Integrity,
            format!(
                "{verb}: {} is installed from {installed}, not the archive with SHA-256 {want} the lock '{}' records",
                l.release,
                path.display()
            ),
        )
        .hint(
            // Locking the installed bytes is offered only when another
            // machine can fetch them: else the lock would fail there.
            if Catalog::load(session.home).is_ok_and(|c| crate::ops::lock::reproducible(&c, r)) {
                format!(
                    "`{}` replaces it with the locked bytes; `{}` locks the installed ones instead, when another machine can fetch them (then commit the lock)",
                    host(CommandLine::install_here().force()),
                    host(CommandLine::lock())
                )
            } else {
                format!(
                    "`{}` replaces it with the locked bytes (no other machine can fetch the installed ones, so a lock of them would fail there)",
                    host(CommandLine::install_here().force())
                )
            },
        ));
    }
    let changed = Store::new(session.home).changed_contents(r, |_| true);
    if changed.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = changed
        .iter()
        .map(|(p, why)| {
            let rel = p.strip_prefix(&r.dir).unwrap_or(p);
            format!("'{}' {why}", rel.display().to_string().replace('\\', "/"))
        })
        .collect();
    Err(Error::new(
        Kind::Integrity,
        format!(
            "{verb}: {} at '{}' is not the locked bytes any more: {} changed since it was installed: {}",
            l.release,
            r.dir.display(),
            if changed.len() == 1 {
                "1 file".to_string()
            } else {
                format!("{} files", changed.len())
            },
            names.join("; ")
        ),
    )
    .hint(format!(
        "`{}` imports the locked bytes (SHA-256 {want}) again in its place",
        host(CommandLine::install_here().force())
    )))
}

/// A locked catalog archive to download.
struct Download<'a> {
    lock: &'a ProjectLock,
    /// The URL (the mirror's, when one is set and the lock names the path).
    from: &'a str,
    /// `from` is the user's own mirror (may be `http://` or a folder),
    /// not the lock's URL (HTTPS only).
    named: bool,
    size: Option<u64>,
    want: &'a Sha256Hex,
    platform: Platform,
}

/// Downloads the locked archive (checked against its SHA-256 before
/// anything enters the store; a failed download is said by `mismatch`),
/// unpacking it while it arrives, and imports it.
fn fetch_locked(
    session: &Session<'_>,
    d: &Download<'_>,
    base: ImportRequest,
    mismatch: &dyn Fn(Error) -> Error,
) -> Result<Installed> {
    let from = d.from;
    let name = from.rsplit('/').next().unwrap_or(from).to_string();
    let urls = [download::Location::new(from.to_string(), d.named)];
    let expect = [d.want.clone()];
    let release = &d.lock.release;
    let job = download::Job {
        urls: &urls,
        name: &name,
        size: d.size,
        expect: &expect,
        identity: download::Identity {
            version: &release.version,
            cuda: &release.cuda,
            platform: d.platform,
            flavour: release.flavour,
        },
    };
    let streamed = StreamedInstall::new(session, false);
    let got = download::download_tapped(
        session.home,
        session.env,
        &job,
        session.report.progress(),
        &streamed,
    )
    .map_err(mismatch)?;
    session.report.event(&Event::Downloaded {
        name: &name,
        url: &got.url,
        cached: got.cached,
    });
    pause_after_download(session);
    // Held (`cache clean` leaves it) until the import has read it.
    let hold = got.hold;
    let done = streamed.import(
        ImportRequest {
            source: got.path,
            name: Some(name),
            cuda: Some(release.cuda),
            expected_sha256: Some(d.want.clone()),
            from: Provenance::Url(got.url),
            ..base
        },
        got.cached,
    );
    drop(hold);
    done
}

//! `cudnnm install` without an argument: the spec that applies here (the
//! pin, then the default), installed exactly as the lock file beside the pin
//! records it when that lock still satisfies the pin, else resolved against
//! the catalog for this machine as `install SPEC` does.

use super::stream::StreamedInstall;
use super::{Args, install_catalog, install_pip, pause_after_download, platform_of};
use crate::archive::ImportRequest;
use crate::catalog::{self, Catalog, download};
use crate::cli::Ctx;
use crate::cli::support::GpuGate;
use crate::command::CommandLine;
use crate::error::{Error, Kind, Result};
use crate::pin::lockfile::{self, LockedSource, ProjectLock};
use crate::pin::{self, SpecSource};
use crate::store::Store;

/// Installs what applies here; see the module documentation.
pub(super) fn install_here(
    ctx: &Ctx,
    args: &Args,
    base: ImportRequest,
    gate: &GpuGate,
) -> Result<u8> {
    let host = |c: CommandLine| c.for_host(ctx.env.is_windows()).to_string();
    let resolved = pin::resolve_spec(None, &ctx.env, &ctx.home)?.ok_or_else(|| {
        Error::new(Kind::NotFound, "no cuDNN release is named for this folder")
            .cause("no CUDNNM_VERSION, no .cudnn-version here or above, no default")
            .hint(format!(
                "name one: `{}`, or pin one with `cudnnm pin SPEC --force` and run `cudnnm install` again",
                host(CommandLine::install("SPEC".to_string()))
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
    if args.locked && lock.is_none() {
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
            ctx.status(format!(
                "installing {} as locked in '{}' (pin {spec}, {})",
                l.release,
                path.display(),
                resolved.source
            ));
            install_locked(ctx, args, &l, &path, base, gate)
        }
        Some((l, path)) => {
            let msg = format!(
                "the lock '{}' names {}, which does not satisfy the pin {spec} ({})",
                path.display(),
                l.release,
                resolved.source
            );
            if args.locked {
                return Err(Error::new(Kind::Integrity, format!("install --locked: {msg}"))
                    .hint("lock the pin again with `cudnnm lock` (and commit the lock), or restore the pin the lock was written for"));
            }
            ctx.warn(format!(
                "{msg}; resolving the pin instead (`cudnnm lock` records the new pick)"
            ));
            resolve_and_install(ctx, args, &resolved, base, gate)
        }
        None => resolve_and_install(ctx, args, &resolved, base, gate),
    }
}

/// The pin without a lock: the newest installed match is a no-op, else the
/// newest catalog match for this machine is installed.
fn resolve_and_install(
    ctx: &Ctx,
    args: &Args,
    resolved: &pin::Resolved,
    base: ImportRequest,
    gate: &GpuGate,
) -> Result<u8> {
    let spec = &resolved.spec;
    if !args.force
        && let Some(r) = Store::new(&ctx.home).newest_matching(spec)?
    {
        return already(ctx, &r, &format!("matches {spec} from {}", resolved.source));
    }
    install_catalog(ctx, args, spec.clone(), base, gate)
}

pub(super) fn already(ctx: &Ctx, r: &crate::store::Release, why: &str) -> Result<u8> {
    if ctx.json {
        ctx.out_json(&serde_json::json!({
            "status": "already-installed",
            "release": r.id(),
        }));
    }
    ctx.status(format!(
        "cuDNN {} is already installed at '{}' ({why}); nothing to do",
        r.id(),
        r.dir.display()
    ));
    Ok(0)
}

/// Installs exactly the bytes the lock records for this platform, or fails
/// with [`Kind::Integrity`] naming the lock file and the hash — also when
/// the locked release is installed already from other bytes (without
/// `--force`, which replaces them).
fn install_locked(
    ctx: &Ctx,
    args: &Args,
    l: &ProjectLock,
    path: &std::path::Path,
    base: ImportRequest,
    gate: &GpuGate,
) -> Result<u8> {
    let platform = platform_of(args)?;
    let src = l.source(platform).ok_or_else(|| {
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
    })?;
    let want = src.sha256().clone();
    let store = Store::new(&ctx.home);
    if !args.force
        && let Some(r) = store.get_id(&l.release)?
    {
        // A bare install honours the lock: the installed release must be
        // the locked bytes, or nothing counts as done.
        let installed = match &r.receipt.source.sha256 {
            Some(h) if *h == want => None,
            Some(h) => Some(format!("an archive with SHA-256 {h}")),
            None => Some(format!(
                "the folder '{}', which has no archive SHA-256 to compare",
                r.receipt.source.name
            )),
        };
        if let Some(installed) = installed {
            let verb = if args.locked {
                "install --locked"
            } else {
                "install"
            };
            let host = |c: CommandLine| {
                ctx.home
                    .reach(&ctx.env, c, false)
                    .for_host(ctx.env.is_windows())
            };
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
                if Catalog::load(&ctx.home).is_ok_and(|c| crate::cli::support::reproducible(&c, &r)) {
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
        // The locked bytes were installed: its files must still be them
        // (size and time, reading only a file whose time changed).
        let changed = store.changed_contents(&r, |_| true);
        if !changed.is_empty() {
            let verb = if args.locked {
                "install --locked"
            } else {
                "install"
            };
            let names: Vec<String> = changed
                .iter()
                .map(|(p, why)| {
                    let rel = p.strip_prefix(&r.dir).unwrap_or(p);
                    format!("'{}' {why}", rel.display().to_string().replace('\\', "/"))
                })
                .collect();
            return Err(Error::new(
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
                ctx.home
                    .reach(&ctx.env, CommandLine::install_here().force(), false)
                    .for_host(ctx.env.is_windows())
            )));
        }
        return already(ctx, &r, &format!("as locked in '{}'", path.display()));
    }
    // The lock names the release: judged for the GPUs before any download.
    gate.check(&l.release.version, &l.release.cuda, args.force, "install")?;
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
        LockedSource::Pip { pip, .. } => {
            let req = ImportRequest {
                expected_sha256: Some(want.clone()),
                ..base
            };
            install_pip(ctx, pip, req, gate).map_err(|e| mismatch(e, &format!("pip:{pip}")))
        }
        LockedSource::Catalog {
            url,
            path: rel,
            size,
            ..
        } => {
            let mirror = catalog::effective_mirror(args.mirror.as_deref(), &ctx.env, &ctx.home)?;
            // The user's mirror may be http:// or a folder; the lock's own URL is HTTPS only.
            let (from, named) = match (&mirror, rel) {
                (Some(m), Some(rel)) => (format!("{m}{rel}"), true),
                _ => (url.clone(), false),
            };
            let name = from.rsplit('/').next().unwrap_or(&from).to_string();
            let urls = [download::Location::new(from.clone(), named)];
            let expect = [want.clone()];
            let job = download::Job {
                urls: &urls,
                name: &name,
                size: *size,
                expect: &expect,
                identity: download::Identity {
                    version: &l.release.version,
                    cuda: &l.release.cuda,
                    platform,
                },
            };
            let progress = ctx.progress();
            let streamed = StreamedInstall::new(ctx);
            let got = download::download_tapped(&ctx.home, &ctx.env, &job, &*progress, &streamed)
                .map_err(|e| mismatch(e, &format!("'{from}'")))?;
            ctx.status(if got.cached {
                format!("using {name} from the download cache")
            } else {
                format!("downloaded {name} from {}", got.url)
            });
            pause_after_download(ctx);
            // Held (`cache clean` leaves it) until the import has read it.
            let hold = got.hold;
            let done = streamed.import_and_report(
                ImportRequest {
                    source: got.path,
                    name: Some(name),
                    cuda: Some(l.release.cuda),
                    expected_sha256: Some(want.clone()),
                    from: crate::store::Provenance::Url(got.url),
                    ..base
                },
                got.cached,
            );
            drop(hold);
            done
        }
    }
}

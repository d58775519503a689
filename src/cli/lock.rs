//! `cudnnm lock`: resolves the pin (`.cudnn-version`, here or above) against
//! the catalog as a bare `install` would on this machine (its toolkits' CUDA
//! or `--cuda`, its GPUs), and writes `.cudnn-version.lock` beside the pin:
//! the release id and, for every platform the catalog has that release for,
//! the archive's URL and SHA-256 (`pin::lockfile`). A release the catalog
//! knows only as a PyPI wheel is locked as its pip requirement and the
//! SHA-256 of the wheel pip downloads here, for this platform; entries other
//! platforms recorded for the same release are kept.

use serde::Serialize;

use super::Ctx;
use super::support::GpuGate;
use crate::catalog::{self, Catalog, FetchRequest, resolve};
use crate::error::{Error, IoResultExt, Kind, Result};
use crate::fsops;
use crate::hash;
use crate::pin::lockfile::{self, LockedSource, ProjectLock};
use crate::pin::{self, SpecSource};
use crate::store::Store;
use crate::version::{CudaVariant, Platform, ReleaseId};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The CUDA to resolve the pin for, when the toolkits found do not say (12, 11.8)
    #[arg(long, value_name = "V")]
    pub cuda: Option<String>,
    /// The platform whose catalog pick decides the release [default: this machine's]
    #[arg(long, value_name = "P")]
    pub platform: Option<String>,
}

#[derive(Serialize)]
struct Report {
    path: String,
    pin: String,
    release: String,
    platforms: Vec<String>,
    changed: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let found = pin::find_pin(ctx.env.cwd())?.ok_or_else(|| {
        Error::new(
            Kind::NotFound,
            format!(
                "no {} in '{}' or above to lock",
                pin::PIN_FILE,
                ctx.env.cwd().display()
            ),
        )
        .hint("pin a release first with `cudnnm pin SPEC` (the lock is written beside the pin)")
    })?;
    let lock_path = match &found.source {
        SpecSource::PinFile { path, .. } => lockfile::lock_path(path),
        other => {
            return Err(Error::new(
                Kind::Usage,
                format!("the spec here comes from {other}, not from a pin file"),
            )
            .hint("pin a release with `cudnnm pin SPEC`; the lock is written beside the pin"));
        }
    };
    let spec = found.spec.clone();
    let cuda: Option<CudaVariant> = args.cuda.as_deref().map(str::parse).transpose()?;
    let platform = match &args.platform {
        Some(p) => p.parse()?,
        None => Platform::host().ok_or_else(|| {
            Error::new(
                Kind::Usage,
                "cuDNN is not published for this machine's platform",
            )
            .hint("pass --platform")
        })?,
    };
    let cat = Catalog::load(&ctx.home)?;
    for w in cat.warnings() {
        ctx.warn(w);
    }
    let gate = GpuGate::read(ctx);
    let req = FetchRequest {
        spec: spec.clone(),
        cuda,
        platform,
        mirror: None,
        sha256: None,
        allow_unverified: false,
    };
    // The CUDA build for the toolkit `use` would deploy into, as `install` picks it.
    let (toolkits, chosen) = super::support::toolkits_for_pick(ctx, &spec, cuda.as_ref(), platform);
    if let Some(t) = &chosen {
        super::support::report_build_choice(ctx, &spec, t);
    }
    let old = ProjectLock::read(&lock_path)?;
    let mut entries = std::collections::BTreeMap::new();
    let release =
        match resolve::select_for_gpu(&cat, &req, &toolkits, gate.oldest().map(|g| &g.compute)) {
            Ok((archive, _)) => {
                let id = ReleaseId::new(archive.version.clone(), archive.cuda);
                let installed = Store::new(&ctx.home)
                    .get_id(&id)?
                    .and_then(|r| r.receipt.source.sha256);
                for a in cat
                    .archives()
                    .iter()
                    .filter(|a| a.version == id.version && a.cuda == id.cuda)
                {
                    // The installed archive's hash when a source published it, else the first published.
                    let Some(sha) = a
                        .hashes
                        .iter()
                        .map(|h| &h.sha256)
                        .find(|h| installed.as_ref() == Some(*h) && a.platform == platform)
                        .or(a.hashes.first().map(|h| &h.sha256))
                    else {
                        ctx.warn(format!(
                            "{} for {} has no published SHA-256; left out of the lock",
                            a.name(),
                            a.platform
                        ));
                        continue;
                    };
                    entries.insert(
                        a.platform.as_str().to_string(),
                        LockedSource::Catalog {
                            url: a.urls(None).swap_remove(0),
                            path: (!catalog::is_absolute_url(&a.path)).then(|| a.path.clone()),
                            sha256: sha.clone(),
                            size: a.size,
                        },
                    );
                }
                id
            }
            Err(e) => {
                let Some((w, v)) = cat.wheel_for(&crate::version::Spec {
                    req: spec.req.clone(),
                    cuda: spec.cuda.or(cuda),
                }) else {
                    return Err(e);
                };
                let id = ReleaseId::new(v.clone(), w.cuda);
                if let Some(o) = old.as_ref().filter(|o| o.release == id) {
                    entries.extend(
                        o.platform
                            .iter()
                            .filter(|(_, s)| matches!(s, LockedSource::Pip { .. }))
                            .map(|(k, s)| (k.clone(), s.clone())),
                    );
                }
                let requirement = format!("{}=={v}", w.package);
                ctx.status(format!(
                "cuDNN {id} is published only on PyPI; hashing the wheel pip fetches for {platform}"
            ));
                ctx.home.ensure()?;
                let tmp = tempfile::Builder::new()
                    .prefix(".pip-")
                    .tempdir_in(ctx.home.root())
                    .with_path("create a folder in", ctx.home.root())?;
                let python = catalog::pip::python(&ctx.env);
                let wheel = catalog::pip::download(&python, &requirement, tmp.path(), ctx.quiet)?;
                let (_, sha) = hash::sha256_file(&wheel)?;
                entries.insert(
                    platform.as_str().to_string(),
                    LockedSource::Pip {
                        pip: requirement,
                        wheel: wheel
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default(),
                        sha256: sha,
                    },
                );
                id
            }
        };
    if entries.is_empty() {
        return Err(Error::new(
            Kind::Integrity,
            format!("no archive of {release} has a known SHA-256; nothing to lock"),
        )
        .hint("a lock holds only hashes a source published; `cudnnm manifest refresh` reads NVIDIA's newest index"));
    }
    let lock = ProjectLock {
        pin: spec.clone(),
        release: release.clone(),
        platform: entries,
    };
    let text = lock.to_text();
    let changed = std::fs::read(&lock_path).ok().as_deref() != Some(text.as_bytes());
    if changed {
        fsops::write_atomic(&lock_path, text.as_bytes())?;
    }
    let platforms: Vec<String> = lock.platform.keys().cloned().collect();
    if ctx.json {
        ctx.out_json(&Report {
            path: lock_path.display().to_string(),
            pin: spec.to_string(),
            release: release.to_string(),
            platforms: platforms.clone(),
            changed,
        });
    }
    ctx.status(format!(
        "{} {release} (pin {spec}) for {} in '{}'",
        if changed { "locked" } else { "lock unchanged:" },
        platforms.join(", "),
        lock_path.display()
    ));
    Ok(0)
}

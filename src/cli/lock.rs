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
use crate::error::{Error, Kind, Result};
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
    // What the project runs here: the newest installed release the pin
    // selects (as `exec`, `env` and `current` do), so the lock and this
    // machine agree; else what a bare `install` would pick.
    let store = Store::new(&ctx.home);
    let installed = store.newest_matching_where(&spec, |r| {
        cuda.as_ref()
            .is_none_or(|c| resolve::cuda_serves(c, r.cuda()))
            && r.platform() == platform
    })?;
    let (release, wheel) = match &installed {
        Some(r) => {
            let id = r.release_id();
            ctx.status(format!(
                "locking cuDNN {id}, the release the pin {spec} selects here (installed)"
            ));
            let wheel = cat
                .wheels()
                .iter()
                .find(|w| w.cuda == id.cuda && w.versions.contains(&id.version))
                .map(|w| resolve::WheelPick {
                    package: w.package.clone(),
                    version: id.version.clone(),
                    cuda: w.cuda,
                });
            (id, wheel)
        }
        None => match resolve::pick(&cat, &req, &toolkits, gate.oldest().map(|g| &g.compute))? {
            resolve::Pick::Archive { archive, .. } => {
                (ReleaseId::new(archive.version.clone(), archive.cuda), None)
            }
            resolve::Pick::Wheel(w) => (ReleaseId::new(w.version.clone(), w.cuda), Some(w)),
        },
    };
    let installed_sha = installed
        .as_ref()
        .and_then(|r| r.receipt.source.sha256.clone());
    for a in cat
        .archives()
        .iter()
        .filter(|a| a.version == release.version && a.cuda == release.cuda)
    {
        // The installed archive's hash when a source published it, else the first published.
        let Some(sha) = a
            .hashes
            .iter()
            .map(|h| &h.sha256)
            .find(|h| installed_sha.as_ref() == Some(*h) && a.platform == platform)
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
    if !entries.contains_key(platform.as_str()) {
        // No archive for this platform: a wheel, as pip gives it.
        if let Some(o) = old.as_ref().filter(|o| o.release == release) {
            entries.extend(
                o.platform
                    .iter()
                    .filter(|(_, s)| matches!(s, LockedSource::Pip { .. }))
                    .map(|(k, s)| (k.clone(), s.clone())),
            );
        }
        // Installed from a wheel (through pip or as a file): the package its
        // receipt names, and the wheel's hash from the receipt — no download.
        let from_pip = installed.as_ref().and_then(|r| {
            let s = &r.receipt.source;
            let (arg, _) = s.reinstall_arg(&r.id());
            let req = arg.strip_prefix("pip:")?;
            Some((req.to_string(), s.name.clone(), s.sha256.clone()?))
        });
        if let Some((requirement, wheel, sha256)) = from_pip {
            entries.insert(
                platform.as_str().to_string(),
                LockedSource::Pip {
                    pip: requirement,
                    wheel,
                    sha256,
                },
            );
        } else if let Some(w) = wheel {
            let requirement = w.requirement();
            ctx.status(format!(
                "cuDNN {release} is published only on PyPI; hashing the wheel pip fetches for {platform}"
            ));
            let tmp = catalog::pip::download_folder(&ctx.home)?;
            let python = catalog::pip::python(&ctx.env);
            let file = catalog::pip::download(&python, &requirement, tmp.path(), ctx.quiet)?;
            let (_, sha) = hash::sha256_file(&file)?;
            entries.insert(
                platform.as_str().to_string(),
                LockedSource::Pip {
                    pip: requirement,
                    wheel: file
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    sha256: sha,
                },
            );
        }
    }
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

//! `cudnnm lock`: locks the release the pin (`.cudnn-version`, here or
//! above) selects on this machine — the newest installed match, else what a
//! bare `install` would pick from the catalog (its toolkits' CUDA or
//! `--cuda`, its GPUs) — and writes `.cudnn-version.lock` beside the pin
//! (`pin::lockfile`): the release id and, per platform, where its bytes come
//! from with their SHA-256. For this platform an installed release is locked
//! as the source it was installed from (its receipt: the catalog archive, or
//! the wheel's pip requirement), so that `install --locked` here finds it;
//! one imported from a local file nothing else gives back is refused. Other
//! platforms get the catalog's archives. A release the catalog knows only as
//! a PyPI wheel is locked as its pip requirement and the SHA-256 of the
//! wheel pip downloads here, for this platform; entries other platforms
//! recorded for the same release are kept.

use serde::Serialize;

use super::Ctx;
use super::support::GpuGate;
use crate::catalog::{self, Catalog, FetchRequest, offer, resolve};
use crate::command::CommandLine;
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::hash::{self, Sha256Hex};
use crate::pin::lockfile::{self, LockedSource, ProjectLock};
use crate::pin::{self, SpecSource};
use crate::store::{Release, Store};
use crate::version::{CudaVariant, Platform, ReleaseId, Spec};

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
            (id, None)
        }
        None => match resolve::pick(&cat, &req, &toolkits, gate.oldest().map(|g| &g.compute))? {
            resolve::Pick::Archive { archive, .. } => {
                (ReleaseId::new(archive.version.clone(), archive.cuda), None)
            }
            resolve::Pick::Wheel(w) => (ReleaseId::new(w.version.clone(), w.cuda), Some(w)),
        },
    };
    // The catalog's archives (for this platform only when the release is
    // not installed here), and what machines of other platforms recorded for
    // the same release: a wheel, or the published hash of the archive they
    // installed.
    let same_release = old.as_ref().filter(|o| o.release == release);
    for a in cat
        .archives()
        .iter()
        .filter(|a| a.version == release.version && a.cuda == release.cuda)
    {
        if a.platform == platform && installed.is_some() {
            continue;
        }
        let recorded = same_release
            .and_then(|o| o.platform.get(a.platform.as_str()))
            .map(LockedSource::sha256);
        let Some(sha) = a
            .hashes
            .iter()
            .map(|h| &h.sha256)
            .find(|h| recorded == Some(*h))
            .or(a.hashes.first().map(|h| &h.sha256))
        else {
            ctx.warn(format!(
                "{} for {} has no published SHA-256; left out of the lock",
                a.name(),
                a.platform
            ));
            continue;
        };
        entries.insert(a.platform.as_str().to_string(), catalog_entry(a, sha));
    }
    if let Some(o) = same_release {
        for (k, s) in &o.platform {
            if k != platform.as_str()
                && (matches!(s, LockedSource::Pip { .. }) || !entries.contains_key(k))
            {
                entries.insert(k.clone(), s.clone());
            }
        }
    }
    if let Some(r) = &installed {
        // This platform: the bytes installed here, from the source they came from.
        entries.insert(
            platform.as_str().to_string(),
            installed_source(ctx, &cat, r)?,
        );
    } else if !entries.contains_key(platform.as_str()) {
        // No archive for this platform: a wheel, as pip gives it.
        if let Some(s) = same_release.and_then(|o| o.platform.get(platform.as_str()))
            && matches!(s, LockedSource::Pip { .. })
        {
            entries.insert(platform.as_str().to_string(), s.clone());
        }
        if let Some(w) = wheel {
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

/// A catalog archive's lock entry, with `sha` (one of its published hashes).
fn catalog_entry(a: &catalog::Archive, sha: &Sha256Hex) -> LockedSource {
    LockedSource::Catalog {
        url: a.urls(None).swap_remove(0),
        path: (!catalog::is_absolute_url(&a.path)).then(|| a.path.clone()),
        sha256: sha.clone(),
        size: a.size,
    }
}

/// The lock entry for the platform the installed release `r` is built
/// for: the source its receipt records, so that `install --locked` finds
/// exactly these bytes — the catalog archive with its SHA-256 (downloaded,
/// or a local file with a published hash), or the wheel's exact pip
/// requirement and SHA-256 ([`crate::store::Source::exact_pip_requirement`]).
///
/// # Errors
/// [`Kind::Conflict`] for a release imported from a local archive or folder
/// that no catalog archive or pip requirement gives back: locking other
/// bytes would not describe what is installed.
fn installed_source(ctx: &Ctx, cat: &Catalog, r: &Release) -> Result<LockedSource> {
    let s = &r.receipt.source;
    let id = r.release_id();
    if let Some(sha) = &s.sha256
        && let Some(a) = cat.archives().iter().find(|a| {
            a.version == id.version
                && a.cuda == id.cuda
                && a.platform == r.platform()
                && a.hashes.iter().any(|h| &h.sha256 == sha)
        })
    {
        return Ok(catalog_entry(a, sha));
    }
    let (_, is_file) = s.reinstall_arg(&r.id());
    if let Some(sha) = &s.sha256 {
        if let Some(req) = s.exact_pip_requirement() {
            return Ok(LockedSource::Pip {
                pip: req,
                wheel: s.name.clone(),
                sha256: sha.clone(),
            });
        }
        if let Some(url) = s
            .url
            .as_deref()
            .filter(|u| !is_file && catalog::is_absolute_url(u))
        {
            return Ok(LockedSource::Catalog {
                url: url.to_string(),
                path: url
                    .strip_prefix(catalog::NVIDIA_BASE_URL)
                    .map(str::to_string),
                sha256: sha.clone(),
                size: (s.size > 0).then_some(s.size),
            });
        }
    }
    let what = if s.sha256.is_some() {
        "the local archive"
    } else {
        "the local folder"
    };
    let render = |c: CommandLine| {
        ctx.home
            .reach(&ctx.env, c, false)
            .for_host(ctx.env.is_windows())
    };
    let offers = offer::offers_from(cat, r.platform(), ctx.env.platform());
    let exact: Spec = r.id().parse()?;
    let reinstall = match offer::advise(&offers, &exact, None).command() {
        Some(c) => format!(
            "install it from there with `{}` and run `{}` again, or ",
            render(c.force()),
            render(CommandLine::lock())
        ),
        None => String::new(),
    };
    Err(Error::new(
        Kind::Conflict,
        format!(
            "cuDNN {} is installed here from {what} '{}', which no catalog archive or pip requirement gives back; a lock of other bytes would not describe it",
            r.id(),
            s.name
        ),
    )
    .hint(format!(
        "a lock records bytes another machine can fetch: {reinstall}lock without it (`{}`, then `{}` locks the catalog's pick)",
        render(CommandLine::uninstall(r.id())),
        render(CommandLine::lock())
    )))
}

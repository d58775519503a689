//! `cudnnm lock`: locks the release the pin (`.cudnn-version`, here or
//! above) selects on this machine — the newest installed match, else what a
//! bare `install` would pick from the catalog (its toolkits' CUDA or
//! `--cuda`, its GPUs) — and writes `.cudnn-version.lock` beside the pin
//! (`pin::lockfile`): the release id and, per platform, where its bytes come
//! from with their SHA-256. For this platform an installed release is locked
//! as the source it was installed from (its receipt: the catalog archive, or
//! the wheel's pip requirement, from the wheel's own METADATA), so that
//! `install --locked` here finds it; one imported from a local file nothing
//! else gives back is refused. Other platforms get the catalog's archives.
//! A release the catalog knows only as a PyPI wheel is locked as its pip
//! requirement and the SHA-256 of the wheel pip downloads here, for this
//! platform, kept in the download cache for the install that follows;
//! entries other platforms recorded for the same release are kept.

use serde::Serialize;

use super::Ctx;
use super::support::{self, GpuGate};
use crate::catalog::{self, Catalog, FetchRequest, download, offer, resolve};
use crate::command::CommandLine;
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::hash::Sha256Hex;
use crate::pin::lockfile::{self, LockedSource, ProjectLock};
use crate::pin::{self, SpecSource};
use crate::shape::Shape;
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
    // A lock that no longer parses (edited by hand, a merge conflict) is
    // what `lock` is for: written anew, saying so, never a dead end.
    let old = match ProjectLock::read(&lock_path) {
        Err(e) if e.kind() == Kind::Usage => {
            ctx.warn(format!(
                "the lock file '{}' could not be read ({}); writing it anew",
                lock_path.display(),
                e.causes()
                    .first()
                    .map(String::as_str)
                    .unwrap_or("malformed")
            ));
            None
        }
        other => other?,
    };
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
            resolve::Pick::Archive { archive, .. } => (archive.release_id(), None),
            resolve::Pick::Wheel(w) => (w.release_id(), Some(w)),
        },
    };
    // The catalog's archives (for this platform only when the release is
    // not installed here), and what machines of other platforms recorded for
    // the same release: a wheel, or the published hash of the archive they
    // installed.
    let same_release = old.as_ref().filter(|o| o.release == release);
    // The build installed here (an older cudnnm's JIT build keeps the plain id).
    let build = installed.as_ref().map_or(release.flavour, |r| r.flavour());
    for a in cat
        .archives()
        .iter()
        .filter(|a| a.version == release.version && a.cuda == release.cuda && a.flavour == build)
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
                "cuDNN {release} is published only on PyPI; its lock entry for {platform} is the SHA-256 of the wheel pip fetches"
            ));
            let recorded = same_release
                .and_then(|o| o.platform.get(platform.as_str()))
                .and_then(|s| match s {
                    LockedSource::Pip { pip, sha256, .. } if *pip == requirement => Some(sha256),
                    _ => None,
                });
            let (wheel, sha256) = pip_wheel(ctx, &requirement, &release, platform, recorded)?;
            entries.insert(
                platform.as_str().to_string(),
                LockedSource::Pip {
                    pip: requirement,
                    wheel,
                    sha256,
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

/// The wheel `requirement` names for `platform`, and its SHA-256: the one
/// in the download cache when an earlier `lock` kept it (the one of the
/// SHA-256 `recorded` in the lock first), else fetched with the user's pip
/// and kept there (`catalog::download::keep`), so that `cache` and `du`
/// count it and the `install` that follows uses it instead of fetching it
/// again.
///
/// # Errors
/// pip failing ([`catalog::pip::download`]), or the cache not writable.
fn pip_wheel(
    ctx: &Ctx,
    requirement: &str,
    release: &ReleaseId,
    platform: Platform,
    recorded: Option<&Sha256Hex>,
) -> Result<(String, Sha256Hex)> {
    let url = format!("pip:{requirement}");
    let home = &ctx.home;
    let mut found = None;
    if let Some(h) = recorded {
        found = download::find_kept(home, &url, platform, Some(h))?;
    }
    if found.is_none() {
        found = download::find_kept(home, &url, platform, None)?;
    }
    if let Some((got, rec)) = found {
        ctx.status(format!(
            "lock: {} is in the download cache; recording its SHA-256 (nothing downloaded)",
            rec.name
        ));
        return Ok((rec.name, got.sha256));
    }
    ctx.status(format!(
        "lock: fetching {requirement} with pip to record its SHA-256 (kept in the download cache)"
    ));
    let tmp = catalog::pip::download_folder(home)?;
    let python = catalog::pip::python(&ctx.env);
    let file = catalog::pip::download(
        &python,
        requirement,
        tmp.path(),
        super::ui::pip_output(ctx.quiet),
    )?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let identity = download::Identity {
        version: &release.version,
        cuda: &release.cuda,
        platform,
    };
    let (_, sha, size) = download::keep(home, &file, &name, &url, identity)?;
    ctx.status(format!(
        "lock: kept {name} ({}) in the download cache; `{}` installs it from there",
        crate::store::human_size(size),
        ctx.home
            .reach(&ctx.env, CommandLine::install_here(), false)
            .for_host(ctx.env.is_windows())
    ));
    Ok((name, sha))
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
    let render = |c: CommandLine| {
        ctx.home
            .reach(&ctx.env, c, false)
            .for_host(ctx.env.is_windows())
    };
    let is_wheel = s.kind == Shape::Wheel || s.dist.is_some();
    if let Some(sha) = &s.sha256 {
        if is_wheel {
            // The requirement comes from what the wheel is (its METADATA,
            // recorded at install), never from a name the file was given.
            if let (Some(pip), Some(wheel)) = (
                s.exact_pip_requirement(&id.version),
                s.wheel_file_name(&id.version),
            ) {
                let published =
                    cat.wheel_hashes(support::project_of(&pip), &id.version, r.platform());
                if !published.is_empty() && !published.contains(&sha) {
                    return Err(Error::new(
                        Kind::Conflict,
                        format!(
                            "cuDNN {} is installed here from '{}' with SHA-256 {sha}, but the wheel PyPI publishes for {pip} on {} has SHA-256 {}; a lock of the installed bytes names a file pip never fetches",
                            r.id(),
                            s.name,
                            r.platform(),
                            published
                                .iter()
                                .map(|h| h.as_str())
                                .collect::<Vec<_>>()
                                .join(" or ")
                        ),
                    )
                    .hint(format!(
                        "reinstall it from the PyPI requirement with `{}`, then run `{}` again",
                        render(CommandLine::install(format!("pip:{pip}")).force()),
                        render(CommandLine::lock())
                    )));
                }
                if published.is_empty() && !support::fetched_by_pip(s) {
                    ctx.warn(format!(
                        "the lock's SHA-256 for {} ({sha}) is that of the local file '{}', and no catalog entry tells the one PyPI publishes for {pip}: a teammate's pip must fetch exactly those bytes (from the same local folder, say), or their install fails",
                        r.platform(),
                        s.name
                    ));
                }
                return Ok(LockedSource::Pip {
                    pip,
                    wheel,
                    sha256: sha.clone(),
                });
            }
            return Err(Error::new(
                Kind::Conflict,
                format!(
                    "cuDNN {} is installed here from the wheel file '{}', whose name does not say which pip requirement gives it back (its receipt, from an older cudnnm, does not record the wheel's METADATA); a lock of a guessed requirement could name other bytes",
                    r.id(),
                    s.name
                ),
            )
            .hint(format!(
                "reinstall it from PyPI by name with {}, then run `{}` again",
                pip_reinstall(r, &render),
                render(CommandLine::lock())
            )));
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
    // A wheel's files (a wheel's dist-info, or the JIT package's layout):
    // the package they came from, never the catalog's other package.
    let reinstall = if is_wheel || package_of(r).is_some() {
        format!(
            "install it from PyPI with {} and run `{}` again, or ",
            pip_reinstall(r, &render),
            render(CommandLine::lock())
        )
    } else {
        let offers = offer::offers_from(cat, r.platform(), ctx.env.platform());
        let exact: Spec = r.id().parse()?;
        match offer::advise(&offers, &exact, None).command() {
            Some(c) => format!(
                "install it from there with `{}` and run `{}` again, or ",
                render(c.force()),
                render(CommandLine::lock())
            ),
            None => String::new(),
        }
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

/// The PyPI package release `r`'s files came from, when that is known: the
/// wheel's own METADATA (recorded at install), else the JIT package's
/// layout (cuDNN 9's runtime-compiled engines without the precompiled
/// ones, which only `nvidia-cudnn-jit-cuNN` ships that way).
fn package_of(r: &Release) -> Option<String> {
    if let Some(d) = &r.receipt.source.dist {
        return Some(d.project());
    }
    let has = |part: &str| {
        r.receipt
            .files
            .iter()
            .any(|f| f.path.rsplit('/').next().is_some_and(|n| n.contains(part)))
    };
    (has("cudnn_engines_runtime_compiled") && !has("cudnn_engines_precompiled"))
        .then(|| format!("nvidia-cudnn-jit-cu{}", r.cuda().major()))
}

/// The `install pip:… --force` that gives release `r` back from PyPI, in
/// backquotes: from the package its files came from ([`package_of`]), else
/// both packages cuDNN 9 is published as, saying which is which.
fn pip_reinstall(r: &Release, render: &dyn Fn(CommandLine) -> String) -> String {
    // PyPI's versions have four parts (9.12.0.46); a release known only by
    // its headers (9.12.0) matches them as a prefix (PEP 440 `==9.12.0.*`).
    let v = r.version();
    let req = if v.build().is_some() {
        format!("=={v}")
    } else {
        format!("=={v}.*")
    };
    let cmd = |package: &str| render(CommandLine::install(format!("pip:{package}{req}")).force());
    match package_of(r) {
        Some(p) => format!("`{}`", cmd(&p)),
        None => {
            let major = r.cuda().major();
            format!(
                "`{}` (the full package) or `{}` (the JIT-only package) — cudnnm cannot tell which one its files came from",
                cmd(&format!("nvidia-cudnn-cu{major}")),
                cmd(&format!("nvidia-cudnn-jit-cu{major}"))
            )
        }
    }
}

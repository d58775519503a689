//! `cudnnm install [SPEC|PATH|pip:REQ]`: import a release into the store from a
//! local archive or folder, from the user's own pip, or from the catalog.
//! Without an argument: what applies here (the pin, then the default),
//! exactly as `.cudnn-version.lock` beside the pin records it when there is
//! one (`--locked`: only so).

use super::Ctx;
use super::support::{GpuGate, ReleaseView, guard, report_build_choice, toolkits_for_pick};
use crate::archive::{self, ImportRequest, Outcome};
use crate::catalog;
use crate::command::CommandLine;
use crate::error::{Error, Kind, Result};
use crate::hash::Sha256Hex;
use crate::progress::Progress;
use crate::store::Store;
use crate::version::{CudaVariant, Platform, ReleaseId, Spec};

mod here;
mod stream;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A catalog spec (8.1.0.77, 9.10.x, >=9.1,<9.11, latest), a local archive or
    /// folder, or pip:REQUIREMENT [default: the pin or default here, as locked]
    #[arg(value_name = "SPEC|PATH|pip:REQ", conflicts_with = "for_")]
    pub what: Option<String>,
    #[command(flatten)]
    pub for_: super::support::ForArgs,
    /// Without SPEC: fail unless the lock file exists and still satisfies the pin
    #[arg(long, conflicts_with = "what")]
    pub locked: bool,
    /// The CUDA the release is built for, when its name does not say (11.2, 12)
    #[arg(long, value_name = "V")]
    pub cuda: Option<String>,
    /// The expected SHA-256 of the archive
    #[arg(long, value_name = "HEX")]
    pub sha256: Option<String>,
    /// Reinstall, or import despite a name/header version disagreement
    #[arg(long)]
    pub force: bool,
    /// Platform to download for (catalog installs) [default: this machine's]
    #[arg(long, value_name = "P")]
    pub platform: Option<String>,
    /// Base URL replacing NVIDIA's download server [default: env CUDNNM_MIRROR,
    /// else `mirror` in config.toml]
    #[arg(long, value_name = "URL")]
    pub mirror: Option<String>,
    /// Install a catalog archive that has no published SHA-256 without checking it
    #[arg(long)]
    pub allow_unverified: bool,
    /// Work on the system store (--system-home), which every user of the machine
    /// reads; needs root or Administrator (or write access an admin gave)
    #[arg(long)]
    pub system: bool,
}

pub fn run(ctx: &Ctx, mut args: Args) -> Result<u8> {
    if let Some(pick) = super::support::release_for(ctx, &args.for_, None)? {
        args.what = Some(pick.install_arg());
    }
    if args.system {
        // Every user must be able to reach the system store.
        ctx.home.ensure()?;
        crate::fsops::make_shared(ctx.home.root())?;
    }
    let cuda: Option<CudaVariant> = args.cuda.as_deref().map(str::parse).transpose()?;
    let sha256 = args.sha256.as_deref().map(Sha256Hex::parse).transpose()?;
    // The GPUs are read once, here (never by `env`, `exec` or the hooks).
    let gate = std::sync::Arc::new(GpuGate::read(ctx));
    let admit = {
        let (gate, force) = (gate.clone(), args.force);
        archive::Admit(std::sync::Arc::new(move |v, c| {
            gate.check(v, c, force, "install")
        }))
    };
    let base = ImportRequest {
        cuda,
        expected_sha256: sha256.clone(),
        force: args.force,
        admit: Some(admit),
        ..Default::default()
    };
    let Some(what) = args.what.clone() else {
        return here::install_here(ctx, &args, base, &gate);
    };
    let local =
        what.starts_with("pip:") || std::fs::symlink_metadata(ctx.env.cwd().join(&what)).is_ok();
    if local {
        for (given, flag) in [
            (args.platform.is_some(), "--platform"),
            (args.allow_unverified, "--allow-unverified"),
        ] {
            if given {
                ctx.warn(format!(
                    "{flag} applies to catalog installs; ignored for '{what}'"
                ));
            }
        }
    }
    if let Some(requirement) = what.strip_prefix("pip:") {
        return install_pip(ctx, requirement.trim(), base, &gate);
    }
    let path = ctx.env.cwd().join(&what);
    if std::fs::symlink_metadata(&path).is_ok() {
        return import_and_report(
            ctx,
            ImportRequest {
                source: path,
                ..base
            },
        );
    }
    if looks_like_path(&what) {
        return Err(Error::new(
            Kind::NotFound,
            format!("no such file or folder '{}'", path.display()),
        )
        .hint("check the path; to install from the catalog give a version such as 8.1.0.77"));
    }
    let spec: Spec = what.parse().map_err(|e: Error| {
        Error::new(Kind::Usage, format!("'{what}' is neither a file nor a cuDNN version spec"))
            .cause(e.message().to_string())
            .hint("give a spec (8.1.0.77, 9.10.x, >=9.1,<9.11, latest, latest_cuda12), an archive path (./cudnn-….zip), or pip:nvidia-cudnn-cu12==9.1.0.70")
    })?;
    install_catalog(ctx, &args, spec, base, &gate)
}

/// Installs the newest catalog release `spec` names for this machine: its
/// toolkits' CUDA (or `--cuda`) and the oldest GPU in use
/// ([`catalog::resolve::select_for_gpu`]).
fn install_catalog(
    ctx: &Ctx,
    args: &Args,
    spec: Spec,
    base: ImportRequest,
    gate: &GpuGate,
) -> Result<u8> {
    let platform = platform_of(args)?;
    // `--mirror`; else `CUDNNM_MIRROR`, else config.toml (`catalog::effective_mirror`).
    let mirror = args.mirror.clone();
    let req = catalog::FetchRequest {
        spec,
        cuda: base.cuda,
        platform,
        mirror,
        sha256: base.expected_sha256.clone(),
        allow_unverified: args.allow_unverified,
    };
    // The CUDA build for the toolkit `use` would deploy into (found, or
    // known to this home), as `use` picks it, and said.
    let (toolkits, chosen) = toolkits_for_pick(ctx, &req.spec, req.cuda.as_ref(), platform);
    if let Some(t) = &chosen {
        report_build_choice(ctx, &req.spec, t);
    }
    // Archives and PyPI wheels alike: most cuDNN 9 releases are wheels only.
    let cat = catalog::Catalog::load(&ctx.home)?;
    let host = ctx.env.platform();
    let pick = catalog::resolve::pick_on(
        &cat,
        &req,
        &toolkits,
        gate.oldest().map(|g| &g.compute),
        host,
    )?;
    // A yanked release is picked only when named exactly: say so, and why.
    if let Some(w) = pick.yanked_warning() {
        ctx.warn(w);
    }
    let (version, cuda) = pick.release();
    if !args.force
        && let Some(r) =
            Store::new(&ctx.home).get_build(version, cuda, pick.release_id().flavour)?
    {
        let mut why = format!("the catalog's pick for {}", req.spec);
        // The same release from another package (the JIT-only wheel has no
        // precompiled engines): say so, and how to have the catalog's.
        if let catalog::resolve::Pick::Wheel(w) = &pick {
            let (from, _) = r.receipt.source.reinstall_arg(&r.id());
            if let Some(req_) = from.strip_prefix("pip:")
                && let Some(package) = req_.split("==").next()
                && package != w.package
            {
                why.push_str(&format!(
                    ", installed from the package {package}, not {}: `{}` installs that one instead",
                    w.package,
                    CommandLine::install(format!("pip:{}", w.requirement()))
                        .force()
                        .for_host(ctx.env.is_windows())
                ));
            }
        }
        return here::already(ctx, &r, &why);
    }
    if let catalog::resolve::Pick::Wheel(w) = &pick {
        // Refused before pip runs (a wheel is up to 1 GB), as the archive
        // path refuses before its download (`MachineFit::check`).
        gate.check(&w.version, &w.cuda, args.force, "install")?;
        // A prefix passed over a newer release for the GPU: say which and why
        // (an archive pick says so in the download's notes).
        if let Some(g) = gate.oldest()
            && let Ok(best) = catalog::resolve::pick_on(&cat, &req, &toolkits, None, host)
            && best.release() != (&w.version, &w.cuda)
        {
            ctx.status(catalog::passed_over_note(
                &cat,
                &req.spec,
                (&w.version, &w.cuda),
                best.release(),
                g,
            ));
        }
        ctx.status(format!(
            "cuDNN {} for CUDA {} is published as a PyPI wheel: installing pip:{}",
            w.version,
            w.cuda,
            w.requirement()
        ));
        return install_pip(ctx, &w.requirement(), base, gate);
    }
    let progress = ctx.progress();
    let streamed = stream::StreamedInstall::new(ctx);
    let fit = catalog::MachineFit {
        toolkits: &toolkits,
        gpu: gate.oldest(),
        check: &|v, c| gate.check(v, c, args.force, "install"),
    };
    let fetched = catalog::fetch_for(&ctx.home, &ctx.env, &req, &*progress, &fit, &streamed)?;
    for w in &fetched.warnings {
        ctx.warn(w);
    }
    for n in &fetched.notes {
        ctx.status(n);
    }
    ctx.status(if fetched.cached {
        format!("using {} from the download cache", fetched.name)
    } else {
        format!("downloaded {} from {}", fetched.name, fetched.url)
    });
    pause_after_download(ctx);
    // The archive stays held (`cache clean` leaves it) until the import has read it.
    let hold = fetched.hold;
    let done = streamed.import_and_report(
        ImportRequest {
            source: fetched.path,
            name: Some(fetched.name),
            cuda: Some(fetched.cuda),
            expected_sha256: Some(fetched.sha256),
            url: Some(fetched.url),
            force: args.force,
            ..Default::default()
        },
        fetched.cached,
    );
    drop(hold);
    done
}

/// Test hook (debug builds only): with `CUDNNM_TEST_PAUSE_AFTER_DOWNLOAD`
/// set, waits between the download and the import, before the home lock is
/// taken, while the file `CUDNNM_TEST_PAUSE_FILE` exists.
fn pause_after_download(ctx: &Ctx) {
    if cfg!(debug_assertions)
        && ctx
            .env
            .var(crate::env::CUDNNM_TEST_PAUSE_AFTER_DOWNLOAD)
            .is_some()
        && let Some(f) = ctx.env.var(crate::env::CUDNNM_TEST_PAUSE_FILE)
    {
        crate::interrupt::test_pause(std::path::Path::new(&f));
    }
}

/// The release an exact requirement of a cuDNN package names:
/// `nvidia-cudnn-cu12==9.27.0.42` is 9.27.0.42 for CUDA 12,
/// `nvidia-cudnn-jit-cu12==9.27.0.42` its JIT build — NVIDIA's package
/// names say the flavour and end in the CUDA major.
fn pinned_release(requirement: &str) -> Option<ReleaseId> {
    let (package, version) = requirement.split_once("==")?;
    let package: crate::version::Package = package.parse().ok()?;
    let version = crate::version::release_of(version.trim())?;
    Some(ReleaseId::new(version, package.cuda_variant()).with_flavour(package.flavour))
}

/// `--platform`, else the host's.
fn platform_of(args: &Args) -> Result<Platform> {
    match &args.platform {
        Some(p) => p.parse(),
        None => Platform::host().ok_or_else(|| {
            Error::new(
                Kind::Usage,
                "cuDNN is not published for this machine's platform",
            )
            .hint("pass --platform")
        }),
    }
}

fn looks_like_path(s: &str) -> bool {
    s.contains('/')
        || s.contains('\\')
        || [".zip", ".whl", ".tgz", ".tar.gz", ".tar.xz", ".tar"]
            .iter()
            .any(|e| s.ends_with(e))
}

fn import_and_report(ctx: &Ctx, req: ImportRequest) -> Result<u8> {
    report_import(ctx, req, |store, req, progress| {
        archive::import(store, req, progress)
    })
}

/// Runs `import` under the home lock (after recovering what a crash left)
/// on the store with its test hooks, and reports its outcome as every
/// install does.
fn report_import(
    ctx: &Ctx,
    mut req: ImportRequest,
    import: impl FnOnce(&Store, &ImportRequest, &dyn Progress) -> Result<archive::Imported>,
) -> Result<u8> {
    let guard = guard(ctx)?;
    let store = guard.store_for_import();
    for d in crate::deploy::Deployments::load(&ctx.home)?.entries {
        req.deployed
            .entry(d.release.to_string())
            .or_default()
            .push(d.toolkit.display().to_string());
    }
    let progress = ctx.progress();
    let imported = import(&store, &req, &*progress)?;
    for w in &imported.warnings {
        ctx.warn(w);
    }
    if let archive::Outcome::Installed(r) | archive::Outcome::Reinstalled(r) = &imported.outcome {
        super::support::warn_advised(ctx, r.version(), r.cuda());
    }
    for n in &imported.notes {
        ctx.status(n);
    }
    let r = imported.outcome.release();
    let what = format!(
        "cuDNN {} for CUDA {} ({}) from {}",
        r.version(),
        r.cuda(),
        r.platform(),
        r.receipt.source.name
    );
    let status = match &imported.outcome {
        Outcome::Installed(_) => "installed",
        Outcome::Reinstalled(_) => "reinstalled",
        Outcome::AlreadyInstalled(_) => "already-installed",
    };
    if ctx.json {
        let view = ReleaseView::new(r, &[], false, false).in_store(&store);
        ctx.out_json(&serde_json::json!({ "status": status, "release": view }));
    }
    match &imported.outcome {
        Outcome::AlreadyInstalled(_) => ctx.status(format!(
            "{what} is already installed at '{}' (--force reinstalls)",
            r.dir.display()
        )),
        _ => ctx.status(format!(
            "{status} {what}: {} files, {} in '{}'",
            r.receipt.files.len(),
            indicatif::HumanBytes(r.receipt.total_size()),
            r.dir.display()
        )),
    }
    Ok(0)
}

/// Fetches a wheel with the user's own pip ([`catalog::pip`]) and imports
/// it; a wheel `cudnnm lock` kept in the download cache for `requirement`
/// (the one of the locked SHA-256, when `base` expects one) is imported
/// from there instead, without pip. An exact requirement names its
/// release, which `gate` judges before pip runs: the same refusal (exit 8)
/// the import would give after the download, and the same `--force`
/// (whose warning the import gives).
fn install_pip(ctx: &Ctx, requirement: &str, base: ImportRequest, gate: &GpuGate) -> Result<u8> {
    catalog::pip::check_requirement(requirement)?;
    let pinned = pinned_release(requirement);
    // `nvidia-cudnn-cu12==9.27.0.42` names its release: installed, no pip run.
    if !base.force
        && let Some(id) = &pinned
        && let Some(r) = Store::new(&ctx.home).get_build(&id.version, &id.cuda, id.flavour)?
    {
        return here::already(ctx, &r, &format!("pip:{requirement}"));
    }
    if let Some(id) = &pinned {
        gate.check(&id.version, &id.cuda, base.force, "install")?;
    }
    // The wheel `cudnnm lock` fetched and kept: the locked SHA-256's file
    // when a lock gives one, else the one kept for this requirement.
    let url = format!("pip:{requirement}");
    if let Some(platform) = Platform::host()
        && let Some((got, rec)) =
            catalog::download::find_kept(&ctx.home, &url, platform, base.expected_sha256.as_ref())?
    {
        ctx.status(format!(
            "using {} from the download cache (pip:{requirement}, no pip run)",
            rec.name
        ));
        // Held (`cache clean` leaves it) until the import has read it.
        let hold = got.hold;
        let done = import_and_report(
            ctx,
            ImportRequest {
                source: got.path,
                name: Some(rec.name),
                url: Some(url),
                ..base
            },
        );
        drop(hold);
        return done;
    }
    let python = catalog::pip::python(&ctx.env);
    let tmp = catalog::pip::download_folder(&ctx.home)?;
    ctx.status(format!(
        "fetching {requirement} with `{python} -m pip download`"
    ));
    let wheel = catalog::pip::download(
        &python,
        requirement,
        tmp.path(),
        super::ui::pip_output(ctx.quiet),
    )?;
    let name = wheel.file_name().map(|n| n.to_string_lossy().into_owned());
    import_and_report(
        ctx,
        ImportRequest {
            source: wheel,
            name,
            url: Some(format!("pip:{requirement}")),
            ..base
        },
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_exact_cudnn_requirement_names_its_release() {
        let id = |r: &str| super::pinned_release(r).map(|i| i.to_string());
        assert_eq!(
            id("nvidia-cudnn-cu12==9.27.0.42").as_deref(),
            Some("9.27.0.42_cuda12")
        );
        assert_eq!(
            id("nvidia_cudnn_jit_cu12 == 9.12.0.46").as_deref(),
            Some("9.12.0.46_cuda12+jit")
        );
        assert_eq!(
            id("nvidia-cudnn-cu12==9.0.0.312.post1").as_deref(),
            Some("9.0.0.312_cuda12")
        );
        assert_eq!(
            id("nvidia-cudnn-cu11==8.6.0.163").as_deref(),
            Some("8.6.0.163_cuda11")
        );
        assert_eq!(id("nvidia-cudnn-cu12>=9"), None);
        assert_eq!(id("torch==2.4.1"), None);
    }
}

//! `cudnnm use [SPEC] [--cuda-root P | --cuda X.Y] [--mode M] [--force]`:
//! deploy a release into a CUDA toolkit as one journaled transaction
//! (`docs/architecture.md#deploying`). Also the helpers `rollback`, `current`, `backups` and
//! `toolkits` share: recovery reporting, the elevation hint, toolkit lists.

use std::path::Path;

use serde::Serialize;

use super::Ctx;
use super::support::{
    GpuGate, elevate_hint, msg_label, printed, recorded_toolkits, report_not_from_a_release,
    report_pruned, report_toolkit_choice, source_label, wanted_cudas,
};
use crate::catalog::offer::{
    Advice, Offer, advise, advise_on, best_offer, not_installed_hint, offers_from,
};
use crate::command::CommandLine;
use crate::deploy::Recovered;
use crate::deploy::existing_toolkit_dir;
use crate::deploy::{self, Applied, Deployments, Done, Guard, Mode, ModeRequest};
use crate::error::{Error, Kind, Result};
use crate::pin;
use crate::store::{Release, Store};
use crate::toolkit::{self, Layout, Selector, Toolkit};
use crate::version::{Platform, Spec, Version};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Release to deploy (8.1.0.77, 8.1, 8.9.7.29_cuda12); default: the pinned release
    #[arg(conflicts_with = "for_")]
    pub spec: Option<String>,
    #[command(flatten)]
    pub for_: super::support::ForArgs,
    /// The CUDA toolkit root to deploy into
    #[arg(long, value_name = "PATH", conflicts_with = "cuda")]
    pub cuda_root: Option<std::path::PathBuf>,
    /// The CUDA toolkit version to deploy into (X.Y, or a major such as 12
    /// when one 12.x toolkit is found or known)
    #[arg(long, value_name = "X.Y")]
    pub cuda: Option<String>,
    /// How to place files: auto, symlink, hardlink or copy
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
    /// Deploy even if the release does not fit the toolkit's CUDA
    #[arg(long)]
    pub force: bool,
}

/// What `use --json` prints.
#[derive(Serialize)]
struct UseReport<'a> {
    toolkit: &'a Path,
    release: String,
    from: String,
    to: String,
    mode: Mode,
    changed: bool,
    backup: Option<u64>,
    /// Files moved into the backup that look like cuDNN's but that no release ships.
    not_from_a_release: Vec<String>,
    pruned: Vec<u64>,
    recovered: Vec<Recovered>,
}

pub fn run(ctx: &Ctx, mut args: Args) -> Result<u8> {
    // Arguments first: a bad mode is named before any toolkit or GPU query.
    let request = mode_request(ctx, args.mode.as_deref())?;
    // `--cuda X.Y` names the toolkit: the release chosen for the frameworks must fit it.
    let toolkit_cuda = args.cuda.as_deref().and_then(|c| c.parse::<Version>().ok());
    if let Some(pick) = super::support::release_for(ctx, &args.for_, toolkit_cuda)? {
        args.spec = Some(pick.id.to_string());
    }
    let change = Guard::begin(ctx.lock()?, &ctx.home, &ctx.env, ctx)?;
    let recovered = change.recovered().to_vec();
    let (spec, from) = match &args.spec {
        Some(s) => (s.parse::<Spec>()?, None),
        None => match pin::resolve_spec(None, &ctx.env, &ctx.home)? {
            Some(r) => {
                ctx.status(format!(
                    "using cuDNN {} ({})",
                    r.spec,
                    source_label(&r.source)
                ));
                (r.spec, Some(r.source))
            }
            None => {
                return Err(Error::new(
                    Kind::Usage,
                    "no SPEC given and no .cudnn-version pin or default found",
                )
                .hint("name a release (`cudnnm use 9.1`), pin one for this folder (`cudnnm pin 9.1`), or set a default (`cudnnm default 9.1`)"));
            }
        },
    };
    let known = recorded_toolkits(ctx, &Deployments::load(&ctx.home)?);
    let (wants, wants_label) = wanted_cudas(ctx, &spec, from.as_ref());
    let toolkit = toolkit::select(
        &ctx.env,
        &Selector {
            root: args.cuda_root.as_deref(),
            cuda: args.cuda.as_deref(),
            known: &known,
            wants: &wants,
            wants_label: &wants_label,
        },
    )?;
    report_toolkit_choice(ctx, &toolkit);
    let store = Store::new(&ctx.home);
    let gate = GpuGate::read(ctx);
    let release = pick_release(ctx, &store, &spec, &toolkit, args.force, &gate)
        .map_err(|e| lock_hint(ctx, &store, &spec, from.as_ref(), e))?;
    if let Some(w) = gate.check_in(
        release.version(),
        release.cuda(),
        Some(&toolkit.cuda),
        args.force,
        "deploy",
    )? {
        ctx.warn(w);
    }
    super::support::warn_advised(ctx, release.version(), release.cuda());
    let probe_dir = existing_toolkit_dir(&toolkit);
    let mode = request.resolve(&release.dir, &probe_dir, ctx.env.is_windows())?;
    let hint = elevate_hint(
        ctx,
        CommandLine::use_(release.id()),
        &toolkit.root,
        Some(&release.id()),
    );
    let Applied { outcome, pruned } = match change.use_release(&toolkit, &release, mode, &hint)? {
        Done::Changed(applied) => *applied,
        Done::AlreadyActive => {
            ctx.status(format!(
                "cuDNN {} is already active in '{}' ({mode}); nothing changed",
                release.version(),
                toolkit.root.display()
            ));
            if ctx.json {
                ctx.out_json(&UseReport {
                    toolkit: &toolkit.root,
                    release: release.id(),
                    from: release.version().to_string(),
                    to: release.version().to_string(),
                    mode,
                    changed: false,
                    backup: None,
                    not_from_a_release: Vec::new(),
                    pruned: Vec::new(),
                    recovered,
                });
            }
            return Ok(0);
        }
    };
    let p = &outcome.plan;
    ctx.status(format!(
        "cuDNN {} → {} in '{}' ({mode}, backup {})",
        msg_label(&p.from_label),
        msg_label(&p.to_label),
        toolkit.root.display(),
        p.id
    ));
    let unknown = deploy::moved_not_from_a_release(p);
    report_not_from_a_release(ctx, p.id, &unknown);
    report_pruned(ctx, &pruned);
    if ctx.json {
        ctx.out_json(&UseReport {
            not_from_a_release: unknown,
            toolkit: &toolkit.root,
            release: release.id(),
            from: p.from_label.clone(),
            to: p.to_label.clone(),
            mode,
            changed: true,
            backup: Some(p.id),
            pruned,
            recovered,
        });
    }
    Ok(0)
}

/// The link mode asked for: `--mode`, else `mode` in `config.toml`, else
/// auto. A bad value from the file names the file and the key.
fn mode_request(ctx: &Ctx, flag: Option<&str>) -> Result<ModeRequest> {
    if let Some(m) = flag {
        return m.parse();
    }
    match ctx.home.config()?.mode {
        Some(m) => m.parse().map_err(|e: Error| {
            let file = ctx.home.config_file();
            Error::new(
                Kind::Usage,
                format!("{} (the `mode` key in '{}')", e.message(), file.display()),
            )
            .hint(format!(
                "set `mode` in '{}' to one of auto, symlink, hardlink, copy, or remove the line",
                file.display()
            ))
        }),
        None => Ok(ModeRequest::Auto),
    }
}

/// The newest installed release matching `spec` that fits `toolkit` (its
/// platform, and its CUDA: exact major.minor before CUDA 11, the same major
/// from 11 on). With `force`, the newest match of the right platform. A
/// version prefix (`9`) prefers the newest release that runs on the GPUs in
/// use, saying which newer one it passed over.
fn pick_release(
    ctx: &Ctx,
    store: &Store,
    spec: &Spec,
    toolkit: &Toolkit,
    force: bool,
    gate: &GpuGate,
) -> Result<Release> {
    let (ma, mi) = toolkit.cuda_major_minor();
    let platform_ok =
        |r: &Release| r.platform().is_windows() == (toolkit.layout == Layout::Windows);
    if let Some(gpu) = gate.oldest().filter(|_| !spec.is_exact()) {
        let fits = |r: &Release| platform_ok(r) && r.cuda().fits(ma, mi);
        if let Some(r) =
            store.newest_matching_where(spec, |r| fits(r) && gate.runs(r.version(), r.cuda()))?
        {
            if let Some(newer) = store.newest_matching_where(spec, fits)?
                && let Some(t) = gate.too_old(newer.version(), newer.cuda())
            {
                ctx.status(format!(
                    "picked cuDNN {}, the newest installed '{spec}' release that runs on {} (compute capability {}); cuDNN {} needs {} or newer",
                    r.id(),
                    gpu.name,
                    gpu.compute,
                    newer.id(),
                    t.needs
                ));
            }
            return Ok(r);
        }
    }
    // The common case reads only the chosen release's receipt; the others
    // are read only to explain a refusal.
    if let Some(r) =
        store.newest_matching_where(spec, |r| platform_ok(r) && r.cuda().fits(ma, mi))?
    {
        return Ok(r);
    }
    let matching = store.matching(spec)?;
    if matching.is_empty() {
        return store
            .resolve(spec)
            .map_err(|e| not_installed(ctx, store, spec, toolkit, gate, e));
    }
    let Some(newest) = matching.iter().find(|r| platform_ok(r)) else {
        return Err(wrong_platform(ctx, spec, toolkit, &matching));
    };
    if force {
        ctx.warn(format!(
            "cuDNN {} is built for CUDA {} and does not fit CUDA {ma}.{mi}; deploying it anyway (--force)",
            newest.id(),
            newest.cuda()
        ));
        return Ok(newest.clone());
    }
    let fitting: Vec<String> = store
        .releases()?
        .iter()
        .rev()
        .filter(|r| platform_ok(r) && r.cuda().fits(ma, mi))
        .map(|r| r.id())
        .collect();
    let cuda_arg = if ma >= 11 {
        ma.to_string()
    } else {
        format!("{ma}.{mi}")
    };
    Err(Error::new(
        Kind::Conflict,
        format!(
            "cuDNN {} is built for CUDA {} and does not fit the CUDA {ma}.{mi} toolkit in '{}'",
            newest.id(),
            newest.cuda(),
            toolkit.root.display()
        ),
    )
    .cause("a build fits only its exact CUDA major.minor before CUDA 11, and any toolkit of its major from CUDA 11 on")
    .hint(if fitting.is_empty() {
        let offers: Vec<Offer> = toolkit_offers(ctx, toolkit)
            .into_iter()
            .filter(|o| o.cuda.fits(ma, mi))
            .collect();
        let render = |c| printed(ctx, c);
        match best_offer(&offers, spec, None) {
            Some(o) => format!(
                "install a build for CUDA {cuda_arg} (`{}`), or pass --force to deploy this one anyway",
                render(o.install())
            ),
            None => match best_offer(&offers, &"latest".parse::<Spec>()?, None) {
                Some(o) => format!(
                    "the catalog has no build of cuDNN {spec} for CUDA {ma}.{mi}; the newest release that has one is cuDNN {} (`{}`); or pass --force to deploy this one anyway",
                    o.version,
                    render(o.install())
                ),
                None => format!(
                    "the catalog has no cuDNN build for CUDA {ma}.{mi}; pass --force to deploy this one anyway"
                ),
            },
        }
    } else {
        format!(
            "installed releases that fit: {}; or pass --force to deploy this one anyway",
            fitting.join(", ")
        )
    }))
}

/// A pinned spec installed nowhere, with a lock beside the pin naming its
/// bytes: the hint is the bare `install` that honours the lock, not a
/// catalog pick that could fetch other bytes.
fn lock_hint(
    ctx: &Ctx,
    store: &Store,
    spec: &Spec,
    from: Option<&pin::SpecSource>,
    e: Error,
) -> Error {
    let Some(source) = from else { return e };
    if !store.matching(spec).map(|m| m.is_empty()).unwrap_or(false) {
        return e;
    }
    match pin::lock_install_hint(source, spec, &|c| printed(ctx, c)) {
        Some(h) => e.hint(h),
        None => e,
    }
}

/// The platform whose builds fit `toolkit`'s layout.
fn toolkit_platform(toolkit: &Toolkit) -> Platform {
    if toolkit.layout == Layout::Windows {
        Platform::WindowsX86_64
    } else {
        Platform::LinuxX86_64
    }
}

/// What the catalog (the user's, else the embedded one) can install for
/// `toolkit` from this machine ([`offers_from`]): archives of the toolkit
/// layout's platform, and PyPI wheels when that is this machine's.
fn toolkit_offers(ctx: &Ctx, toolkit: &Toolkit) -> Vec<Offer> {
    let catalog = crate::catalog::Catalog::load(&ctx.home)
        .unwrap_or_else(|_| crate::catalog::Catalog::embedded());
    offers_from(&catalog, toolkit_platform(toolkit), ctx.env.platform())
}

/// `spec` is installed nowhere in the store: the error names the nearest
/// installed releases and what the catalog has ([`advise`], the rule every
/// install hint follows): the command that installs `spec` for the
/// toolkit's CUDA when the catalog has it, else (saying the catalog lacks
/// it) the nearest release it has.
fn not_installed(
    ctx: &Ctx,
    store: &Store,
    spec: &Spec,
    toolkit: &Toolkit,
    gate: &GpuGate,
    store_error: Error,
) -> Error {
    let (ma, mi) = toolkit.cuda_major_minor();
    let offers = toolkit_offers(ctx, toolkit);
    // Never an install the GPU check would refuse.
    let advice = gate.with_fit(|fit| advise_on(&offers, spec, Some(&toolkit.cuda), fit));
    let e = if matches!(advice, Advice::Install(_) | Advice::NotOnGpu { .. }) {
        store_error
    } else {
        store_error.cause(format!(
            "the catalog has no cuDNN {spec} release for CUDA {ma}.{mi} (no archive for {}, no PyPI wheel), so `cudnnm install {spec}` would not give this toolkit one",
            toolkit_platform(toolkit)
        ))
    };
    e.hint(not_installed_hint(
        &store.nearest(spec),
        &advice.hint(&|c| printed(ctx, c)),
    ))
}

/// `spec` is installed only for another platform than `toolkit`'s layout:
/// the hint installs a build of the layout's platform the catalog has
/// ([`advise`] over the builds that fit the toolkit's CUDA: archives with
/// `--platform`, and wheels when that platform is this machine's), else
/// says none exists and names the nearest one that does.
fn wrong_platform(ctx: &Ctx, spec: &Spec, toolkit: &Toolkit, matching: &[Release]) -> Error {
    let (ma, mi) = toolkit.cuda_major_minor();
    let platform = toolkit_platform(toolkit);
    let e = Error::new(
        Kind::Conflict,
        format!(
            "cuDNN {spec} is installed only for {}; the toolkit '{}' has the {} layout",
            matching
                .iter()
                .map(|r| r.platform().to_string())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
                .join(", "),
            toolkit.root.display(),
            toolkit.layout.as_str()
        ),
    );
    let builds: Vec<Offer> = toolkit_offers(ctx, toolkit)
        .into_iter()
        .filter(|o| o.cuda.fits(ma, mi))
        .collect();
    match advise(&builds, spec, None) {
        Advice::Install(o) => e.hint(format!(
            "install a {} build (`{}`)",
            toolkit.layout.as_str(),
            printed(ctx, o.install())
        )),
        Advice::Nearest(o) => e
            .cause(format!(
                "the catalog has no {platform} build of cuDNN {spec} for CUDA {ma}.{mi} (NVIDIA published it for other platforms only, or as a wheel pip fetches for its own platform alone)"
            ))
            .hint(format!(
                "the nearest release with a {platform} build is cuDNN {} (`{}`)",
                o.version,
                printed(ctx, o.install())
            )),
        a @ Advice::NotOnGpu { .. } => e.hint(a.hint(&|c| printed(ctx, c))),
        Advice::Nothing => e.hint(format!(
            "no {platform} build of a cuDNN {spec} release for CUDA {ma}.{mi} is in the catalog; `cudnnm list --remote --platform {platform}` lists what there is"
        )),
    }
}

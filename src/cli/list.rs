//! `cudnnm list`: installed releases with version, CUDA variant, platform,
//! size and source; deployed, default and pinned releases marked.

use super::Ctx;
use super::support::ReleaseView;
use crate::command::CommandLine;
use crate::deploy::Deployments;
use crate::error::Result;
use crate::store::{Release, Store};
use crate::version::{CudaVariant, Spec};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Show the catalog instead, installed releases marked
    #[arg(long)]
    pub remote: bool,
    /// Only releases for this CUDA (11.2, 12)
    #[arg(long, value_name = "V")]
    pub cuda: Option<String>,
    /// Only releases for this platform (catalog)
    #[arg(long, value_name = "P")]
    pub platform: Option<String>,
}

/// `cudnnm ls-remote`: `list --remote` under the name nvm and fnm use.
#[derive(clap::Args, Debug)]
pub struct RemoteArgs {
    /// Only releases for this CUDA (11.2, 12)
    #[arg(long, value_name = "V")]
    pub cuda: Option<String>,
    /// Only releases for this platform (or all) [default: this machine's]
    #[arg(long, value_name = "P")]
    pub platform: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let want: Option<CudaVariant> = args.cuda.as_deref().map(str::parse).transpose()?;
    super::support::recover_if_pending(ctx)?;
    super::support::report_partials(ctx);
    let store = Store::new(&ctx.home);
    let (all, broken) = store.scan()?;
    for b in &broken {
        // A broken system release is the administrator's to reinstall.
        let reinstall = CommandLine::install_path("ARCHIVE").force();
        let remove = b
            .release_id()
            .map(|id| CommandLine::uninstall(id.to_string()));
        let system = ctx
            .home
            .system_store_dir()
            .is_some_and(|s| b.dir.starts_with(&s));
        let for_store = |c: CommandLine| {
            if system {
                super::support::on_system(ctx, c, true).sudo()
            } else {
                c
            }
            .for_host(ctx.env.is_windows())
        };
        let remove = match remove {
            Some(c) => format!("remove it with `{}`", for_store(c)),
            None => format!("delete '{}'", b.dir.display()),
        };
        ctx.warn(format!(
            "{} — reinstall it with `{}`, or {remove}",
            b.error,
            for_store(reinstall),
        ));
    }
    let releases: Vec<Release> = all
        .into_iter()
        .filter(|r| {
            want.is_none_or(|w| {
                w.major() == r.cuda().major()
                    && (w.minor().is_none() || w.minor() == r.cuda().minor())
            })
        })
        .collect();
    let deployments = Deployments::load(&ctx.home)?;
    let default_spec: Option<Spec> = ctx.home.config()?.default.and_then(|s| s.parse().ok());
    let newest = |spec: &Spec| {
        releases
            .iter()
            .rev()
            .find(|r| spec.matches(r.version(), r.cuda()))
            .map(|r| r.id())
    };
    let default_id = default_spec.as_ref().and_then(newest);
    // A broken pin file must not break `list`; `current` reports it.
    let pinned_id = crate::pin::resolve_spec(None, &ctx.env, &ctx.home)
        .ok()
        .flatten()
        .filter(|r| matches!(r.source, crate::pin::SpecSource::PinFile { .. }))
        .and_then(|r| newest(&r.spec));
    let views: Vec<ReleaseView> = releases
        .iter()
        .map(|r| {
            let id = r.id();
            let deployed: Vec<String> = deployments
                .toolkits_using(&r.release_id())
                .iter()
                .map(|d| d.toolkit.display().to_string())
                .collect();
            let is_default = default_id.as_deref() == Some(id.as_str());
            let is_pinned = pinned_id.as_deref() == Some(id.as_str());
            ReleaseView::new(r, &deployed, is_default, is_pinned).in_store(&store)
        })
        .collect();
    if ctx.json {
        ctx.out_json(&views);
        return Ok(0);
    }
    if views.is_empty() {
        ctx.status("no cuDNN releases installed; `cudnnm install 9.1` or `cudnnm install ./cudnn-….zip` adds one");
        return Ok(0);
    }
    // The version with `+jit` for a JIT build (whatever folder holds it).
    let shown = |v: &ReleaseView| format!("{}{}", v.version, v.flavour.suffix());
    let w = views
        .iter()
        .map(|v| shown(v).len())
        .max()
        .unwrap_or(7)
        .max(7);
    ctx.out(format!(
        "{:<w$}  {:<5}  {:<14}  {:>10}  {:<6}  SOURCE",
        "VERSION", "CUDA", "PLATFORM", "SIZE", "STORE"
    ));
    for v in &views {
        let mut marks = Vec::new();
        if v.default {
            marks.push("default".to_string());
        }
        if v.pinned {
            marks.push("pinned here".to_string());
        }
        for t in &v.deployed_in {
            marks.push(format!("in {t}"));
        }
        let marks = if marks.is_empty() {
            String::new()
        } else {
            format!("  ({})", marks.join(", "))
        };
        ctx.out(format!(
            "{:<w$}  {:<5}  {:<14}  {:>10}  {:<6}  {}{marks}",
            shown(v),
            v.cuda,
            v.platform,
            indicatif::HumanBytes(v.size).to_string(),
            v.origin.to_string(),
            v.source.url.as_deref().unwrap_or(&v.source.name),
        ));
    }
    Ok(0)
}

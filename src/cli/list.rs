//! `cudnnm list`: installed releases with version, CUDA variant, platform,
//! size and source; deployed, default and pinned releases marked.

use super::Ctx;
use crate::command::CommandLine;
use crate::error::Result;
use crate::ops::list::{self, InstalledRelease};
use crate::store::BrokenRelease;
use crate::version::CudaVariant;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only releases this spec matches (9.12, 8.9.x, >=9.1,<9.11)
    #[arg(value_name = "SPEC")]
    pub spec: Option<String>,
    /// Show the catalog instead, installed releases marked
    #[arg(long)]
    pub remote: bool,
    /// Only releases for this CUDA (11.2, 12)
    #[arg(long, value_name = "V")]
    pub cuda: Option<String>,
    /// Only releases for this platform (catalog)
    #[arg(long, value_name = "P")]
    pub platform: Option<String>,
    /// Check the catalog's wheels against this package index (with --remote)
    /// [default: env CUDNNM_INDEX_URL, else `index_url` in config.toml, else pip's index-url]
    #[arg(long, value_name = "URL", requires = "remote")]
    pub index_url: Option<String>,
}

/// `cudnnm ls-remote`: `list --remote` under the name nvm and fnm use.
#[derive(clap::Args, Debug)]
pub struct RemoteArgs {
    /// Only releases this spec matches (9.12, 8.9.x, >=9.1,<9.11)
    #[arg(value_name = "SPEC")]
    pub spec: Option<String>,
    /// Only releases for this CUDA (11.2, 12)
    #[arg(long, value_name = "V")]
    pub cuda: Option<String>,
    /// Only releases for this platform (or all) [default: this machine's]
    #[arg(long, value_name = "P")]
    pub platform: Option<String>,
    /// Check the catalog's wheels against this package index
    /// [default: env CUDNNM_INDEX_URL, else `index_url` in config.toml, else pip's index-url]
    #[arg(long, value_name = "URL")]
    pub index_url: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let want: Option<CudaVariant> = args.cuda.as_deref().map(str::parse).transpose()?;
    let spec: Option<crate::version::Spec> = args.spec.as_deref().map(str::parse).transpose()?;
    let mut listing = list::installed(&ctx.ops(), want.as_ref())?;
    if let Some(s) = &spec {
        listing.retain_matching(s);
    }
    super::support::report_partials(ctx);
    for b in &listing.broken {
        warn_broken(ctx, b);
    }
    if ctx.json {
        ctx.out_json(&listing.releases);
        return Ok(0);
    }
    if listing.releases.is_empty()
        && let Some(s) = &spec
    {
        ctx.status(format!(
            "no installed cuDNN release matches {s}; `cudnnm list --remote {s}` shows the catalog's"
        ));
        return Ok(0);
    }
    if listing.releases.is_empty() {
        match &want {
            Some(w) => ctx.status(format!(
                "none for CUDA {w}: no installed cuDNN release is built for it{}",
                match list::installed(&ctx.ops(), None) {
                    Ok(all) if !all.releases.is_empty() => format!(
                        " (installed: {}; `cudnnm list --remote --cuda {w}` shows the catalog's)",
                        all.releases
                            .iter()
                            .map(|r| r.id.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    _ => format!("; `cudnnm list --remote --cuda {w}` shows the catalog's"),
                }
            )),
            None => ctx.status("no cuDNN releases installed; `cudnnm install 9.1` or `cudnnm install ./cudnn-….zip` adds one"),
        }
        return Ok(0);
    }
    for line in table(&listing.releases) {
        ctx.out(line);
    }
    Ok(0)
}

/// A store folder whose receipt cannot be read, and how to reinstall or
/// remove it (a broken system release is the administrator's).
fn warn_broken(ctx: &Ctx, b: &BrokenRelease) {
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

/// The listing's lines: a header, then one release a line with what marks it.
fn table(views: &[InstalledRelease]) -> Vec<String> {
    // The version with `+jit` for a JIT build (whatever folder holds it).
    let shown = |v: &InstalledRelease| format!("{}{}", v.version, v.flavour.suffix());
    let w = views
        .iter()
        .map(|v| shown(v).len())
        .max()
        .unwrap_or(7)
        .max(7);
    let mut lines = vec![format!(
        "{:<w$}  {:<5}  {:<14}  {:>10}  {:<6}  SOURCE",
        "VERSION", "CUDA", "PLATFORM", "SIZE", "STORE"
    )];
    for v in views {
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
        lines.push(format!(
            "{:<w$}  {:<5}  {:<14}  {:>10}  {:<6}  {}{marks}",
            shown(v),
            v.cuda,
            v.platform,
            indicatif::HumanBytes(v.size).to_string(),
            v.origin.to_string(),
            if v.source.from.is_local() {
                v.source.name.clone()
            } else {
                v.source.from.to_string()
            },
        ));
    }
    lines
}

//! `cudnnm self update [--base URL]`: replace this binary with the newest
//! release (the logic is in [`crate::selfupdate`]). In a build for a package
//! manager it only says how to update through that package manager.

use clap::Subcommand;

use super::Ctx;
use crate::error::{Error, Result};
use crate::selfupdate;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand, Debug)]
enum Action {
    /// Download the newest cudnnm release, check its SHA-256, and replace this binary
    Update {
        /// The release folder: a URL or a local folder holding SHA256SUMS
        /// [default: env CUDNNM_INSTALL_BASE, else the project's latest GitHub release]
        #[arg(long, value_name = "URL")]
        base: Option<String>,
    },
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let Action::Update { base } = args.action;
    let (base, trust) = selfupdate::base(&ctx.env, base);
    if selfupdate::unauthenticated(&base) {
        ctx.warn(format!(
            "{base} is plain HTTP: its {} comes over the same channel as the binary, so nothing authenticates the download (use an https:// base or a local folder you trust)",
            selfupdate::SUMS_FILE
        ));
    }
    update(ctx, &base, trust)
}

#[cfg(feature = "self-update")]
fn update(ctx: &Ctx, base: &str, trust: selfupdate::Trust) -> Result<u8> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::msg("could not find the running cudnnm binary").cause(e))?;
    ctx.status(format!("checking {base} for a newer cudnnm"));
    let outcome = selfupdate::update(&ctx.env, base, trust, &exe, env!("CARGO_PKG_VERSION"))?;
    if ctx.json {
        ctx.out_json(&outcome);
    }
    if outcome.updated {
        ctx.status(format!(
            "cudnnm {} → {} in '{}'",
            outcome.from,
            outcome.to,
            outcome.path.display()
        ));
    } else {
        ctx.status(format!(
            "cudnnm {} is up to date (newest release: {})",
            outcome.from, outcome.to
        ));
    }
    Ok(0)
}

#[cfg(not(feature = "self-update"))]
fn update(_ctx: &Ctx, _base: &str, _trust: selfupdate::Trust) -> Result<u8> {
    Err(Error::new(
        crate::error::Kind::Usage,
        "self update is turned off in this build of cudnnm",
    )
    .hint(selfupdate::disabled_hint()))
}

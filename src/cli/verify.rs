//! `cudnnm verify`: re-hash the store and the deployments against their
//! records. Exit 0 when everything matches, 7 (unhealthy) otherwise.

use std::path::PathBuf;

use super::Ctx;
use crate::catalog::Catalog;
use crate::error::{Kind, Result};
use crate::libcudnn;
use crate::verify;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Do not load the deployed libraries to compare their reported version
    #[arg(long)]
    pub no_load: bool,
}

/// Runs the command; returns the exit code (0 healthy, 7 problems found).
pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    super::support::recover_if_pending(ctx)?;
    super::support::report_partials(ctx);
    let exe = std::env::current_exe().ok();
    let env = &ctx.env;
    let children = |paths: &[PathBuf]| {
        let loaded = match &exe {
            Some(e) => libcudnn::query_in_children(e, env, paths),
            None => libcudnn::query_in_process(paths),
        };
        loaded.into_iter().map(|r| r.map(|l| l.version)).collect()
    };
    let catalog = Catalog::load(&ctx.home).unwrap_or_else(|e| {
        ctx.warn(format!(
            "catalog: {e}; reinstall suggestions name no release"
        ));
        Catalog::default()
    });
    let progress = ctx.progress();
    let report = verify::verify(
        &ctx.home,
        &catalog,
        (!args.no_load).then_some(&children as verify::LoadVersions),
        &*progress,
    )?;
    if ctx.json {
        ctx.out_json(&report);
    } else {
        ctx.out(verify::text(&report).trim_end());
    }
    Ok(if report.healthy {
        0
    } else {
        Kind::Unhealthy.exit_code()
    })
}

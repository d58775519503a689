//! What several commands share, so that command files never import each
//! other: how operations' events and toolkit states read (`events`,
//! `views`), the commands printed in hints (`hints`), `--for` and how the
//! frameworks' events read (`frameworks`), status lines about
//! backups and the store (`report`), sizes and tables (`text`), and the
//! arguments `export lmod` and `export tcl` share. Decisions live in
//! [`crate::ops`]; what is here renders them.

mod events;
mod frameworks;
mod hints;
mod report;
mod text;
mod views;

use std::path::PathBuf;

pub use frameworks::{ForArgs, advised_line};
pub use hints::{for_this_store, on_system, printed};
pub use report::{
    msg_label, report_not_from_a_release, report_partials, report_pruned, warn_foreign,
    warn_unknown_settings,
};
pub use text::{human_size, table};
pub use views::{toolkit_state, unfinished_line};

use super::Ctx;
use crate::deploy::Deployments;
use crate::deploy::Recovered;
use crate::error::Result;
use crate::toolkit::Toolkit;

/// Takes the home lock and starts the guard every change goes through:
/// what a crash left is finished or undone first, each said.
pub fn guard(ctx: &Ctx) -> Result<crate::deploy::Guard<'_>> {
    ctx.ops().guard()
}

/// For read-only commands: when a journal exists, wait for the lock (the
/// change may still be running) and recover; otherwise touch nothing.
pub fn recover_if_pending(ctx: &Ctx) -> Result<Vec<Recovered>> {
    ctx.ops().recover_if_pending()
}

/// Every toolkit worth showing ([`crate::ops::toolkits::known`]), a
/// record whose folder is no toolkit any more warned about.
pub fn known_toolkits(ctx: &Ctx, deployments: &Deployments) -> Vec<Toolkit> {
    crate::ops::toolkits::known(&ctx.ops(), deployments)
}

/// The arguments of `export lmod` and `export tcl`.
#[derive(clap::Args, Debug)]
pub struct ModuleArgs {
    /// The modulepath folder; modulefiles go to DIR/cudnn/
    pub dir: PathBuf,
    /// Export the system store's releases (and default) instead of your own
    #[arg(long)]
    pub system: bool,
    /// The site's CUDA module, loaded before cuDNN's: a template with
    /// {major}, {minor}, {variant} (e.g. cuda/{major}.{minor})
    #[arg(long, value_name = "TEMPLATE")]
    pub cuda_module: Option<String>,
}

/// `export lmod` / `export tcl`: the modulefiles written
/// ([`crate::ops::export::modules`]), said as each is written, removed and
/// kept, or as JSON.
pub fn export_modules(
    ctx: &Ctx,
    engine: crate::modulefile::Engine,
    args: ModuleArgs,
) -> Result<u8> {
    let req = crate::ops::export::ModulesRequest {
        engine,
        dir: args.dir,
        system: args.system,
        cuda_module: args.cuda_module,
    };
    let report = crate::ops::export::modules(&ctx.ops(), &req)?;
    if ctx.json {
        ctx.out_json(&report);
        return Ok(0);
    }
    for p in &report.written {
        ctx.out(format!("wrote {p}"));
    }
    for p in &report.removed {
        ctx.out(format!("removed {p}"));
    }
    ctx.status(format!(
        "{} cuDNN modulefile{} in '{}' ({} written, {} unchanged, {} removed){}; use them with `module use {}`",
        report.modules,
        if report.modules == 1 { "" } else { "s" },
        report.dir,
        report.written.len(),
        report.unchanged.len(),
        report.removed.len(),
        report
            .default
            .as_ref()
            .map(|d| format!(", default {d}"))
            .unwrap_or_default(),
        report.modulepath.display()
    ));
    match &report.remembered {
        Ok(()) => ctx.status(
            "they are refreshed whenever that store changes (install, uninstall, default)",
        ),
        Err(why) => ctx.warn(format!(
            "could not remember this folder to refresh it ({why}): after each install, uninstall or default change, run `{}`",
            printed(
                ctx,
                crate::ops::export::Remembered {
                    engine,
                    dir: report.modulepath.clone(),
                    cuda_module: req.cuda_module.clone(),
                }
                .command(req.system)
            )
        )),
    }
    Ok(0)
}

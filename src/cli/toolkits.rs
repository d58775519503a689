//! `cudnnm toolkits`: the CUDA toolkits found (`CUDA_PATH`, `CUDA_HOME`,
//! `CUDA_PATH_VX_Y`, `nvcc` on PATH, default folders) plus those cudnnm has
//! deployed into, with their CUDA version, layout, how each was found, and
//! the cuDNN each holds. `cudnnm toolkits forget ROOT`: drops the record of
//! a toolkit whose folder is gone (deleted or moved); its backups stay.

use std::path::{Path, PathBuf};

use super::Ctx;
use super::support::{toolkit_state, unfinished_line};
use crate::error::Result;
use crate::ops::toolkits;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub action: Option<Action>,
}

#[derive(clap::Subcommand, Debug)]
pub enum Action {
    /// Forget a toolkit whose folder is gone: drop its deployment record
    /// (its backups stay, with your files)
    Forget {
        /// The toolkit root as cudnnm recorded it (`cudnnm verify` names it)
        #[arg(value_name = "ROOT")]
        root: PathBuf,
    },
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    if let Some(Action::Forget { root }) = args.action {
        return forget(ctx, &root);
    }
    let views = toolkits::states(&ctx.ops())?;
    if ctx.json {
        ctx.out_json(&views);
        return Ok(0);
    }
    if views.is_empty() {
        ctx.status(
            "no CUDA toolkits found; set CUDA_PATH or CUDA_HOME, or pass --cuda-root PATH to `use`",
        );
    }
    for v in &views {
        ctx.out(format!(
            "'{}'  CUDA {}  {} layout  found by {}: {}",
            v.root.display(),
            v.cuda,
            v.layout.as_str(),
            v.found_by,
            toolkit_state(v)
        ));
        if let Some(u) = &v.unfinished_change {
            ctx.out(unfinished_line(u));
        }
    }
    Ok(0)
}

/// `toolkits forget ROOT` ([`toolkits::forget`]): says what was forgotten
/// and which backups stay.
fn forget(ctx: &Ctx, root: &Path) -> Result<u8> {
    let done = toolkits::forget(&ctx.ops(), root)?;
    if ctx.json {
        ctx.out_json(&done);
    }
    let ids = &done.backups;
    let kept = match ids.as_slice() {
        [] => "no backup of it was kept".to_string(),
        ids => format!(
            "backup{} {} of it stay{} (`cudnnm backups` lists {}; `cudnnm backups remove ID --force` deletes one)",
            if ids.len() == 1 { "" } else { "s" },
            ids.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            if ids.len() == 1 { "s" } else { "" },
            if ids.len() == 1 { "it" } else { "them" }
        ),
    };
    ctx.status(format!(
        "forgot the toolkit '{}' (its folder is gone): cuDNN {} is no longer recorded there; {kept}",
        done.toolkit.display(),
        done.release
    ));
    Ok(0)
}

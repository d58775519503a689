//! `cudnnm toolkits`: the CUDA toolkits found (`CUDA_PATH`, `CUDA_HOME`,
//! `CUDA_PATH_VX_Y`, `nvcc` on PATH, default folders) plus those cudnnm has
//! deployed into, with their CUDA version, layout, how each was found, and
//! the cuDNN each holds. `cudnnm toolkits forget ROOT`: drops the record of
//! a toolkit whose folder is gone (deleted or moved); its backups stay.

use std::path::PathBuf;

use serde::Serialize;

use super::Ctx;
use super::support::{ToolkitView, guard, known_toolkits, recover_if_pending};
use crate::command::CommandLine;
use crate::deploy::{Deployments, backup};
use crate::error::{Error, Kind, Result};
use crate::store::Store;

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

/// What `toolkits forget --json` prints.
#[derive(Serialize)]
struct Forgotten {
    toolkit: PathBuf,
    /// The release recorded there.
    release: String,
    /// The backups of it, which stay.
    backups: Vec<u64>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    if let Some(Action::Forget { root }) = args.action {
        return forget(ctx, root);
    }
    recover_if_pending(ctx)?;
    let deployments = Deployments::load(&ctx.home)?;
    let store = Store::new(&ctx.home);
    let views: Vec<ToolkitView> = known_toolkits(ctx, &deployments)
        .iter()
        .map(|t| ToolkitView::new(ctx, t, &deployments, &store))
        .collect();
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
            v.state()
        ));
        if let Some(u) = &v.unfinished_change {
            ctx.out(u.line());
        }
    }
    Ok(0)
}

/// `toolkits forget ROOT`: only a toolkit whose folder is gone, under the
/// home lock; its deployment record goes, its backups stay.
fn forget(ctx: &Ctx, root: PathBuf) -> Result<u8> {
    let root = if root.is_absolute() {
        root
    } else {
        ctx.env.cwd().join(root)
    };
    let guard = guard(ctx)?;
    let deployments = Deployments::load(&ctx.home)?;
    let Some(dep) = deployments.for_toolkit(&root).cloned() else {
        let recorded: Vec<String> = deployments
            .entries
            .iter()
            .map(|d| format!("'{}'", d.toolkit.display()))
            .collect();
        return Err(Error::new(
            Kind::NotFound,
            format!(
                "this home has no deployment recorded in '{}'",
                root.display()
            ),
        )
        .hint(if recorded.is_empty() {
            "this home records no deployment; nothing to forget".to_string()
        } else {
            format!(
                "name a toolkit root as recorded ({}); `cudnnm toolkits` lists them",
                recorded.join(", ")
            )
        }));
    };
    let ids: Vec<u64> = backup::for_toolkit(&ctx.home, &root)?
        .iter()
        .map(|b| b.record.id)
        .collect();
    if !crate::toolkit::is_gone(&root) {
        let hint = match ids.first() {
            Some(first) => format!(
                "cudnnm forgets only a toolkit whose folder is gone; to take this home's cuDNN out of it, restore what was there before cudnnm: `{}`",
                super::support::printed(ctx, CommandLine::rollback().to_backup(*first))
            ),
            None => format!(
                "cudnnm forgets only a toolkit whose folder is gone; `{}` shows what it holds",
                super::support::printed(ctx, CommandLine::current().cuda_root(&root))
            ),
        };
        return Err(Error::new(
            Kind::Conflict,
            format!(
                "the toolkit '{}' still exists, with cuDNN {} deployed by this home",
                root.display(),
                dep.release
            ),
        )
        .hint(hint));
    }
    guard.forget_toolkit(&root)?;
    if ctx.json {
        ctx.out_json(&Forgotten {
            toolkit: root.clone(),
            release: dep.release.to_string(),
            backups: ids.clone(),
        });
    }
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
        root.display(),
        dep.release
    ));
    Ok(0)
}

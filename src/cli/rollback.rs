//! `cudnnm rollback [--to ID] [--cuda-root P | --cuda X.Y]`: restore a
//! toolkit's cuDNN files from a backup — by default the newest backup of the
//! toolkit, i.e. the state before the last change. It is a transaction like
//! `use`: the files it replaces go into a new backup, so a rollback can
//! itself be rolled back. The decisions are [`crate::ops::rollback`]; this
//! file says what changed, or prints it as JSON.

use super::Ctx;
use super::support::{msg_label, report_not_from_a_release, report_pruned};
use crate::error::Result;
use crate::ops::rollback::{self, Request};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Restore this backup instead of the last change
    #[arg(long, value_name = "ID")]
    pub to: Option<String>,
    /// The CUDA toolkit root
    #[arg(long, value_name = "PATH", conflicts_with = "cuda")]
    pub cuda_root: Option<std::path::PathBuf>,
    /// The CUDA toolkit version (X.Y, or a major such as 12 when one 12.x
    /// toolkit is found or known)
    #[arg(long, value_name = "X.Y")]
    pub cuda: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let req = Request {
        to: args.to,
        cuda_root: args.cuda_root,
        cuda: args.cuda,
    };
    let done = rollback::rollback(&ctx.ops(), &req)?;
    let how = match &done.mode {
        Some(m) => format!("{m}, "),
        None => String::new(),
    };
    ctx.status(format!(
        "cuDNN {} → {} in '{}' (restored backup {}; {how}backup {} holds what was replaced)",
        msg_label(&done.from),
        msg_label(&done.to),
        done.toolkit.display(),
        done.restored_backup,
        done.backup
    ));
    report_not_from_a_release(ctx, done.backup, &done.not_from_a_release);
    report_pruned(ctx, &done.pruned);
    if ctx.json {
        ctx.out_json(&done);
    }
    Ok(0)
}

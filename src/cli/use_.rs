//! `cudnnm use [SPEC] [--cuda-root P | --cuda X.Y] [--mode M] [--force]`:
//! deploy a release into a CUDA toolkit as one journaled transaction
//! ([`crate::ops::use_`], `docs/architecture.md#deploying`), said as what
//! changed or as JSON.

use super::Ctx;
use super::support::{msg_label, report_not_from_a_release, report_pruned};
use crate::error::Result;
use crate::ops::use_::{self, Request};

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

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let req = Request {
        spec: args.spec,
        cuda_root: args.cuda_root,
        cuda: args.cuda,
        mode: args.mode,
        force: args.force,
        for_: args.for_.request()?,
    };
    let used = use_::use_release(&ctx.ops(), &req)?;
    let root = used.toolkit.display();
    if used.changed {
        ctx.status(format!(
            "cuDNN {} → {} in '{root}' ({}, backup {})",
            msg_label(&used.from),
            msg_label(&used.to),
            used.mode,
            used.backup.unwrap_or_default()
        ));
        if let Some(id) = used.backup {
            report_not_from_a_release(ctx, id, &used.not_from_a_release);
        }
        report_pruned(ctx, &used.pruned);
    } else {
        ctx.status(format!(
            "cuDNN {} is already active in '{root}' ({}); nothing changed",
            used.from, used.mode
        ));
    }
    if ctx.json {
        ctx.out_json(&used);
    }
    Ok(0)
}

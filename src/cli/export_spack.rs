//! `cudnnm export spack [--system]`: prints a Spack `packages.yaml` block
//! naming each release as an external `cudnn` that Spack does not build, so
//! Spack builds link the very bytes cudnnm installed. With `--json`, the
//! same block as JSON (which Spack reads as YAML too).

use super::Ctx;
use crate::error::Result;
use crate::modulefile;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The system store's releases instead of your own
    #[arg(long)]
    pub system: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let (_, _, modules) = crate::ops::export::releases(&ctx.ops(), args.system)?;
    if modules.is_empty() {
        ctx.warn("no cuDNN releases to export; the block lists none");
    }
    if ctx.json {
        ctx.out_json(&modulefile::SpackPackages::of(&modules));
    } else {
        ctx.out(modulefile::spack_packages(&modules).trim_end());
    }
    Ok(0)
}

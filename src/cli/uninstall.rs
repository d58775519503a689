//! `cudnnm uninstall`.

use super::{Ctx, not_yet};
use crate::error::Result;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The release to remove (8.1.0.77, 8.9.7.29_cuda12, or a prefix matching one release)
    pub spec: String,
    /// Remove it even while deployed in a toolkit
    #[arg(long)]
    pub force: bool,
}

pub fn run(_ctx: &Ctx, _args: Args) -> Result<u8> {
    Err(not_yet("uninstall", 2))
}

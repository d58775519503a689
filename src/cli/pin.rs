//! `cudnnm pin`.

use super::{Ctx, not_yet};
use crate::error::Result;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The release to pin (8.1.0.77, 8.1, 8.9.7.29_cuda12)
    pub spec: String,
    /// Pin even if no installed release matches yet
    #[arg(long)]
    pub force: bool,
}

pub fn run(_ctx: &Ctx, _args: Args) -> Result<u8> {
    Err(not_yet("pin", 4))
}

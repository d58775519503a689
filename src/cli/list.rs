//! `cudnnm list`.

use super::{Ctx, not_yet};
use crate::error::Result;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Show the catalog instead, installed releases marked
    #[arg(long)]
    pub remote: bool,
    /// Only releases for this CUDA (11.2, 12)
    #[arg(long, value_name = "V")]
    pub cuda: Option<String>,
    /// Only releases for this platform (catalog)
    #[arg(long, value_name = "P")]
    pub platform: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    if args.remote {
        return super::list_remote::run(ctx, &args);
    }
    Err(not_yet("list", 2))
}

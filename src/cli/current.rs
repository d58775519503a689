//! `cudnnm current`.

use super::{Ctx, not_yet};
use crate::error::Result;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only this CUDA toolkit root
    #[arg(long, value_name = "PATH")]
    pub cuda_root: Option<std::path::PathBuf>,
    /// The release spec to resolve instead of the pin
    #[arg(long, value_name = "SPEC")]
    pub version: Option<String>,
}

pub fn run(_ctx: &Ctx, _args: Args) -> Result<u8> {
    Err(not_yet("current", 3))
}

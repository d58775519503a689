//! `cudnnm rollback`.

use super::{Ctx, not_yet};
use crate::error::Result;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Restore this backup instead of the last change
    #[arg(long, value_name = "ID")]
    pub to: Option<String>,
    /// The CUDA toolkit root
    #[arg(long, value_name = "PATH", conflicts_with = "cuda")]
    pub cuda_root: Option<std::path::PathBuf>,
    /// The CUDA toolkit version
    #[arg(long, value_name = "X.Y")]
    pub cuda: Option<String>,
}

pub fn run(_ctx: &Ctx, _args: Args) -> Result<u8> {
    Err(not_yet("rollback", 3))
}

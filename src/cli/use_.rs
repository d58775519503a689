//! `cudnnm use`.

use super::{Ctx, not_yet};
use crate::error::Result;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Release to deploy (8.1.0.77, 8.1, 8.9.7.29_cuda12); default: the pinned release
    pub spec: Option<String>,
    /// The CUDA toolkit root to deploy into
    #[arg(long, value_name = "PATH", conflicts_with = "cuda")]
    pub cuda_root: Option<std::path::PathBuf>,
    /// The CUDA toolkit version to deploy into (found in the default folders)
    #[arg(long, value_name = "X.Y")]
    pub cuda: Option<String>,
    /// How to place files: auto, symlink, hardlink or copy
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
    /// Deploy even if the release does not fit the toolkit's CUDA
    #[arg(long)]
    pub force: bool,
}

pub fn run(_ctx: &Ctx, _args: Args) -> Result<u8> {
    Err(not_yet("use", 3))
}

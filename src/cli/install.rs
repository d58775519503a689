//! `cudnnm install`.

use super::{Ctx, not_yet};
use crate::error::Result;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A catalog version (8.1.0.77, 9.1), a local archive or folder, or pip:REQUIREMENT
    #[arg(value_name = "SPEC|PATH|pip:REQ")]
    pub what: String,
    /// The CUDA the release is built for, when its name does not say (11.2, 12)
    #[arg(long, value_name = "V")]
    pub cuda: Option<String>,
    /// The expected SHA-256 of the archive
    #[arg(long, value_name = "HEX")]
    pub sha256: Option<String>,
    /// Reinstall, or import despite a name/header version disagreement
    #[arg(long)]
    pub force: bool,
    /// Platform to download for (catalog installs) [default: this machine's]
    #[arg(long, value_name = "P")]
    pub platform: Option<String>,
    /// Base URL replacing NVIDIA's download server
    #[arg(long, value_name = "URL", env = "CUDNNM_MIRROR")]
    pub mirror: Option<String>,
    /// Install a catalog archive that has no published SHA-256 without checking it
    #[arg(long)]
    pub allow_unverified: bool,
}

pub fn run(_ctx: &Ctx, _args: Args) -> Result<u8> {
    Err(not_yet("install", 2))
}

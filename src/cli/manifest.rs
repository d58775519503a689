//! `cudnnm manifest`.

use super::{Ctx, not_yet};
use crate::error::Result;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
}

#[derive(clap::Subcommand, Debug)]
pub enum Sub {
    /// Read NVIDIA's redistrib_*.json index and write the user catalog
    Refresh {
        /// A redistrib_*.json URL or file (repeatable) [default: the configured base URL]
        #[arg(long, value_name = "URL|FILE")]
        from: Vec<String>,
    },
}

pub fn run(_ctx: &Ctx, _args: Args) -> Result<u8> {
    Err(not_yet("manifest", 5))
}

//! `cudnnm doctor`.

use super::{Ctx, not_yet};
use crate::error::Result;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Write a record of the environment and the findings to FILE
    #[arg(long, value_name = "FILE")]
    pub report: Option<std::path::PathBuf>,
    /// Apply the safe, reversible fixes and say what was done
    #[arg(long)]
    pub fix: bool,
}

pub fn run(_ctx: &Ctx, _args: Args) -> Result<u8> {
    Err(not_yet("doctor", 6))
}

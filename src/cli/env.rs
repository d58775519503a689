//! `cudnnm env`.

use super::{Ctx, not_yet};
use crate::error::Result;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Shell to print for: bash, zsh, fish, powershell or cmd [default: detected]
    #[arg(long, value_name = "SHELL")]
    pub shell: Option<String>,
    /// Also print the hook that re-resolves the release on every change of folder
    #[arg(long)]
    pub use_on_cd: bool,
}

pub fn run(_ctx: &Ctx, _args: Args) -> Result<u8> {
    Err(not_yet("env", 4))
}

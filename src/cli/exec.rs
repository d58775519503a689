//! `cudnnm exec`.

use super::{Ctx, not_yet};
use crate::error::Result;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The release to activate instead of the pinned one
    #[arg(long, value_name = "SPEC")]
    pub version: Option<String>,
    /// The command to run and its arguments
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    pub command: Vec<std::ffi::OsString>,
}

pub fn run(_ctx: &Ctx, _args: Args) -> Result<u8> {
    Err(not_yet("exec", 4))
}

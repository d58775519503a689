//! `cudnnm default`.

use super::{Ctx, not_yet};
use crate::error::Result;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The release to make the default; without it, print the default
    pub spec: Option<String>,
}

pub fn run(_ctx: &Ctx, _args: Args) -> Result<u8> {
    Err(not_yet("default", 4))
}

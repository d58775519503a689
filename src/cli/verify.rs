//! `cudnnm verify`.

use super::{Ctx, not_yet};
use crate::error::Result;

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_ctx: &Ctx, _args: Args) -> Result<u8> {
    Err(not_yet("verify", 6))
}

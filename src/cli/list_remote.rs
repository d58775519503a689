//! `cudnnm list --remote`: the catalog, with installed releases marked.

use super::{Ctx, list, not_yet};
use crate::error::Result;

pub fn run(_ctx: &Ctx, _args: &list::Args) -> Result<u8> {
    Err(not_yet("list --remote", 5))
}

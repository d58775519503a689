//! `cudnnm export lmod DIR [--system] [--cuda-module TEMPLATE]`: one
//! Lmod (Lua) modulefile per release in `DIR/cudnn/`, the default
//! version as a `default` symlink; re-running is idempotent and removes only
//! the files an earlier export wrote for releases that are gone.

use super::Ctx;
use super::support::{ModuleArgs, export_modules};
use crate::error::Result;
use crate::modulefile::Engine;

pub fn run(ctx: &Ctx, args: ModuleArgs) -> Result<u8> {
    export_modules(ctx, Engine::Lmod, args)
}

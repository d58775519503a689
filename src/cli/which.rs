//! `cudnnm which [--version SPEC]`: the path of the main library of the
//! release that applies here (`lib/libcudnn.so.9`, `bin\cudnn64_9.dll`),
//! as `rustup which` and `nvm which` print the tool that would run. The
//! release comes from the pin (`docs/architecture.md#pins`).

use super::Ctx;
use crate::error::Result;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The release to look up instead of the pinned one
    #[arg(long, value_name = "SPEC")]
    pub version: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let found = crate::ops::which::which(&ctx.ops(), args.version.as_deref())?;
    ctx.status(format!("cuDNN {} ({})", found.label, found.source.label()));
    if ctx.json {
        ctx.out_json(&found);
    } else {
        ctx.out(found.library.display());
    }
    Ok(0)
}

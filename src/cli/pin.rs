//! `cudnnm pin SPEC`: writes `.cudnn-version` in the working folder, after
//! checking that an installed release satisfies SPEC (`--force` pins one not
//! installed yet). An existing pin's comments are kept.

use super::Ctx;
use crate::command::CommandLine;
use crate::env;
use crate::error::Result;
use crate::version::Spec;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The release to pin (8.1.0.77, 8.1, 8.9.7.29_cuda12)
    pub spec: String,
    /// Pin even if no installed release matches yet
    #[arg(long)]
    pub force: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let spec: Spec = args.spec.parse()?;
    let pinned = crate::ops::pin::pin(&ctx.ops(), &spec, args.force)?;
    if ctx.json {
        ctx.out_json(&pinned);
    }
    let path = &pinned.path;
    match &pinned.release {
        Some(id) => ctx.status(format!("pinned cuDNN {spec} in '{path}' (uses {id})")),
        // What installs it, by the rule every install hint follows.
        None => ctx.status(
            match crate::ops::offers::install_advice(&ctx.ops(), &spec, CommandLine::pin) {
                (_, Some(cmd)) => {
                    format!("pinned cuDNN {spec} in '{path}' (not installed yet: `{cmd}`)")
                }
                (words, None) => {
                    format!("pinned cuDNN {spec} in '{path}' (not installed yet; {words})")
                }
            },
        ),
    }
    if let Some(v) = &pinned.overridden_by {
        ctx.warn(format!(
            "{}={v} is set here and takes precedence over the pin",
            env::CUDNNM_VERSION
        ));
    }
    Ok(0)
}

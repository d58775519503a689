//! `cudnnm pin SPEC` (or `--for python`: the release the frameworks there
//! choose): writes `.cudnn-version` in the working folder, after checking
//! that an installed release satisfies SPEC (`--force` pins one not
//! installed yet), said as the pin and the release it selects, or as JSON
//! ([`crate::ops::pin`]).

use super::Ctx;
use crate::command::CommandLine;
use crate::env;
use crate::error::Result;
use crate::version::Spec;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The release to pin (8.1.0.77, 8.1, 8.9.7.29_cuda12)
    #[arg(required_unless_present = "for_", conflicts_with = "for_")]
    pub spec: Option<String>,
    #[command(flatten)]
    pub for_: super::support::ForArgs,
    /// Pin even if no installed release matches yet
    #[arg(long)]
    pub force: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let pinned = match (args.for_.request()?, &args.spec) {
        (Some(f), _) => crate::ops::pin::pin_for(&ctx.ops(), &f, args.force)?,
        (None, spec) => {
            let spec: Spec = spec.as_deref().unwrap_or_default().parse()?;
            crate::ops::pin::pin(&ctx.ops(), &spec, args.force)?
        }
    };
    let spec = &pinned.spec;
    if ctx.json {
        ctx.out_json(&pinned);
    }
    let path = &pinned.path;
    match &pinned.release {
        Some(id) => ctx.status(format!("pinned cuDNN {spec} in '{path}' (uses {id})")),
        // What installs it, by the rule every install hint follows.
        None => ctx.status(
            match crate::ops::offers::install_advice(&ctx.ops(), spec, CommandLine::pin) {
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

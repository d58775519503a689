//! `cudnnm pin SPEC`: writes `.cudnn-version` in the working folder, after
//! checking that an installed release satisfies SPEC (`--force` pins one not
//! installed yet). An existing pin's comments are kept.

use std::fs;

use serde::Serialize;

use super::Ctx;
use crate::command::CommandLine;
use crate::env;
use crate::error::{Error, IoResultExt, Kind, Result};
use crate::fsops;
use crate::pin::{self, PIN_FILE};
use crate::store::Store;
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

#[derive(Serialize)]
struct Report {
    path: String,
    spec: String,
    release: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let text = match super::support::release_for(ctx, &args.for_, None)? {
        Some(pick) => pick.id.to_string(),
        None => args.spec.clone().unwrap_or_default(),
    };
    let spec: Spec = text.parse()?;
    let release = Store::new(&ctx.home).newest_matching(&spec)?;
    // What installs it, by the rule every install hint follows.
    let advice = || super::support::install_advice(ctx, &spec, CommandLine::pin);
    if release.is_none() && !args.force {
        let host = |c: CommandLine| c.for_host(ctx.env.is_windows());
        let pin_anyway = host(CommandLine::pin(spec.to_string()).force());
        return Err(
            Error::new(Kind::NotFound, format!("no installed cuDNN matches {spec}")).hint(
                match advice() {
                    (_, Some(cmd)) => {
                        format!(
                            "install it first with `{cmd}`, or pin it anyway with `{pin_anyway}`"
                        )
                    }
                    (words, None) => format!("{words}; or pin it anyway with `{pin_anyway}`"),
                },
            ),
        );
    }
    let path = ctx.env.cwd().join(PIN_FILE);
    let existing = match fs::symlink_metadata(&path) {
        Ok(m) if m.is_dir() => {
            return Err(Error::new(
                Kind::Conflict,
                format!(
                    "could not write the pin '{}': a folder has that name",
                    path.display()
                ),
            )
            .hint("move the folder aside, then run `cudnnm pin` again"));
        }
        Ok(_) => Some(fs::read(&path).with_path("read", &path)?),
        Err(_) => None,
    };
    fsops::write_atomic(
        &path,
        pin::pin_file_text(&spec, existing.as_deref()).as_bytes(),
    )
    .map_err(|e| match e.unwritable_path() {
        // A folder the user may not write to: a pin without a file.
        Some(dir) => {
            let hint = format!(
                "pin writes '{PIN_FILE}' in the working folder, and '{}' is not yours to write: run it in a folder you may write to, or choose the release per process without a file (`CUDNNM_VERSION={spec}`, or `cudnnm exec --version {spec} -- COMMAND`)",
                dir.display()
            );
            e.hint(hint)
        }
        None => e,
    })?;
    let id = release.as_ref().map(|r| r.id());
    if ctx.json {
        ctx.out_json(&Report {
            path: path.display().to_string(),
            spec: spec.to_string(),
            release: id.clone(),
        });
    }
    match &id {
        Some(id) => ctx.status(format!(
            "pinned cuDNN {spec} in '{}' (uses {id})",
            path.display()
        )),
        None => ctx.status(match advice() {
            (_, Some(cmd)) => format!(
                "pinned cuDNN {spec} in '{}' (not installed yet: `{cmd}`)",
                path.display()
            ),
            (words, None) => format!(
                "pinned cuDNN {spec} in '{}' (not installed yet; {words})",
                path.display()
            ),
        }),
    }
    if let Some(v) = ctx.env.var(env::CUDNNM_VERSION) {
        ctx.warn(format!(
            "{}={v} is set here and takes precedence over the pin",
            env::CUDNNM_VERSION
        ));
    }
    Ok(0)
}

//! `cudnnm default [SPEC]`: sets (or shows) the release used where no pin
//! applies. Setting it records the exact release id in `config.toml` and
//! re-points the stable per-user link `$CUDNNM_HOME/current/cuda-<variant>`
//! at it atomically (symlink on Unix; junction on Windows, else a directory
//! symlink, else a recorded path in `current/cuda-<variant>.path`).

use super::Ctx;
use super::support::for_this_store;
use crate::command::CommandLine;
use crate::error::Result;
use crate::ops::default::{self, Outcome, Placed};
use crate::version::Spec;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The release to make the default (`none` unsets it); without it, print the default
    pub spec: Option<String>,
    /// Set or show the system home's default (what `export` marks as the
    /// modules' default); needs write access to the system home to set
    #[arg(long)]
    pub system: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let session = ctx.ops();
    let outcome = match args.spec.as_deref() {
        None => default::show(&session)?,
        Some("none") => default::unset(&session)?,
        Some(s) => default::set(&session, &s.parse()?)?,
    };
    if ctx.json {
        ctx.out_json(&outcome.report());
    }
    match &outcome {
        Outcome::Shown {
            default: None,
            system_default: Some(system),
            ..
        } if !args.system => ctx.status(format!(
            "no default cuDNN release of your own; the system default {system} applies (set your own with `{}`)",
            for_this_store(ctx, CommandLine::default_("SPEC")).for_host(ctx.env.is_windows())
        )),
        Outcome::Shown {
            default, release, ..
        } => shown(ctx, default.as_deref(), release.is_some()),
        Outcome::Unset { before: None, .. } => {
            ctx.status("no default cuDNN release was set; nothing changed")
        }
        Outcome::Unset {
            before: Some(before),
            removed_link,
        } => {
            ctx.status(format!("default cuDNN {before} → none"));
            if let Some(l) = removed_link {
                ctx.status(format!("removed the link '{}'", l.display()));
            }
        }
        Outcome::Set {
            before,
            release,
            dir,
            link,
            placed,
        } => {
            if let Placed::Recorded { record, error } = placed {
                ctx.warn(format!(
                    "could not link '{}' ({error}); recorded the release folder in '{}' instead",
                    link.display(),
                    record.display()
                ));
            }
            let from = before
                .as_ref()
                .map(|b| format!("{b} → "))
                .unwrap_or_default();
            ctx.status(format!("default cuDNN {from}{release}"));
            ctx.status(match placed {
                Placed::Link(k) => format!("'{}' → '{}' ({k})", link.display(), dir.display()),
                Placed::Recorded { record, .. } => {
                    format!("'{}' records '{}'", record.display(), dir.display())
                }
            });
        }
    }
    Ok(0)
}

/// `default` without a spec: the default on stdout (none: how to set one),
/// and when it is not installed, what installs it.
fn shown(ctx: &Ctx, default: Option<&str>, installed: bool) {
    let another =
        || for_this_store(ctx, CommandLine::default_("SPEC")).for_host(ctx.env.is_windows());
    let Some(default) = default else {
        ctx.status(format!(
            "no default cuDNN release is set; set one with `{}`",
            another()
        ));
        return;
    };
    if !ctx.json {
        ctx.out(default);
    }
    if installed {
        return;
    }
    // What installs it, by the rule every install hint follows.
    let install = match default.parse::<Spec>() {
        Ok(spec) => {
            match crate::ops::offers::install_advice(&ctx.ops(), &spec, CommandLine::default_) {
                (_, Some(cmd)) => format!("install it (`{cmd}`)"),
                (words, None) => words,
            }
        }
        Err(_) => "`cudnnm list --remote` lists what the catalog has".to_string(),
    };
    ctx.warn(format!(
        "the default {default} is not installed; {install}, or choose another with `{}`",
        another()
    ));
}

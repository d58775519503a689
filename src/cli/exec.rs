//! `cudnnm exec [--version SPEC] -- COMMAND [ARGS…]`: runs COMMAND with the
//! release that applies here (or the one `--version` names) activated for
//! that process only. `cudnnm exec SPEC -- COMMAND` (as `mise exec`) means
//! `--version SPEC`: a spec before a `--` is never a program. Arguments pass through untouched as OS strings. On
//! Unix cudnnm replaces itself with COMMAND (exec), so signals, exit code and
//! process id are COMMAND's; on Windows it waits and returns COMMAND's code.

use std::ffi::OsString;
use std::process::Command;

use super::Ctx;
use super::support::warn_foreign;
use crate::activate;
use crate::error::{Error, Kind, Result};
use crate::pin;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The release to activate instead of the pinned one
    #[arg(long, value_name = "SPEC", conflicts_with = "for_")]
    pub version: Option<String>,
    #[command(flatten)]
    pub for_: super::support::ForArgs,
    /// The command to run and its arguments (`SPEC -- COMMAND…` names the release as --version does)
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    pub command: Vec<OsString>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let chosen = match args.for_.request()? {
        Some(f) => Some(
            crate::ops::frameworks::pick(&ctx.ops(), &f, None)?
                .id
                .to_string(),
        ),
        None => None,
    };
    let (spec, command) = spec_before_dashes(&args.command);
    if let Some(spec) = &spec
        && (chosen.is_some() || args.version.is_some())
    {
        return Err(Error::new(
            Kind::Usage,
            format!("'{spec}' before -- names a release, and so does --version or --for"),
        )
        .hint("name the release once: `cudnnm exec SPEC -- COMMAND` or `cudnnm exec --version SPEC -- COMMAND`"));
    }
    let version = chosen.or(args.version.clone()).or(spec);
    let (_, release) = pin::resolve_installed(version.as_deref(), &ctx.env, &ctx.home)?.ok_or_else(|| {
        Error::new(Kind::NotFound, "no cuDNN release is selected for this folder")
            .hint("name one (`cudnnm exec SPEC -- COMMAND`), pin one with `cudnnm pin SPEC`, or set a default with `cudnnm default SPEC`")
    })?;
    let Some((program, rest)) = command.split_first() else {
        return Err(Error::new(Kind::Usage, "no command given to run")
            .hint("write it after --: `cudnnm exec -- python3 app.py`"));
    };
    warn_foreign(ctx, &release);
    let mut cmd = Command::new(program);
    cmd.args(rest);
    activate::activate(&ctx.env, &ctx.home, &release).apply(&mut cmd);
    run_command(cmd, program)
}

/// `SPEC -- COMMAND…` (`9.20 -- python3 x.py`): the spec, and the command
/// after the `--`; otherwise no spec and the whole command.
fn spec_before_dashes(command: &[OsString]) -> (Option<String>, &[OsString]) {
    if let [first, dashes, rest @ ..] = command
        && dashes == "--"
        && let Some(spec) = first.to_str()
        && spec.parse::<crate::version::Spec>().is_ok()
    {
        return (Some(spec.to_string()), rest);
    }
    (None, command)
}

/// Runs the program with the activation applied: in place of cudnnm on Unix,
/// as a waited-for child on Windows (no `exec` there).
fn run_command(mut cmd: Command, program: &OsString) -> Result<u8> {
    let code = crate::platform::run_in_place(&mut cmd).map_err(|e| start_error(program, e))?;
    // Windows codes beyond a byte (e.g. 0xC0000005 for a crash) must not wrap to 0.
    Ok(match code {
        Some(c) if (0..=255).contains(&c) => c as u8,
        _ => 1,
    })
}

fn start_error(program: &OsString, e: std::io::Error) -> Error {
    let kind = if e.kind() == std::io::ErrorKind::NotFound {
        Kind::NotFound
    } else {
        Kind::Failure
    };
    Error::new(
        kind,
        format!("could not run '{}'", program.to_string_lossy()),
    )
    .cause(e)
    .hint("check the command name and that it is on PATH (cudnnm changes only the cuDNN variables)")
}

//! `cudnnm env`: prints shell code that activates the release that applies
//! here (pin, `CUDNNM_VERSION` or default) for the calling shell, and with
//! `--use-on-cd` the hook from `shims/` that repeats this on every change of
//! folder. When nothing applies, or the applicable release is missing, it
//! prints the code that deactivates cudnnm's release, so a shell never keeps
//! another folder's cuDNN; a missing release is still reported (stderr, exit code).

use std::collections::BTreeMap;
use std::io::Write;

use serde::Serialize;

use super::Ctx;
use crate::activate::{self, Activation, Shell};
use crate::error::Result;
use crate::pin::{self, Resolved};
use crate::platform;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Shell to print for: bash, zsh, fish, powershell or cmd [default: detected]
    #[arg(long, value_name = "SHELL")]
    pub shell: Option<String>,
    /// Also print the hook that re-resolves the release on every change of folder
    #[arg(long)]
    pub use_on_cd: bool,
    /// The release to activate instead of the pinned one
    #[arg(long, value_name = "SPEC", conflicts_with = "use_on_cd")]
    pub version: Option<String>,
    /// Called by the hook before a prompt: also say on stderr what changed
    #[arg(long, hide = true)]
    pub hook: bool,
}

#[derive(Serialize)]
struct Report<'a> {
    shell: &'a str,
    release: Option<&'a crate::version::ReleaseId>,
    source: Option<&'a pin::SpecSource>,
    set: BTreeMap<&'a str, String>,
    unset: Vec<&'a str>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let shell = match &args.shell {
        Some(s) => s.parse::<Shell>()?,
        None => Shell::detect(&ctx.env, platform::parent_process_name().as_deref()),
    };
    let (resolved, activation, failure) =
        match pin::resolve_installed(args.version.as_deref(), &ctx.env, &ctx.home) {
            Ok(Some((resolved, release))) => {
                super::support::warn_foreign(ctx, &release);
                let a = activate::activate(&ctx.env, &ctx.home, &release);
                (Some(resolved), a, None)
            }
            Ok(None) => (None, activate::deactivate(&ctx.env, &ctx.home), None),
            Err(e) => (None, activate::deactivate(&ctx.env, &ctx.home), Some(e)),
        };
    if args.hook
        && let Some(said) = changed(ctx, resolved.as_ref(), &activation)
    {
        ctx.status(said);
    }
    if ctx.json {
        ctx.out_json(&report(shell, resolved.as_ref(), &activation));
    } else {
        let mut text = activate::render(shell, &activation.changes)?;
        if args.use_on_cd {
            let exe = std::env::current_exe()
                .map(|p| p.into_os_string())
                .unwrap_or_else(|_| "cudnnm".into());
            // Rebuilt from components: no trailing separator, which Windows'
            // argument quoting would turn into an escaped quote (`"C:\x\"`).
            let home: std::path::PathBuf = ctx.home.root().components().collect();
            text.extend(activate::hook(shell, &exe, &home)?);
        }
        // A closed pipe is not an error (`docs/architecture.md#output-and-errors`).
        let _ = std::io::stdout().lock().write_all(&text);
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(0),
    }
}

/// For the hook: what the shell's release becomes, when it is not the one
/// `CUDNNM_ACTIVE` names (`cudnnm: cuDNN 9.12.0.46_cuda12 → 9.1.0.70_cuda12
/// (from '/p/.cudnn-version' line 1)`); `None` when nothing changes.
fn changed(ctx: &Ctx, resolved: Option<&Resolved>, a: &Activation) -> Option<String> {
    let before = ctx
        .env
        .var(crate::env::CUDNNM_ACTIVE)
        .filter(|v| !v.is_empty());
    let after = a.release.as_ref().map(ToString::to_string);
    if before == after {
        return None;
    }
    let before = before.as_deref().unwrap_or("none");
    Some(match (after, resolved) {
        (Some(after), Some(r)) => {
            format!("cudnnm: cuDNN {before} → {after} ({})", r.source.label())
        }
        (Some(after), None) => format!("cudnnm: cuDNN {before} → {after}"),
        (None, _) => format!("cudnnm: cuDNN {before} → none (no release applies here)"),
    })
}

fn report<'a>(shell: Shell, resolved: Option<&'a Resolved>, a: &'a Activation) -> Report<'a> {
    let mut set = BTreeMap::new();
    let mut unset = Vec::new();
    for c in &a.changes {
        match &c.value {
            Some(v) => {
                set.insert(c.name.as_str(), v.to_string_lossy().into_owned());
            }
            None => unset.push(c.name.as_str()),
        }
    }
    Report {
        shell: shell.as_str(),
        release: a.release.as_ref(),
        source: resolved.map(|r| &r.source),
        set,
        unset,
    }
}

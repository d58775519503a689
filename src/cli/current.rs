//! `cudnnm current`: which release applies here and why (flag,
//! `CUDNNM_VERSION`, a `.cudnn-version` file, the default), and per toolkit
//! the active release, its mode, when it was deployed, and whether the files
//! still match the record (drift; `cudnnm verify` re-hashes).

use super::Ctx;
use super::support::{toolkit_state, unfinished_line};
use crate::command::CommandLine;
use crate::error::Result;
use crate::ops::current::{self, Current, Locked, Request};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only this CUDA toolkit root
    #[arg(long, value_name = "PATH", conflicts_with = "cuda")]
    pub cuda_root: Option<std::path::PathBuf>,
    /// Only the toolkit of this CUDA version (X.Y, or a major such as 12
    /// when one 12.x toolkit is found or known)
    #[arg(long, value_name = "X.Y")]
    pub cuda: Option<String>,
    /// The release spec to resolve instead of the pin
    #[arg(long, value_name = "SPEC")]
    pub version: Option<String>,
}

/// What `current` adds after the locked release: nothing when it is the
/// release the pin selects here; else why not, and the command that
/// brings the two together.
fn lock_note(ctx: &Ctx, l: &Locked, selected: Option<&str>) -> String {
    let render = |c: CommandLine| super::support::printed(ctx, c);
    if !l.satisfies_pin {
        return format!(
            " (no longer satisfies the pin: run `{}`)",
            render(CommandLine::lock())
        );
    }
    match (selected, l.installed) {
        (_, _) if l.selected_here => String::new(),
        (None, _) => format!(
            " (not installed: `{}` installs it)",
            render(CommandLine::install_here())
        ),
        (Some(sel), false) => format!(
            " (not installed; the pin selects {sel} here: `{}` installs the locked release, `{}` locks {sel})",
            render(CommandLine::install_here()),
            render(CommandLine::lock())
        ),
        (Some(sel), true) => format!(
            " (not what the pin selects here: {sel}, the newest installed match, is what exec, env and use take; `{}` locks {sel}, or `{}` pins the locked release)",
            render(CommandLine::lock()),
            render(CommandLine::pin(l.release.clone()))
        ),
    }
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let req = Request {
        cuda_root: args.cuda_root,
        cuda: args.cuda,
        version: args.version,
    };
    let view = current::current(&ctx.ops(), &req)?;
    if ctx.json {
        ctx.out_json(&view);
        return Ok(0);
    }
    for line in lines(ctx, &view) {
        ctx.out(line);
    }
    Ok(0)
}

/// What `current` prints: the spec here and its lock, then each toolkit.
fn lines(ctx: &Ctx, view: &Current) -> Vec<String> {
    let mut out = Vec::new();
    match &view.spec {
        Some(s) => {
            out.push(format!(
                "spec here: {} ({}) → {} ({})",
                s.spec,
                s.source.label(),
                s.label.as_deref().unwrap_or("not installed"),
                s.why
            ));
            if let Some(l) = &s.lock {
                out.push(format!(
                    "locked: {} in '{}'{}",
                    l.release,
                    l.path.display(),
                    lock_note(ctx, l, s.release.as_deref())
                ));
            }
        }
        None => out.push(
            "spec here: none (no --version, CUDNNM_VERSION, .cudnn-version or default)".into(),
        ),
    }
    if view.toolkits.is_empty() {
        out.push("no CUDA toolkits found (pass --cuda-root PATH)".into());
    }
    for t in &view.toolkits {
        out.push(format!(
            "'{}' (CUDA {}): {}",
            t.root.display(),
            t.cuda,
            toolkit_state(t)
        ));
        if let Some(u) = &t.unfinished_change {
            out.push(unfinished_line(u));
        }
    }
    out
}

//! `cudnnm completions SHELL`: the shell code that registers cudnnm's
//! dynamic completion (clap_complete's `COMPLETE=SHELL` protocol, see
//! `cli/candidates.rs`): the shell then asks this binary on every TAB and is
//! offered commands, flags, installed releases, backup ids and toolkit
//! folders. `source <(cudnnm completions bash)` in `~/.bashrc`. With
//! `--json`, the shell's name and that code as one object.

use super::Ctx;
use super::candidates::registration;
use crate::error::{Error, Result};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// bash, zsh, fish, powershell or elvish
    pub shell: clap_complete::Shell,
}

/// What `completions --json` prints: the shell and the code that registers
/// cudnnm's completion in it.
#[derive(serde::Serialize)]
struct Registration<'a> {
    shell: String,
    script: &'a str,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    // The shell calls this very binary back; by its full path, so that a
    // cudnnm not on PATH (or an older one there) does not answer.
    let exe = std::env::current_exe()
        .map_err(|e| Error::msg("could not find the path of this cudnnm binary").cause(e))?;
    let code = registration(args.shell, &exe.to_string_lossy())
        .map_err(|e| Error::msg("could not write the completion script").cause(e))?;
    let script = String::from_utf8_lossy(&code);
    if ctx.json {
        ctx.out_json(&Registration {
            shell: args.shell.to_string(),
            script: &script,
        });
    } else {
        ctx.out(script.trim_end());
    }
    Ok(0)
}

//! `cudnnm completions SHELL`: shell completion scripts from the clap definition.

use clap::CommandFactory;

use super::{Cli, Ctx};
use crate::error::Result;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// bash, zsh, fish, powershell or elvish
    pub shell: clap_complete::Shell,
}

pub fn run(_ctx: &Ctx, args: Args) -> Result<u8> {
    let mut cmd = Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "cudnnm", &mut std::io::stdout());
    Ok(0)
}

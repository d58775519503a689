//! The cudnnm commands printed in hints: for the store the command works
//! on, run by the same person, in the user's shell.

use crate::cli::Ctx;
use crate::command::CommandLine;

/// `command` for the system store, as a person runs it (as root or from
/// an Administrator terminal when `elevated`; the caller adds `sudo`):
/// `--system`, and the system home spelled out where the command would not
/// find it ([`crate::home::Home::reach`]).
pub fn on_system(ctx: &Ctx, command: CommandLine, elevated: bool) -> CommandLine {
    ctx.ops().on_system(command, elevated)
}

/// A command as a hint prints it: for this home ([`for_this_store`]) and
/// the user's shell.
pub fn printed(ctx: &Ctx, c: CommandLine) -> String {
    ctx.ops().printed(c)
}

/// A hint's command for the store this command works on, run by the same
/// person here ([`crate::home::Home::reach`]): with `--system` for the
/// system home; with `--home` / `--system-home` where they came from flags.
pub fn for_this_store(ctx: &Ctx, command: CommandLine) -> CommandLine {
    ctx.home.reach(&ctx.env, command, false)
}

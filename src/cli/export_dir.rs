//! `cudnnm export dir DEST SPEC [--prefix PATH]`: one release written out as
//! a plain folder (`include/`, `lib/` with its soname chain of links, `bin/`
//! for Windows builds, and the receipt) plus `cudnn.env` (`cudnn.env.cmd`
//! for a Windows build), shell lines that put it in front of the path lists
//! ([`crate::export_tree::env_file`]). Made for `COPY --from=` into a
//! container image or a read-only volume: the folder needs neither cudnnm
//! nor its store. Built beside DEST and renamed into place, so a failure
//! leaves no half folder; an empty DEST in a folder the user may not write
//! is filled in place instead (emptied again on failure). Re-running it
//! into its own earlier output replaces that output (marked by
//! `.cudnnm-export.toml`, checked to hold only what cudnnm wrote); any
//! other non-empty DEST is refused. An earlier export that cannot be
//! removed is left beside DEST with a warning, and removed by the next run
//! into DEST. The export is [`crate::ops::export::dir`]; this file renders it.

use std::path::PathBuf;

use super::Ctx;
use crate::error::Result;
use crate::ops::export::dir::{self, DirRequest};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The folder to create (new, empty, or an earlier export of cudnnm's, which it replaces)
    pub dest: PathBuf,
    /// The release (9.27.0.42_cuda12, 9.27, …)
    pub spec: String,
    /// Where the folder will be seen by its users (in the image:
    /// /opt/cudnn) [default: DEST]
    #[arg(long, value_name = "PATH")]
    pub prefix: Option<String>,
    /// Take the release from the system store only
    #[arg(long)]
    pub system: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let req = DirRequest {
        dest: args.dest,
        spec: args.spec.parse()?,
        prefix: args.prefix,
        system: args.system,
    };
    let report = dir::export(&ctx.ops(), &req)?;
    if ctx.json {
        ctx.out_json(&report);
    } else {
        ctx.status(format!(
            "exported cuDNN {} ({} files) to '{}'{}; the variables to set are in '{}'",
            report.release,
            report.files,
            report.dest,
            report
                .replaced
                .as_ref()
                .map(|r| format!(" (replacing the earlier export of {r})"))
                .unwrap_or_default(),
            report.env_file
        ));
    }
    Ok(0)
}

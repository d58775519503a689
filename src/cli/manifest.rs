//! `cudnnm manifest refresh`: NVIDIA's redistrib index → the user catalog.

use super::Ctx;
use crate::catalog::{self, refresh};
use crate::error::Result;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
}

#[derive(clap::Subcommand, Debug)]
pub enum Sub {
    /// Read NVIDIA's redistrib_*.json index and write the user catalog
    Refresh {
        /// A redistrib_*.json URL or file, or a folder / listing URL ending in `/` (repeatable)
        /// [default: the listing of cudnn/redist/ under the mirror or NVIDIA]
        #[arg(long, value_name = "URL|FILE")]
        from: Vec<String>,
        /// Base URL replacing NVIDIA's download server, read when --from is not given
        /// [default: env CUDNNM_MIRROR, else `mirror` in config.toml]
        #[arg(long, value_name = "URL")]
        mirror: Option<String>,
    },
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    match args.command {
        Sub::Refresh { from, mirror } => {
            let mirror = catalog::effective_mirror(mirror.as_deref(), &ctx.env, &ctx.home)?;
            ctx.home.ensure()?;
            let _lock = ctx.lock()?;
            let report = refresh::refresh(&ctx.home, &ctx.env, &from, mirror.as_deref())?;
            for w in &report.warnings {
                ctx.warn(w);
            }
            if ctx.json {
                ctx.out_json(&report);
                return Ok(0);
            }
            for r in &report.read {
                ctx.status(format!(
                    "read {}: cuDNN {} ({} archive{})",
                    r.from,
                    r.version,
                    r.archives,
                    if r.archives == 1 { "" } else { "s" }
                ));
            }
            ctx.status(format!(
                "wrote {} archive{} to '{}'; it overlays the embedded catalog (see `cudnnm list --remote`)",
                report.archives,
                if report.archives == 1 { "" } else { "s" },
                report.catalog.display()
            ));
            Ok(0)
        }
    }
}

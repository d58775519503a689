//! `cudnnm manifest refresh`: PyPI's file lists and NVIDIA's redistrib
//! index → the user catalog; `cudnnm manifest generate` (hidden): the same
//! generator's rows for the embedded `manifest.toml`, which
//! `scripts/update-catalog.sh` runs.

use super::Ctx;
use crate::catalog::{self, generate, refresh};
use crate::error::Result;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
}

#[derive(clap::Subcommand, Debug)]
pub enum Sub {
    /// Read PyPI's cuDNN packages and NVIDIA's redistrib_*.json index, and write the user catalog
    Refresh {
        /// A redistrib_*.json or package index answer (URL or file), a folder of them, a
        /// package index URL ending in /simple/, or a listing URL ending in `/` (repeatable)
        /// [default: https://pypi.org/simple/ and NVIDIA's cudnn/redist/ listing; with a
        /// mirror, the mirror's listing alone]
        #[arg(long, value_name = "URL|FILE|DIR")]
        from: Vec<String>,
        /// Base URL replacing NVIDIA's download server, read when --from is not given
        /// [default: env CUDNNM_MIRROR, else `mirror` in config.toml]
        #[arg(long, value_name = "URL")]
        mirror: Option<String>,
        /// The package index whose cuDNN packages are read when --from is not given
        /// [default: env CUDNNM_INDEX_URL, else `index_url` in config.toml, else pip's
        /// index-url, else PyPI; with a mirror and none of these, none]
        #[arg(long, value_name = "URL")]
        index_url: Option<String>,
    },
    /// Print the generated rows of manifest.toml from a folder of recorded
    /// answers (pypi/, redist/, SOURCES.toml): for scripts/update-catalog.sh
    #[command(hide = true)]
    Generate {
        /// The folder (tests/fixtures/catalog)
        #[arg(long, value_name = "DIR")]
        fixtures: std::path::PathBuf,
    },
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    match args.command {
        Sub::Generate { fixtures } => {
            let dir = ctx.env.cwd().join(fixtures);
            let (text, _) = generate::from_fixtures(&dir)?;
            ctx.out(text.trim_end_matches('\n'));
            Ok(0)
        }
        Sub::Refresh {
            from,
            mirror,
            index_url,
        } => {
            let mirror = catalog::effective_mirror(mirror.as_deref(), &ctx.env, &ctx.home)?;
            let index =
                refresh::index_for(index_url.as_deref(), mirror.is_some(), &ctx.env, &ctx.home)?;
            ctx.home.ensure()?;
            let _lock = ctx.lock()?;
            let report = refresh::refresh(
                &ctx.home,
                &ctx.env,
                &from,
                mirror.as_deref(),
                index.as_ref(),
            )?;
            for w in &report.warnings {
                ctx.warn(w);
            }
            if ctx.json {
                ctx.out_json(&report);
                return Ok(0);
            }
            let plural =
                |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
            for r in &report.read {
                ctx.status(match r.kind {
                    "pypi" => format!(
                        "read {}: {}, {} ({}), {} yanked",
                        r.from,
                        r.label,
                        plural(r.releases, "release"),
                        plural(r.archives, "wheel"),
                        r.yanked
                    ),
                    _ => format!(
                        "read {}: cuDNN {} ({})",
                        r.from,
                        r.version
                            .as_ref()
                            .map(ToString::to_string)
                            .unwrap_or_default(),
                        plural(r.archives, "archive")
                    ),
                });
            }
            ctx.status(format!(
                "wrote {} and {} to '{}'; it overlays the embedded catalog (see `cudnnm list --remote`)",
                plural(report.archives, "archive"),
                plural(report.wheels, "wheel"),
                report.catalog.display()
            ));
            Ok(0)
        }
    }
}

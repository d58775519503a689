//! `cudnnm uninstall SPEC`: remove one release from the store (refused while
//! it is deployed in a toolkit, unless `--force`).

use super::Ctx;
use crate::deploy::Deployments;
use crate::error::{Error, Kind, Result};
use crate::store::Store;
use crate::version::Spec;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The release to remove (8.1.0.77, 8.9.7.29_cuda12, or a prefix matching one release)
    pub spec: String,
    /// Remove it even while deployed in a toolkit
    #[arg(long)]
    pub force: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let spec: Spec = args.spec.parse()?;
    let _lock = ctx.lock()?;
    let store = Store::new(&ctx.home);
    let matches = store.matching(&spec)?;
    let release = match matches.as_slice() {
        [] => {
            return Err(
                Error::new(Kind::NotFound, format!("cuDNN {spec} is not installed"))
                    .hint("`cudnnm list` shows what is installed"),
            );
        }
        [one] => one,
        many => {
            let ids: Vec<String> = many.iter().map(|r| r.id()).collect();
            return Err(Error::new(
                Kind::Usage,
                format!(
                    "'{spec}' matches {} releases: {}",
                    ids.len(),
                    ids.join(", ")
                ),
            )
            .hint(format!(
                "name one exactly, e.g. `cudnnm uninstall {}`",
                ids[0]
            )));
        }
    };
    let id = release.id();
    let deployments = Deployments::load(&ctx.home)?;
    let used: Vec<String> = deployments
        .toolkits_using(&id)
        .iter()
        .map(|d| d.toolkit.display().to_string())
        .collect();
    if !used.is_empty() {
        if !args.force {
            return Err(Error::new(
                Kind::Conflict,
                format!("cuDNN {id} is deployed in {}", used.join(", ")),
            )
            .hint("switch that toolkit first (`cudnnm use OTHER` or `cudnnm rollback`), or pass --force (its files there will dangle)"));
        }
        ctx.warn(format!(
            "cuDNN {id} stays deployed in {}; links there will dangle",
            used.join(", ")
        ));
    }
    let size = release.receipt.total_size();
    store.remove(release)?;
    ctx.status(format!(
        "removed cuDNN {id} ({} freed)",
        indicatif::HumanBytes(size)
    ));
    Ok(0)
}

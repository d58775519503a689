//! `cudnnm toolkits`: the CUDA toolkits found (`CUDA_PATH`, `CUDA_HOME`,
//! `CUDA_PATH_VX_Y`, `nvcc` on PATH, default folders) plus those cudnnm has
//! deployed into, with their CUDA version, layout, how each was found, and
//! the cuDNN each holds.

use super::Ctx;
use super::support::{ToolkitView, known_toolkits, recover_if_pending};
use crate::deploy::Deployments;
use crate::error::Result;
use crate::store::Store;

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(ctx: &Ctx, _args: Args) -> Result<u8> {
    recover_if_pending(ctx)?;
    let deployments = Deployments::load(&ctx.home)?;
    let store = Store::new(&ctx.home);
    let views: Vec<ToolkitView> = known_toolkits(ctx, &deployments)
        .iter()
        .map(|t| ToolkitView::new(ctx, t, &deployments, &store))
        .collect();
    if ctx.json {
        ctx.out_json(&views);
        return Ok(0);
    }
    if views.is_empty() {
        ctx.status(
            "no CUDA toolkits found; set CUDA_PATH or CUDA_HOME, or pass --cuda-root PATH to `use`",
        );
    }
    for v in &views {
        ctx.out(format!(
            "'{}'  CUDA {}  {} layout  found by {}: {}",
            v.root.display(),
            v.cuda,
            v.layout.as_str(),
            v.found_by,
            v.state()
        ));
        if let Some(u) = &v.unfinished_change {
            ctx.out(u.line());
        }
    }
    Ok(0)
}

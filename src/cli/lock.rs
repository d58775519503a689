//! `cudnnm lock`: writes `.cudnn-version.lock` beside the pin — the release
//! the pin selects on this machine and, per platform, where its bytes come
//! from with their SHA-256 ([`crate::ops::lock`] decides); says what it
//! locked, or prints it as JSON.

use super::Ctx;
use crate::error::Result;
use crate::ops::lock::{self, Request};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The CUDA to resolve the pin for, when the toolkits found do not say (12, 11.8)
    #[arg(long, value_name = "V")]
    pub cuda: Option<String>,
    /// The platform whose catalog pick decides the release [default: this machine's]
    #[arg(long, value_name = "P")]
    pub platform: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let req = Request {
        cuda: args.cuda,
        platform: args.platform,
    };
    let done = lock::lock(&ctx.ops(), &req)?;
    if ctx.json {
        ctx.out_json(&done);
    }
    ctx.status(format!(
        "{} {} (pin {}) for {} in '{}'",
        if done.changed {
            "locked"
        } else {
            "lock unchanged:"
        },
        done.release,
        done.pin,
        done.platforms.join(", "),
        done.path
    ));
    Ok(0)
}

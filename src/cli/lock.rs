//! `cudnnm lock`: writes `.cudnn-version.lock` beside the pin — the release
//! the pin selects on this machine and, per platform, where its bytes come
//! from with their SHA-256 ([`crate::ops::lock`] decides); says what it
//! locked, or prints it as JSON. `--check` changes nothing and fails
//! (exit 4) on a lock that is missing, stale or names bytes no longer served.

use super::Ctx;
use crate::error::Result;
use crate::ops::lock::{self, Request};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The CUDA to resolve the pin for, when the toolkits found do not say (12, 11.8)
    #[arg(long, value_name = "V")]
    pub cuda: Option<String>,
    /// A platform to lock (repeatable) [default: every platform the release is
    /// published for]; this machine's decides the release when listed, else the first
    #[arg(long = "platform", value_name = "P")]
    pub platforms: Vec<String>,
    /// The package index wheels come from (PEP 691/503 simple API) [default: env
    /// CUDNNM_INDEX_URL, else `index_url` in config.toml, else pip's index-url, else PyPI]
    #[arg(long, value_name = "URL")]
    pub index_url: Option<String>,
    /// Change nothing: fail (exit 4) unless the lock exists, was written for the pin
    /// as it is, and names bytes the catalog and the index still serve
    #[arg(long)]
    pub check: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let req = Request {
        cuda: args.cuda,
        platforms: args.platforms,
        index_url: args.index_url,
    };
    if args.check {
        let ok = lock::check(&ctx.ops(), &req)?;
        if ctx.json {
            ctx.out_json(&ok);
        }
        ctx.status(format!(
            "lock '{}' is up to date: {} (pin {}) for {}",
            ok.path,
            ok.release,
            ok.pin,
            ok.platforms.join(", ")
        ));
        return Ok(0);
    }
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

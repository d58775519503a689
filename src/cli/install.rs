//! `cudnnm install [SPEC|PATH|pip:REQ]`: import a release into the store from a
//! local archive or folder, from the user's own pip, or from the catalog.
//! Without an argument: what applies here (the pin, then the default),
//! exactly as `.cudnn-version.lock` beside the pin records it when there is
//! one (`--locked`: only so). The decisions are [`crate::ops::install`];
//! this file says what was installed, or prints it as JSON.

use super::Ctx;
use crate::command::CommandLine;
use crate::error::Result;
use crate::hash::Sha256Hex;
use crate::ops::install::{self, AlreadyWhy, ImportStatus, Installed, Request};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A catalog spec (8.1.0.77, 9.10.x, >=9.1,<9.11, latest), a local archive or
    /// folder, or pip:REQUIREMENT [default: the pin or default here, as locked]
    #[arg(value_name = "SPEC|PATH|pip:REQ", conflicts_with = "for_")]
    pub what: Option<String>,
    #[command(flatten)]
    pub for_: super::support::ForArgs,
    /// Without SPEC: fail unless the lock file exists and still satisfies the pin
    #[arg(long, conflicts_with = "what")]
    pub locked: bool,
    /// The CUDA the release is built for, when its name does not say (11.2, 12)
    #[arg(long, value_name = "V")]
    pub cuda: Option<String>,
    /// The expected SHA-256 of the archive
    #[arg(long, value_name = "HEX")]
    pub sha256: Option<String>,
    /// Reinstall, or import despite a name/header version disagreement
    #[arg(long)]
    pub force: bool,
    /// Platform to download for (catalog installs) [default: this machine's]
    #[arg(long, value_name = "P")]
    pub platform: Option<String>,
    /// Base URL replacing NVIDIA's download server [default: env CUDNNM_MIRROR,
    /// else `mirror` in config.toml]
    #[arg(long, value_name = "URL")]
    pub mirror: Option<String>,
    /// The package index wheels come from (PEP 691/503 simple API) [default: env
    /// CUDNNM_INDEX_URL, else `index_url` in config.toml, else pip's index-url, else PyPI]
    #[arg(long, value_name = "URL")]
    pub index_url: Option<String>,
    /// Install a catalog archive that has no published SHA-256 without checking it
    #[arg(long)]
    pub allow_unverified: bool,
    /// Work on the system store (--system-home), which every user of the machine
    /// reads; needs root or Administrator (or write access an admin gave)
    #[arg(long)]
    pub system: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let req = Request {
        what: args.what,
        locked: args.locked,
        cuda: args.cuda.as_deref().map(str::parse).transpose()?,
        sha256: args.sha256.as_deref().map(Sha256Hex::parse).transpose()?,
        force: args.force,
        platform: args.platform,
        mirror: args.mirror,
        index_url: args.index_url,
        allow_unverified: args.allow_unverified,
        system: args.system,
        for_: args.for_.request()?,
    };
    let done = install::install(&ctx.ops(), &req)?;
    if ctx.json {
        ctx.out_json(&done);
    }
    ctx.status(said(&done, ctx.env.is_windows()));
    if let Installed::Imported {
        status: ImportStatus::Installed,
        release,
        ..
    } = &done
        && release.default
    {
        ctx.status(format!(
            "cuDNN {} is now the default, the first release installed here (`{}` changes it)",
            release.id,
            super::support::printed(ctx, CommandLine::default_("SPEC"))
        ));
    }
    Ok(0)
}

/// The status line saying what `install` did.
fn said(done: &Installed, windows: bool) -> String {
    match done {
        Installed::Imported {
            status,
            release: r,
            files,
        } => {
            let what = format!(
                "cuDNN {} for CUDA {} ({}) from {}",
                r.version, r.cuda, r.platform, r.source.name
            );
            match status {
                ImportStatus::AlreadyInstalled => format!(
                    "{what} is already installed at '{}' (--force reinstalls)",
                    r.path
                ),
                _ => format!(
                    "{} {what}: {files} files, {} in '{}'",
                    status.as_str(),
                    indicatif::HumanBytes(r.size),
                    r.path
                ),
            }
        }
        Installed::Already { release, dir, why } => format!(
            "cuDNN {release} is already installed at '{}' ({}); nothing to do",
            dir.display(),
            why_words(why, windows)
        ),
    }
}

/// Why a release counts as installed, as a clause.
fn why_words(why: &AlreadyWhy, windows: bool) -> String {
    match why {
        AlreadyWhy::CatalogPick {
            spec,
            other_package: None,
        } => format!("the catalog's pick for {spec}"),
        // The same release from another package (the JIT-only wheel has no
        // precompiled engines): say so, and how to have the catalog's.
        AlreadyWhy::CatalogPick {
            spec,
            other_package: Some(o),
        } => format!(
            "the catalog's pick for {spec}, installed from the package {}, not {}: `{}` installs that one instead",
            o.installed_from,
            o.catalog,
            CommandLine::install(format!("pip:{}", o.requirement))
                .force()
                .for_host(windows)
        ),
        AlreadyWhy::Requirement(r) => r.clone(),
        AlreadyWhy::MatchesPin { spec, source } => format!("matches {spec} from {source}"),
        AlreadyWhy::AsLocked(path) => format!("as locked in '{}'", path.display()),
    }
}

//! `cudnnm which [--version SPEC]`: the path of the main library of the
//! release that applies here (`lib/libcudnn.so.9`, `bin\cudnn64_9.dll`),
//! as `rustup which` and `nvm which` print the tool that would run. The
//! release comes from the pin (`docs/architecture.md#pins`).

use std::path::PathBuf;

use serde::Serialize;

use super::Ctx;
use super::support::source_label;
use crate::error::{Error, Kind, Result};
use crate::names::FileKind;
use crate::pin;
use crate::store::Release;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The release to look up instead of the pinned one
    #[arg(long, value_name = "SPEC")]
    pub version: Option<String>,
}

/// What `which --json` prints.
#[derive(Serialize)]
struct WhichReport {
    release: String,
    /// Which build: `full` or `jit`.
    flavour: crate::version::Flavour,
    library: PathBuf,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let (why, release) = pin::resolve_installed(args.version.as_deref(), &ctx.env, &ctx.home)?
        .ok_or_else(|| {
            Error::new(Kind::NotFound, "no cuDNN release is selected for this folder")
                .hint("pass --version SPEC, pin one with `cudnnm pin SPEC`, or set a default with `cudnnm default SPEC`")
        })?;
    let library = main_library(&release).ok_or_else(|| {
        Error::new(
            Kind::Integrity,
            format!(
                "cuDNN {} has no main library (libcudnn.so.N or cudnn64_N.dll) in '{}'",
                release.id(),
                release.loader_dir().display()
            ),
        )
        .hint(format!(
            "`cudnnm verify {}` checks the release against its receipt",
            release.id()
        ))
    })?;
    ctx.status(format!(
        "cuDNN {} ({})",
        release.label(),
        source_label(&why.source)
    ));
    if ctx.json {
        ctx.out_json(&WhichReport {
            release: release.id(),
            flavour: release.flavour(),
            library,
        });
    } else {
        ctx.out(library.display());
    }
    Ok(0)
}

/// The release's main library in its loader folder: the name the loader
/// asks for (`libcudnn.so.9`, `cudnn64_9.dll`, [`crate::names`]), else
/// any main shared library there (the oldest releases name theirs after
/// CUDA, `cudnn64_65.dll`).
fn main_library(release: &Release) -> Option<PathBuf> {
    let dir = release.loader_dir();
    let major = release.version().major();
    let wanted = if release.platform().is_windows() {
        crate::names::dll_name("cudnn", major)
    } else {
        crate::names::soname("cudnn", major)
    };
    if dir.join(&wanted).exists() {
        return Some(dir.join(wanted));
    }
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .ok()?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let info = crate::names::classify(&name)?;
            (info.is_main() && info.kind == FileKind::Shared && info.loader_name().is_some())
                .then(|| (name, e.path()))
        })
        .collect();
    found.sort();
    found.into_iter().next().map(|(_, p)| p)
}

//! `cudnnm cache [--json]`: what the download cache (`downloads/`) holds —
//! each archive with its size and the release it belongs to, and partial
//! downloads. `cudnnm cache clean` (or `cache prune`): removes them all,
//! except the partial file of a download that is running and an archive an
//! install holds between its download and its import.

use serde::Serialize;

use super::Ctx;
use super::support::{human_size, table};
use crate::catalog::download::cache::{self, CacheEntry, CacheKind};
use crate::error::Result;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub action: Option<Action>,
}

#[derive(clap::Subcommand, Debug)]
pub enum Action {
    /// Remove every cached archive and partial download (a running download's,
    /// and an archive an install is about to import, are kept)
    #[command(visible_alias = "prune")]
    Clean,
}

#[derive(Serialize)]
struct View<'a> {
    dir: std::path::PathBuf,
    bytes: u64,
    entries: &'a [CacheEntry],
}

fn describe(e: &CacheEntry) -> [String; 4] {
    let file = e
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match &e.kind {
        CacheKind::Archive {
            name,
            release,
            platform,
            in_use,
        } => [
            human_size(e.bytes),
            match (release, platform) {
                (Some(r), Some(p)) if *in_use => {
                    format!("{r} ({p}), an install is importing it now")
                }
                (Some(r), Some(p)) => format!("{r} ({p})"),
                _ => "unknown (no sidecar)".into(),
            },
            name.clone().unwrap_or_default(),
            file,
        ],
        CacheKind::Partial { in_flight } => [
            human_size(e.bytes),
            if *in_flight {
                "downloading now".into()
            } else {
                "partial download (the next install of it resumes)".into()
            },
            String::new(),
            file,
        ],
    }
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let dir = ctx.home.downloads_dir();
    if let Some(Action::Clean) = args.action {
        // Under the home lock: no import is reading an archive meanwhile.
        let _lock = ctx.lock()?;
        let done = cache::clean(&dir)?;
        if ctx.json {
            ctx.out_json(&done);
            return Ok(0);
        }
        for e in &done.in_flight {
            ctx.status(format!(
                "kept '{}' ({}): a download is writing it now",
                e.path.display(),
                human_size(e.bytes)
            ));
        }
        for e in &done.in_use {
            ctx.status(format!(
                "kept '{}' ({}): an install downloaded it and is about to import it; `cudnnm cache clean` removes it once that install is done",
                e.path.display(),
                human_size(e.bytes)
            ));
        }
        ctx.status(format!(
            "removed {} from the download cache '{}' ({} freed)",
            match done.removed.len() {
                1 => "1 file".to_string(),
                n => format!("{n} files"),
            },
            dir.display(),
            human_size(done.bytes())
        ));
        return Ok(0);
    }
    let entries = cache::entries(&dir);
    let bytes = entries.iter().map(|e| e.bytes).sum();
    if ctx.json {
        ctx.out_json(&View {
            dir,
            bytes,
            entries: &entries,
        });
        return Ok(0);
    }
    if entries.is_empty() {
        ctx.status(format!("the download cache '{}' is empty", dir.display()));
        return Ok(0);
    }
    let rows: Vec<[String; 4]> = entries.iter().map(describe).collect();
    let header = ["SIZE", "RELEASE", "ARCHIVE", "FILE"].map(String::from);
    for line in table(&header, &rows, [true, false, false, false]) {
        ctx.out(line);
    }
    ctx.status(format!(
        "{} in '{}'; `cudnnm cache clean` removes it (installed releases do not need it)",
        human_size(bytes),
        dir.display()
    ));
    Ok(0)
}

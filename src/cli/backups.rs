//! `cudnnm backups [--cuda-root P]`: every backup, oldest first, with its
//! toolkit, when and why it was taken, what it holds, its size, and which is
//! each toolkit's first (its state before cudnnm, never pruned), and the
//! files of the user's own a backup keeps (never pruned either).
//! `cudnnm backups --remove ID`: removes the backups named, whatever they hold.

use std::path::PathBuf;

use serde::Serialize;

use super::Ctx;
use super::support::{human_size, recover_if_pending, table};
use crate::deploy::backup;
use crate::error::{Error, Kind, Result};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only backups of this CUDA toolkit root
    #[arg(long, value_name = "PATH")]
    pub cuda_root: Option<std::path::PathBuf>,
    /// Remove these backups, even one keeping files of your own (pruning never does)
    #[arg(long, value_name = "ID", num_args = 1..)]
    pub remove: Vec<String>,
}

#[derive(Serialize)]
struct BackupView {
    id: u64,
    toolkit: PathBuf,
    created_at: String,
    reason: String,
    held: String,
    release: Option<String>,
    files: usize,
    size: u64,
    first: bool,
    /// Files of the user's own it holds (kept until `--remove` names it).
    users_files: Vec<String>,
    dir: PathBuf,
}

/// `--remove ID...`: removes each backup named, under the home lock.
fn remove(ctx: &Ctx, ids: &[String]) -> Result<u8> {
    let ids = ids
        .iter()
        .map(|s| backup::parse_id(s))
        .collect::<Result<Vec<u64>>>()?;
    let _lock = ctx.lock()?;
    let bytes = backup::release_bytes(&ctx.home);
    for id in ids {
        let b = backup::remove(&ctx.home, id)?;
        let yours = b.record.users_files(&bytes);
        if yours.is_empty() {
            ctx.status(format!("removed backup {id}"));
        } else {
            ctx.status(format!(
                "removed backup {id} and the files of yours it kept: {}",
                yours.join(", ")
            ));
        }
    }
    Ok(0)
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    recover_if_pending(ctx)?;
    if !args.remove.is_empty() {
        return remove(ctx, &args.remove);
    }
    let filter = match args.cuda_root {
        Some(p) => {
            let p = if p.is_absolute() {
                p
            } else {
                ctx.env.cwd().join(p)
            };
            if std::fs::metadata(&p).is_err() {
                return Err(Error::new(
                    Kind::NotFound,
                    format!("--cuda-root '{}' does not exist", p.display()),
                )
                .hint("name the toolkit folder (`cudnnm toolkits` lists those cudnnm knows), or leave out --cuda-root to list every backup"));
            }
            // Spelled as the records are: no `\\?\` prefix on Windows.
            Some(crate::fsops::canonical_or_self(&p))
        }
        None => None,
    };
    let all = backup::list(&ctx.home)?;
    let mut firsts = std::collections::BTreeMap::new();
    for b in &all {
        firsts
            .entry(b.record.toolkit.clone())
            .or_insert(b.record.id);
    }
    let bytes = backup::release_bytes(&ctx.home);
    let views: Vec<BackupView> = all
        .iter()
        .filter(|b| filter.as_ref().is_none_or(|f| &b.record.toolkit == f))
        .map(|b| BackupView {
            id: b.record.id,
            toolkit: b.record.toolkit.clone(),
            created_at: b.record.created_at.clone(),
            reason: b.record.reason.clone(),
            held: b.record.held.clone(),
            release: b.record.deployment.as_ref().map(|d| d.release.to_string()),
            files: b.record.files.len(),
            size: b.record.size(),
            first: firsts.get(&b.record.toolkit) == Some(&b.record.id),
            users_files: b.record.users_files(&bytes),
            dir: b.dir.clone(),
        })
        .collect();
    if ctx.json {
        ctx.out_json(&views);
        return Ok(0);
    }
    if views.is_empty() {
        ctx.status("no backups yet: `cudnnm use` takes one before each change");
        return Ok(0);
    }
    let rows: Vec<[String; 7]> = views
        .iter()
        .map(|v| {
            [
                v.id.to_string(),
                v.created_at.clone(),
                v.files.to_string(),
                human_size(v.size),
                if v.first {
                    format!("{} (first)", v.held)
                } else if !v.users_files.is_empty() {
                    format!("{} (kept: yours: {})", v.held, v.users_files.join(", "))
                } else {
                    v.held.clone()
                },
                v.reason.clone(),
                v.toolkit.display().to_string(),
            ]
        })
        .collect();
    let header = ["ID", "WHEN", "FILES", "SIZE", "HELD", "WHY", "TOOLKIT"].map(String::from);
    let right = [true, false, true, true, false, false, false];
    for line in table(&header, &rows, right) {
        ctx.out(line);
    }
    Ok(0)
}

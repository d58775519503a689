//! `cudnnm backups [--cuda-root P]`: every backup, oldest first, with its
//! toolkit, when and why it was taken, what it holds, its size, and which is
//! each toolkit's first (its state before cudnnm, never pruned), and the
//! files of the user's own a backup keeps (never pruned either).
//! `cudnnm backups remove ID… [--force]` (also `backups --remove ID…`):
//! removes the backups named, all or none — a toolkit's first backup and a
//! backup keeping files of the user's own only with `--force` — and says what
//! each freed. `cudnnm backups prune [--keep N] [--cuda-root P]`: removes old
//! backups as `use` does after each change (never a first backup, nor one
//! keeping files of the user's own).

use std::path::PathBuf;

use serde::Serialize;

use super::Ctx;
use super::support::{human_size, recover_if_pending, table};
use crate::deploy::backup;
use crate::error::{Error, Kind, Result};

#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    pub action: Option<Action>,
    /// Only backups of this CUDA toolkit root
    #[arg(long, value_name = "PATH")]
    pub cuda_root: Option<std::path::PathBuf>,
    /// Remove these backups (the same as `cudnnm backups remove ID…`)
    #[arg(long, value_name = "ID", num_args = 1..)]
    pub remove: Vec<String>,
    /// With --remove: also a toolkit's first backup, and a backup keeping files of yours
    #[arg(long, requires = "remove")]
    pub force: bool,
}

#[derive(clap::Subcommand, Debug)]
pub enum Action {
    /// Remove the backups named (all or none), saying what each frees
    Remove {
        /// Backup ids (`cudnnm backups` lists them)
        #[arg(value_name = "ID", required = true, num_args = 1..)]
        ids: Vec<String>,
        /// Also remove a toolkit's first backup (its state before cudnnm),
        /// and a backup keeping files of yours (they are deleted with it)
        #[arg(long)]
        force: bool,
    },
    /// Remove old backups: keep each toolkit's newest N, its first, and every
    /// backup keeping files of yours
    Prune {
        /// Backups to keep per toolkit besides those always kept (at least 1)
        /// [default: keep_backups in config.toml, else 5]
        #[arg(long, value_name = "N")]
        keep: Option<u32>,
        /// Only backups of this CUDA toolkit root
        #[arg(long, value_name = "PATH")]
        cuda_root: Option<PathBuf>,
    },
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
    /// Files of the user's own it holds (kept until `backups remove ID --force`).
    users_files: Vec<String>,
    /// Their bytes.
    users_bytes: u64,
    dir: PathBuf,
}

impl BackupView {
    /// The HELD column: what it held, then whether it is the toolkit's
    /// first backup and the files of yours it keeps, with their count and
    /// bytes (`7.6.5 (not from cudnnm) (first; yours: 2 files, 1.2 KiB:
    /// include/cudnn.h, lib64/libcudnn_myplugin.so.9)`).
    fn held_text(&self) -> String {
        let mut tags = Vec::new();
        if self.first {
            tags.push("first".to_string());
        }
        if !self.users_files.is_empty() {
            tags.push(format!(
                "yours: {} file{}, {}: {}",
                self.users_files.len(),
                if self.users_files.len() == 1 { "" } else { "s" },
                human_size(self.users_bytes),
                self.users_files.join(", ")
            ));
        }
        if tags.is_empty() {
            self.held.clone()
        } else {
            format!("{} ({})", self.held, tags.join("; "))
        }
    }
}

/// What one removal did, for `--json`.
#[derive(Serialize)]
struct RemovedView {
    id: u64,
    toolkit: PathBuf,
    /// Bytes given back to the disk (files with no other hard link left).
    freed: u64,
    /// Files of the user's own deleted with it (only with --force).
    users_files: Vec<String>,
}

/// Prints what was removed and the total freed.
fn report_removed(ctx: &Ctx, removed: &[backup::Removed], what: &str) {
    if ctx.json {
        let views: Vec<RemovedView> = removed
            .iter()
            .map(|r| RemovedView {
                id: r.id,
                toolkit: r.toolkit.clone(),
                freed: r.freed,
                users_files: r.users_files.clone(),
            })
            .collect();
        ctx.out_json(&views);
        return;
    }
    if removed.is_empty() {
        ctx.status(format!("no backups to remove ({what})"));
        return;
    }
    for r in removed {
        let yours = if r.users_files.is_empty() {
            String::new()
        } else {
            format!(
                " and the files of yours it kept: {}",
                r.users_files.join(", ")
            )
        };
        ctx.status(format!(
            "removed backup {} of '{}' ({} freed){yours}",
            r.id,
            r.toolkit.display(),
            human_size(r.freed)
        ));
    }
    if removed.len() > 1 {
        let total: u64 = removed.iter().map(|r| r.freed).sum();
        ctx.status(format!(
            "removed {} backups, {} freed",
            removed.len(),
            human_size(total)
        ));
    }
}

/// `remove ID…`: every id checked before any is removed.
fn remove(ctx: &Ctx, ids: &[String], force: bool) -> Result<u8> {
    let ids = ids
        .iter()
        .map(|s| backup::parse_id(s))
        .collect::<Result<Vec<u64>>>()?;
    let _lock = ctx.lock()?;
    let removed = backup::remove_checked(&ctx.home, &ids, force)?;
    report_removed(ctx, &removed, "");
    Ok(0)
}

/// `prune [--keep N]`: per toolkit, as `use` prunes after a change.
fn prune(ctx: &Ctx, keep: Option<u32>, root: Option<PathBuf>) -> Result<u8> {
    let filter = root.map(|p| toolkit_filter(ctx, p)).transpose()?;
    let keep = match keep {
        // The newest backup is what `rollback` restores: removing it goes
        // by its id, never by a count.
        Some(0) => {
            return Err(Error::new(
                Kind::Usage,
                "--keep 0 would remove each toolkit's newest backup, the one `cudnnm rollback` restores",
            )
            .hint("keep at least 1 (`cudnnm backups prune --keep 1`), or remove that backup by its id with `cudnnm backups remove ID` (`cudnnm backups` lists them)"));
        }
        Some(k) => k,
        None => ctx.home.config()?.backups_to_keep(),
    };
    let _lock = ctx.lock()?;
    let mut roots: Vec<PathBuf> = backup::list(&ctx.home)?
        .into_iter()
        .map(|b| b.record.toolkit)
        .filter(|t| filter.as_ref().is_none_or(|f| t == f))
        .collect();
    roots.sort();
    roots.dedup();
    let mut removed = Vec::new();
    for r in &roots {
        removed.extend(backup::prune_freeing(&ctx.home, r, keep)?);
    }
    report_removed(
        ctx,
        &removed,
        &format!(
            "each toolkit keeps its first backup, its newest {}, and those keeping files of yours",
            keep.max(1)
        ),
    );
    Ok(0)
}

/// `--cuda-root P` as the records spell toolkit roots.
fn toolkit_filter(ctx: &Ctx, p: PathBuf) -> Result<PathBuf> {
    let p = if p.is_absolute() {
        p
    } else {
        ctx.env.cwd().join(p)
    };
    // A toolkit whose folder is gone still has its backups listed by its root.
    let recorded = || {
        backup::list(&ctx.home)
            .unwrap_or_default()
            .iter()
            .any(|b| b.record.toolkit == p)
    };
    if std::fs::metadata(&p).is_err() {
        if recorded() {
            return Ok(p);
        }
        return Err(Error::new(
            Kind::NotFound,
            format!("--cuda-root '{}' does not exist", p.display()),
        )
        .hint("name the toolkit folder (`cudnnm toolkits` lists those cudnnm knows), or leave out --cuda-root to list every backup"));
    }
    // Spelled as the records are: no `\\?\` prefix on Windows.
    Ok(crate::fsops::canonical_or_self(&p))
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    recover_if_pending(ctx)?;
    match args.action {
        Some(Action::Remove { ids, force }) => return remove(ctx, &ids, force),
        Some(Action::Prune { keep, cuda_root }) => return prune(ctx, keep, cuda_root),
        None if !args.remove.is_empty() => return remove(ctx, &args.remove, args.force),
        None => {}
    }
    let filter = args.cuda_root.map(|p| toolkit_filter(ctx, p)).transpose()?;
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
        .map(|b| {
            let users: Vec<&backup::BackupFile> = b.record.users(&bytes).collect();
            BackupView {
                id: b.record.id,
                toolkit: b.record.toolkit.clone(),
                created_at: b.record.created_at.clone(),
                reason: b.record.reason.clone(),
                held: b.record.held.clone(),
                release: b.record.deployment.as_ref().map(|d| d.release.to_string()),
                files: b.record.files.len(),
                size: b.record.size(),
                first: firsts.get(&b.record.toolkit) == Some(&b.record.id),
                users_files: users.iter().map(|f| f.path.clone()).collect(),
                users_bytes: users.iter().map(|f| f.entry.size()).sum(),
                dir: b.dir.clone(),
            }
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
                v.held_text(),
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

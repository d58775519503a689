//! `cudnnm backups [--cuda-root P]`: every backup, oldest first, with its
//! toolkit, when and why it was taken, what it holds, its size, and which is
//! each toolkit's first (its state before cudnnm, never pruned), and the
//! files of the user's own a backup keeps (never pruned either).
//! `cudnnm backups show ID` lists every file of the user's own one keeps
//! (the table counts them past a few).
//! `cudnnm backups remove ID… [--force]` (also `backups --remove ID…`):
//! removes the backups named, all or none — a toolkit's first backup and a
//! backup keeping files of the user's own only with `--force` — and says what
//! each freed. `cudnnm backups prune [--keep N] [--cuda-root P]`: removes old
//! backups as `use` does after each change (never a first backup, nor one
//! keeping files of the user's own). The decisions are in
//! [`crate::ops::backups`] and the guard, which runs each removal as one
//! journaled change; this file parses and renders (text or `--json`).

use std::path::PathBuf;

use serde::Serialize;

use super::Ctx;
use super::support::{guard, human_size, recover_if_pending, table};
use crate::deploy::backup::{self, Removed};
use crate::error::Result;
use crate::ops::backups::{self as ops, BackupView};

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
    /// Show one backup: its toolkit, when and why it was taken, what it
    /// held, and every file of yours it keeps
    Show {
        /// The backup id (`cudnnm backups` lists them)
        #[arg(value_name = "ID")]
        id: String,
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

/// Files of yours named in the HELD column; more are counted, and listed
/// by `backups show ID`.
const NAMED_IN_TABLE: usize = 3;

/// The HELD column: what it held, then whether it is the toolkit's first
/// backup and the files of yours it keeps, with their count and bytes
/// (`7.6.5 (not from cudnnm) (first; yours: 2 files, 1.2 KiB:
/// include/cudnn.h, lib64/libcudnn_myplugin.so.9)`); past
/// [`NAMED_IN_TABLE`] files, the command that lists them instead of names.
fn held_text(v: &BackupView) -> String {
    let mut tags = Vec::new();
    if v.first {
        tags.push("first".to_string());
    }
    if !v.users_files.is_empty() {
        let n = v.users_files.len();
        let which = if n <= NAMED_IN_TABLE {
            format!(": {}", v.users_files.join(", "))
        } else {
            format!("; `cudnnm backups show {}` lists them", v.id)
        };
        tags.push(format!(
            "yours: {n} file{}, {}{which}",
            if n == 1 { "" } else { "s" },
            human_size(v.users_bytes),
        ));
    }
    if tags.is_empty() {
        v.held.clone()
    } else {
        format!("{} ({})", v.held, tags.join("; "))
    }
}

/// What one removal did, for `--json`.
#[derive(Serialize)]
struct RemovedView<'a> {
    id: u64,
    toolkit: &'a PathBuf,
    /// Bytes given back to the disk (files with no other hard link left).
    freed: u64,
    /// Files of the user's own deleted with it (only with --force).
    users_files: &'a [String],
}

/// Prints what was removed and the total freed.
fn report_removed(ctx: &Ctx, removed: &[Removed], what: &str) {
    if ctx.json {
        let views: Vec<RemovedView> = removed
            .iter()
            .map(|r| RemovedView {
                id: r.id,
                toolkit: &r.toolkit,
                freed: r.freed,
                users_files: &r.users_files,
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

/// `remove ID…`: every id checked before any is removed, under the guard.
fn remove(ctx: &Ctx, ids: &[String], force: bool) -> Result<u8> {
    let ids = ids
        .iter()
        .map(|s| backup::parse_id(s))
        .collect::<Result<Vec<u64>>>()?;
    let removed = guard(ctx)?.remove_backups(&ids, force)?;
    report_removed(ctx, &removed, "");
    Ok(0)
}

/// `prune [--keep N]`: per toolkit, as `use` prunes after a change.
fn prune(ctx: &Ctx, keep: Option<u32>, root: Option<PathBuf>) -> Result<u8> {
    let filter = root
        .map(|p| ops::toolkit_filter(&ctx.home, &ctx.env, p))
        .transpose()?;
    let keep = ops::keep_count(&ctx.home, keep)?;
    let pruned = ops::prune(&guard(ctx)?, keep, filter.as_deref())?;
    report_removed(
        ctx,
        &pruned.removed,
        &format!(
            "each toolkit keeps its first backup, its newest {}, and those keeping files of yours",
            pruned.keep
        ),
    );
    Ok(0)
}

/// `show ID`: one backup, every file of yours it keeps on a line of its own.
fn show(ctx: &Ctx, id: &str) -> Result<u8> {
    let id = backup::parse_id(id)?;
    recover_if_pending(ctx)?;
    let v = ops::find(&ctx.home, id)?;
    if ctx.json {
        ctx.out_json(&v);
        return Ok(0);
    }
    ctx.out(format!("backup {} of '{}'", v.id, v.toolkit.display()));
    ctx.out(format!("taken: {} ({})", v.created_at, v.reason));
    ctx.out(format!(
        "held: {}{}",
        v.held,
        if v.first {
            " (the toolkit's first backup: its state before cudnnm)"
        } else {
            ""
        }
    ));
    ctx.out(format!("files: {}, {}", v.files, human_size(v.size)));
    ctx.out(format!("folder: '{}'", v.dir.display()));
    if !v.users_files.is_empty() {
        ctx.out(format!(
            "yours ({} file{}, {}; kept until `cudnnm backups remove {} --force`):",
            v.users_files.len(),
            if v.users_files.len() == 1 { "" } else { "s" },
            human_size(v.users_bytes),
            v.id
        ));
        for f in &v.users_files {
            ctx.out(format!("  {f}"));
        }
    }
    Ok(0)
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    match args.action {
        Some(Action::Remove { ids, force }) => return remove(ctx, &ids, force),
        Some(Action::Prune { keep, cuda_root }) => return prune(ctx, keep, cuda_root),
        Some(Action::Show { id }) => return show(ctx, &id),
        None if !args.remove.is_empty() => return remove(ctx, &args.remove, args.force),
        None => {}
    }
    recover_if_pending(ctx)?;
    let filter = args
        .cuda_root
        .map(|p| ops::toolkit_filter(&ctx.home, &ctx.env, p))
        .transpose()?;
    let views = ops::list(&ctx.home, filter.as_deref())?;
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
                held_text(v),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn view(users: usize) -> BackupView {
        BackupView {
            id: 3,
            toolkit: PathBuf::from("/usr/local/cuda-12.4"),
            created_at: "2026-01-01T00:00:00Z".into(),
            reason: "before use 9.12.0.46_cuda12".into(),
            held: "8.9.7 (not from cudnnm)".into(),
            release: None,
            files: users,
            size: 2048,
            first: true,
            users_files: (0..users)
                .map(|i| format!("lib64/libmine_{i}.so"))
                .collect(),
            users_bytes: 2048,
            dir: PathBuf::from("/h/backups/3"),
        }
    }

    #[test]
    fn the_table_names_a_few_files_of_yours_and_counts_many() {
        assert_eq!(
            held_text(&view(2)),
            "8.9.7 (not from cudnnm) (first; yours: 2 files, 2.0 KiB: lib64/libmine_0.so, lib64/libmine_1.so)"
        );
        assert_eq!(
            held_text(&view(25)),
            "8.9.7 (not from cudnnm) (first; yours: 25 files, 2.0 KiB; `cudnnm backups show 3` lists them)"
        );
    }
}

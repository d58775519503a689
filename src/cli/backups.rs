//! `cudnnm backups [--cuda-root P]`: every backup, oldest first, with its
//! toolkit, when and why it was taken, what it holds, its size, and which is
//! each toolkit's first (its state before cudnnm, never pruned).

use std::path::PathBuf;

use serde::Serialize;

use super::Ctx;
use super::use_::recover_if_pending;
use crate::deploy::backup;
use crate::error::Result;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only backups of this CUDA toolkit root
    #[arg(long, value_name = "PATH")]
    pub cuda_root: Option<std::path::PathBuf>,
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
    dir: PathBuf,
}

/// `1.2 GiB`, `830 KiB`, `12 B`.
pub(super) fn human_size(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    recover_if_pending(ctx)?;
    let filter = args.cuda_root.map(|p| {
        let p = if p.is_absolute() {
            p
        } else {
            ctx.env.cwd().join(p)
        };
        std::fs::canonicalize(&p).unwrap_or(p)
    });
    let all = backup::list(&ctx.home)?;
    let mut firsts = std::collections::BTreeMap::new();
    for b in &all {
        firsts
            .entry(b.record.toolkit.clone())
            .or_insert(b.record.id);
    }
    let views: Vec<BackupView> = all
        .iter()
        .filter(|b| filter.as_ref().is_none_or(|f| &b.record.toolkit == f))
        .map(|b| BackupView {
            id: b.record.id,
            toolkit: b.record.toolkit.clone(),
            created_at: b.record.created_at.clone(),
            reason: b.record.reason.clone(),
            held: b.record.held.clone(),
            release: b.record.deployment.as_ref().map(|d| d.release.clone()),
            files: b.record.files.len(),
            size: b.record.size(),
            first: firsts.get(&b.record.toolkit) == Some(&b.record.id),
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
    ctx.out(format!(
        "{:>4}  {:<20}  {:>5}  {:>10}  {:<28}  {:<32}  TOOLKIT",
        "ID", "WHEN", "FILES", "SIZE", "HELD", "WHY"
    ));
    for v in &views {
        let held = if v.first {
            format!("{} (first)", v.held)
        } else {
            v.held.clone()
        };
        ctx.out(format!(
            "{:>4}  {:<20}  {:>5}  {:>10}  {:<28}  {:<32}  {}",
            v.id,
            v.created_at,
            v.files,
            human_size(v.size),
            held,
            v.reason,
            v.toolkit.display()
        ));
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_read_well() {
        assert_eq!(super::human_size(12), "12 B");
        assert_eq!(super::human_size(1536), "1.5 KiB");
        assert_eq!(super::human_size(1_268_000_000), "1.2 GiB");
    }
}

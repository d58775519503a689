//! `cudnnm backups [--cuda-root P]`: every backup, oldest first, with its
//! toolkit, when and why it was taken, what it holds, its size, and which is
//! each toolkit's first (its state before cudnnm, never pruned).

use std::path::PathBuf;

use serde::Serialize;

use super::Ctx;
use super::use_::recover_if_pending;
use crate::deploy::backup;
use crate::error::{Error, Kind, Result};

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
                } else {
                    v.held.clone()
                },
                v.reason.clone(),
                v.toolkit.display().to_string(),
            ]
        })
        .collect();
    let header = ["ID", "WHEN", "FILES", "SIZE", "HELD", "WHY", "TOOLKIT"].map(String::from);
    for line in table(&header, &rows) {
        ctx.out(line);
    }
    Ok(0)
}

/// The backups table: every column as wide as its widest cell (ids of any
/// length, long "held" labels), numbers right-aligned, the last column unpadded.
fn table(header: &[String; 7], rows: &[[String; 7]]) -> Vec<String> {
    let mut width = [0usize; 7];
    for r in std::iter::once(header).chain(rows) {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let right = [true, false, true, true, false, false, false];
    std::iter::once(header)
        .chain(rows)
        .map(|r| {
            let cells: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(i, c)| match (i, right[i]) {
                    (6, _) => c.clone(),
                    (_, true) => format!("{c:>w$}", w = width[i]),
                    (_, false) => format!("{c:<w$}", w = width[i]),
                })
                .collect();
            cells.join("  ")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_table_aligns_every_column_for_long_ids_and_labels() {
        let header = ["ID", "WHEN", "FILES", "SIZE", "HELD", "WHY", "TOOLKIT"].map(String::from);
        let row = |id: &str, held: &str| {
            [
                id,
                "2026-01-01T00:00:00Z",
                "3",
                "12 B",
                held,
                "before use x",
                "/tk",
            ]
            .map(String::from)
        };
        let lines = super::table(
            &header,
            &[
                row("9", "7.6.5 (not from cudnnm) (first)"),
                row("10", "no cuDNN"),
                row("12345", "9.1.0.70"),
            ],
        );
        // Every line's WHEN and TOOLKIT columns start at the same place.
        let at = |l: &str, what: &str| l.find(what).unwrap();
        assert_eq!(at(&lines[0], "WHEN"), 7);
        for l in &lines[1..] {
            assert_eq!(at(l, "2026"), 7, "{lines:#?}");
            assert_eq!(at(l, "/tk"), at(&lines[0], "TOOLKIT"), "{lines:#?}");
        }
        assert!(lines[2].starts_with("   10  "), "{lines:#?}");
        assert!(lines[3].starts_with("12345  "), "{lines:#?}");
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(super::human_size(12), "12 B");
        assert_eq!(super::human_size(1536), "1.5 KiB");
        assert_eq!(super::human_size(1_268_000_000), "1.2 GiB");
    }
}

//! `cudnnm du [--json]`: where the home's disk space goes — the store by
//! release, the backups (each one's own bytes and those it shares through
//! hard links), the download cache and the rest, each file counted once.

use super::Ctx;
use super::support::{human_size, table};
use crate::error::Result;
use crate::usage;

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(ctx: &Ctx, _args: Args) -> Result<u8> {
    super::support::recover_if_pending(ctx)?;
    let u = usage::measure(&ctx.home)?;
    if ctx.json {
        ctx.out_json(&u);
        return Ok(0);
    }
    let mut rows: Vec<[String; 3]> = Vec::new();
    rows.push(["store".into(), human_size(u.store), String::new()]);
    for r in &u.releases {
        let note = if r.own < r.bytes {
            format!(
                "uninstall frees {} ({} shared with backups or toolkits)",
                human_size(r.own),
                human_size(r.bytes - r.own)
            )
        } else {
            String::new()
        };
        rows.push([format!("  {}", r.release), human_size(r.bytes), note]);
    }
    rows.push([
        "backups".into(),
        human_size(u.backups_total),
        "not counting bytes they share with the store".into(),
    ]);
    for b in &u.backups {
        // The size `backups` shows (the files it holds); the note says what
        // its folder takes with the record.
        rows.push([
            format!("  {}", b.id),
            human_size(b.files),
            format!(
                "{} on disk with its record (own {}, shared {}); {}",
                human_size(b.bytes),
                human_size(b.own),
                human_size(b.shared),
                b.toolkit.display()
            ),
        ]);
    }
    let mut note = "`cudnnm cache` lists them".to_string();
    if u.pip_downloads > 0 {
        note.push_str(&format!(
            "; {} in pip's download folders (`.pip-*`)",
            human_size(u.pip_downloads)
        ));
    }
    rows.push(["downloads".into(), human_size(u.downloads), note]);
    rows.push([
        "other".into(),
        human_size(u.other),
        "records, journal, config".into(),
    ]);
    rows.push([
        "total".into(),
        human_size(u.total),
        format!("'{}', each file once", u.home.display()),
    ]);
    let header = ["WHAT", "SIZE", "NOTE"].map(String::from);
    for line in table(&header, &rows, [false, true, false]) {
        ctx.out(line);
    }
    Ok(0)
}

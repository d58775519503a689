//! `cudnnm uninstall SPEC`: remove one release from the store. The
//! decisions are [`crate::ops::uninstall`]'s (refused, unless `--force`,
//! while anything needs the release — every blocker named at once with the
//! command that clears it); this file parses the arguments, runs it under
//! the guard and says what happened: the bytes freed, where the rest
//! stays and the command that gives it back, the links and default that
//! went with it (or `--json`).

use super::Ctx;
use super::support::{guard, human_size, known_toolkits, printed};
use crate::command::CommandLine;
use crate::deploy::{Deployments, Mode};
use crate::error::Result;
use crate::ops::uninstall::{
    self, Context, KeptFiles, Request, StaysDeployed, StaysIn, SystemCheck, Uninstalled, plural,
};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The release to remove (8.1.0.77, 8.9.7.29_cuda12, or a prefix matching one release)
    pub spec: String,
    /// Remove it even while deployed in a toolkit, or while it is the default
    /// (the default is cleared and its `current/` link removed), or while
    /// backups need its files (they are kept in the backups first, as hard
    /// links sharing one copy)
    #[arg(long)]
    pub force: bool,
    /// Work on the system store (--system-home), which every user of the machine
    /// reads; needs root or Administrator (or write access an admin gave)
    #[arg(long)]
    pub system: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let req = Request {
        spec: args.spec.parse()?,
        force: args.force,
    };
    let guard = guard(ctx)?;
    // `--system`: the toolkits this machine shows or the system home
    // records, scanned for users' links into the release.
    let toolkits = if ctx.home.is_system() {
        known_toolkits(ctx, &Deployments::load(&ctx.home)?)
    } else {
        Vec::new()
    };
    let cx = Context {
        guard: &guard,
        user_home: ctx.user_home.as_ref(),
        system_home: &ctx.system_home,
        toolkits,
    };
    let done = uninstall::uninstall(&cx, &req)?;
    if ctx.json {
        ctx.out_json(&done);
    } else {
        report(ctx, &done);
    }
    drop(cx);
    drop(guard);
    // No modulefile names the release any more.
    crate::ops::export::refresh(&ctx.ops());
    Ok(0)
}

/// Says what the uninstall did, in the order it happened.
fn report(ctx: &Ctx, u: &Uninstalled) {
    let id = u.release.to_string();
    if let Some(s) = &u.system {
        report_system(ctx, &id, s);
    }
    for d in &u.stays_deployed {
        ctx.warn(stays_deployed(&id, d));
    }
    for k in &u.kept {
        ctx.status(kept(&id, k));
    }
    if u.receipt_unreadable {
        ctx.status(format!(
            "removed cuDNN {id} ('{}', whose receipt could not be read; {} freed)",
            u.dir.display(),
            human_size(u.freed)
        ));
        return;
    }
    ctx.status(format!(
        "removed cuDNN {id} ({} freed{})",
        human_size(u.freed),
        stays_text(u)
    ));
    for l in &u.links_removed {
        ctx.warn(format!(
            "removed '{}', which pointed at cuDNN {id}",
            l.display()
        ));
    }
    if let Some(was) = &u.default_cleared {
        let set = printed(ctx, CommandLine::default_("SPEC"));
        ctx.warn(format!(
            "cleared the default cuDNN (was {was}); set another with `{set}`"
        ));
    }
}

/// `--system --force`: what will dangle, and what could be checked.
fn report_system(ctx: &Ctx, id: &str, s: &SystemCheck) {
    for line in &s.uses {
        ctx.warn(format!("{line}; its links into cuDNN {id} will dangle"));
    }
    let this_home = match &s.user_home {
        Some(h) => format!(
            ", and home '{}' (its deployments.toml, default and backups)",
            h.display()
        ),
        None => String::new(),
    };
    ctx.warn(format!(
        "checked the {} this machine shows or the homes record{this_home} for links into cuDNN {id} and changes in flight; other users' own defaults, pins, backups and toolkits elsewhere are in their homes, which cudnnm cannot see; a user whose default was cuDNN {id} is told so by their next command, with the releases still installed and how to choose one",
        plural(s.toolkits, "toolkit", "toolkits")
    ));
}

/// `; 157.5 MiB of its files stay on disk: backups 2, 4 hold …`: where
/// the bytes that were not freed are, and the command that frees them.
fn stays_text(u: &Uninstalled) -> String {
    if u.shared == 0 {
        return String::new();
    }
    let places: Vec<String> = u
        .stays_in
        .iter()
        .map(|s| match s {
            StaysIn::Backups {
                ids,
                frees,
                command,
            } => format!(
                "{} {} hold{} what {} to restore (`{command}` gives back {})",
                if ids.len() == 1 { "backup" } else { "backups" },
                ids.iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                if ids.len() == 1 { "s" } else { "" },
                if ids.len() == 1 {
                    "it needs"
                } else {
                    "they need"
                },
                human_size(*frees)
            ),
            StaysIn::Toolkit { toolkit, command } => format!(
                "'{}' still holds its hard-linked files (`{command}` switches it)",
                toolkit.display()
            ),
        })
        .collect();
    if places.is_empty() {
        return format!(
            "; {} of its files stay on disk, shared with backups or toolkits that still need them",
            human_size(u.shared)
        );
    }
    format!(
        "; {} of its files stay on disk, shared with backups or toolkits that still need them: {}",
        human_size(u.shared),
        places.join("; ")
    )
}

/// `kept 3 files of cuDNN … in backup 2 (of '/tk') so it can still be restored …`.
fn kept(id: &str, k: &KeptFiles) -> String {
    format!(
        "kept {} of cuDNN {id} in backup {} (of '{}') so it can still be restored while that backup is kept (later changes prune backups beyond config keep_backups, a toolkit's first one never){}",
        plural(k.files, "file", "files"),
        k.backup,
        k.toolkit.display(),
        if k.copied > 0 {
            format!(
                " ({} copied: no hard link could be made)",
                human_size(k.copied)
            )
        } else {
            String::new()
        }
    )
}

/// What `uninstall --force` leaves in a toolkit that still deploys release
/// `id`, as its mode makes it: a link into the store dangles; a copy or a
/// hard link holds its own bytes and keeps working, and `verify` then
/// calls the deployment orphaned (whole, no receipt to check against).
fn stays_deployed(id: &str, d: &StaysDeployed) -> String {
    let root = d.toolkit.display();
    match d.mode {
        Mode::Symlink => format!(
            "cuDNN {id} stays deployed in '{root}' (symlink): its links there will dangle until you `use` another release there or install {id} again"
        ),
        Mode::Copy | Mode::Hardlink => format!(
            "cuDNN {id} stays deployed in '{root}' ({}): {} there stay and keep working; `cudnnm verify` calls the deployment orphaned until you install {id} again or `use` another release there",
            d.mode,
            if d.mode == Mode::Copy {
                "its copies"
            } else {
                "its hard-linked files (and their bytes on disk)"
            }
        ),
    }
}

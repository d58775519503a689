//! `cudnnm export dir DEST SPEC [--prefix PATH]`: one release written out as
//! a plain folder (`include/`, `lib/` with its soname chain of links, `bin/`
//! for Windows builds, and the receipt) plus `cudnn.env` (`cudnn.env.cmd`
//! for a Windows build), shell lines that put it in front of the path lists
//! ([`crate::export_tree::env_file`]). Made for `COPY --from=` into a
//! container image or a read-only volume: the folder needs neither cudnnm
//! nor its store. Built beside DEST and renamed into place, so a failure
//! leaves no half folder; an empty DEST in a folder the user may not write
//! is filled in place instead (emptied again on failure). Re-running it
//! into its own earlier output replaces that output (marked by
//! `.cudnnm-export.toml`, checked to hold only what cudnnm wrote); any
//! other non-empty DEST is refused. An earlier export that cannot be
//! removed is left beside DEST with a warning, and removed by the next run
//! into DEST, with the build folders killed runs left. The folder work is
//! [`crate::export_tree`]'s, through folder handles that never follow a
//! link (DEST may be in a folder other users write, and root may run this).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Ctx;
use super::support::{machine_offers, printed};
use crate::catalog::offer::{Advice, advise, not_installed_hint};
use crate::error::{Error, Kind, Result};
use crate::export_tree;
use crate::fsops;
use crate::home::Home;
use crate::store::{Release, Store};
use crate::version::Spec;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The folder to create (new, empty, or an earlier export of cudnnm's, which it replaces)
    pub dest: PathBuf,
    /// The release (9.27.0.42_cuda12, 9.27, …)
    pub spec: String,
    /// Where the folder will be seen by its users (in the image:
    /// /opt/cudnn) [default: DEST]
    #[arg(long, value_name = "PATH")]
    pub prefix: Option<String>,
    /// Take the release from the system store only
    #[arg(long)]
    pub system: bool,
}

#[derive(Serialize)]
struct Report {
    release: String,
    dest: String,
    files: usize,
    env_file: String,
    /// The release of the earlier export this one replaced.
    replaced: Option<String>,
    env: Vec<export_tree::EnvVar>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let spec: Spec = args.spec.parse()?;
    let store = if args.system {
        Store::new(&Home::system(ctx.system_home.clone()))
    } else {
        Store::new(&ctx.home)
    };
    let release = store.resolve(&spec).map_err(|e| {
        // What the catalog has for this machine, by the rule every install hint follows.
        let windows = ctx.env.is_windows();
        let offers = machine_offers(ctx);
        let advice = advise(&offers, &spec, None);
        let words = match (args.system, advice) {
            // The system store's releases come from the administrator.
            (true, Advice::Install(o)) => format!(
                "an administrator installs it there: `{}`",
                super::support::on_system(ctx, o.install(), true)
                    .sudo()
                    .for_host(windows)
            ),
            (true, a) => a.hint(&|c| {
                super::support::on_system(ctx, c, true)
                    .sudo()
                    .for_host(windows)
            }),
            (false, a) => a.hint(&|c| printed(ctx, c)),
        };
        e.hint(not_installed_hint(&store.nearest(&spec), &words))
    })?;
    let dest = ctx.env.cwd().join(&args.dest);
    // A copy inside a cudnnm home would be taken for a release of its store.
    let resolved = match dest.file_name() {
        Some(name) => fsops::canonical_or_self(fsops::parent_of(&dest)).join(name),
        None => fsops::canonical_or_self(&dest),
    };
    for home in [ctx.home.root(), ctx.system_home.as_path()] {
        if resolved.starts_with(fsops::canonical_or_self(home)) {
            return Err(Error::new(
                Kind::Usage,
                format!(
                    "'{}' is inside the cudnnm home '{}'",
                    dest.display(),
                    home.display()
                ),
            )
            .hint("export to a folder outside the home (cudnnm manages everything in it)"));
        }
    }
    let windows = release.platform().is_windows();
    let prefix = args
        .prefix
        .clone()
        .unwrap_or_else(|| dest.display().to_string());
    let env = export_tree::variables(&prefix, windows);

    let parent = fsops::parent_of(&dest);
    fsops::create_dir_all(parent)?;
    let started = std::time::SystemTime::now();
    // DEST's folder may be one others can write: every change in it is made
    // through its handle (`export_tree`), never through a link.
    let parent_dir = fsops::at::open_dir(parent)?;
    let dest_name = dest
        .file_name()
        .ok_or_else(|| Error::new(Kind::Usage, format!("'{}' names no folder", dest.display())))?;
    // What killed runs left beside DEST, and an earlier export they moved aside.
    for (left, err) in export_tree::sweep(&parent_dir, dest_name, started) {
        warn_left(ctx, &dest, &left, &err);
    }
    // An earlier export of ours may be replaced; anything else is refused.
    // Checked after the sweep, which may have moved DEST back.
    let empty_dir = std::fs::read_dir(&dest).is_ok_and(|mut d| d.next().is_none());
    let earlier = if dest.exists() && !empty_dir {
        Some(export_tree::check_earlier(&dest)?)
    } else {
        None
    };
    let env_name = match export_tree::Build::begin(&parent_dir) {
        Ok(build) => {
            let name = export_tree::write_release(&build.dir, &release, &env, windows)
                .and_then(|n| fsops::make_tree_shared_at(&build.dir).map(|()| n));
            let name = match name {
                Ok(n) => n,
                Err(e) => {
                    let _ = fsops::at::remove_tree_in(&parent_dir, build.name());
                    return Err(e);
                }
            };
            let earlier_there = earlier.is_some();
            if let Some((left, e)) =
                export_tree::put_in_place(&parent_dir, build, dest_name, earlier_there)?
            {
                warn_left(ctx, &dest, &left, &e);
            }
            name
        }
        // An empty DEST of the user's in a folder they may not write: filled in place.
        Err(e) if empty_dir && e.kind() == Kind::Permission => {
            fill_in_place(&dest, &release, &env, windows)?
        }
        Err(e) if e.kind() == Kind::Permission => {
            return Err(Error::new(
                Kind::Permission,
                format!(
                    "could not export to '{}': its folder '{}' is not writable, and the export is built beside it",
                    dest.display(),
                    parent.display()
                ),
            )
            .cause(e.causes().first().cloned().unwrap_or_default())
            .hint(format!(
                "choose a DEST in a folder you may write to, or an empty folder of yours (cudnnm fills that in place){}",
                if earlier.is_some() {
                    format!("; to re-export here, empty '{}' first", dest.display())
                } else {
                    String::new()
                }
            )));
        }
        Err(e) => return Err(e),
    };
    let report = Report {
        release: release.id(),
        dest: dest.display().to_string(),
        files: release.receipt.files.len(),
        env_file: dest.join(env_name).display().to_string(),
        replaced: earlier.map(|e| e.release),
        env,
    };
    if ctx.json {
        ctx.out_json(&report);
    } else {
        ctx.status(format!(
            "exported cuDNN {} ({} files) to '{}'{}; the variables to set are in '{}'",
            report.release,
            report.files,
            report.dest,
            report
                .replaced
                .as_ref()
                .map(|r| format!(" (replacing the earlier export of {r})"))
                .unwrap_or_default(),
            report.env_file
        ));
    }
    Ok(0)
}

/// Writes the export straight into `dest`, an empty folder whose parent
/// cannot take a folder built beside it. On failure everything written
/// into `dest` is removed again, leaving it empty as it was.
fn fill_in_place(
    dest: &Path,
    release: &Release,
    env: &[export_tree::EnvVar],
    windows: bool,
) -> Result<&'static str> {
    let dir = fsops::at::open_dir(dest)?;
    let done = export_tree::write_release(&dir, release, env, windows)
        .and_then(|name| fsops::make_tree_shared_at(&dir).map(|()| name));
    if done.is_err()
        && let Ok(entries) = dir.entries()
    {
        for (name, _) in entries {
            let _ = fsops::at::remove_tree_in(&dir, &name);
        }
    }
    done
}

/// The warning for a folder of an earlier export or build that could not be removed.
fn warn_left(ctx: &Ctx, dest: &Path, old: &Path, err: &Error) {
    let why = err.causes().first().map(String::as_str).unwrap_or("");
    let old = old.display();
    ctx.warn(format!(
        "could not remove the earlier export, moved aside to '{old}' ({why}); the next `cudnnm export dir` to '{}' removes it, or: chmod -R u+w '{old}' && rm -rf '{old}'",
        dest.display()
    ));
}

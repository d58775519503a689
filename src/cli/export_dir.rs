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
//! into DEST.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Ctx;
use super::support::{machine_offers, printed};
use crate::catalog::offer::{Advice, advise, not_installed_hint};
use crate::error::{Error, Kind, Result};
use crate::export_tree;
use crate::fsops;
use crate::home::Home;
use crate::store::{FileRecord, Release, Store};
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
    // An earlier export of ours may be replaced; anything else is refused.
    let empty_dir = std::fs::read_dir(&dest).is_ok_and(|mut d| d.next().is_none());
    let earlier = if dest.exists() && !empty_dir {
        Some(export_tree::check_earlier(&dest)?)
    } else {
        None
    };
    let windows = release.platform().is_windows();
    let prefix = args
        .prefix
        .clone()
        .unwrap_or_else(|| dest.display().to_string());
    let env = export_tree::variables(&prefix, windows);

    let parent = fsops::parent_of(&dest);
    fsops::create_dir_all(parent)?;
    // What cudnnm left of earlier exports into DEST that it could not remove.
    sweep_old_exports(ctx, &dest);
    let env_name = match tempfile::Builder::new()
        .prefix(".cudnnm-export-")
        .tempdir_in(parent)
    {
        Ok(tmp) => {
            let name = write_export(tmp.path(), &release, &env, windows)?;
            fsops::make_tree_shared(tmp.path())?;
            if empty_dir {
                fsops::remove_dir_if_empty(&dest);
            }
            let built = tmp.keep();
            replace(ctx, &dest, &built, earlier.is_some())?;
            name
        }
        // An empty DEST of the user's in a folder they may not write: filled in place.
        Err(e) if empty_dir && e.kind() == std::io::ErrorKind::PermissionDenied => {
            fill_in_place(&dest, &release, &env, windows)?
        }
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Err(Error::new(
                Kind::Permission,
                format!(
                    "could not export to '{}': its folder '{}' is not writable, and the export is built beside it",
                    dest.display(),
                    parent.display()
                ),
            )
            .cause(e)
            .hint(format!(
                "choose a DEST in a folder you may write to, or an empty folder of yours (cudnnm fills that in place){}",
                if earlier.is_some() {
                    format!("; to re-export here, empty '{}' first", dest.display())
                } else {
                    String::new()
                }
            )));
        }
        Err(e) => return Err(Error::io("create a folder in", parent, e)),
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

/// The prefix of the name an earlier export gets while its replacement
/// moves in ([`fsops::sibling`]: `.cudnnm-export-old-<pid>-<DEST's name>`).
const OLD_TAG: &str = "cudnnm-export-old";

/// Writes the release's files, its receipt, the env file and the marker
/// into the folder `to` (new or empty); returns the env file's name.
fn write_export(
    to: &Path,
    release: &Release,
    env: &[export_tree::EnvVar],
    windows: bool,
) -> Result<&'static str> {
    let mut written: Vec<FileRecord> = Vec::new();
    for f in &release.receipt.files {
        let dst = to.join(&f.path);
        fsops::create_dir_all(fsops::parent_of(&dst))?;
        match f.entry.link_target() {
            Some(target) => {
                fsops::symlink(Path::new(target), &dst)?;
                written.push(FileRecord::link(&f.path, target));
            }
            None => {
                let (size, sha) = fsops::copy_file_hashed(&release.dir.join(&f.path), &dst)?;
                written.push(FileRecord::file(&f.path, size, sha));
            }
        }
    }
    let (size, sha) = fsops::copy_file_hashed(
        &release.dir.join(crate::store::RECEIPT_FILE),
        &to.join(crate::store::RECEIPT_FILE),
    )?;
    written.push(FileRecord::file(crate::store::RECEIPT_FILE, size, sha));
    let title = format!(
        "cuDNN {} for CUDA {} ({}), exported by cudnnm; the variables that make it visible",
        release.version(),
        release.cuda(),
        release.platform()
    );
    let (env_name, text) = export_tree::env_file(&title, env, windows)?;
    fsops::write_atomic(&to.join(env_name), text.as_bytes())?;
    written.push(FileRecord::file(
        env_name,
        text.len() as u64,
        crate::hash::sha256_bytes(text.as_bytes()),
    ));
    fsops::save_toml(
        &to.join(export_tree::MARKER_FILE),
        &export_tree::Marker::new(release.id(), written),
        "export marker",
    )?;
    Ok(env_name)
}

/// Puts the export built at `built` in DEST's place. An earlier export
/// (`earlier`: only bytes cudnnm wrote, checked) moves aside first and is
/// removed after; when that removal fails the new export stands, and a
/// warning names the folder left and how to remove it.
fn replace(ctx: &Ctx, dest: &Path, built: &Path, earlier: bool) -> Result<()> {
    let old = fsops::sibling(dest, OLD_TAG);
    if earlier && let Err(e) = fsops::rename(dest, &old) {
        let _ = fsops::remove_dir_all(built);
        return Err(e);
    }
    if let Err(e) = fsops::rename(built, dest) {
        let _ = fsops::remove_dir_all(built);
        if earlier {
            let _ = fsops::rename(&old, dest);
        }
        return Err(e);
    }
    if earlier && let Err(e) = fsops::remove_own_tree(&old) {
        warn_left(ctx, dest, &old, &e);
    }
    Ok(())
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
    let done = write_export(dest, release, env, windows)
        .and_then(|name| fsops::make_tree_shared(dest).map(|()| name));
    if done.is_err() {
        let _ = fsops::set_readonly(dest, false);
        if let Ok(entries) = std::fs::read_dir(dest) {
            for e in entries.flatten() {
                let _ = fsops::remove_own_tree(&e.path());
            }
        }
    }
    done
}

/// Removes what earlier runs left of their replaced exports of `dest`:
/// folders beside it named exactly `.cudnnm-export-old-<pid>-<DEST's
/// name>` (made writable first: cudnnm wrote them). A folder it cannot
/// remove is warned about; nothing else is touched.
fn sweep_old_exports(ctx: &Ctx, dest: &Path) {
    let Some(name) = dest.file_name().and_then(|n| n.to_str()) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(fsops::parent_of(dest)) else {
        return;
    };
    let head = format!(".{OLD_TAG}-");
    for e in entries.flatten() {
        let file_name = e.file_name();
        let Some(pid) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(head.as_str()))
            .and_then(|rest| rest.strip_suffix(name))
            .and_then(|rest| rest.strip_suffix('-'))
        else {
            continue;
        };
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) || !is_dir {
            continue;
        }
        if let Err(err) = fsops::remove_own_tree(&e.path()) {
            warn_left(ctx, dest, &e.path(), &err);
        }
    }
}

/// The warning for an earlier export's folder that could not be removed.
fn warn_left(ctx: &Ctx, dest: &Path, old: &Path, err: &Error) {
    let why = err.causes().first().map(String::as_str).unwrap_or("");
    let old = old.display();
    ctx.warn(format!(
        "could not remove the earlier export, moved aside to '{old}' ({why}); the next `cudnnm export dir` to '{}' removes it, or: chmod -R u+w '{old}' && rm -rf '{old}'",
        dest.display()
    ));
}

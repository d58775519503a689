//! `export dir DEST SPEC [--prefix PATH]`: one release written out as a
//! plain folder (`include/`, `lib/` with its soname chain of links, `bin/`
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
//! removed is left beside DEST, reported, and removed by the next run
//! into DEST, with the build folders killed runs left. The folder work is
//! [`crate::export_tree`]'s, through folder handles that never follow a
//! link (DEST may be in a folder other users write, and root may run this).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::catalog::offer::{Advice, advise, not_installed_hint};
use crate::error::{Error, Kind, Result};
use crate::export_tree;
use crate::fsops;
use crate::home::Home;
use crate::ops::offers::machine_offers;
use crate::ops::{Event, Session};
use crate::store::{Release, Store};
use crate::version::Spec;

/// What `export dir` is asked.
#[derive(Clone, Debug)]
pub struct DirRequest {
    /// The folder to create (from the working folder when relative).
    pub dest: PathBuf,
    /// The release.
    pub spec: Spec,
    /// Where the folder will be seen by its users [default: DEST].
    pub prefix: Option<String>,
    /// Take the release from the system store only.
    pub system: bool,
}

/// What `export dir` did (`--json` prints it).
#[derive(Debug, Serialize)]
pub struct DirExported {
    /// The release exported.
    pub release: String,
    /// The folder written.
    pub dest: String,
    /// How many of the release's files it holds.
    pub files: usize,
    /// The env file (`cudnn.env`, `cudnn.env.cmd`).
    pub env_file: String,
    /// The release of the earlier export this one replaced.
    pub replaced: Option<String>,
    /// The variables the env file sets.
    pub env: Vec<export_tree::EnvVar>,
}

/// Exports the release `req.spec` names as a plain folder; see the module
/// documentation.
///
/// # Errors
/// No such release ([`Kind::NotFound`], with what installs it); DEST
/// inside a cudnnm home ([`Kind::Usage`]) or holding anything but an
/// earlier export; a folder that cannot be written ([`Kind::Permission`]).
pub fn export(session: &Session<'_>, req: &DirRequest) -> Result<DirExported> {
    let store = if req.system {
        Store::new(&Home::system(session.system_home))
    } else {
        Store::new(session.home)
    };
    let release = store
        .resolve(&req.spec)
        .map_err(|e| not_installed(session, &store, req, e))?;
    let dest = session.env.cwd().join(&req.dest);
    refuse_inside_home(session, &dest)?;
    let windows = release.platform().is_windows();
    let prefix = req
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
        left_behind(session, &dest, &left, &err);
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
            if let Some((left, e)) =
                export_tree::put_in_place(&parent_dir, build, dest_name, earlier.is_some())?
            {
                left_behind(session, &dest, &left, &e);
            }
            name
        }
        // An empty DEST of the user's in a folder they may not write: filled in place.
        Err(e) if empty_dir && e.kind() == Kind::Permission => {
            fill_in_place(&dest, &release, &env, windows)?
        }
        Err(e) if e.kind() == Kind::Permission => {
            return Err(parent_not_writable(&dest, parent, earlier.is_some(), &e));
        }
        Err(e) => return Err(e),
    };
    Ok(DirExported {
        release: release.id(),
        dest: dest.display().to_string(),
        files: release.receipt.files.len(),
        env_file: dest.join(env_name).display().to_string(),
        replaced: earlier.map(|e| e.release),
        env,
    })
}

/// The store holds no release `req.spec` names: `e` with what the catalog
/// has for this machine, by the rule every install hint follows (the
/// system store's releases come from the administrator).
fn not_installed(session: &Session<'_>, store: &Store, req: &DirRequest, e: Error) -> Error {
    let windows = session.env.is_windows();
    let offers = machine_offers(session);
    let advice = advise(&offers, &req.spec, None);
    let admin = |c| session.on_system(c, true).sudo().for_host(windows);
    let words = match (req.system, advice) {
        (true, Advice::Install(o)) => format!(
            "an administrator installs it there: `{}`",
            admin(o.install())
        ),
        (true, a) => a.hint(&admin),
        (false, a) => a.hint(&|c| session.printed(c)),
    };
    e.hint(not_installed_hint(&store.nearest(&req.spec), &words))
}

/// A copy inside a cudnnm home would be taken for a release of its store.
fn refuse_inside_home(session: &Session<'_>, dest: &Path) -> Result<()> {
    let resolved = match dest.file_name() {
        Some(name) => fsops::canonical_or_self(fsops::parent_of(dest)).join(name),
        None => fsops::canonical_or_self(dest),
    };
    for home in [session.home.root(), session.system_home] {
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
    Ok(())
}

/// The export is built beside DEST, in `parent`, which refused.
fn parent_not_writable(dest: &Path, parent: &Path, earlier: bool, e: &Error) -> Error {
    Error::new(
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
        if earlier {
            format!("; to re-export here, empty '{}' first", dest.display())
        } else {
            String::new()
        }
    ))
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

/// Reports a folder of an earlier export or build that could not be removed.
fn left_behind(session: &Session<'_>, dest: &Path, old: &Path, err: &Error) {
    session.report.event(&Event::ExportLeftBehind {
        old,
        dest,
        why: err.causes().first().map(String::as_str).unwrap_or(""),
    });
}

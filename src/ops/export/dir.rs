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
//! into DEST.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::catalog::offer::{Advice, advise, not_installed_hint};
use crate::error::{Error, Kind, Result};
use crate::export_tree;
use crate::fsops;
use crate::home::Home;
use crate::ops::offers::machine_offers;
use crate::ops::{Event, Session};
use crate::progress::Progress;
use crate::store::{FileRecord, Release, Store};
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
    // An earlier export of ours may be replaced; anything else is refused.
    let empty_dir = std::fs::read_dir(&dest).is_ok_and(|mut d| d.next().is_none());
    let earlier = if dest.exists() && !empty_dir {
        Some(export_tree::check_earlier(&dest)?)
    } else {
        None
    };
    let windows = release.platform().is_windows();
    let prefix = req
        .prefix
        .clone()
        .unwrap_or_else(|| dest.display().to_string());
    let env = export_tree::variables(&prefix, windows);
    let parent = fsops::parent_of(&dest);
    fsops::create_dir_all(parent)?;
    // What cudnnm left of earlier exports into DEST that it could not remove.
    sweep_old_exports(session, &dest);
    let env_name = match tempfile::Builder::new()
        .prefix(".cudnnm-export-")
        .tempdir_in(parent)
    {
        Ok(tmp) => {
            let name = write_export(
                tmp.path(),
                &release,
                &env,
                windows,
                session.report.progress(),
            )?;
            fsops::make_tree_shared(tmp.path())?;
            if empty_dir {
                fsops::remove_dir_if_empty(&dest);
            }
            let built = tmp.keep();
            replace(session, &dest, &built, earlier.is_some())?;
            name
        }
        // An empty DEST of the user's in a folder they may not write: filled in place.
        Err(e) if empty_dir && e.kind() == std::io::ErrorKind::PermissionDenied => {
            fill_in_place(&dest, &release, &env, windows, session.report.progress())?
        }
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Err(parent_not_writable(&dest, parent, earlier.is_some(), e));
        }
        Err(e) => return Err(Error::io("create a folder in", parent, e)),
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
fn parent_not_writable(dest: &Path, parent: &Path, earlier: bool, e: std::io::Error) -> Error {
    Error::new(
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
        if earlier {
            format!("; to re-export here, empty '{}' first", dest.display())
        } else {
            String::new()
        }
    ))
}

/// The prefix of the name an earlier export gets while its replacement
/// moves in ([`fsops::sibling`]: `.cudnnm-export-old-<pid>-<DEST's name>`).
const OLD_TAG: &str = "cudnnm-export-old";

/// Writes the release's files, its receipt, the env file and the marker
/// into the folder `to` (new or empty), reporting the bytes copied to
/// `progress`; returns the env file's name.
fn write_export(
    to: &Path,
    release: &Release,
    env: &[export_tree::EnvVar],
    windows: bool,
    progress: &dyn Progress,
) -> Result<&'static str> {
    let mut written: Vec<FileRecord> = Vec::new();
    let total = release
        .receipt
        .files
        .iter()
        .filter(|f| f.entry.link_target().is_none())
        .map(|f| f.entry.size())
        .sum();
    progress.start(&format!("exporting cuDNN {}", release.id()), Some(total));
    for f in &release.receipt.files {
        let dst = to.join(&f.path);
        fsops::create_dir_all(fsops::parent_of(&dst))?;
        match f.entry.link_target() {
            Some(target) => {
                fsops::symlink(Path::new(target), &dst)?;
                written.push(FileRecord::link(&f.path, target));
            }
            None => {
                let copied = fsops::copy_file_hashed(&release.dir.join(&f.path), &dst);
                let (size, sha) = copied.inspect_err(|_| progress.finish())?;
                progress.advance(size);
                written.push(FileRecord::file(&f.path, size, sha));
            }
        }
    }
    progress.finish();
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
fn replace(session: &Session<'_>, dest: &Path, built: &Path, earlier: bool) -> Result<()> {
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
        left_behind(session, dest, &old, &e);
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
    progress: &dyn Progress,
) -> Result<&'static str> {
    let done = write_export(dest, release, env, windows, progress)
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
fn sweep_old_exports(session: &Session<'_>, dest: &Path) {
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
            left_behind(session, dest, &e.path(), &err);
        }
    }
}

/// Reports an earlier export's folder that could not be removed.
fn left_behind(session: &Session<'_>, dest: &Path, old: &Path, err: &Error) {
    session.report.event(&Event::ExportLeftBehind {
        old,
        dest,
        why: err.causes().first().map(String::as_str).unwrap_or(""),
    });
}

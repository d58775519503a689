//! The current side of a change: the cuDNN files a toolkit holds now
//! ([`scan_toolkit`]), what they are for messages and `backup.toml`
//! ([`record_describes`], the `held` label), and the moves that take them
//! into the change's backup.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{Move, NO_CUDNN, join_rel, rel_path};
use crate::command::CommandLine;
use crate::deploy::backup::{BackupFile, BackupRecord};
use crate::deploy::{Deployment, Mode, mtime_ns};
use crate::error::{Error, Kind, Result};
use crate::hash::{self, Sha256Hex};
use crate::platform;
use crate::record::{Entry, Look};
use crate::store::Store;
use crate::toolkit::Toolkit;

/// One cuDNN file found in a toolkit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// Absolute path in the toolkit.
    pub path: PathBuf,
    /// Path relative to the toolkit root, `/`-separated (`lib64/libcudnn.so.9`).
    pub rel: String,
    /// What it is: a file by content, or a link by target.
    pub state: Entry,
    /// For an unchanged copy cudnnm placed: the store file with the same
    /// bytes (the backup records it instead of keeping a second copy).
    pub store_copy: Option<PathBuf>,
    /// Its modification time, when `store_copy` is set.
    pub mtime_ns: Option<i64>,
}

/// Every cuDNN file in the toolkit's cuDNN folders, sorted by path. Links
/// are recorded by target (never followed); regular files by size and
/// SHA-256. Files that `known` (the deployment cudnnm recorded) says it
/// placed are not re-read when provably unchanged: a hard link that is still
/// the same file as its store file, or a copy with the recorded size and
/// modification time.
///
/// # Errors
/// When a folder cannot be listed or a file cannot be read.
pub fn scan_toolkit(
    toolkit: &Toolkit,
    known: Option<&Deployment>,
    store: &Store,
) -> Result<Vec<Found>> {
    let mut out = Vec::new();
    // The recorded release's receipt, read once (`known_hash`).
    let receipt = known.and_then(|d| store.get_id(&d.release).ok().flatten());
    for path in list_cudnn_entries(toolkit)? {
        let meta = std::fs::symlink_metadata(&path).map_err(|e| Error::io("inspect", &path, e))?;
        let state = if meta.file_type().is_symlink() {
            let t = std::fs::read_link(&path).map_err(|e| Error::io("read the link", &path, e))?;
            Entry::link(t.to_string_lossy().into_owned())
        } else if meta.is_file() {
            match known_hash(&path, &meta, known, receipt.as_ref()) {
                Some((sha, store_src)) => {
                    let t = store_src.as_ref().and_then(|_| mtime_ns(&meta));
                    out.push(Found {
                        rel: rel_path(&toolkit.root, &path),
                        path,
                        state: Entry::file(meta.len(), sha),
                        store_copy: store_src,
                        mtime_ns: t,
                    });
                    continue;
                }
                None => {
                    let (size, sha) = hash::sha256_file(&path)?;
                    Entry::file(size, sha)
                }
            }
        } else {
            // A folder named cudnn* is not a cuDNN file; leave it alone.
            continue;
        };
        out.push(Found {
            rel: rel_path(&toolkit.root, &path),
            path,
            state,
            store_copy: None,
            mtime_ns: None,
        });
    }
    Ok(out)
}

/// Paths of the cuDNN files and links in the toolkit's cuDNN folders
/// (folders named `cudnn*` excluded), sorted; unreadable folders are skipped.
pub fn scan_toolkit_names(toolkit: &Toolkit) -> Vec<PathBuf> {
    let mut v = list_cudnn_entries(toolkit).unwrap_or_default();
    v.retain(|p| std::fs::symlink_metadata(p).is_ok_and(|m| !m.is_dir()));
    v
}

fn list_cudnn_entries(toolkit: &Toolkit) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut seen_dirs = BTreeSet::new();
    for dir in toolkit.cudnn_dirs() {
        let real = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
        if !seen_dirs.insert(real) {
            continue;
        }
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io("list", &dir, e)),
        };
        for entry in rd {
            let entry = entry.map_err(|e| Error::io("list", &dir, e))?;
            let name = entry.file_name();
            if name
                .to_str()
                .is_some_and(|n| toolkit.layout.is_cudnn_name(n))
            {
                out.push(dir.join(&name));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The hash of a file cudnnm placed and that is provably unchanged, and for
/// a copy the store file holding the same bytes (when it is still there
/// and holds them). Proof is the size and the modification time recorded
/// when it was placed; a hard-linked file whose time was not recorded
/// (older records), or differs, is read.
fn known_hash(
    path: &Path,
    meta: &std::fs::Metadata,
    known: Option<&Deployment>,
    release: Option<&crate::store::Release>,
) -> Option<(Sha256Hex, Option<PathBuf>)> {
    let d = known?;
    let pf = d.files.iter().find(|f| f.path == path)?;
    let Entry::File(content) = &pf.entry else {
        return None;
    };
    if meta.len() != content.size {
        return None;
    }
    let sha = content.sha256.clone();
    let from = pf.from.release_path()?;
    let src = release.and_then(|r| join_rel(&r.dir, from).ok());
    match d.mode {
        // The same file as the store's, and its bytes unchanged (an edit
        // through the link changes both).
        Mode::Hardlink => (platform::same_file(path, src.as_ref()?)
            && matches!(content.look(path, pf.mtime_ns, true), Look::Same { .. }))
        .then_some((sha, None)),
        Mode::Copy => {
            if pf.mtime_ns.is_none() || mtime_ns(meta) != pf.mtime_ns {
                return None;
            }
            // The backup refers to the store file instead of keeping these
            // bytes: only while it holds them (by its receipt's time, else read).
            let receipt_mtime = release
                .and_then(|r| r.receipt.files.iter().find(|f| f.path == from))
                .and_then(|f| f.mtime_ns);
            let in_store =
                src.filter(|s| matches!(content.look(s, receipt_mtime, true), Look::Same { .. }));
            Some((sha, in_store))
        }
        Mode::Symlink => None,
    }
}

/// Refuses a toolkit whose cuDNN folder is a link to nothing (`lib64 ->
/// targets/x86_64-linux/lib` with the target gone): files cannot be listed
/// or placed there, and cudnnm does not guess where they belong.
///
/// # Errors
/// [`Kind::NotFound`] naming the link and where it points.
pub fn check_toolkit_dirs(toolkit: &Toolkit) -> Result<()> {
    for dir in toolkit.cudnn_dirs() {
        let Ok(meta) = std::fs::symlink_metadata(&dir) else {
            continue;
        };
        if meta.file_type().is_symlink() && std::fs::metadata(&dir).is_err() {
            let target = std::fs::read_link(&dir)
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            return Err(Error::new(
                Kind::NotFound,
                format!(
                    "'{}' is a link to '{target}', which does not exist",
                    dir.display()
                ),
            )
            .hint(format!(
                "restore the folder it points to (reinstall the CUDA toolkit), or replace the link with a folder (`mkdir -p` it), then run the command again; nothing was changed in '{}'",
                toolkit.root.display()
            )));
        }
    }
    Ok(())
}

/// Whether the deployment record `dep` still describes the `found` files:
/// the version header in the toolkit (when there is one) declares the
/// recorded release's version, and at least one found file is a file (or an
/// absolute link into a store) the record lists with that content. A record
/// is stale when another cudnnm home or the user replaced the files; the
/// files are then described by what they are, not by the record.
pub fn record_describes(found: &[Found], dep: &Deployment, toolkit: &Toolkit) -> bool {
    if found.is_empty() {
        return false;
    }
    if let Some(on_disk) = toolkit.header_cudnn_version()
        && on_disk.triple() != dep.release.version.triple()
    {
        return false;
    }
    found.iter().any(|f| {
        dep.files.iter().any(|p| {
            p.path == f.path
                && match (&p.entry, &f.state) {
                    // A chain link (`libcudnn.so -> libcudnn.so.9`) is the same
                    // in every release; only a link into a store is telling.
                    (Entry::Link { target: a, .. }, Entry::Link { target: b, .. }) => {
                        a == b && Path::new(a).is_absolute()
                    }
                    (Entry::File(a), Entry::File(b)) => a.sha256 == b.sha256,
                    _ => false,
                }
        })
    })
}

/// What the toolkit holds now, for messages and `backup.toml`. `current`
/// must be a record that describes the files ([`record_describes`]).
pub(super) fn held_label(
    found: &[Found],
    current: Option<&Deployment>,
    toolkit: &Toolkit,
) -> String {
    if found.is_empty() {
        return NO_CUDNN.into();
    }
    if let Some(d) = current {
        return d.release.version.to_string();
    }
    // Links into a store that is not in this home's record: another home's deployment.
    let other_home = found.iter().find_map(|f| match &f.state {
        Entry::Link { target, .. } => crate::store::release_in_store_path(target),
        _ => None,
    });
    if let Some((_, id)) = other_home {
        return format!("{} (from another cudnnm home)", id.version);
    }
    match toolkit.header_cudnn_version() {
        Some(v) => format!("{v} (not from cudnnm)"),
        None => match found.len() {
            1 => "unknown (1 file not from cudnnm)".into(),
            n => format!("unknown ({n} files not from cudnnm)"),
        },
    }
}

/// The move of every found file into `backups/<id>/files/<rel>`; an
/// unchanged copy whose bytes the store holds is only renamed aside in its
/// own folder (`.cudnnm-old-<id>-<name>`: same volume, so no bytes move, and
/// a loaded DLL can be renamed on Windows) and trimmed once the change is done.
pub(super) fn moves_for(found: &[Found], backup_dir: &Path, id: u64) -> Result<Vec<Move>> {
    found
        .iter()
        .map(|f| {
            let to = match &f.store_copy {
                Some(_) => {
                    let name = f.path.file_name().map(|n| n.to_string_lossy().into_owned());
                    crate::fsops::parent_of(&f.path)
                        .join(format!(".cudnnm-old-{id}-{}", name.unwrap_or_default()))
                }
                None => join_rel(&backup_dir.join("files"), &f.rel)?,
            };
            Ok(Move {
                from: f.path.clone(),
                to,
                rel: f.rel.clone(),
                state: f.state.clone(),
                store_copy: f.store_copy.clone(),
                mtime_ns: f.mtime_ns,
            })
        })
        .collect()
}

/// How to install again the release `dep` names, when the store holds it:
/// the command from the source its receipt names, in backticks, and for a
/// local file or folder which one it was.
pub(super) fn reinstall_of(store: &Store, dep: Option<&Deployment>) -> Option<String> {
    let release = store.get_id(&dep?.release).ok()??;
    let source = &release.receipt.source;
    let (arg, is_file) = source.reinstall_arg(&release.id());
    let cmd = CommandLine::install_from(&arg, is_file).for_host(crate::platform::HOST_WINDOWS);
    Some(if is_file {
        let what = if source.kind.is_folder() {
            "folder"
        } else {
            "file"
        };
        format!("`{cmd}` (the {what} it was installed from)")
    } else {
        format!("`{cmd}`")
    })
}

pub(super) fn backup_record(
    id: u64,
    toolkit: &Toolkit,
    reason: String,
    held: String,
    current: Option<&Deployment>,
    found: &[Found],
    reinstall: Option<String>,
) -> BackupRecord {
    BackupRecord {
        reinstall: found
            .iter()
            .any(|f| {
                f.store_copy.is_some()
                    || f.state
                        .link_target()
                        .is_some_and(|l| Path::new(l).is_absolute())
            })
            .then_some(reinstall)
            .flatten(),
        id,
        toolkit: toolkit.root.clone(),
        layout: toolkit.layout,
        cuda: toolkit.cuda.to_string(),
        created_at: crate::store::now_rfc3339(),
        reason,
        held,
        deployment: current.cloned(),
        files: found
            .iter()
            .map(|f| BackupFile {
                path: f.rel.clone(),
                entry: f.state.clone(),
                store: f.store_copy.clone(),
                mtime_ns: f.mtime_ns,
                from_release: false,
            })
            .collect(),
    }
}

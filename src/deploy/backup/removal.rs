//! Removing backups: pruning old ones after a change or on request, and
//! removing the ones a user names (all or none). A backup is renamed to
//! `backups/.trash-<id>` before it is deleted, so a crash never leaves a
//! half-deleted backup that still looks whole.

use std::path::{Path, PathBuf};

use super::{Backup, ReleaseBytes, for_toolkit, list, release_bytes};
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::home::Home;

/// Removes old backups of the toolkit at `root`: keeps the newest `keep`
/// (at least one: the one the next rollback needs), always the first, and
/// always those holding files of the user's own ([`BackupFile::is_users`]):
/// those go only when `cudnnm backups remove <id> --force` names them
/// ([`remove_checked`]). Each is renamed to `backups/.trash-<id>` before
/// deletion so a crash never leaves a half-deleted backup that still looks
/// whole. Returns the removed ids.
///
/// A backup whose folder cannot be renamed or removed now is kept (not an
/// error): a later prune tries again, after sweeping `.trash-*` leftovers.
///
/// # Errors
/// When the backups cannot be listed.
pub fn prune(home: &Home, root: &Path, keep: u32) -> Result<Vec<u64>> {
    Ok(prune_freeing(home, root, keep)?
        .into_iter()
        .map(|r| r.id)
        .collect())
}

/// One backup removed, and the bytes its removal gave back to the disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Removed {
    /// Its id.
    pub id: u64,
    /// The toolkit it was a backup of.
    pub toolkit: PathBuf,
    /// Bytes freed: its files that had no other name (hard link) left, each
    /// counted once ([`crate::disk::Tally::freed`]); a file it shared with
    /// the store or another backup frees nothing.
    pub freed: u64,
    /// Toolkit-relative paths of the files of the user's own it held
    /// (deleted with it; only [`remove_checked`] with `force` does that).
    pub users_files: Vec<String>,
}

/// [`prune`], saying what each removal freed.
///
/// # Errors
/// When the backups cannot be listed.
pub fn prune_freeing(home: &Home, root: &Path, keep: u32) -> Result<Vec<Removed>> {
    sweep_trash(home);
    let all = for_toolkit(home, root)?;
    let keep = keep.max(1) as usize;
    if all.len() <= keep + 1 {
        return Ok(Vec::new());
    }
    let first = all[0].record.id;
    let newest: Vec<u64> = all.iter().rev().take(keep).map(|b| b.record.id).collect();
    let mut ours: Option<ReleaseBytes> = None;
    let mut removed = Vec::new();
    for b in &all {
        let id = b.record.id;
        if id == first || newest.contains(&id) {
            continue;
        }
        let bytes = ours.get_or_insert_with(|| release_bytes(home));
        if !b.record.users_files(bytes).is_empty() {
            continue;
        }
        let freed = crate::disk::freed_by(&[&b.dir]);
        if remove_dir(home, b).is_ok() {
            removed.push(Removed {
                id,
                toolkit: b.record.toolkit.clone(),
                freed,
                users_files: Vec::new(),
            });
        }
    }
    Ok(removed)
}

/// Why [`remove_checked`] refuses to remove a backup without `force`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// It is the toolkit's first backup: its state before cudnnm touched it.
    First {
        /// The backup.
        id: u64,
        /// Its toolkit.
        toolkit: PathBuf,
    },
    /// It keeps files of the user's own ([`BackupFile::is_users`]), listed.
    UsersFiles {
        /// The backup.
        id: u64,
        /// Where its files are (`backups/<id>/files`).
        dir: PathBuf,
        /// Their toolkit-relative paths.
        files: Vec<String>,
    },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::First { id, toolkit } => write!(
                f,
                "backup {id} is the first backup of '{}': the state it was in before cudnnm changed it",
                toolkit.display()
            ),
            Refusal::UsersFiles { id, dir, files } => write!(
                f,
                "backup {id} keeps files of yours that no cuDNN release holds: {} (in '{}')",
                files.join(", "),
                dir.display()
            ),
        }
    }
}

/// Removes the backups `ids` because the user named them (`cudnnm backups
/// remove`), under the home lock, all or none: every id is checked first —
/// each must exist, and without `force` none may be a toolkit's first backup
/// or keep files of the user's own ([`Refusal`]) — and only then are they
/// removed, in order, each renamed to `backups/.trash-<id>` first. Returns
/// what each removal freed (measured just before it, so a file two of them
/// shared is counted with the last one).
///
/// # Errors
/// [`Kind::NotFound`] naming every id that is no backup; [`Kind::Conflict`]
/// listing every refusal (nothing is removed either way); when a folder
/// cannot be renamed away (the backups before it are removed, it and the
/// rest are left whole).
pub fn remove_checked(home: &Home, ids: &[u64], force: bool) -> Result<Vec<Removed>> {
    sweep_trash(home);
    let all = list(home)?;
    let missing: Vec<String> = ids
        .iter()
        .filter(|id| !all.iter().any(|b| b.record.id == **id))
        .map(u64::to_string)
        .collect();
    if !missing.is_empty() {
        return Err(Error::new(
            Kind::NotFound,
            format!(
                "there is no backup {}; nothing was removed",
                missing.join(", ")
            ),
        )
        .hint("`cudnnm backups` lists the backups there are"));
    }
    let bytes = release_bytes(home);
    let mut chosen: Vec<&Backup> = Vec::new();
    let mut refusals = Vec::new();
    for id in ids {
        let b = all
            .iter()
            .find(|b| b.record.id == *id)
            .expect("checked above");
        if chosen.iter().any(|c| c.record.id == *id) {
            continue;
        }
        let first = all.iter().find(|o| o.record.toolkit == b.record.toolkit);
        if first.is_some_and(|f| f.record.id == *id) {
            refusals.push(Refusal::First {
                id: *id,
                toolkit: b.record.toolkit.clone(),
            });
        }
        let files = b.record.users_files(&bytes);
        if !files.is_empty() {
            refusals.push(Refusal::UsersFiles {
                id: *id,
                dir: b.dir.join("files"),
                files,
            });
        }
        chosen.push(b);
    }
    if !force && !refusals.is_empty() {
        let mut e = Error::new(
            Kind::Conflict,
            format!("{}; nothing was removed", refusals[0]),
        );
        for r in &refusals[1..] {
            e = e.cause(r.to_string());
        }
        let users = refusals
            .iter()
            .any(|r| matches!(r, Refusal::UsersFiles { .. }));
        return Err(e.hint(if users {
            "copy out what you want to keep (or `cudnnm rollback --to ID` puts it back into the toolkit), then pass --force to delete those files with the backup"
        } else {
            "pass --force to remove it anyway; `cudnnm rollback --to ID` restores that state while it exists"
        }));
    }
    let mut out = Vec::new();
    for b in chosen {
        let freed = crate::disk::freed_by(&[&b.dir]);
        remove_dir(home, b)?;
        out.push(Removed {
            id: b.record.id,
            toolkit: b.record.toolkit.clone(),
            freed,
            users_files: b.record.users_files(&bytes),
        });
    }
    Ok(out)
}

/// Removes backup `b` (renamed to `backups/.trash-<id>` first, so a crash
/// never leaves a half-deleted backup that still looks whole).
fn remove_dir(home: &Home, b: &Backup) -> Result<()> {
    let trash = home.backups_dir().join(format!(".trash-{}", b.record.id));
    // A backup that cannot go now (a file in it still held by a program, on
    // Windows; or a `.trash-<id>` the sweep could not remove, which Windows
    // will not rename onto) stays whole.
    fsops::rename(&b.dir, &trash)?;
    let _ = fsops::remove_dir_all(&trash);
    Ok(())
}

/// Removes `backups/.trash-*` folders left by an interrupted prune.
pub fn sweep_trash(home: &Home) {
    let Ok(rd) = std::fs::read_dir(home.backups_dir()) else {
        return;
    };
    for e in rd.flatten() {
        if e.file_name().to_string_lossy().starts_with(".trash-") {
            let _ = fsops::remove_dir_all(&e.path());
        }
    }
}

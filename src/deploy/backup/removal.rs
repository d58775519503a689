//! Removing backups: pruning old ones after a change or on request, and
//! removing the ones a user names (all or none). Journaled as an op
//! ([`Removal`]): every backup is renamed to `backups/.trash-<id>` first,
//! each rename logged; once all are aside (`set aside`, the point of no
//! return) they are deleted. A crash before that point is undone (the
//! backups renamed back, whole); after it, completed. Only the guard runs
//! it ([`crate::deploy::Guard::prune_backups`],
//! [`crate::deploy::Guard::remove_backups`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Backup, ReleaseBytes, for_toolkit, list, release_bytes};
use crate::deploy::journal::{FaultHook, Journal, Op, Pending};
use crate::deploy::recover::{Recovered, Resolution};
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::home::Home;

/// Log line: every backup of the removal is renamed aside; from here it completes.
const SET_ASIDE: &str = "set aside";

/// One backup removed, and the bytes its removal gave back to the disk.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Removed {
    /// Its id.
    pub id: u64,
    /// The toolkit it was a backup of.
    pub toolkit: PathBuf,
    /// Bytes freed: its files that had no other name (hard link) left, each
    /// counted once ([`crate::disk::Tally::freed`]); a file it shared with
    /// the store or another backup removed with it is counted with the last
    /// of them, a file shared with anything else frees nothing.
    pub freed: u64,
    /// Toolkit-relative paths of the files of the user's own it held
    /// (deleted with it; only a removal the user named with `--force`).
    pub users_files: Vec<String>,
}

/// One backup a [`Removal`] takes away.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    /// The backup id.
    pub id: u64,
    /// Its toolkit.
    pub toolkit: PathBuf,
    /// Its folder, `backups/<id>`.
    pub dir: PathBuf,
    /// Where it is renamed before deletion, `backups/.trash-<id>`.
    pub trash: PathBuf,
    /// Files of the user's own it holds (see [`Removed::users_files`]).
    #[serde(default)]
    pub users_files: Vec<String>,
}

/// The journaled removal of some backups (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Removal {
    /// What was asked (`remove backups 3, 5`), for messages.
    pub action: String,
    /// The backups, in order.
    pub items: Vec<Item>,
    /// All or none (`backups remove`): a backup that cannot be renamed
    /// aside puts the others back and fails. Otherwise (a prune) it is kept
    /// and the others go; a later prune tries again.
    pub all_or_none: bool,
}

impl Removal {
    fn new(action: String, chosen: Vec<(Backup, Vec<String>)>, all_or_none: bool) -> Removal {
        let items = chosen
            .into_iter()
            .map(|(b, users_files)| Item {
                trash: fsops::parent_of(&b.dir).join(format!(".trash-{}", b.record.id)),
                id: b.record.id,
                toolkit: b.record.toolkit,
                dir: b.dir,
                users_files,
            })
            .collect();
        Removal {
            action,
            items,
            all_or_none,
        }
    }

    /// `backups 3, 5`.
    fn named(&self) -> String {
        let ids: Vec<String> = self.items.iter().map(|i| i.id.to_string()).collect();
        format!(
            "backup{} {}",
            if ids.len() == 1 { "" } else { "s" },
            ids.join(", ")
        )
    }
}

/// The prune of the toolkit at `root`: every backup but the newest `keep`
/// (at least one: the one the next rollback needs), the first (its state
/// before cudnnm) and those holding files of the user's own
/// ([`super::BackupFile::is_users`]), which go only when `cudnnm backups
/// remove <id> --force` names them ([`named`]).
///
/// # Errors
/// When the backups cannot be listed.
pub(in crate::deploy) fn prune(home: &Home, root: &Path, keep: u32) -> Result<Removal> {
    sweep_trash(home);
    let all = for_toolkit(home, root)?;
    let keep = keep.max(1) as usize;
    let mut chosen = Vec::new();
    if all.len() > keep + 1 {
        let first = all[0].record.id;
        let newest: Vec<u64> = all.iter().rev().take(keep).map(|b| b.record.id).collect();
        let mut ours: Option<ReleaseBytes> = None;
        for b in all {
            let id = b.record.id;
            if id == first || newest.contains(&id) {
                continue;
            }
            let bytes = ours.get_or_insert_with(|| release_bytes(home));
            if !b.record.users_files(bytes).is_empty() {
                continue;
            }
            chosen.push((b, Vec::new()));
        }
    }
    let ids: Vec<String> = chosen
        .iter()
        .map(|(b, _)| b.record.id.to_string())
        .collect();
    Ok(Removal::new(
        format!("prune backups {} of '{}'", ids.join(", "), root.display()),
        chosen,
        false,
    ))
}

/// Why [`named`] refuses to remove a backup without `force`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// It is the toolkit's first backup: its state before cudnnm touched it.
    First {
        /// The backup.
        id: u64,
        /// Its toolkit.
        toolkit: PathBuf,
    },
    /// It keeps files of the user's own ([`super::BackupFile::is_users`]), listed.
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

/// The removal of the backups `ids` the user named (`cudnnm backups
/// remove`), all or none: every id is checked first — each must exist, and
/// without `force` none may be a toolkit's first backup or keep files of
/// the user's own ([`Refusal`]).
///
/// # Errors
/// [`Kind::NotFound`] naming every id that is no backup; [`Kind::Conflict`]
/// listing every refusal (nothing is removed either way).
pub(in crate::deploy) fn named(home: &Home, ids: &[u64], force: bool) -> Result<Removal> {
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
    let mut chosen: Vec<(Backup, Vec<String>)> = Vec::new();
    let mut refusals = Vec::new();
    for id in ids {
        let b = all
            .iter()
            .find(|b| b.record.id == *id)
            .expect("checked above");
        if chosen.iter().any(|(c, _)| c.record.id == *id) {
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
                files: files.clone(),
            });
        }
        chosen.push((b.clone(), files));
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
    let removal = Removal::new(String::new(), chosen, true);
    Ok(Removal {
        action: format!("remove {}", removal.named()),
        ..removal
    })
}

/// Runs `removal` as a journaled op (see the module docs) and says what
/// each backup removed freed (measured once they are all aside, so a file
/// two of them shared is counted with the last one). Call under the guard.
///
/// # Errors
/// When the journal cannot be written; for an all-or-none removal, when a
/// backup cannot be renamed aside (a file in it held by a program, on
/// Windows): the others are put back and nothing is removed;
/// [`Kind::Interrupted`] on Ctrl-C before every backup is aside (undone).
pub(in crate::deploy) fn execute(
    home: &Home,
    removal: &Removal,
    fault: FaultHook,
) -> Result<Vec<Removed>> {
    if removal.items.is_empty() {
        return Ok(Vec::new());
    }
    crate::interrupt::doing(crate::interrupt::Activity::Change);
    let mut j = Journal::begin_op(home, &Op::RemoveBackups(removal.clone()), fault)?;
    let mut aside: Vec<&Item> = Vec::new();
    for item in &removal.items {
        // A backup that cannot go now (a file in it still held by a
        // program, on Windows; or a `.trash-<id>` the sweep could not
        // remove, which Windows will not rename onto) stays whole.
        let step = fsops::rename(&item.dir, &item.trash)
            .map(|()| aside.push(item))
            .and_then(|()| j.step(&format!("aside {}", item.id)));
        match step {
            Ok(()) => {}
            Err(e) if removal.all_or_none || e.kind() == Kind::Interrupted => {
                put_back(&aside)?;
                j.retire()?;
                return Err(if e.kind() == Kind::Interrupted {
                    Error::new(Kind::Interrupted, "interrupted; no backup was removed")
                        .hint("run the command again to remove them")
                } else {
                    e.cause("nothing was removed: the backups already set aside were put back")
                });
            }
            Err(_) => {}
        }
    }
    j.step_committed(SET_ASIDE)?;
    let mut tally = crate::disk::Tally::new();
    let mut counted = 0;
    let mut out = Vec::new();
    for item in aside {
        tally.add_tree(&item.trash);
        let freed = tally.freed() - counted;
        counted = tally.freed();
        // Left for the next sweep when it cannot go now.
        let _ = fsops::remove_dir_all(&item.trash);
        out.push(Removed {
            id: item.id,
            toolkit: item.toolkit.clone(),
            freed,
            users_files: item.users_files.clone(),
        });
    }
    j.retire()?;
    Ok(out)
}

/// Renames the backups set aside back into place.
fn put_back(aside: &[&Item]) -> Result<()> {
    for item in aside.iter().rev() {
        if std::fs::symlink_metadata(&item.trash).is_ok()
            && std::fs::symlink_metadata(&item.dir).is_err()
        {
            fsops::rename(&item.trash, &item.dir)?;
        }
    }
    Ok(())
}

/// Completes (past `set aside`: deletes what is aside) or undoes (renames
/// back every backup set aside) a removal a crash interrupted.
///
/// # Errors
/// When a backup cannot be renamed back (the journal stays for a retry).
pub(in crate::deploy) fn recover(home: &Home, removal: &Removal, p: &Pending) -> Result<Recovered> {
    let _ = home;
    let named = removal.named();
    if p.has(SET_ASIDE) {
        for item in &removal.items {
            if std::fs::symlink_metadata(&item.trash).is_ok() {
                let _ = fsops::remove_dir_all(&item.trash);
            }
        }
        let gone = if removal.items.len() == 1 {
            "is"
        } else {
            "are"
        };
        return Ok(Recovered::op(
            removal.action.clone(),
            Resolution::Completed,
            format!("{named} {gone} removed"),
        ));
    }
    put_back(&removal.items.iter().collect::<Vec<_>>())?;
    Ok(Recovered::op(
        removal.action.clone(),
        Resolution::Undone,
        format!(
            "{named} {} kept",
            if removal.items.len() == 1 {
                "is"
            } else {
                "are"
            }
        ),
    ))
}

/// Removes `backups/.trash-*` folders left by an interrupted removal whose
/// journal is finished (call after recovery, under the home lock).
pub(in crate::deploy) fn sweep_trash(home: &Home) {
    let Ok(rd) = std::fs::read_dir(home.backups_dir()) else {
        return;
    };
    for e in rd.flatten() {
        if e.file_name().to_string_lossy().starts_with(".trash-") {
            let _ = fsops::remove_dir_all(&e.path());
        }
    }
}

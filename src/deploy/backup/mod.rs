//! Backups (`docs/architecture.md#home-layout`): `backups/<id>/files/<toolkit-relative path>`
//! holds the cuDNN files moved out of a toolkit byte for byte (links stay
//! links), and `backups/<id>/backup.toml` records where they came from,
//! their sizes and hashes, when and why.
//!
//! Ids are increasing integers, global to the home (`cudnnm rollback --to 3`)
//! and never handed out twice: `backups/.last-id` keeps the last one, so a
//! removed backup's id is not reused.
//! A backup folder without `backup.toml` belongs to a change in flight (or
//! one a crash interrupted, which recovery finishes or removes) and is not
//! listed. Pruning keeps the newest N per toolkit and always a toolkit's
//! first backup: its state before cudnnm touched it.
//!
//! One file per concern: this one holds the record (`backup.toml`) and
//! reading backups; `ids` hands out ids; `ownership` tells a release's bytes
//! from the user's; `damage` re-hashes a backup's files; `removal` chooses
//! and removes backups (prune, `backups remove`); `materialize` makes
//! backups hold the store files they refer to before a release goes.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Deployment;
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::hash::Sha256Hex;
use crate::home::Home;
use crate::record::{self, Entry};
use crate::toolkit::Layout;

/// The record file inside a backup folder.
pub const BACKUP_FILE: &str = "backup.toml";

/// One file in a backup.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackupFile {
    /// Path relative to the toolkit root, `/`-separated (`lib64/libcudnn.so.9`);
    /// the file itself is `backups/<id>/files/<path>`.
    pub path: String,
    /// What it was: a file by content, or a link by its target as it was.
    #[serde(flatten)]
    pub entry: Entry,
    /// For an unchanged copy cudnnm had placed: the store file holding the
    /// same bytes. The backup keeps no second copy of it; rollback copies it
    /// from the store (and says so if that release was uninstalled).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub store: Option<PathBuf>,
    /// Its modification time (nanoseconds since the epoch), restored with it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mtime_ns: Option<i64>,
    /// True for bytes kept here from a store release (when that release
    /// was uninstalled, see [`materialize_all`]): a release's bytes, not the
    /// user's, so they never keep the backup from being pruned.
    #[serde(skip_serializing_if = "is_false", default)]
    pub from_release: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl BackupFile {
    /// Whether this file is the user's own: a name no cuDNN release ships
    /// (`lib64/libcudnn_myplugin.so.9`), or a regular file with a release's
    /// name whose bytes are none of `release_bytes` (a patched `cudnn.h`, a
    /// hand-copied library). Unchanged copies of store files, links into the
    /// store and release bytes kept at uninstall are not. Links with a
    /// release's name (soname chains) are not either: they hold no bytes.
    pub fn is_users(&self, release_bytes: &HashSet<Sha256Hex>) -> bool {
        if self.store.is_some() || self.from_release {
            return false;
        }
        if self
            .entry
            .link_target()
            .is_some_and(|t| Path::new(t).is_absolute())
        {
            return false;
        }
        let name = self.path.rsplit('/').next().unwrap_or(&self.path);
        if !crate::names::is_release_name(name) {
            return true;
        }
        self.entry
            .sha256()
            .is_some_and(|sha| !release_bytes.contains(sha))
    }
}

/// `backup.toml`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackupRecord {
    /// The backup id (its folder name).
    pub id: u64,
    /// The toolkit root the files came from.
    pub toolkit: PathBuf,
    /// That toolkit's layout.
    pub layout: Layout,
    /// That toolkit's CUDA version.
    pub cuda: String,
    /// When the files were moved out, RFC 3339 UTC.
    pub created_at: String,
    /// Why (`before use 9.27.0.42_cuda12`, `before rollback to backup 3`).
    pub reason: String,
    /// What the files were (`9.12.0.46`, `8.1.0 (not from cudnnm)`, `no cuDNN`).
    pub held: String,
    /// The deployment cudnnm had recorded for these files, if they were its own.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub deployment: Option<Deployment>,
    /// How to install again the release whose store files this backup
    /// refers to (a `cudnnm install` command in backticks, from
    /// [`crate::store::Source::reinstall_arg`]), for the
    /// rollback that finds that release gone.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reinstall: Option<String>,
    /// Every file.
    #[serde(rename = "file", default)]
    pub files: Vec<BackupFile>,
}

impl BackupRecord {
    /// Bytes the backup folder holds: the sizes of its files, without the
    /// unchanged copies whose bytes the store holds.
    pub fn size(&self) -> u64 {
        self.files
            .iter()
            .filter(|f| f.store.is_none())
            .map(|f| f.entry.size())
            .sum()
    }

    /// Toolkit-relative paths of the files that are the user's own
    /// ([`BackupRecord::users`]).
    pub fn users_files(&self, known: &ReleaseBytes) -> Vec<String> {
        self.users(known).map(|f| f.path.clone()).collect()
    }

    /// The files that are the user's own: [`BackupFile::is_users`], except
    /// the bytes of a release cudnnm placed and has since uninstalled
    /// ([`BackupRecord::placed_by_deployment`]).
    pub fn users<'a>(&'a self, known: &'a ReleaseBytes) -> impl Iterator<Item = &'a BackupFile> {
        self.files
            .iter()
            .filter(|f| f.is_users(&known.hashes) && !self.placed_by_deployment(f, known))
    }

    /// Whether `f` is a file the recorded deployment placed from its
    /// release — a copy or hard link (`PlacedFrom::Release`, not a file a
    /// rollback restored) still holding the bytes recorded — of a release
    /// that is no longer installed. Its receipt is gone, so its hashes
    /// are not among the installed releases' bytes; the deployment record
    /// (written when cudnnm placed the files) is what knows them. While
    /// the release is installed its receipt decides alone, so a record
    /// older than rollback's labels cannot pass a restored edit of the
    /// user's off as the release's.
    pub fn placed_by_deployment(&self, f: &BackupFile, known: &ReleaseBytes) -> bool {
        let Some(d) = &self.deployment else {
            return false;
        };
        if d.mode == super::Mode::Symlink || known.installed.contains(&d.release) {
            return false;
        }
        let Some(content) = f.entry.content() else {
            return false;
        };
        d.files.iter().any(|p| {
            matches!(p.from, super::PlacedFrom::Release(_))
                && super::plan::rel_path(&d.toolkit, &p.path) == f.path
                && !p.entry.is_link()
                && p.entry.content() == Some(content)
        })
    }

    /// `backup.toml` as text.
    ///
    /// # Errors
    /// When the record cannot be encoded (never for records cudnnm makes).
    pub fn to_toml(&self) -> Result<String> {
        record::to_toml(self, &format!("backup {}", self.id))
    }

    /// Writes `backup.toml` into `dir` atomically (only the guard's changes do).
    ///
    /// # Errors
    /// When the folder is not writable.
    pub(in crate::deploy) fn save(&self, dir: &Path) -> Result<()> {
        fsops::save_toml(&dir.join(BACKUP_FILE), self, &format!("backup {}", self.id))
    }
}

/// A complete backup on disk.
#[derive(Clone, Debug)]
pub struct Backup {
    /// Its folder `backups/<id>`.
    pub dir: PathBuf,
    /// Its record.
    pub record: BackupRecord,
}

/// Every complete backup, oldest first. Folders without a `backup.toml` and
/// names that are not ids (`.trash-*`) are skipped.
///
/// # Errors
/// When the backups folder exists but cannot be listed, or a `backup.toml`
/// is unreadable (names it).
pub fn list(home: &Home) -> Result<Vec<Backup>> {
    let dir = home.backups_dir();
    let mut out = Vec::new();
    for (id, path) in numbered_dirs(&dir)? {
        let loaded: Option<BackupRecord> = fsops::load_toml(
            &path.join(BACKUP_FILE),
            |file, message| {
                Error::new(Kind::Integrity, format!("could not read '{}'", file.display()))
                .cause(message)
                .hint(format!(
                    "the files are still in '{}'; move that folder out of the backups folder to hide it",
                    path.display()
                ))
            },
        )?;
        let Some(record) = loaded else { continue };
        if record.id != id {
            continue;
        }
        out.push(Backup { dir: path, record });
    }
    Ok(out)
}

/// `(id, path)` of every folder in `dir` whose name is an id, ascending.
fn numbered_dirs(dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("list", dir, e)),
    };
    let mut v: Vec<(u64, PathBuf)> = rd
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse::<u64>().ok()?, e.path())))
        .collect();
    v.sort();
    Ok(v)
}

/// Backups taken of the toolkit at `root`, oldest first.
pub fn for_toolkit(home: &Home, root: &Path) -> Result<Vec<Backup>> {
    Ok(list(home)?
        .into_iter()
        .filter(|b| b.record.toolkit == root)
        .collect())
}

mod damage;
mod ids;
mod materialize;
mod ownership;
pub(super) mod removal;
#[cfg(test)]
mod tests;

pub use damage::{Damage, damage};
pub use ids::LAST_ID_FILE;
pub(super) use ids::{next_id, reserve_id};
pub(super) use materialize::Materializer;
pub use materialize::{Materialized, Referring, needed_bytes, referring_to};
pub use ownership::{ReleaseBytes, release_bytes, removal_needs_force};
pub use removal::{Refusal, Removed};

/// Whether backup `id` exists (its `backup.toml`): one `stat`.
pub fn exists(home: &Home, id: u64) -> bool {
    home.backups_dir()
        .join(id.to_string())
        .join(BACKUP_FILE)
        .is_file()
}

/// Loads backup `id`.
///
/// # Errors
/// [`Kind::NotFound`] when it does not exist (the hint lists how to see them).
pub fn load(home: &Home, id: u64) -> Result<Backup> {
    list(home)?
        .into_iter()
        .find(|b| b.record.id == id)
        .ok_or_else(|| {
            Error::new(Kind::NotFound, format!("there is no backup {id}"))
                .hint("`cudnnm backups` lists the backups there are")
        })
}

/// Parses a backup id as the user writes it (`3`).
///
/// # Errors
/// [`Kind::Usage`] when it is not a number.
pub fn parse_id(s: &str) -> Result<u64> {
    s.trim().trim_start_matches('#').parse().map_err(|_| {
        Error::new(Kind::Usage, format!("'{s}' is not a backup id"))
            .hint("backup ids are numbers; `cudnnm backups` lists them")
    })
}

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

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Deployment;
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::hash::Sha256Hex;
use crate::home::Home;
use crate::progress::Progress;
use crate::record::{self, Entry};
use crate::toolkit::Layout;
use crate::version::ReleaseId;

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

    /// Writes `backup.toml` into `dir` atomically.
    ///
    /// # Errors
    /// When the folder is not writable.
    pub fn save(&self, dir: &Path) -> Result<()> {
        record::save(&dir.join(BACKUP_FILE), self, &format!("backup {}", self.id))
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
        let loaded: Option<BackupRecord> = record::load(
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

/// A file of a backup that no longer holds what was recorded when the
/// backup was made, so a rollback to it cannot restore it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// Toolkit-relative path (`include/cudnn_version.h`).
    pub path: String,
    /// The file in the backup's `files/` folder.
    pub file: PathBuf,
    /// What is wrong with it (`missing`, `3129 bytes, not 3122`, `its SHA-256 changed`).
    pub why: String,
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}' ({}): {}", self.file.display(), self.path, self.why)
    }
}

/// The files `b` holds itself (in `files/`, not by reference to a store
/// file) that no longer match the size and SHA-256 recorded when it was
/// made — what a rollback to it would refuse. Links are restored from
/// their recorded targets and are not checked here. Reads every such file.
pub fn damage(b: &Backup) -> Vec<Damage> {
    let files = b.dir.join("files");
    b.record
        .files
        .iter()
        .filter(|f| f.store.is_none())
        .filter_map(|f| {
            let Entry::File(c) = &f.entry else {
                return None;
            };
            let (file, why) = match super::plan::join_rel(&files, &f.path) {
                Ok(file) => {
                    let why = damage_of(&file, c)?;
                    (file, why)
                }
                Err(e) => (files.clone(), e.message().to_string()),
            };
            Some(Damage {
                path: f.path.clone(),
                file,
                why,
            })
        })
        .collect()
}

/// What is wrong with `file`, recorded as `c`; `None` when it matches.
fn damage_of(file: &Path, c: &crate::record::Content) -> Option<String> {
    Some(match std::fs::symlink_metadata(file) {
        Err(_) => "missing".to_string(),
        Ok(m) if !m.is_file() => "not a regular file".to_string(),
        Ok(m) if m.len() != c.size => format!("{} bytes, not {}", m.len(), c.size),
        Ok(_) => match crate::hash::sha256_file(file) {
            Ok((_, sha)) if sha == c.sha256 => return None,
            Ok(_) => "its SHA-256 changed".to_string(),
            Err(e) => format!("unreadable: {}", e.message()),
        },
    })
}

/// Whether `cudnnm backups remove` needs `--force` for backup `b`: it is
/// its toolkit's first backup, or it keeps files of the user's own.
///
/// # Errors
/// When the backups cannot be listed.
pub fn removal_needs_force(home: &Home, b: &Backup) -> Result<bool> {
    let first = for_toolkit(home, &b.record.toolkit)?
        .first()
        .is_some_and(|f| f.record.id == b.record.id);
    Ok(first || !b.record.users_files(&release_bytes(home)).is_empty())
}

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

/// The file in `backups/` holding the last id handed out ([`reserve_id`]),
/// so that an id stays used after its backup is removed.
pub const LAST_ID_FILE: &str = ".last-id";

/// The id for the next backup: one more than the last id handed out
/// ([`LAST_ID_FILE`]) and than any backup folder there is (complete or
/// not, or being deleted as `.trash-<id>`). A removed backup's id is never
/// handed out again. A home without the file (older releases of cudnnm,
/// or a file that cannot be read) counts from its folders. Call under the
/// home lock; [`reserve_id`] records the id before the change uses it.
///
/// # Errors
/// When the backups folder cannot be listed.
pub fn next_id(home: &Home) -> Result<u64> {
    let dir = home.backups_dir();
    let recorded = std::fs::read_to_string(dir.join(LAST_ID_FILE))
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok())
        .unwrap_or(0);
    let trash = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_prefix(".trash-")?
                .parse::<u64>()
                .ok()
        })
        .max()
        .unwrap_or(0);
    let folders = numbered_dirs(&dir)?.last().map_or(0, |(id, _)| *id);
    Ok(recorded.max(trash).max(folders) + 1)
}

/// Records `id` as handed out ([`LAST_ID_FILE`], written atomically), before
/// anything is written under that id: a crash after it leaves a gap in the
/// ids, never an id used twice.
///
/// # Errors
/// When the backups folder cannot be created or written.
pub fn reserve_id(home: &Home, id: u64) -> Result<()> {
    let dir = home.backups_dir();
    fsops::create_dir_all(&dir)?;
    fsops::write_atomic(&dir.join(LAST_ID_FILE), format!("{id}\n").as_bytes())
}

/// What tells a release's bytes from the user's in a backup
/// ([`BackupRecord::users`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReleaseBytes {
    /// The SHA-256 of every file of every installed release.
    pub hashes: HashSet<Sha256Hex>,
    /// The installed releases: a deployment of any other one is of a
    /// release uninstalled since, whose bytes only its record knows.
    pub installed: HashSet<ReleaseId>,
}

/// The bytes of every release in the store and which releases those are:
/// what is a release's, not the user's. Releases whose receipts cannot be
/// read add no hashes (their files then count as the user's: kept, not lost).
pub fn release_bytes(home: &Home) -> ReleaseBytes {
    let (releases, broken) = crate::store::Store::new(home).scan().unwrap_or_default();
    ReleaseBytes {
        hashes: releases
            .iter()
            .flat_map(|r| r.receipt.files.iter())
            .filter_map(|f| f.entry.sha256().cloned())
            .collect(),
        // A release whose receipt cannot be read is still installed: a
        // deployment of it is not taken for one of an uninstalled release.
        installed: releases
            .iter()
            .map(|r| r.release_id())
            .chain(broken.iter().filter_map(|b| b.release_id()))
            .collect(),
    }
}

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

/// Whether backup file `f` holds no bytes of its own for a file of the
/// release in `release_dir`: an unchanged copy recorded by its store file,
/// or a link to a file of that release (a symlink deployment's).
fn refers_to(f: &BackupFile, release_dir: &Path) -> bool {
    f.store
        .as_deref()
        .is_some_and(|s| s.starts_with(release_dir))
        || f.entry
            .link_target()
            .is_some_and(|l| Path::new(l).is_absolute() && Path::new(l).starts_with(release_dir))
}

/// A backup that needs files of a store release to be restored.
#[derive(Clone, Debug)]
pub struct Referring {
    /// The backup.
    pub backup: Backup,
    /// Toolkit-relative paths of its files that are the release's store files.
    pub files: Vec<String>,
    /// Bytes those files hold in the store.
    pub bytes: u64,
    /// The store files they are (one per file, in `files`' order).
    pub sources: Vec<PathBuf>,
}

/// Every complete backup with files that only the release in `release_dir`
/// holds ([`Referring`]), oldest first.
///
/// Several backups may need the same store file: [`needed_bytes`] counts it once.
///
/// # Errors
/// As [`list`].
pub fn referring_to(home: &Home, release_dir: &Path) -> Result<Vec<Referring>> {
    let mut out = Vec::new();
    for b in list(home)? {
        let files: Vec<&BackupFile> = b
            .record
            .files
            .iter()
            .filter(|f| refers_to(f, release_dir))
            .collect();
        if files.is_empty() {
            continue;
        }
        let bytes = files
            .iter()
            .map(|f| match (&f.store, f.entry.link_target()) {
                (Some(_), _) => f.entry.size(),
                (None, Some(l)) => std::fs::metadata(l).map(|m| m.len()).unwrap_or(0),
                (None, None) => 0,
            })
            .sum();
        let sources = files
            .iter()
            .filter_map(|f| match (&f.store, f.entry.link_target()) {
                (Some(s), _) => Some(s.clone()),
                (None, Some(l)) => Some(PathBuf::from(l)),
                (None, None) => None,
            })
            .collect();
        let files = files.iter().map(|f| f.path.clone()).collect();
        out.push(Referring {
            backup: b,
            files,
            bytes,
            sources,
        });
    }
    Ok(out)
}

/// Bytes of the distinct store files the backups `refs` need: what stays on
/// disk for them after [`materialize_all`] (one copy each).
pub fn needed_bytes(refs: &[Referring]) -> u64 {
    let mut seen = HashSet::new();
    refs.iter()
        .flat_map(|r| r.sources.iter())
        .filter(|s| seen.insert(s.as_path()))
        .map(|s| std::fs::metadata(s).map(|m| m.len()).unwrap_or(0))
        .sum()
}

/// What [`materialize_all`] did for one backup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Materialized {
    /// The backup.
    pub id: u64,
    /// Files it now holds itself instead of referring to the release.
    pub files: usize,
    /// Bytes of those written as new copies (0 when every one is a hard
    /// link sharing bytes the disk already holds).
    pub copied: u64,
}

/// Makes every backup in `refs` hold the files it refers to in the release
/// at `release_dir`, so each stays restorable once that release is
/// uninstalled — with one copy of each file on disk however many backups
/// need it: each backup's file is a hard link to the store file (checked
/// against its recorded SHA-256 first, once per store file), so removing the
/// release then frees only what no backup needs. Where a hard link cannot be
/// made (a file system without them, a backups folder on another volume) the
/// file is linked to the copy an earlier backup got, else copied (hashed as
/// it is written, given its recorded modification time). Each file goes to
/// a temporary name, then is renamed over its place (a link into the store
/// is replaced by the bytes it pointed to); then `backup.toml` is rewritten
/// atomically without the references, and without the deployment when it
/// names that release — a rollback to it restores those bytes as files not
/// from cudnnm, since the release is gone. A crash before a rewrite leaves
/// that backup's old record, whose references still hold while the release
/// is installed. `progress` sees the bytes of each file as it is done.
///
/// # Errors
/// When a file cannot be linked or copied, or does not match its record
/// (the backups done so far stay whole, the rest as they were; the caller
/// must not remove the release).
pub fn materialize_all(
    refs: &[Referring],
    release_dir: &Path,
    release_id: &ReleaseId,
    progress: &dyn Progress,
) -> Result<Vec<Materialized>> {
    materialize_with(refs, release_dir, release_id, progress, &fsops::hard_link)
}

/// [`materialize_all`] with the hard-link maker given (tests pass one that fails).
fn materialize_with(
    refs: &[Referring],
    release_dir: &Path,
    release_id: &ReleaseId,
    progress: &dyn Progress,
    link: &dyn Fn(&Path, &Path) -> Result<()>,
) -> Result<Vec<Materialized>> {
    // Store file -> (size, SHA-256) once checked, and the first backup file holding its bytes.
    let mut checked: std::collections::HashMap<PathBuf, (u64, Sha256Hex)> = Default::default();
    let mut first_copy: std::collections::HashMap<PathBuf, PathBuf> = Default::default();
    let mut out = Vec::new();
    for r in refs {
        let dir = &r.backup.dir;
        let mut record = r.backup.record.clone();
        let mut done = Materialized {
            id: record.id,
            files: 0,
            copied: 0,
        };
        for f in record.files.iter_mut() {
            if !refers_to(f, release_dir) {
                continue;
            }
            let src = match (&f.store, f.entry.link_target()) {
                (Some(s), _) => s.clone(),
                (None, Some(l)) => PathBuf::from(l),
                (None, None) => continue,
            };
            let (size, sha) = match checked.get(&src) {
                Some(c) => c.clone(),
                None => {
                    let c = crate::hash::sha256_file(&src)?;
                    checked.insert(src.clone(), c.clone());
                    c
                }
            };
            if f.store.is_some() && (Some(&sha) != f.entry.sha256() || size != f.entry.size()) {
                return Err(Error::new(
                    Kind::Integrity,
                    format!(
                        "'{}' no longer holds the bytes backup {} recorded for {}",
                        src.display(),
                        record.id,
                        f.path
                    ),
                )
                .hint(format!(
                    "run `cudnnm verify`; cuDNN {release_id} was not removed"
                )));
            }
            let dest = super::plan::join_rel(&dir.join("files"), &f.path)?;
            fsops::create_dir_all(fsops::parent_of(&dest))?;
            let tmp = fsops::sibling(&dest, "materialize");
            let _ = fsops::remove_file(&tmp);
            let linked = link(&src, &tmp).is_ok()
                || first_copy.get(&src).is_some_and(|c| link(c, &tmp).is_ok());
            if !linked {
                let (n, got) = fsops::copy_file_hashed(&src, &tmp)?;
                if n != size || got != sha {
                    let _ = fsops::remove_file(&tmp);
                    return Err(Error::new(
                        Kind::Integrity,
                        format!("'{}' changed while it was copied", src.display()),
                    )
                    .hint(format!(
                        "run `cudnnm verify`; cuDNN {release_id} was not removed"
                    )));
                }
                if let Some(t) = f.mtime_ns {
                    fsops::set_mtime(&tmp, t)?;
                }
                done.copied += n;
                first_copy
                    .entry(src.clone())
                    .or_insert_with(|| dest.clone());
            }
            fsops::rename(&tmp, &dest)?;
            progress.advance(size);
            f.store = None;
            f.entry = Entry::file(size, sha);
            f.from_release = true;
            done.files += 1;
        }
        fsops::sync_dir(&dir.join("files"));
        if record
            .deployment
            .as_ref()
            .is_some_and(|d| &d.release == release_id)
        {
            record.deployment = None;
        }
        record.reinstall = None;
        record.save(dir)?;
        out.push(done);
    }
    Ok(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_count_past_the_last_handed_out_and_every_folder() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path());
        assert_eq!(next_id(&home).unwrap(), 1, "a new home");
        let dir = home.backups_dir();
        fsops::create_dir_all(&dir.join("2")).unwrap();
        assert_eq!(next_id(&home).unwrap(), 3, "a home from before the counter");
        reserve_id(&home, 3).unwrap();
        assert_eq!(
            next_id(&home).unwrap(),
            4,
            "3 was handed out, its folder not made yet"
        );
        fsops::create_dir_all(&dir.join(".trash-9")).unwrap();
        assert_eq!(
            next_id(&home).unwrap(),
            10,
            "a backup being deleted keeps its id"
        );
        fsops::remove_dir_all(&dir.join(".trash-9")).unwrap();
        reserve_id(&home, 10).unwrap();
        fsops::remove_dir_all(&dir.join("2")).unwrap();
        assert_eq!(next_id(&home).unwrap(), 11, "removed: never again");
        // A counter that cannot be read is not trusted, nor fatal.
        fsops::write_atomic(&dir.join(LAST_ID_FILE), b"x").unwrap();
        assert_eq!(next_id(&home).unwrap(), 1);
    }

    fn record(id: u64, toolkit: &str) -> BackupRecord {
        BackupRecord {
            id,
            toolkit: PathBuf::from(toolkit),
            layout: Layout::Linux,
            cuda: "12.4".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            reason: format!("before use {id}"),
            held: "no cuDNN".into(),
            deployment: None,
            reinstall: None,
            files: vec![BackupFile {
                path: "lib64/libcudnn.so.9".into(),
                entry: Entry::file(3, crate::hash::sha256_bytes(b"abc")),
                store: None,
                mtime_ns: None,
                // Backup 3 holds a file of the user's own (bytes no
                // release in this empty store has); the others hold release bytes.
                from_release: id != 3,
            }],
        }
    }

    #[test]
    fn ids_listing_and_pruning_keep_first_and_newest() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path());
        assert_eq!(next_id(&home).unwrap(), 1);
        for id in 1..=8 {
            let tk = if id == 4 { "/other" } else { "/tk" };
            let dir = home.backups_dir().join(id.to_string());
            fsops::create_dir_all(&dir.join("files")).unwrap();
            record(id, tk).save(&dir).unwrap();
        }
        fsops::create_dir_all(&home.backups_dir().join("9")).unwrap(); // in flight: not listed
        fsops::create_dir_all(&home.backups_dir().join(".trash-2")).unwrap();
        assert_eq!(next_id(&home).unwrap(), 10);
        assert_eq!(list(&home).unwrap().len(), 8);
        assert_eq!(for_toolkit(&home, Path::new("/tk")).unwrap().len(), 7);
        assert_eq!(load(&home, 4).unwrap().record.toolkit, Path::new("/other"));
        assert_eq!(load(&home, 42).unwrap_err().kind(), Kind::NotFound);
        assert_eq!(load(&home, 3).unwrap().record.size(), 3);
        let removed = prune(&home, Path::new("/tk"), 3).unwrap();
        assert_eq!(removed, vec![2, 5], "backup 3 holds the user's file");
        let left: Vec<u64> = list(&home).unwrap().iter().map(|b| b.record.id).collect();
        assert_eq!(left, vec![1, 3, 4, 6, 7, 8]);
        sweep_trash(&home);
        assert!(!home.backups_dir().join(".trash-2").exists());
        assert_eq!(prune(&home, Path::new("/tk"), 0).unwrap(), vec![6, 7]);
        let bytes = ReleaseBytes::default();
        assert_eq!(
            load(&home, 3).unwrap().record.users_files(&bytes),
            vec!["lib64/libcudnn.so.9".to_string()]
        );
        assert!(
            load(&home, 8)
                .unwrap()
                .record
                .users_files(&bytes)
                .is_empty()
        );
        // Only naming it, with force, removes it.
        assert_eq!(
            remove_checked(&home, &[3], false).unwrap_err().kind(),
            Kind::Conflict
        );
        assert_eq!(remove_checked(&home, &[3], true).unwrap()[0].id, 3);
        assert_eq!(
            remove_checked(&home, &[3], true).unwrap_err().kind(),
            Kind::NotFound
        );
        let left: Vec<u64> = list(&home).unwrap().iter().map(|b| b.record.id).collect();
        assert_eq!(left, vec![1, 4, 8]);
        assert_eq!(parse_id("#3").unwrap(), 3);
        assert_eq!(parse_id("x").unwrap_err().kind(), Kind::Usage);
    }

    /// A copy the recorded deployment placed from its release counts as the
    /// release's once that release is uninstalled (its record knows the
    /// bytes); a file a rollback restored, a changed copy, a symlink
    /// deployment's file, and any file while the release is installed
    /// (its receipt decides) do not.
    #[test]
    fn files_a_deployment_of_an_uninstalled_release_placed_are_not_the_users() {
        use crate::deploy::{Deployment, Mode, PlacedFile, PlacedFrom};
        let sha = crate::hash::sha256_bytes;
        let release: ReleaseId = "9.12.0.46_cuda12".parse().unwrap();
        let placed = |rel: &str, from: PlacedFrom, bytes: &[u8]| PlacedFile {
            path: Path::new("/tk").join(rel),
            from,
            entry: Entry::file(bytes.len() as u64, sha(bytes)),
            mtime_ns: None,
        };
        let mut rec = record(2, "/tk");
        rec.deployment = Some(Deployment {
            toolkit: PathBuf::from("/tk"),
            release: release.clone(),
            mode: Mode::Copy,
            deployed_at: "x".into(),
            backup: Some(1),
            source: None,
            files: vec![
                placed(
                    "lib64/libcudnn.so.9",
                    PlacedFrom::Release("lib/libcudnn.so.9".into()),
                    b"lib",
                ),
                placed(
                    "include/cudnn.h",
                    PlacedFrom::Backup {
                        id: 1,
                        path: "include/cudnn.h".into(),
                    },
                    b"edit",
                ),
                placed(
                    "include/cudnn_version.h",
                    PlacedFrom::Release("include/cudnn_version.h".into()),
                    b"v",
                ),
            ],
        });
        let file = |path: &str, bytes: &[u8]| BackupFile {
            path: path.into(),
            entry: Entry::file(bytes.len() as u64, sha(bytes)),
            store: None,
            mtime_ns: None,
            from_release: false,
        };
        rec.files = vec![
            file("lib64/libcudnn.so.9", b"lib"),
            file("include/cudnn.h", b"edit"),
            // Changed since it was placed: the user's.
            file("include/cudnn_version.h", b"changed"),
        ];
        let gone = ReleaseBytes::default();
        assert_eq!(
            rec.users_files(&gone),
            vec![
                "include/cudnn.h".to_string(),
                "include/cudnn_version.h".to_string()
            ]
        );
        // Installed: the receipt's bytes decide, not the record.
        let installed = ReleaseBytes {
            hashes: HashSet::new(),
            installed: [release].into_iter().collect(),
        };
        assert_eq!(rec.users_files(&installed).len(), 3);
        // A symlink deployment placed no bytes of its own.
        rec.deployment.as_mut().unwrap().mode = Mode::Symlink;
        assert_eq!(rec.users_files(&gone).len(), 3);
    }

    #[cfg(unix)]
    #[test]
    fn without_hard_links_into_the_store_backups_share_the_first_copy() {
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path());
        let release = home.store_dir().join("cuda-12/9.12.0.46");
        let lib = release.join("lib/libcudnn.so.9");
        fsops::create_dir_all(fsops::parent_of(&lib)).unwrap();
        fsops::write_atomic(&lib, b"library bytes").unwrap();
        let sha = crate::hash::sha256_bytes(b"library bytes");
        let refs: Vec<Referring> = [1u64, 2]
            .iter()
            .map(|&id| {
                let mut rec = record(id, "/tk");
                rec.files[0].store = Some(lib.clone());
                rec.files[0].entry = Entry::file(13, sha.clone());
                rec.files[0].from_release = false;
                let dir = home.backups_dir().join(id.to_string());
                fsops::create_dir_all(&dir.join("files")).unwrap();
                rec.save(&dir).unwrap();
                Referring {
                    backup: Backup { dir, record: rec },
                    files: vec!["lib64/libcudnn.so.9".into()],
                    bytes: 13,
                    sources: vec![lib.clone()],
                }
            })
            .collect();
        // No hard link into the store can be made (another volume, say).
        let no_store_links = |s: &Path, t: &Path| {
            if s.starts_with(home.store_dir()) {
                Err(Error::msg("no hard links here"))
            } else {
                fsops::hard_link(s, t)
            }
        };
        let id: ReleaseId = "9.12.0.46_cuda12".parse().unwrap();
        let done = materialize_with(
            &refs,
            &release,
            &id,
            &crate::progress::NoProgress,
            &no_store_links,
        )
        .unwrap();
        assert_eq!(
            done.iter().map(|m| (m.files, m.copied)).collect::<Vec<_>>(),
            vec![(1, 13), (1, 0)],
            "one copy, then a link to it"
        );
        let f = |id: u64| {
            home.backups_dir()
                .join(format!("{id}/files/lib64/libcudnn.so.9"))
        };
        let (a, b) = (
            std::fs::metadata(f(1)).unwrap(),
            std::fs::metadata(f(2)).unwrap(),
        );
        assert_eq!(a.ino(), b.ino());
        assert_ne!(a.ino(), std::fs::metadata(&lib).unwrap().ino());
        assert_eq!(std::fs::read(f(2)).unwrap(), b"library bytes");
        let rec = load(&home, 2).unwrap().record;
        assert_eq!(rec.files[0].store, None);
        assert!(rec.files[0].from_release);
    }
}

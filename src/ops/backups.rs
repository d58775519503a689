//! Backups as `cudnnm backups` shows and removes them: the listing (each
//! backup with whether it is its toolkit's first and the files of the
//! user's own it keeps), `prune` (each toolkit's old backups, as every
//! change prunes after it); `backups remove` (the ids named, all or none)
//! is the guard's own ([`Guard::remove_backups`]). Removals run through the
//! guard, one journaled change each.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::deploy::Guard;
use crate::deploy::backup::{self, Removed};
use crate::env::Env;
use crate::error::{Error, Kind, Result};
use crate::home::Home;

/// One backup as `cudnnm backups` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BackupView {
    /// Its id.
    pub id: u64,
    /// The toolkit it is a backup of.
    pub toolkit: PathBuf,
    /// When it was taken (RFC 3339).
    pub created_at: String,
    /// Why (`before use 9.27.0.42_cuda12`).
    pub reason: String,
    /// What it holds (`9.12.0.46`, `8.1.0 (not from cudnnm)`, `no cuDNN`).
    pub held: String,
    /// The release its files were a deployment of, if cudnnm's.
    pub release: Option<String>,
    /// Its files.
    pub files: usize,
    /// Bytes it holds itself.
    pub size: u64,
    /// Its toolkit's first backup: the state before cudnnm (never pruned).
    pub first: bool,
    /// Files of the user's own it holds (kept until `backups remove ID --force`).
    pub users_files: Vec<String>,
    /// Their bytes.
    pub users_bytes: u64,
    /// Its folder.
    pub dir: PathBuf,
}

/// The backup `id`, as [`list`] shows it.
///
/// # Errors
/// [`Kind::NotFound`] when there is no such backup (with what lists them);
/// when the backups cannot be listed.
pub fn find(home: &Home, id: u64) -> Result<BackupView> {
    list(home, None)?
        .into_iter()
        .find(|v| v.id == id)
        .ok_or_else(|| {
            Error::new(Kind::NotFound, format!("there is no backup {id}"))
                .hint("`cudnnm backups` lists the backups and their ids")
        })
}

/// Every backup, oldest first; only those of the toolkit `filter` when given.
///
/// # Errors
/// When the backups cannot be listed.
pub fn list(home: &Home, filter: Option<&Path>) -> Result<Vec<BackupView>> {
    let all = backup::list(home)?;
    let mut firsts = std::collections::BTreeMap::new();
    for b in &all {
        firsts
            .entry(b.record.toolkit.clone())
            .or_insert(b.record.id);
    }
    let bytes = backup::release_bytes(home);
    Ok(all
        .iter()
        .filter(|b| filter.is_none_or(|f| b.record.toolkit == f))
        .map(|b| {
            let users: Vec<&backup::BackupFile> = b.record.users(&bytes).collect();
            BackupView {
                id: b.record.id,
                toolkit: b.record.toolkit.clone(),
                created_at: b.record.created_at.clone(),
                reason: b.record.reason.clone(),
                held: b.record.held.clone(),
                release: b.record.deployment.as_ref().map(|d| d.release.to_string()),
                files: b.record.files.len(),
                size: b.record.size(),
                first: firsts.get(&b.record.toolkit) == Some(&b.record.id),
                users_files: users.iter().map(|f| f.path.clone()).collect(),
                users_bytes: users.iter().map(|f| f.entry.size()).sum(),
                dir: b.dir.clone(),
            }
        })
        .collect())
}

/// `--cuda-root P` (relative to `env`'s working folder) as the records
/// spell toolkit roots: a folder that is gone counts while backups name it.
///
/// # Errors
/// [`Kind::NotFound`] for a path that does not exist and no backup names.
pub fn toolkit_filter(home: &Home, env: &Env, p: PathBuf) -> Result<PathBuf> {
    let p = if p.is_absolute() {
        p
    } else {
        env.cwd().join(p)
    };
    // A toolkit whose folder is gone still has its backups listed by its root.
    let recorded = || {
        backup::list(home)
            .unwrap_or_default()
            .iter()
            .any(|b| b.record.toolkit == p)
    };
    if std::fs::metadata(&p).is_err() {
        if recorded() {
            return Ok(p);
        }
        return Err(Error::new(
            Kind::NotFound,
            format!("--cuda-root '{}' does not exist", p.display()),
        )
        .hint("name the toolkit folder (`cudnnm toolkits` lists those cudnnm knows), or leave out --cuda-root to list every backup"));
    }
    // Spelled as the records are: no `\\?\` prefix on Windows.
    Ok(crate::fsops::canonical_or_self(&p))
}

/// What `backups prune` did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Pruned {
    /// The backups removed, oldest first.
    pub removed: Vec<Removed>,
    /// The newest backups each toolkit kept (besides its first, and those
    /// keeping files of the user's own).
    pub keep: u32,
}

/// How many backups `backups prune` keeps per toolkit: `keep`, else
/// `keep_backups` in `config.toml`.
///
/// # Errors
/// [`Kind::Usage`] for 0 (the newest backup is what `rollback` restores: it
/// goes by its id, never by a count); when `config.toml` cannot be read.
pub fn keep_count(home: &Home, keep: Option<u32>) -> Result<u32> {
    match keep {
        Some(0) => Err(Error::new(
            Kind::Usage,
            "--keep 0 would remove each toolkit's newest backup, the one `cudnnm rollback` restores",
        )
        .hint("keep at least 1 (`cudnnm backups prune --keep 1`), or remove that backup by its id with `cudnnm backups remove ID` (`cudnnm backups` lists them)")),
        Some(k) => Ok(k),
        None => Ok(home.config()?.backups_to_keep()),
    }
}

/// Prunes every toolkit's backups (only `filter`'s when given), keeping the
/// newest `keep` of each ([`keep_count`]), each toolkit's as one journaled
/// change.
///
/// # Errors
/// As [`Guard::prune_backups`].
pub fn prune(guard: &Guard<'_>, keep: u32, filter: Option<&Path>) -> Result<Pruned> {
    let mut roots: Vec<PathBuf> = backup::list(guard.home())?
        .into_iter()
        .map(|b| b.record.toolkit)
        .filter(|t| filter.is_none_or(|f| t == f))
        .collect();
    roots.sort();
    roots.dedup();
    let mut removed = Vec::new();
    for r in &roots {
        removed.extend(guard.prune_backups(r, keep)?);
    }
    Ok(Pruned {
        removed,
        keep: keep.max(1),
    })
}

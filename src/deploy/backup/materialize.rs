//! Backups that refer to a store release's files instead of holding a
//! copy, and making them hold those files (hard links sharing one copy)
//! before `uninstall --force` removes the release.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use std::path::{Path, PathBuf};

use super::{Backup, BackupFile, list};
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::hash::Sha256Hex;
use crate::home::Home;
use crate::progress::Progress;
use crate::record::Entry;
use crate::version::ReleaseId;

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

/// What [`Materializer::backup`] did for one backup.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Materialized {
    /// The backup.
    pub id: u64,
    /// Files it now holds itself instead of referring to the release.
    pub files: usize,
    /// Bytes of those written as new copies (0 when every one is a hard
    /// link sharing bytes the disk already holds).
    pub copied: u64,
}

/// Makes backups hold the files they refer to in the release at
/// `release_dir`, so each stays restorable once that release is
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
/// from cudnnm, since the release is gone. Doing one backup again is
/// harmless, so a crash before its rewrite is finished by doing it again
/// (the uninstall's journal does). `progress` sees the bytes of each file.
pub(in crate::deploy) struct Materializer<'a> {
    release_dir: &'a Path,
    release_id: &'a ReleaseId,
    progress: &'a dyn Progress,
    link: &'a dyn Fn(&Path, &Path) -> Result<()>,
    /// Store file -> (size, SHA-256) once checked.
    checked: HashMap<PathBuf, (u64, Sha256Hex)>,
    /// Store file -> the first backup file holding a copy of its bytes.
    first_copy: HashMap<PathBuf, PathBuf>,
}

impl<'a> Materializer<'a> {
    /// For the release `release_id` in `release_dir`, making hard links
    /// with `link` ([`fsops::hard_link`]; tests pass one that fails).
    pub(in crate::deploy) fn new(
        release_dir: &'a Path,
        release_id: &'a ReleaseId,
        progress: &'a dyn Progress,
        link: &'a dyn Fn(&Path, &Path) -> Result<()>,
    ) -> Materializer<'a> {
        Materializer {
            release_dir,
            release_id,
            progress,
            link,
            checked: HashMap::new(),
            first_copy: HashMap::new(),
        }
    }

    /// Makes the backup of `r` hold its files of the release (see the type).
    ///
    /// # Errors
    /// When a file cannot be linked or copied, or does not match its record
    /// (the backup's record is then as it was; the caller must not remove
    /// the release).
    pub(in crate::deploy) fn backup(&mut self, r: &Referring) -> Result<Materialized> {
        let dir = &r.backup.dir;
        let mut record = r.backup.record.clone();
        let mut done = Materialized {
            id: record.id,
            files: 0,
            copied: 0,
        };
        for f in record.files.iter_mut() {
            if !refers_to(f, self.release_dir) {
                continue;
            }
            let src = match (&f.store, f.entry.link_target()) {
                (Some(s), _) => s.clone(),
                (None, Some(l)) => PathBuf::from(l),
                (None, None) => continue,
            };
            let (size, sha) = self.checked_hash(&src)?;
            let release_id = self.release_id;
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
            let dest = super::super::plan::join_rel(&dir.join("files"), &f.path)?;
            fsops::create_dir_all(fsops::parent_of(&dest))?;
            // One name per file, so doing the backup again replaces it.
            let name = dest
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let tmp = fsops::parent_of(&dest).join(format!(".cudnnm-materialize-{name}"));
            let _ = fsops::remove_file(&tmp);
            let link = self.link;
            let linked = link(&src, &tmp).is_ok()
                || self
                    .first_copy
                    .get(&src)
                    .is_some_and(|c| link(c, &tmp).is_ok());
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
                self.first_copy
                    .entry(src.clone())
                    .or_insert_with(|| dest.clone());
            }
            fsops::rename(&tmp, &dest)?;
            self.progress.advance(size);
            f.store = None;
            f.entry = Entry::file(size, sha);
            f.from_release = true;
            done.files += 1;
        }
        fsops::sync_dir(&dir.join("files"));
        if record
            .deployment
            .as_ref()
            .is_some_and(|d| &d.release == self.release_id)
        {
            record.deployment = None;
        }
        record.reinstall = None;
        record.save(dir)?;
        Ok(done)
    }

    /// Whether making the backup of `r` hold its files began and did not
    /// finish: a file it refers to is a file in its folder already, or a
    /// temporary one is left there (a crash between the files and the
    /// rewrite of `backup.toml`).
    pub(in crate::deploy) fn begun(r: &Referring) -> bool {
        let files = r.backup.dir.join("files");
        r.files.iter().any(|rel| {
            let Ok(dest) = super::super::plan::join_rel(&files, rel) else {
                return false;
            };
            let name = dest
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let tmp = fsops::parent_of(&dest).join(format!(".cudnnm-materialize-{name}"));
            std::fs::symlink_metadata(&tmp).is_ok()
                || std::fs::symlink_metadata(&dest).is_ok_and(|m| m.is_file())
        })
    }

    /// The size and SHA-256 of store file `src`, read once.
    fn checked_hash(&mut self, src: &Path) -> Result<(u64, Sha256Hex)> {
        if let Some(c) = self.checked.get(src) {
            return Ok(c.clone());
        }
        let c = crate::hash::sha256_file(src)?;
        self.checked.insert(src.to_path_buf(), c.clone());
        Ok(c)
    }
}

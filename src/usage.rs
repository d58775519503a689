//! Where a home's disk space goes (`cudnnm du`): the store by release, the
//! backups (what each holds alone, and what it shares with the store or
//! other backups through hard links), the download cache, and the rest
//! (records, journals, partial imports); pip's download folders count with
//! the downloads. Every file is counted once however
//! many hard links it has ([`crate::disk::Tally`]): the categories add up
//! to the total, each file counted in the first that holds it — store,
//! backups, downloads, other.

use std::path::PathBuf;

use serde::Serialize;

use crate::deploy::backup;
use crate::disk::Tally;
use crate::error::Result;
use crate::home::Home;
use crate::store::Store;
use crate::version::ReleaseId;

/// One store release.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ReleaseUsage {
    /// `9.12.0.46_cuda12`.
    pub release: ReleaseId,
    /// Its folder.
    pub dir: PathBuf,
    /// Bytes of its files, each once.
    pub bytes: u64,
    /// Of those, bytes no other name holds: what `uninstall` would free.
    pub own: u64,
}

/// One backup.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct BackupUsage {
    /// Its id.
    pub id: u64,
    /// The toolkit it is a backup of.
    pub toolkit: PathBuf,
    /// Bytes of its files (and record), each once.
    pub bytes: u64,
    /// Bytes of the files it holds itself, as `cudnnm backups` counts them
    /// (files kept by reference to the store, and its record, not counted).
    pub files: u64,
    /// Of those, bytes only this backup holds: what removing it frees.
    pub own: u64,
    /// Of those, bytes it shares (hard links) with the store, another
    /// backup or a toolkit: removing it frees none of them.
    pub shared: u64,
}

/// The whole home.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Usage {
    /// The home folder.
    pub home: PathBuf,
    /// Every release of this home's own store.
    pub releases: Vec<ReleaseUsage>,
    /// Every backup.
    pub backups: Vec<BackupUsage>,
    /// Bytes counted under `store/` (releases, and partial imports).
    pub store: u64,
    /// Bytes counted under `backups/` that the store does not hold too.
    pub backups_total: u64,
    /// Bytes of `downloads/` (archives, sidecars, partial downloads) and
    /// of pip's download folders (`.pip-*` in the home).
    pub downloads: u64,
    /// Of `downloads`, the bytes in pip's download folders: a pip download
    /// running now, or one a kill left (the next `install pip:` or `lock`
    /// removes it once nothing changed in it for an hour).
    pub pip_downloads: u64,
    /// Everything else in the home (config, records, journals).
    pub other: u64,
    /// All of it, each file once: the sum of the four above.
    pub total: u64,
}

/// Measures `home`.
///
/// # Errors
/// When the store or the backups cannot be listed.
pub fn measure(home: &Home) -> Result<Usage> {
    let own_store = home.store_dir();
    let releases: Vec<ReleaseUsage> = Store::new(home)
        .releases()?
        .into_iter()
        .filter(|r| r.dir.starts_with(&own_store))
        .map(|r| {
            let mut t = Tally::new();
            t.add_tree(&r.dir);
            ReleaseUsage {
                release: r.release_id(),
                dir: r.dir.clone(),
                bytes: t.bytes(),
                own: t.freed(),
            }
        })
        .collect();
    let backups: Vec<BackupUsage> = backup::list(home)?
        .into_iter()
        .map(|b| {
            let mut t = Tally::new();
            t.add_tree(&b.dir);
            BackupUsage {
                id: b.record.id,
                toolkit: b.record.toolkit.clone(),
                bytes: t.bytes(),
                files: b.record.size(),
                own: t.freed(),
                shared: t.shared(),
            }
        })
        .collect();
    let mut all = Tally::new();
    let store = all.add_tree(&own_store);
    let backups_total = all.add_tree(&home.backups_dir());
    let cache = all.add_tree(&home.downloads_dir());
    let pip_downloads: u64 = std::fs::read_dir(home.root())
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(".pip-"))
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| all.add_tree(&e.path()))
                .sum()
        })
        .unwrap_or(0);
    let downloads = cache + pip_downloads;
    let other = all.add_tree(home.root());
    Ok(Usage {
        home: home.root().to_path_buf(),
        releases,
        backups,
        store,
        backups_total,
        downloads,
        pip_downloads,
        other,
        total: all.bytes(),
    })
}

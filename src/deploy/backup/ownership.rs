//! Whose bytes a backup holds: a release's (any installed release's files,
//! or what a deployment of an uninstalled release placed) or the user's own,
//! which housekeeping never deletes unasked.

use std::collections::HashSet;

use super::{Backup, for_toolkit};
use crate::error::Result;
use crate::hash::Sha256Hex;
use crate::home::Home;
use crate::version::ReleaseId;

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

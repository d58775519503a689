//! Backup ids: increasing across the home and never handed out twice
//! (`backups/.last-id` keeps the last one).

use super::numbered_dirs;
use crate::error::Result;
use crate::fsops;
use crate::home::Home;

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
pub(in crate::deploy) fn next_id(home: &Home) -> Result<u64> {
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
pub(in crate::deploy) fn reserve_id(home: &Home, id: u64) -> Result<()> {
    let dir = home.backups_dir();
    fsops::create_dir_all(&dir)?;
    fsops::write_atomic(&dir.join(LAST_ID_FILE), format!("{id}\n").as_bytes())
}

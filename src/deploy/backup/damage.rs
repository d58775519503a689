//! Re-hashing a backup's own files: what a rollback to it would refuse,
//! named so the user can pick a backup that is whole.

use std::fmt;
use std::path::{Path, PathBuf};

use super::Backup;
use crate::record::Entry;

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
            let (file, why) = match super::super::plan::join_rel(&files, &f.path) {
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

//! Planning a change as pure data (`docs/architecture.md#deploying`): the toolkit's
//! current cuDNN files (every `cudnn*`/`libcudnn*` in its cuDNN folders,
//! whoever put them there) versus the files of the target — a store release
//! for `use`, a backup for `rollback`. The [`Plan`] is what the journal
//! stores before the first change, so it holds everything needed to finish
//! or undo the change without the process that started it.
//!
//! The plan is made of three parts, one file each:
//! - `current`: what the toolkit holds now (the scan), how it is described
//!   (`held`), and the moves and `backup.toml` that take it aside;
//! - `release`: where a store release's files go, and the plan for `use`;
//! - `rollback`: the plan that puts a backup's files back.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::backup::BackupRecord;
use super::{Deployment, Mode, PlacedFile, PlacedFrom, mtime_ns};
use crate::error::{Error, Kind, Result};
use crate::record::Entry;
use crate::toolkit::Layout;
use crate::version::ReleaseId;

mod current;
mod release;
mod rollback;
#[cfg(test)]
mod tests;

pub use current::{check_toolkit_dirs, record_describes, scan_toolkit, scan_toolkit_names};
#[cfg(test)]
use release::release_targets;
pub use release::{check_release, plan_use};
pub use rollback::plan_rollback;

/// The label of a toolkit (or backup) without cuDNN files.
pub const NO_CUDNN: &str = "no cuDNN";

/// Journal schema written by this build.
pub const PLAN_SCHEMA: u32 = 1;

/// Moving one current file out of the toolkit into the backup.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Move {
    /// The file in the toolkit.
    pub from: PathBuf,
    /// Where it goes in the backup (`backups/<id>/files/<rel>`).
    pub to: PathBuf,
    /// Toolkit-relative path.
    pub rel: String,
    /// What it is (size and hash, or link target).
    pub state: Entry,
    /// Set for an unchanged copy cudnnm placed whose bytes the store holds:
    /// it is renamed aside in its own folder (`to`), then deleted once the
    /// records are written, before anything is placed; undo renames it back,
    /// or copies it from this store file once it is gone; rollback copies it
    /// from there.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub store_copy: Option<PathBuf>,
    /// The file's modification time, restored with it (copies only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mtime_ns: Option<i64>,
}

/// How a file is put into the toolkit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlaceKind {
    /// A symbolic link whose target is `source` as written.
    Link,
    /// A hard link to the file `source`.
    Hardlink,
    /// A copy of the file `source` (through a temporary name, then renamed).
    Copy,
}

/// Putting one file of the target into the toolkit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    /// The path in the toolkit.
    pub dest: PathBuf,
    /// Toolkit-relative path.
    pub rel: String,
    /// How.
    pub kind: PlaceKind,
    /// The link target (for `link`) or the file to link or copy.
    pub source: PathBuf,
    /// What the placed file must be: content size and hash, and for links the target.
    pub state: Entry,
    /// Where it came from, for the deployment record: the release's file
    /// (`lib/libcudnn.so.9`), or a backup's.
    pub from: PlacedFrom,
    /// For copies: the modification time given to the copy (its source's,
    /// as `cp -p` does), so the record can hold it before the copy exists.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mtime_ns: Option<i64>,
    /// For copies: re-hash the bytes while copying. Set for files restored
    /// from a backup (the user's own bytes); copies of store files are
    /// checked by size, as links are checked by target — the store was
    /// hashed at import and `cudnnm verify` re-hashes it.
    #[serde(default)]
    pub check_hash: bool,
}

impl Place {
    /// The temporary name a copy is written to before it is renamed into place.
    pub fn tmp_path(&self) -> PathBuf {
        let name = self
            .dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        crate::fsops::parent_of(&self.dest).join(format!(".cudnnm-tmp-{name}"))
    }
}

/// The deployment to record once the change is verified.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Next {
    /// The release (`9.27.0.42_cuda12`).
    pub release: ReleaseId,
    /// Mode of the placed files.
    pub mode: Mode,
    /// Where the release came from (its receipt's source), kept in the
    /// deployment record so that a reinstall hint can name it after the
    /// release left the store.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub source: Option<crate::store::Source>,
}

/// What a change does, as the user asked for it. Written as the text
/// cudnnm has always written in journals (`use 9.27.0.42_cuda12`,
/// `rollback to backup 3`), which is also how messages name the change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// `use` of a store release.
    Use(ReleaseId),
    /// `rollback` to the backup of this id.
    Rollback(u64),
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Use(id) => write!(f, "use {id}"),
            Action::Rollback(id) => write!(f, "rollback to backup {id}"),
        }
    }
}

impl FromStr for Action {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Action, String> {
        let parsed = if let Some(id) = s.strip_prefix("use ") {
            id.parse().ok().map(Action::Use)
        } else {
            s.strip_prefix("rollback to backup ")
                .and_then(|id| id.parse().ok())
                .map(Action::Rollback)
        };
        parsed.ok_or_else(|| format!("'{s}' is not a change cudnnm makes"))
    }
}

impl Serialize for Action {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Action {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// A whole change, as stored in the journal before anything changes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// [`PLAN_SCHEMA`].
    pub schema: u32,
    /// Transaction id, equal to the id of the backup it creates.
    pub id: u64,
    /// What the user asked for, for messages (`use 9.27.0.42_cuda12`, `rollback to backup 3`).
    pub action: Action,
    /// The toolkit root.
    pub toolkit: PathBuf,
    /// Its layout.
    pub layout: Layout,
    /// The backup folder this change fills (`backups/<id>`).
    pub backup_dir: PathBuf,
    /// Toolkit folders to create first (missing cuDNN folders), parents first.
    pub mkdirs: Vec<PathBuf>,
    /// Current files to move into the backup.
    pub moves: Vec<Move>,
    /// Target files to place.
    pub places: Vec<Place>,
    /// `backup.toml` to write when the change commits.
    pub backup: BackupRecord,
    /// The deployment to record (none when a rollback restores files that
    /// cudnnm did not deploy).
    pub next: Option<Next>,
    /// The deployment `deployments.toml` recorded for the toolkit before the
    /// change, put back by an undo. It differs from `backup.deployment` only
    /// when that record was stale ([`record_describes`]): the backup then
    /// holds files not from cudnnm, but an undone change leaves the record
    /// as it was. Absent in journals written before this field: undo then
    /// uses `backup.deployment`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub previous: Option<Deployment>,
    /// What the toolkit held, for messages (`9.12.0.46`, `8.1.0 (not from cudnnm)`, `no cuDNN`).
    pub from_label: String,
    /// What it will hold, for messages.
    pub to_label: String,
}

impl Plan {
    /// Every toolkit folder this plan changes entries in, without duplicates.
    pub fn toolkit_dirs(&self) -> Vec<PathBuf> {
        let mut set = BTreeSet::new();
        for m in &self.moves {
            set.insert(crate::fsops::parent_of(&m.from).to_path_buf());
        }
        for p in &self.places {
            set.insert(crate::fsops::parent_of(&p.dest).to_path_buf());
        }
        set.into_iter().collect()
    }

    /// Every backup folder this plan moves files into.
    pub fn backup_dirs(&self) -> Vec<PathBuf> {
        let mut set = BTreeSet::new();
        set.insert(self.backup_dir.clone());
        for m in &self.moves {
            let mut d = crate::fsops::parent_of(&m.to).to_path_buf();
            while d.starts_with(&self.backup_dir) {
                set.insert(d.clone());
                if !d.pop() {
                    break;
                }
            }
        }
        set.into_iter().collect()
    }

    /// The deployment record for the placed files.
    pub fn deployment(&self, deployed_at: &str) -> Option<Deployment> {
        let next = self.next.as_ref()?;
        let files = self
            .places
            .iter()
            .map(|p| PlacedFile {
                path: p.dest.clone(),
                from: p.from.clone(),
                entry: p.state.clone(),
                mtime_ns: p.mtime_ns,
            })
            .collect();
        Some(Deployment {
            toolkit: self.toolkit.clone(),
            release: next.release.clone(),
            mode: next.mode,
            deployed_at: deployed_at.to_string(),
            backup: Some(self.id),
            files,
            source: next.source.clone(),
        })
    }

    /// Number of journal steps a full run logs: the plan, each folder made,
    /// each move, "moved", "recorded", each placement, "verified".
    pub fn step_count(&self) -> u64 {
        (1 + self.mkdirs.len() + self.moves.len() + 2 + self.places.len() + 1) as u64
    }

    /// True when some file is placed by copying (the slow, size-bound mode).
    pub fn copies(&self) -> bool {
        self.places.iter().any(|p| p.kind == PlaceKind::Copy)
    }
}

/// The toolkit-relative paths of the files this plan moves into its backup
/// whose names look like cuDNN's but that no cuDNN release ships
/// ([`crate::names::is_release_name`]): leftovers or someone's own
/// files, which the summary names so nobody wonders where they went.
pub fn moved_not_from_a_release(plan: &Plan) -> Vec<String> {
    plan.moves
        .iter()
        .filter(|m| {
            let name = m.rel.rsplit('/').next().unwrap_or(&m.rel);
            !crate::names::is_release_name(name)
        })
        .map(|m| m.rel.clone())
        .collect()
}

/// `lib64/libcudnn.so.9` for `root/lib64/libcudnn.so.9`.
pub fn rel_path(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// `root` joined with a `/`-separated relative path, refusing `..` and absolute parts.
pub fn join_rel(root: &Path, rel: &str) -> Result<PathBuf> {
    let mut p = root.to_path_buf();
    for part in rel.split('/') {
        if part.is_empty() || part == "." || part == ".." || part.contains(['\\', ':']) {
            return Err(Error::new(
                Kind::Integrity,
                format!("'{rel}' is not a safe relative path"),
            ));
        }
        p.push(part);
    }
    Ok(p)
}

/// The modification time of the file a copy is made from (kept by the copy).
fn source_mtime(p: &Path) -> Option<i64> {
    std::fs::metadata(p).ok().and_then(|m| mtime_ns(&m))
}

/// Missing folders among `dirs` and their missing parents below `root`, parents first.
fn missing_dirs(root: &Path, dirs: impl IntoIterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut set = BTreeSet::new();
    for d in dirs {
        let mut cur = d;
        while cur.starts_with(root) && cur != root && std::fs::symlink_metadata(&cur).is_err() {
            set.insert(cur.clone());
            if !cur.pop() {
                break;
            }
        }
    }
    let mut v: Vec<PathBuf> = set.into_iter().collect();
    v.sort_by_key(|p| p.components().count());
    v
}

/// Refuses a plan that would put a file where a folder is (`include/cudnn.h`
/// made a folder by mistake): the folder is not cuDNN's and is left alone.
///
/// # Errors
/// [`Kind::Conflict`] naming the folder.
fn check_no_folder_at(places: &[Place]) -> Result<()> {
    for p in places {
        if std::fs::symlink_metadata(&p.dest).is_ok_and(|m| m.is_dir()) {
            return Err(Error::new(
                Kind::Conflict,
                format!(
                    "'{}' is a folder, where cuDNN's file {} must go",
                    p.dest.display(),
                    p.rel
                ),
            )
            .hint(format!(
                "move that folder out of '{}' (cudnnm does not touch folders), then run the command again; nothing was changed",
                crate::fsops::parent_of(&p.dest).display()
            )));
        }
    }
    Ok(())
}

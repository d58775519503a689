//! Deploying a release into a CUDA toolkit (`docs/architecture.md#deploying`): plan, journal,
//! backup, place, verify, record — and recovery and rollback — and every
//! other change to what cudnnm keeps (the store, the backups, the
//! deployments record), all through one guard.
//!
//! The pieces, in the order a change runs through them:
//! - `plan`: pure data first — the toolkit's current cuDNN files versus the
//!   target's files (a store release for `use`, a backup for `rollback`);
//! - `access`: the preflight that checks write access to every folder the
//!   plan touches, before anything changes;
//! - [`inflight`]: the marker in the toolkit root that tells other homes a
//!   change there is running or unfinished (read by `doctor` and `current`);
//! - `journal`: the plan on disk and the step log, written before the
//!   first change (plus the test-only fault hook), and the other journaled
//!   changes (ops): removing backups (`backup::removal`), removing a release
//!   from the store (`uninstall`), a doctor fix's soname link (`link_fix`);
//! - `apply`: moves the current files into a new backup, places the
//!   target's files, verifies, records, retires the journal — and undoes;
//! - `recover`: what the next command does with a journal left by a crash;
//! - [`backup`]: `backups/<id>/` with `backup.toml`, listing, and what is
//!   whose;
//! - [`status`]: drift between a deployment record and the toolkit;
//! - [`Guard`]: the one door — the locks, recovery, and every change above,
//!   reporting through a [`Reporter`]. Only its methods run a plan, an op or
//!   a recovery: the pieces that change things are private to this module.
//!
//! [`Deployments`] (`deployments.toml`) is the contract that `uninstall`,
//! `verify` and `doctor` read; only the guard writes it.

mod access;
mod apply;
pub mod backup;
mod guard;
pub mod inflight;
mod journal;
mod link_fix;
mod plan;
mod recover;
pub mod status;
mod uninstall;

pub use access::elevate_hint;
pub use apply::Outcome;
pub use guard::{
    Applied, Done, Guard, Redeployed, Reporter, Silent, existing_toolkit_dir, recovery_pending,
};
pub use link_fix::{Kept, RecordFile, SonameLink};
pub use plan::{
    Action, Move, NO_CUDNN, Place, PlaceKind, Plan, moved_not_from_a_release, rel_path,
    scan_toolkit_names,
};
pub use recover::{Recovered, Resolution};
pub use uninstall::{Folder, ReleaseRemoval, ReleaseRemoved, StableLink};

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::home::Home;
use crate::record::{self, Entry};
use crate::version::ReleaseId;

/// How files were placed in a toolkit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Symbolic links into the store.
    Symlink,
    /// Hard links to store files (same volume).
    Hardlink,
    /// Copies.
    Copy,
}

impl Mode {
    /// `symlink`, `hardlink` or `copy`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Mode::Symlink => "symlink",
            Mode::Hardlink => "hardlink",
            Mode::Copy => "copy",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = Error;

    /// Reads what [`Mode::as_str`] writes (a recorded mode, exactly);
    /// what a user asks for is a [`ModeRequest`].
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "symlink" => Ok(Mode::Symlink),
            "hardlink" => Ok(Mode::Hardlink),
            "copy" => Ok(Mode::Copy),
            _ => Err(
                Error::new(Kind::Usage, format!("'{s}' is not a recorded deploy mode"))
                    .hint("a deployment's mode is one of symlink, hardlink, copy"),
            ),
        }
    }
}

/// What the user asked for with `--mode` (or `mode` in `config.toml`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeRequest {
    /// Symlink on Unix; on Windows a hard link when the store and the toolkit
    /// share a volume, else a copy.
    Auto,
    /// Exactly this mode.
    Exact(Mode),
}

impl FromStr for ModeRequest {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "auto" => ModeRequest::Auto,
            "symlink" | "link" => ModeRequest::Exact(Mode::Symlink),
            "hardlink" => ModeRequest::Exact(Mode::Hardlink),
            "copy" => ModeRequest::Exact(Mode::Copy),
            _ => {
                return Err(
                    Error::new(Kind::Usage, format!("'{s}' is not a deploy mode"))
                        .hint("use one of auto, symlink, hardlink, copy"),
                );
            }
        })
    }
}

impl ModeRequest {
    /// The concrete mode for deploying from `store_dir` into `toolkit_dir`
    /// (both existing folders) on a Windows host or not.
    ///
    /// # Errors
    /// [`Kind::Conflict`] when `hardlink` is asked for across volumes.
    pub fn resolve(
        &self,
        store_dir: &Path,
        toolkit_dir: &Path,
        windows_host: bool,
    ) -> Result<Mode> {
        let same = crate::platform::same_volume(store_dir, toolkit_dir);
        match self {
            ModeRequest::Auto if !windows_host => Ok(Mode::Symlink),
            ModeRequest::Auto => Ok(if same { Mode::Hardlink } else { Mode::Copy }),
            ModeRequest::Exact(Mode::Hardlink) if !same => Err(Error::new(
                Kind::Conflict,
                format!(
                    "cannot hard-link from the store '{}' into '{}': they are on different volumes",
                    store_dir.display(),
                    toolkit_dir.display()
                ),
            )
            .hint("use --mode copy (or symlink), or move the cudnnm home (CUDNNM_HOME) onto the toolkit's volume")),
            ModeRequest::Exact(m) => Ok(*m),
        }
    }
}

/// Where a placed file came from: the release's own file, or — after a
/// rollback restored a file that was not the release's copy (the user's
/// edit, or a file the user added) — that backup's file.
///
/// Written as the text cudnnm has always written (`lib/libcudnn.so.9`, or
/// `backup 3: include/cudnn.h`), so older homes and older releases agree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlacedFrom {
    /// The store file, by its receipt path (`lib/libcudnn.so.9`).
    Release(String),
    /// The file `path` (toolkit-relative) of backup `id`.
    Backup {
        /// The backup id.
        id: u64,
        /// Its toolkit-relative path (`include/cudnn.h`).
        path: String,
    },
}

impl PlacedFrom {
    /// The receipt path of the release's own file; `None` for a backup's file.
    pub fn release_path(&self) -> Option<&str> {
        match self {
            PlacedFrom::Release(p) => Some(p),
            PlacedFrom::Backup { .. } => None,
        }
    }

    /// The backup a rollback restored the file from, if it did.
    pub fn backup_id(&self) -> Option<u64> {
        match self {
            PlacedFrom::Backup { id, .. } => Some(*id),
            PlacedFrom::Release(_) => None,
        }
    }
}

impl fmt::Display for PlacedFrom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlacedFrom::Release(p) => f.write_str(p),
            PlacedFrom::Backup { id, path } => write!(f, "backup {id}: {path}"),
        }
    }
}

impl From<&str> for PlacedFrom {
    /// Reads the text form; anything but `backup <id>: <path>` is a release path.
    fn from(s: &str) -> PlacedFrom {
        let backup = s.strip_prefix("backup ").and_then(|r| {
            let (id, path) = r.split_once(": ")?;
            Some(PlacedFrom::Backup {
                id: id.parse().ok()?,
                path: path.to_string(),
            })
        });
        backup.unwrap_or_else(|| PlacedFrom::Release(s.to_string()))
    }
}

impl Serialize for PlacedFrom {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PlacedFrom {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Ok(PlacedFrom::from(String::deserialize(d)?.as_str()))
    }
}

/// One file placed in a toolkit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacedFile {
    /// Absolute path in the toolkit.
    pub path: PathBuf,
    /// Where it came from.
    pub from: PlacedFrom,
    /// What was placed: a copy or hard link by content; a link by target,
    /// with the content of the store file it leads to (a symlink
    /// deployment's), or without (the release's own chain link).
    #[serde(flatten)]
    pub entry: Entry,
    /// The modification time, in nanoseconds since the Unix epoch, of the
    /// bytes placed when they were placed: a copy's own; for a hard link,
    /// the store file's (the same file); for a link into the store, the
    /// store file it leads to. With the size it lets `current` and the next
    /// `use` see that they are unchanged without reading them (as git's
    /// index does), and read them (SHA-256) only when the time differs;
    /// `verify` re-hashes. `None` for a release's own chain links, and in
    /// records written before hard links and links kept it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mtime_ns: Option<i64>,
}

/// The release active in one toolkit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deployment {
    /// The toolkit root.
    pub toolkit: PathBuf,
    /// The release (`8.9.7.29_cuda12`).
    pub release: ReleaseId,
    /// Placement mode.
    pub mode: Mode,
    /// RFC 3339 time of the deployment.
    pub deployed_at: String,
    /// The backup holding what was there before (its id; written as text).
    #[serde(
        with = "record::id_text",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub backup: Option<u64>,
    /// Every file placed.
    #[serde(rename = "file", default)]
    pub files: Vec<PlacedFile>,
    /// Where the release came from (its receipt's source at deployment).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub source: Option<crate::store::Source>,
}

/// `deployments.toml`: every toolkit cudnnm manages.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deployments {
    /// One entry per toolkit root.
    #[serde(rename = "deployment", default)]
    pub entries: Vec<Deployment>,
}

impl Deployments {
    /// Reads `deployments.toml`; missing means none.
    ///
    /// # Errors
    /// When the file exists but cannot be read or parsed.
    pub fn load(home: &Home) -> Result<Deployments> {
        fsops::load_toml_or_default(&home.deployments_file(), |path, message| {
            Error::msg(format!("could not parse '{}'", path.display()))
                .cause(message)
                .hint("restore it from a copy, or delete it: cudnnm then treats every toolkit as not managed (backups stay)")
        })
    }

    /// Writes `deployments.toml` atomically (temp file, fsync, rename);
    /// only the guard's changes do.
    ///
    /// # Errors
    /// When the home folder is not writable or the disk is full.
    pub(crate) fn save(&self, home: &Home) -> Result<()> {
        fsops::save_toml(&home.deployments_file(), self, "deployments")
    }

    /// The deployment in the toolkit at `root`, if any.
    pub fn for_toolkit(&self, root: &Path) -> Option<&Deployment> {
        self.entries.iter().find(|d| d.toolkit == root)
    }

    /// Toolkits where release `id` is deployed.
    pub fn toolkits_using(&self, id: &ReleaseId) -> Vec<&Deployment> {
        self.entries.iter().filter(|d| &d.release == id).collect()
    }

    /// Sets the entry for `root` to `dep` (or removes it when `None`),
    /// keeping the other toolkits' entries and their order.
    pub fn set(&mut self, root: &Path, dep: Option<Deployment>) {
        match (self.entries.iter().position(|d| d.toolkit == root), dep) {
            (Some(i), Some(d)) => self.entries[i] = d,
            (Some(i), None) => {
                self.entries.remove(i);
            }
            (None, Some(d)) => self.entries.push(d),
            (None, None) => {}
        }
    }
}

pub use crate::record::mtime_ns;

#[cfg(test)]
mod tests {
    use super::*;

    /// A recorded mode reads back as written; a request (`auto`, `link`) is no recorded mode.
    #[test]
    fn a_recorded_mode_reads_back_as_written() {
        for m in [Mode::Symlink, Mode::Hardlink, Mode::Copy] {
            assert_eq!(m.as_str().parse::<Mode>().unwrap(), m);
        }
        for s in ["auto", "link", "Copy", ""] {
            assert!(s.parse::<Mode>().is_err(), "{s}");
        }
    }

    #[test]
    fn modes_parse_and_resolve() {
        assert_eq!("auto".parse::<ModeRequest>().unwrap(), ModeRequest::Auto);
        assert_eq!(
            "Copy".parse::<ModeRequest>().unwrap(),
            ModeRequest::Exact(Mode::Copy)
        );
        assert_eq!(
            "junction".parse::<ModeRequest>().unwrap_err().kind(),
            Kind::Usage
        );
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        crate::fsops::create_dir_all(&a).unwrap();
        crate::fsops::create_dir_all(&b).unwrap();
        assert_eq!(
            ModeRequest::Auto.resolve(&a, &b, false).unwrap(),
            Mode::Symlink
        );
        assert_eq!(
            ModeRequest::Auto.resolve(&a, &b, true).unwrap(),
            Mode::Hardlink
        );
        // A path that does not exist is never "the same volume".
        let missing = d.path().join("missing");
        assert_eq!(
            ModeRequest::Auto.resolve(&a, &missing, true).unwrap(),
            Mode::Copy
        );
        let e = ModeRequest::Exact(Mode::Hardlink)
            .resolve(&a, &missing, false)
            .unwrap_err();
        assert_eq!(e.kind(), Kind::Conflict);
        assert!(e.hint_text().unwrap().contains("--mode copy"));
    }

    #[test]
    fn deployments_roundtrip_and_set() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path());
        let mut all = Deployments::load(&home).unwrap();
        assert!(all.entries.is_empty());
        let id: ReleaseId = "9.12.0.46_cuda12".parse().unwrap();
        let dep = Deployment {
            toolkit: PathBuf::from("/tk/a b"),
            release: id.clone(),
            mode: Mode::Symlink,
            deployed_at: "2026-01-01T00:00:00Z".into(),
            backup: Some(1),
            source: None,
            files: vec![
                PlacedFile {
                    path: PathBuf::from("/tk/a b/lib64/libcudnn.so"),
                    from: PlacedFrom::Release("lib/libcudnn.so".into()),
                    entry: Entry::link("libcudnn.so.9"),
                    mtime_ns: None,
                },
                PlacedFile {
                    path: PathBuf::from("/tk/a b/include/cudnn.h"),
                    from: PlacedFrom::Backup {
                        id: 3,
                        path: "include/cudnn.h".into(),
                    },
                    entry: Entry::file(4, crate::hash::sha256_bytes(b"edit")),
                    mtime_ns: Some(1),
                },
            ],
        };
        all.set(&dep.toolkit.clone(), Some(dep.clone()));
        all.save(&home).unwrap();
        let text = std::fs::read_to_string(home.deployments_file()).unwrap();
        assert!(text.contains("release = \"9.12.0.46_cuda12\""), "{text}");
        assert!(text.contains("backup = \"1\""), "{text}");
        assert!(
            text.contains("from = \"backup 3: include/cudnn.h\""),
            "{text}"
        );
        let back = Deployments::load(&home).unwrap();
        assert_eq!(back, all);
        assert_eq!(back.toolkits_using(&id).len(), 1);
        assert_eq!(
            back.for_toolkit(Path::new("/tk/a b"))
                .unwrap()
                .release
                .version,
            "9.12.0.46".parse().unwrap()
        );
        all.set(Path::new("/tk/a b"), None);
        assert!(all.entries.is_empty());
    }

    #[test]
    fn origins_read_the_text_cudnnm_always_wrote() {
        assert_eq!(
            PlacedFrom::from("backup 12: lib64/x"),
            PlacedFrom::Backup {
                id: 12,
                path: "lib64/x".into()
            }
        );
        assert_eq!(
            PlacedFrom::from("include/cudnn.h"),
            PlacedFrom::Release("include/cudnn.h".into())
        );
        assert_eq!(
            PlacedFrom::from("backup x: y"),
            PlacedFrom::Release("backup x: y".into())
        );
        for text in ["backup 3: include/cudnn.h", "lib/libcudnn.so.9"] {
            assert_eq!(PlacedFrom::from(text).to_string(), text);
        }
    }
}

//! Deploying a release into a CUDA toolkit (DESIGN.md §5): plan, journal,
//! backup, place, verify, record — and recovery and rollback.
//!
//! The pieces, in the order a change runs through them:
//! - [`plan`]: pure data first — the toolkit's current cuDNN files versus the
//!   target's files (a store release for `use`, a backup for `rollback`);
//! - [`access`]: the preflight that checks write access to every folder the
//!   plan touches, before anything changes;
//! - [`inflight`]: the marker in the toolkit root that tells other homes a
//!   change there is running or unfinished;
//! - [`journal`]: the plan on disk and the step log, written before the
//!   first change (plus the test-only fault hook);
//! - [`apply`]: moves the current files into a new backup, places the
//!   target's files, verifies, records, retires the journal — and undoes;
//! - [`recover`]: what the next command does with a journal left by a crash;
//! - [`backup`]: `backups/<id>/` with `backup.toml`, listing and pruning;
//! - [`status`]: drift between a deployment record and the toolkit;
//! - [`switch`]: plan, preflight, transaction and pruning as one call — what
//!   `use` and `doctor --fix` (redeploying a drifted release) run.
//!
//! [`Deployments`] (`deployments.toml`) is the contract that `uninstall`,
//! `verify` and `doctor` read.

pub mod access;
pub mod apply;
pub mod backup;
pub mod inflight;
pub mod journal;
pub mod plan;
pub mod recover;
pub mod status;
pub mod switch;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::hash::Sha256Hex;
use crate::home::Home;

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

/// What a file in a toolkit or backup is: a regular file of `size` bytes
/// with `sha256`, or a symbolic link with target `link` (size 0, no hash).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct FileState {
    /// Size in bytes (0 for links).
    #[serde(default)]
    pub size: u64,
    /// SHA-256 of the content; absent for links.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sha256: Option<Sha256Hex>,
    /// For a symbolic link: its target as stored, never dereferenced.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub link: Option<String>,
}

impl FileState {
    /// A regular file.
    pub fn file(size: u64, sha256: Sha256Hex) -> FileState {
        FileState {
            size,
            sha256: Some(sha256),
            link: None,
        }
    }

    /// A symbolic link to `target`.
    pub fn link(target: impl Into<String>) -> FileState {
        FileState {
            size: 0,
            sha256: None,
            link: Some(target.into()),
        }
    }

    /// True for a link.
    pub fn is_link(&self) -> bool {
        self.link.is_some()
    }
}

/// One file placed in a toolkit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacedFile {
    /// Absolute path in the toolkit.
    pub path: PathBuf,
    /// The store file it came from (relative to the release folder, `lib/libcudnn.so.9`).
    pub from: String,
    /// SHA-256 of the content (absent for a symlink that belongs to the release's own chain).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sha256: Option<Sha256Hex>,
    /// For links: the link target as written.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub link: Option<String>,
    /// Size in bytes of the content (0 for a chain link).
    #[serde(default)]
    pub size: u64,
    /// For copies: the file's modification time when placed, in nanoseconds
    /// since the Unix epoch. With `size` it lets `current` and the next
    /// `use` see that a copy is unchanged without re-reading it (as git's
    /// index does); `verify` re-hashes.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mtime_ns: Option<i64>,
}

/// The release active in one toolkit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deployment {
    /// The toolkit root.
    pub toolkit: PathBuf,
    /// The release id (`8.9.7.29_cuda12`).
    pub release: String,
    /// Placement mode.
    pub mode: Mode,
    /// RFC 3339 time of the deployment.
    pub deployed_at: String,
    /// The backup holding what was there before.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub backup: Option<String>,
    /// Every file placed.
    #[serde(rename = "file", default)]
    pub files: Vec<PlacedFile>,
    /// Where the release came from (its receipt's source at deployment).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub source: Option<crate::store::Source>,
}

impl Deployment {
    /// The release version part of the id (`8.9.7.29` of `8.9.7.29_cuda12`).
    pub fn version_label(&self) -> &str {
        self.release
            .split_once("_cuda")
            .map(|(v, _)| v)
            .unwrap_or(&self.release)
    }
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
        let path = home.deployments_file();
        match std::fs::read_to_string(&path) {
            Ok(s) => toml::from_str(&s).map_err(|e| {
                Error::msg(format!("could not parse '{}'", path.display()))
                    .cause(e.message())
                    .hint("restore it from a copy, or delete it: cudnnm then treats every toolkit as not managed (backups stay)")
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Deployments::default()),
            Err(e) => Err(Error::io("read", &path, e)),
        }
    }

    /// Writes `deployments.toml` atomically (temp file, fsync, rename).
    ///
    /// # Errors
    /// When the home folder is not writable or the disk is full.
    pub fn save(&self, home: &Home) -> Result<()> {
        let text = toml::to_string_pretty(self)
            .map_err(|e| Error::msg(format!("could not encode deployments: {e}")))?;
        fsops::write_atomic(&home.deployments_file(), text.as_bytes())
    }

    /// The deployment in the toolkit at `root`, if any.
    pub fn for_toolkit(&self, root: &Path) -> Option<&Deployment> {
        self.entries.iter().find(|d| d.toolkit == root)
    }

    /// Toolkits where release `id` is deployed.
    pub fn toolkits_using(&self, id: &str) -> Vec<&Deployment> {
        self.entries.iter().filter(|d| d.release == id).collect()
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

/// Nanoseconds since the Unix epoch of a file's modification time, if known.
pub fn mtime_ns(meta: &std::fs::Metadata) -> Option<i64> {
    let t = meta.modified().ok()?;
    let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(d.as_nanos()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
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
        let dep = Deployment {
            toolkit: PathBuf::from("/tk/a b"),
            release: "9.12.0.46_cuda12".into(),
            mode: Mode::Symlink,
            deployed_at: "2026-01-01T00:00:00Z".into(),
            backup: Some("1".into()),
            source: None,
            files: vec![PlacedFile {
                path: PathBuf::from("/tk/a b/lib64/libcudnn.so"),
                from: "lib/libcudnn.so".into(),
                sha256: None,
                link: Some("libcudnn.so.9".into()),
                size: 0,
                mtime_ns: None,
            }],
        };
        all.set(&dep.toolkit.clone(), Some(dep.clone()));
        all.save(&home).unwrap();
        let back = Deployments::load(&home).unwrap();
        assert_eq!(back, all);
        assert_eq!(back.toolkits_using("9.12.0.46_cuda12").len(), 1);
        assert_eq!(
            back.for_toolkit(Path::new("/tk/a b"))
                .unwrap()
                .version_label(),
            "9.12.0.46"
        );
        all.set(Path::new("/tk/a b"), None);
        assert!(all.entries.is_empty());
    }
}

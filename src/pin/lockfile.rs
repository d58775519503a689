//! `.cudnn-version.lock`: the exact release a project uses and, for each
//! platform, the archive that carries it with its SHA-256
//! (`docs/architecture.md#pins`). Written by `cudnnm lock` beside the pin,
//! read by a bare `cudnnm install`, meant to be committed.
//!
//! The file is plain TOML in a fixed order (the header comment, `pin`,
//! `release`, then one `[platform.<name>]` table per platform sorted by name)
//! so that locking the same catalog again writes the same bytes.
//!
//! ```toml
//! pin = "9.10.x"
//! release = "9.10.2.21_cuda12"
//!
//! [platform.linux-x86_64]
//! url = "https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/linux-x86_64/…tar.xz"
//! path = "cudnn/redist/cudnn/linux-x86_64/…tar.xz"
//! sha256 = "…"
//! size = 123
//!
//! [platform.windows-x86_64]
//! pip = "nvidia-cudnn-cu12==9.10.2.21"
//! wheel = "nvidia_cudnn_cu12-9.10.2.21-py3-none-win_amd64.whl"
//! sha256 = "…"
//! size = 123
//! url = "https://files.pythonhosted.org/packages/…/nvidia_cudnn_cu12-9.10.2.21-py3-none-win_amd64.whl"
//! ```
//!
//! A catalog source keeps `path`, relative to NVIDIA's base URL, so that a
//! mirror (`--mirror`, `CUDNNM_MIRROR`, `mirror` in `config.toml`) serves
//! the same file. A wheel source (`pip`) records the file name, SHA-256 and
//! size the package index publishes (PEP 691/503), for every platform the
//! release has a wheel for, read from the index's file list without
//! downloading; an install asks the index in effect (`--index-url`, …) for
//! the file of that name and checks those bytes, so `url` is for people.
//! Where pip is configured with `no-index` (its own `find-links`), the
//! hash is that of the wheel `pip download` fetched, for the platform the
//! lock was written on only, and the entries other machines recorded for
//! the same release are kept.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Kind, Result};
use crate::hash::Sha256Hex;
use crate::version::{Platform, ReleaseId, Spec};

/// The lock file name, beside `.cudnn-version`.
pub const LOCK_FILE: &str = ".cudnn-version.lock";

const HEADER: &str = "# cudnnm lock file: the exact cuDNN release of this project and, per platform,\n\
# the archive that carries it with its SHA-256. Written by `cudnnm lock`;\n\
# commit it. `cudnnm install` installs exactly these bytes or fails.\n";

/// Where one platform's archive comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LockedSource {
    /// A wheel from the package index (read there directly, or by the
    /// user's pip when pip is configured with `no-index`). First: an
    /// entry with `pip` is a wheel even when it also records its `url`.
    Pip {
        /// The requirement (`nvidia-cudnn-cu12==9.1.0.70`).
        pip: String,
        /// The wheel's file name, as the index lists it.
        wheel: String,
        /// That wheel's SHA-256.
        sha256: Sha256Hex,
        /// Its size in bytes, when the index publishes it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<u64>,
        /// Where the index served it when the lock was written, for
        /// people: an install asks the index in effect for the file of
        /// this name and hash, never this URL.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
    },
    /// A catalog archive.
    Catalog {
        /// Its full URL under the catalog's base.
        url: String,
        /// The same, relative to the base (for mirrors); absent when the
        /// catalog gave an absolute URL.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
        /// The archive's SHA-256.
        sha256: Sha256Hex,
        /// Its size in bytes, when the catalog publishes it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<u64>,
    },
}

impl LockedSource {
    /// The SHA-256 the archive must have.
    pub fn sha256(&self) -> &Sha256Hex {
        match self {
            LockedSource::Catalog { sha256, .. } | LockedSource::Pip { sha256, .. } => sha256,
        }
    }
}

/// The content of a lock file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectLock {
    /// The pin's spec when the lock was written (for people; the check
    /// against the pin uses [`ProjectLock::release`]).
    pub pin: Spec,
    /// The exact release.
    pub release: ReleaseId,
    /// Per platform (NVIDIA's names), the archive's source.
    #[serde(default)]
    pub platform: BTreeMap<String, LockedSource>,
}

impl ProjectLock {
    /// The source recorded for `p`.
    pub fn source(&self, p: Platform) -> Option<&LockedSource> {
        self.platform.get(p.as_str())
    }

    /// Whether the locked release still satisfies `spec` (the pin now).
    pub fn satisfies(&self, spec: &Spec) -> bool {
        spec.matches(&self.release.version, &self.release.cuda)
    }

    /// The file's text: a header comment, then the TOML, the same bytes for
    /// the same lock.
    pub fn to_text(&self) -> String {
        let body = toml::to_string(self).expect("a lock always serializes");
        format!("{HEADER}\n{body}")
    }

    /// Parses a lock file's text.
    ///
    /// # Errors
    /// [`Kind::Usage`] naming `path` and what is wrong.
    pub fn parse(text: &str, path: &Path) -> Result<ProjectLock> {
        toml::from_str(text).map_err(|e| {
            Error::new(
                Kind::Usage,
                format!("could not read the lock file '{}'", path.display()),
            )
            .cause(e.message().to_string())
            .hint("write it again with `cudnnm lock` (it is generated; do not edit it by hand)")
        })
    }

    /// Reads `path`; `Ok(None)` when there is no such file.
    ///
    /// # Errors
    /// An unreadable or malformed file, naming it.
    pub fn read(path: &Path) -> Result<Option<ProjectLock>> {
        match std::fs::read_to_string(path) {
            Ok(t) => ProjectLock::parse(&t, path).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io("read", path, e)),
        }
    }
}

/// The lock file beside a pin file.
pub fn lock_path(pin_file: &Path) -> PathBuf {
    crate::fsops::parent_of(pin_file).join(LOCK_FILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha(c: char) -> Sha256Hex {
        Sha256Hex::parse(&c.to_string().repeat(64)).unwrap()
    }

    fn lock() -> ProjectLock {
        let mut platform = BTreeMap::new();
        platform.insert(
            "windows-x86_64".into(),
            LockedSource::Pip {
                pip: "nvidia-cudnn-cu12==9.10.2.21".into(),
                wheel: "nvidia_cudnn_cu12-9.10.2.21-py3-none-win_amd64.whl".into(),
                sha256: sha('b'),
                size: Some(7),
                url: Some("https://files.example/w.whl".into()),
            },
        );
        platform.insert(
            "linux-x86_64".into(),
            LockedSource::Catalog {
                url: "https://example.test/compute/cudnn/a.tar.xz".into(),
                path: Some("cudnn/a.tar.xz".into()),
                sha256: sha('a'),
                size: Some(12),
            },
        );
        ProjectLock {
            pin: "9.10.x".parse().unwrap(),
            release: "9.10.2.21_cuda12".parse().unwrap(),
            platform,
        }
    }

    #[test]
    fn the_text_is_stable_and_reads_back() {
        let l = lock();
        let text = l.to_text();
        assert_eq!(text, lock().to_text());
        let back = ProjectLock::parse(&text, Path::new("x")).unwrap();
        assert_eq!(back, l);
        assert_eq!(back.to_text(), text);
        let body = text.split_once("\n\n").unwrap().1;
        assert!(
            body.starts_with("pin = \"9.10.x\"\nrelease = \"9.10.2.21_cuda12\"\n\n[platform.linux-x86_64]\nurl = "),
            "{body}"
        );
        assert!(text.find("linux-x86_64").unwrap() < text.find("windows-x86_64").unwrap());
        assert_eq!(
            back.source(Platform::LinuxX86_64).unwrap().sha256(),
            &sha('a')
        );
    }

    #[test]
    fn satisfies_checks_the_pin_now() {
        let l = lock();
        assert!(l.satisfies(&"9.10.x".parse().unwrap()));
        assert!(l.satisfies(&">=9.1,<9.11_cuda12".parse().unwrap()));
        assert!(!l.satisfies(&"9.11".parse().unwrap()));
        assert!(!l.satisfies(&"latest_cuda13".parse().unwrap()));
    }

    #[test]
    fn a_bad_lock_names_the_file() {
        let e =
            ProjectLock::parse("release = 3\n", Path::new("/p/.cudnn-version.lock")).unwrap_err();
        assert!(e.to_string().contains("/p/.cudnn-version.lock"), "{e}");
        assert!(e.hint_text().unwrap().contains("cudnnm lock"));
    }
}

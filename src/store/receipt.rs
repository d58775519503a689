//! The receipt (`receipt.toml`) each store release carries: where the
//! release came from and every file's size and SHA-256 or link target.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Kind, Result};
use crate::hash::Sha256Hex;
use crate::record::Entry;
use crate::shape::Shape;
use crate::version::{CudaVariant, Platform, ReleaseId, Version};

/// Receipt schema version written by this build.
pub const RECEIPT_SCHEMA: u32 = 1;

/// The receipt file name inside a release folder.
pub const RECEIPT_FILE: &str = "receipt.toml";

/// `receipt.toml`: what was imported and every file it holds.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Receipt {
    /// Receipt schema version ([`RECEIPT_SCHEMA`]).
    pub schema: u32,
    /// The full release version (`8.1.0.77`, or `7.1.3` when no build number is known).
    pub version: Version,
    /// The CUDA variant the build targets.
    pub cuda: CudaVariant,
    /// The platform of the binaries.
    pub platform: Platform,
    /// `major.minor.patch` as read from `cudnn_version.h` (or `cudnn.h` before cuDNN 8).
    pub header_version: Version,
    /// When the import finished, RFC 3339 UTC.
    pub installed_at: String,
    /// Where the release came from.
    pub source: Source,
    /// Every file of the release, relative to the release folder, `/`-separated, sorted.
    #[serde(rename = "file", default)]
    pub files: Vec<FileRecord>,
}

/// The origin of an imported release.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Source {
    /// The archive shape (written `windows-zip`, `linux-tgz`, `redist`,
    /// `wheel`, `installer-folder`, `folder`, `flat`).
    pub kind: Shape,
    /// The archive or folder name as given (`cudnn-11.2-windows-x64-v8.1.0.77.zip`).
    pub name: String,
    /// SHA-256 of the archive file; absent for folders.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sha256: Option<Sha256Hex>,
    /// Archive size in bytes (0 for folders).
    #[serde(default)]
    pub size: u64,
    /// Download URL or `pip:` requirement, when not a local file.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub url: Option<String>,
}

impl Source {
    /// What `cudnnm install … --force` takes to import release `id` again
    /// from this source — never another package: the `pip:` requirement it
    /// came from; for a wheel file, the requirement its name gives
    /// (`nvidia_cudnn_jit_cu12-9.27.0.42-….whl` →
    /// `pip:nvidia-cudnn-jit-cu12==9.27.0.42`); the release id for an
    /// archive the catalog downloaded; else the archive's or folder's name,
    /// with `true` (the user gives its path). The command itself is
    /// [`crate::command::CommandLine::install_from`].
    pub fn reinstall_arg(&self, id: &str) -> (String, bool) {
        if let Some(u) = self.url.as_deref().filter(|u| u.starts_with("pip:")) {
            return (u.to_string(), false);
        }
        if self.kind == crate::shape::Shape::Wheel
            && let Some(req) = wheel_requirement(&self.name)
        {
            return (req, false);
        }
        if self.url.is_some() {
            return (id.to_string(), false);
        }
        (self.name.clone(), true)
    }
}

impl Source {
    /// The pip requirement (without `pip:`) that gives this wheel back
    /// exactly: the one it was installed with when that names one version
    /// (`==`), else the one its file name gives
    /// (`nvidia-cudnn-jit-cu12==9.12.0.46`); `None` for anything but a wheel.
    pub fn exact_pip_requirement(&self) -> Option<String> {
        if self.kind != Shape::Wheel {
            return None;
        }
        let given = self
            .url
            .as_deref()
            .and_then(|u| u.strip_prefix("pip:"))
            .filter(|r| r.contains("=="));
        match given {
            Some(r) => Some(r.to_string()),
            None => wheel_requirement(&self.name).map(|r| r["pip:".len()..].to_string()),
        }
    }
}

/// The `pip:` requirement of a wheel file name (PEP 427:
/// `{distribution}-{version}-…whl`), the distribution spelled as PyPI does.
fn wheel_requirement(name: &str) -> Option<String> {
    let stem = name.strip_suffix(".whl")?;
    let mut parts = stem.split('-');
    let dist = parts.next().filter(|d| !d.is_empty())?;
    let version = parts.next().filter(|v| !v.is_empty())?;
    Some(format!(
        "pip:{}=={version}",
        dist.replace('_', "-").to_ascii_lowercase()
    ))
}

/// One file of a release: a file by size and SHA-256, or a link by its
/// target as stored (`libcudnn.so.9` → `libcudnn.so.9.1.0`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct FileRecord {
    /// Path relative to the release folder, `/`-separated (`lib/libcudnn.so.9`).
    pub path: String,
    /// What it is.
    #[serde(flatten)]
    pub entry: Entry,
    /// For a file: its modification time in the store (nanoseconds since
    /// the Unix epoch) when it was imported, or when a check last found its
    /// bytes unchanged. With the size it lets `use` and `current` see that
    /// the file is unchanged without reading it, and read it only when the
    /// time differs ([`crate::record::Content::look`]). `None` for links
    /// and in receipts written before this field.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mtime_ns: Option<i64>,
}

impl FileRecord {
    /// A regular file of the release.
    pub fn file(path: impl Into<String>, size: u64, sha256: Sha256Hex) -> FileRecord {
        FileRecord {
            path: path.into(),
            entry: Entry::file(size, sha256),
            mtime_ns: None,
        }
    }

    /// A link of the release to `target`.
    pub fn link(path: impl Into<String>, target: impl Into<String>) -> FileRecord {
        FileRecord {
            path: path.into(),
            entry: Entry::link(target),
            mtime_ns: None,
        }
    }
}

impl Receipt {
    /// The release, e.g. `8.9.7.29_cuda12`.
    pub fn release_id(&self) -> ReleaseId {
        ReleaseId::new(self.version.clone(), self.cuda)
    }

    /// The canonical id as text, `8.9.7.29_cuda12`, for messages and commands.
    pub fn id(&self) -> String {
        self.release_id().to_string()
    }

    /// Sum of file sizes in bytes.
    pub fn total_size(&self) -> u64 {
        self.files.iter().map(|f| f.entry.size()).sum()
    }

    /// Parses a receipt.
    ///
    /// # Errors
    /// When the text is not a valid receipt (names `path`).
    pub fn parse(text: &str, path: &Path) -> Result<Receipt> {
        toml::from_str(text).map_err(|e| receipt_error(path, e.message()))
    }

    /// The receipt as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("receipts always encode")
    }
}

/// A receipt that does not parse.
pub(super) fn receipt_error(path: &Path, message: &str) -> Error {
    Error::new(
        Kind::Integrity,
        format!("could not read the receipt '{}'", path.display()),
    )
    .cause(message)
    .hint(match id_of_dir(fsops_parent(path)) {
        Some(id) => format!(
            "reinstall it from the archive or wheel it came from with `cudnnm install ARCHIVE --force`, or remove it with `cudnnm uninstall {id}`"
        ),
        None => "reinstall it from the archive or wheel it came from with `cudnnm install ARCHIVE --force`, or remove its folder".to_string(),
    })
}

fn fsops_parent(path: &Path) -> &Path {
    path.parent().unwrap_or(path)
}

/// The release id a store folder's name gives (`…/cuda-12/9.12.0.46` →
/// `9.12.0.46_cuda12`), `None` for a folder not named like one.
pub(super) fn id_of_dir(dir: &Path) -> Option<crate::version::ReleaseId> {
    let version = dir.file_name()?.to_str()?;
    let cuda = dir.parent()?.file_name()?.to_str()?.strip_prefix("cuda-")?;
    format!("{version}_cuda{cuda}").parse().ok()
}

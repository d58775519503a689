//! cudnnm's own state as seen: store folders that are damaged or whose
//! files changed, and what is at each path a deployment placed.

use serde::{Deserialize, Serialize};

use crate::deploy::Mode;
use crate::version::ReleaseId;

/// A folder an interrupted import left in the store (`store/.partial-*`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct StorePartial {
    /// The folder.
    pub dir: String,
    /// Bytes of the files in it.
    pub bytes: u64,
}

/// A store folder (`store/cuda-<variant>/<version>`) without a readable receipt.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct DamagedRelease {
    /// The folder.
    pub dir: String,
    /// The release id its folder names (`9.27.0.42_cuda12`), when they parse.
    pub release: Option<ReleaseId>,
    /// Why the receipt cannot be used, with its causes.
    pub error: String,
    /// True when the receipt exists but this user may not read it (or its
    /// folder): permission denied, not damage.
    pub unreadable: bool,
}

/// A store release whose files changed since it was imported.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ChangedRelease {
    /// The release id (`9.27.0.42_cuda12`).
    pub release: ReleaseId,
    /// The release folder.
    #[serde(default)]
    pub dir: String,
    /// Each changed file, relative to the folder, with what changed
    /// (`include/cudnn_version.h: 300 bytes, expected 286`).
    #[serde(default)]
    pub files: Vec<String>,
    /// What `cudnnm install … --force` takes to import it again from its
    /// original source (`pip:nvidia-cudnn-jit-cu12==9.27.0.42`, a release
    /// id the catalog downloads, or the archive's file name).
    #[serde(default)]
    pub reinstall: String,
    /// True when `reinstall` is only the name of a local archive or folder
    /// (the user must give its path).
    #[serde(default)]
    pub reinstall_is_file: bool,
}

/// A deployment and the state of its files now. Saved snapshots hold the
/// release and the mode as text (`"8.9.7.29_cuda12"`, `"symlink"`), which is
/// how [`ReleaseId`] and [`Mode`] serialise.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct DeploymentState {
    /// The toolkit root.
    pub toolkit: String,
    /// The release id (`8.9.7.29_cuda12`).
    pub release: ReleaseId,
    /// How its files were placed; `None` in a snapshot that does not say.
    #[serde(default)]
    pub mode: Option<Mode>,
    /// The placed files.
    #[serde(default)]
    pub files: Vec<PlacedState>,
    /// cuDNN files in the toolkit's cuDNN folders that the deployment did
    /// not place (what `current` and `verify` call extra).
    #[serde(default)]
    pub extra: Vec<String>,
    /// The toolkit folder no longer exists (deleted or moved); false in
    /// snapshots from before this field.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub toolkit_gone: bool,
}

/// One placed file, what it should be and what it is.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct PlacedState {
    /// The file in the toolkit.
    pub path: String,
    /// The store file it came from (`lib/libcudnn.so.9`).
    pub from: String,
    /// The link target it should have, for links.
    pub expected_link: Option<String>,
    /// The size it should have, for files (from the receipt; from the
    /// deployment record for a file a rollback restored).
    pub expected_size: Option<u64>,
    /// Set when the file is not the release's own copy but one a rollback
    /// restored from a backup (the user's change): why, in words.
    pub restored: Option<String>,
    /// What is there now.
    pub state: FileState,
    /// The file in the toolkit is the store's own file (a hard link to
    /// it): a change to it is a change to the store release.
    pub store_file: bool,
}

/// What is at a path now.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(tag = "is", rename_all = "kebab-case")]
pub enum FileState {
    /// Nothing.
    #[default]
    Missing,
    /// A symbolic link.
    Link {
        /// Its target as written.
        target: String,
    },
    /// A regular file.
    File {
        /// Its size in bytes.
        size: u64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deployment_saved_as_text_loads_typed_and_saves_the_same_text() {
        // As `doctor --report` wrote it before the record was typed.
        let saved = r#"{"toolkit":"/usr/local/cuda-12.4","release":"9.27.0.42_cuda12","mode":"symlink","files":[],"extra":[]}"#;
        let d: DeploymentState = serde_json::from_str(saved).unwrap();
        assert_eq!(d.release, "9.27.0.42_cuda12".parse().unwrap());
        assert_eq!(d.release.cuda.major(), 12);
        assert_eq!(d.mode, Some(Mode::Symlink));
        assert_eq!(serde_json::to_string(&d).unwrap(), saved);
        // Without a mode (a hand-written snapshot), the mode is not known.
        let d: DeploymentState =
            serde_json::from_str(r#"{"toolkit":"/t","release":"8.1.0.77_cuda11.2"}"#).unwrap();
        assert_eq!((d.mode, d.release.cuda.minor()), (None, Some(2)));
        assert!(
            serde_json::from_str::<DeploymentState>(r#"{"toolkit":"/t","release":"9.27"}"#)
                .is_err(),
            "a release id names its CUDA build"
        );
    }
}

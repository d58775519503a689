//! What an operation says while it runs, as data: the CLI renders each
//! event as a status line (none with `-q`) or a warning
//! (`cli/support/events.rs`); tests read them as values. Outcomes are not
//! events: each operation returns its own.

use std::path::Path;

use crate::error::Error;
use crate::gpu::Gpu;
use crate::pin::SpecSource;
use crate::store::Release;
use crate::toolkit::Toolkit;
use crate::version::{ReleaseId, Spec, Version};

/// One thing an operation says while it runs.
#[derive(Debug)]
pub enum Event<'a> {
    /// Another cudnnm process holds the home lock; this one waits.
    HomeLockWait {
        /// The lock file.
        lock_file: &'a Path,
        /// The file naming the holder where the file system cannot lock.
        held_file: &'a Path,
        /// Who holds it, when the file system cannot lock and the holder
        /// file says.
        holder: Option<&'a str>,
    },
    /// A warning the core gave as text (a catalog's, an import's, a download's).
    Warning(&'a str),
    /// A note the core gave as text (an import's, a download's).
    Note(&'a str),
    /// A toolkit `deployments.toml` records whose folder is no toolkit any more.
    RecordedToolkitLost {
        /// The release recorded there.
        release: &'a ReleaseId,
        /// The toolkit root.
        root: &'a Path,
        /// Whether the folder is gone (else it is there, but no toolkit).
        gone: bool,
        /// Why it is no toolkit.
        error: &'a Error,
    },
    /// The toolkit a command works on, and why it was chosen.
    ToolkitChosen(&'a Toolkit),
    /// A catalog pick chose the CUDA build of `spec` for `toolkit`.
    BuildChosen {
        /// The spec picked.
        spec: &'a Spec,
        /// The toolkit whose CUDA chose the build.
        toolkit: &'a Toolkit,
    },
    /// An earlier export of `dest` moved aside that could not be removed;
    /// the next export into `dest` removes it.
    ExportLeftBehind {
        /// The folder left.
        old: &'a Path,
        /// The export's folder.
        dest: &'a Path,
        /// Why it could not be removed.
        why: &'a str,
    },
    /// No spec was given: the one that applies here is used.
    UsingPinned {
        /// The spec.
        spec: &'a Spec,
        /// Where it came from.
        source: &'a SpecSource,
    },
    /// A version prefix passed over a newer installed release the GPUs in
    /// use cannot run.
    PickedForGpu {
        /// The prefix.
        spec: &'a Spec,
        /// The release picked.
        picked: &'a Release,
        /// The oldest GPU in use.
        gpu: &'a Gpu,
        /// The newer release passed over.
        newer: &'a Release,
        /// The compute capability it needs.
        needs: &'a Version,
    },
    /// `--force` deploys a release whose CUDA does not fit the toolkit's.
    DeployingMisfit {
        /// The release.
        release: &'a Release,
        /// The toolkit.
        toolkit: &'a Toolkit,
    },
}

//! What an operation says while it runs, as data: the CLI renders each
//! event as a status line (none with `-q`) or a warning
//! (`cli/support/events.rs`); tests read them as values. Outcomes are not
//! events: each operation returns its own.

use std::path::Path;

use crate::catalog::advisory::Advisory;
use crate::error::Error;
use crate::gpu::Gpu;
use crate::hash::Sha256Hex;
use crate::ops::frameworks::AdvisedInUse;
use crate::pin::SpecSource;
use crate::store::Release;
use crate::toolkit::Toolkit;
use crate::version::{CudaVariant, PipRequirement, Platform, ReleaseId, Spec, Version};

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
    /// A remembered modulefile folder was rewritten after its store changed.
    ModulesRefreshed {
        /// The modulepath folder.
        dir: &'a Path,
        /// Modulefiles and links written.
        written: usize,
        /// Modulefiles removed with their releases.
        removed: usize,
    },
    /// A remembered modulefile folder could not be rewritten: its modules
    /// may name releases that are gone until `command` runs.
    ModulesStale {
        /// The modulepath folder.
        dir: &'a Path,
        /// Why.
        error: &'a Error,
        /// The command that refreshes it.
        command: crate::command::CommandLine,
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
    /// A flag for catalog installs given with a local archive, folder or
    /// pip requirement: ignored.
    IgnoredForLocal {
        /// The flag (`--platform`).
        flag: &'a str,
        /// What was given instead of a spec.
        what: &'a str,
    },
    /// An archive was downloaded (or found in the download cache).
    Downloaded {
        /// Its file name.
        name: &'a str,
        /// Where it came from.
        url: &'a str,
        /// Whether it came from the download cache.
        cached: bool,
    },
    /// The catalog's pick is published as a PyPI wheel: it is fetched with pip.
    PublishedAsWheel {
        /// The release version.
        version: &'a Version,
        /// Its CUDA variant.
        cuda: &'a CudaVariant,
        /// The exact requirement.
        requirement: &'a PipRequirement,
    },
    /// The catalog's pick (or the lock's wheel) is fetched straight from
    /// the package index, no pip run.
    WheelFromIndex {
        /// The release version.
        version: &'a Version,
        /// Its CUDA variant.
        cuda: &'a CudaVariant,
        /// The wheel's file name.
        file: &'a str,
        /// The index, without credentials.
        index: &'a str,
    },
    /// `lock` records the wheels the index publishes, for these platforms,
    /// from its file list: nothing is downloaded.
    LockingFromIndex {
        /// The release.
        release: &'a ReleaseId,
        /// The index, without credentials.
        index: &'a str,
        /// The platforms locked from it.
        platforms: &'a [Platform],
    },
    /// A wheel `cudnnm lock` kept in the download cache is imported, no pip run.
    KeptWheel {
        /// Its file name.
        name: &'a str,
        /// The requirement.
        requirement: &'a PipRequirement,
    },
    /// pip is run to fetch a wheel.
    FetchingWithPip {
        /// The requirement.
        requirement: &'a PipRequirement,
        /// The Python that runs pip.
        python: &'a str,
    },
    /// A bare `install` installs what the lock beside the pin records.
    InstallingLocked {
        /// The locked release.
        release: &'a ReleaseId,
        /// The lock file.
        lock: &'a Path,
        /// The pin's spec.
        spec: &'a Spec,
        /// Where the spec came from.
        source: &'a SpecSource,
    },
    /// The lock beside the pin names a release the pin no longer selects:
    /// the pin is resolved instead.
    LockIgnored {
        /// The locked release.
        release: &'a ReleaseId,
        /// The lock file.
        lock: &'a Path,
        /// The pin's spec.
        spec: &'a Spec,
        /// Where the spec came from.
        source: &'a SpecSource,
    },
    /// The lock file could not be read: `lock` writes it anew.
    LockUnreadable {
        /// The lock file.
        lock: &'a Path,
        /// Why.
        why: &'a str,
    },
    /// `lock` locks the installed release the pin selects here.
    LockingInstalled {
        /// The release.
        release: &'a ReleaseId,
        /// The pin's spec.
        spec: &'a Spec,
    },
    /// A catalog archive with no published SHA-256 is left out of the lock.
    UnhashedArchive {
        /// Its file name.
        name: &'a str,
        /// Its platform.
        platform: Platform,
    },
    /// A release published only on PyPI is locked as the wheel pip fetches.
    LockingWheel {
        /// The release.
        release: &'a ReleaseId,
        /// The platform of the entry.
        platform: Platform,
    },
    /// The wheel to lock is in the download cache: nothing is downloaded.
    LockWheelCached {
        /// Its file name.
        name: &'a str,
    },
    /// pip is run to fetch the wheel to lock.
    LockFetchingWheel {
        /// The requirement.
        requirement: &'a PipRequirement,
    },
    /// The wheel `lock` fetched is kept in the download cache for the
    /// install that follows.
    LockWheelKept {
        /// Its file name.
        name: &'a str,
        /// Its size in bytes.
        size: u64,
    },
    /// An installed wheel from a local file is locked by that file's hash,
    /// which no catalog entry confirms PyPI publishes.
    LocalWheelLocked {
        /// The platform of the entry.
        platform: Platform,
        /// The hash locked.
        sha: &'a Sha256Hex,
        /// The local file it was installed from.
        file: &'a str,
        /// The requirement locked.
        requirement: &'a PipRequirement,
    },
    /// `--for` chose a release: the newest satisfying these frameworks.
    ChosenForFrameworks {
        /// The release.
        release: &'a ReleaseId,
        /// The frameworks with a cuDNN need (`torch 2.15.0`).
        frameworks: &'a [String],
    },
    /// A release in use in a Python environment (the one that applies
    /// here, or an installed cuDNN wheel) is covered by an advisory.
    AdvisedInUse(&'a AdvisedInUse),
    /// A release being installed or deployed is covered by an advisory.
    AdvisoryCovers {
        /// The release.
        release: &'a ReleaseId,
        /// The advisory.
        advisory: &'a Advisory,
    },
}

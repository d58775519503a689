//! `doctor` (`docs/architecture.md#doctor`): find, explain and fix what breaks
//! real cuDNN setups.
//!
//! A [`Snapshot`] of the machine is gathered by small per-OS code ([`gather`]);
//! platform-neutral checks ([`checks`]) turn it into [`Finding`]s; [`render`]
//! prints text, `--json` and `--report` from that one list; [`fix`] applies the
//! safe, reversible fixes ([`crate::verify`], its own module, re-hashes the
//! store and the deployments). Because the checks read only the snapshot, every
//! Windows case is tested on Linux with a Windows snapshot as data.
//!
//! # Findings
//!
//! Each finding has a stable id, a [`FindingId`]; README.md's table
//! ("### Doctor") lists them for users, and a test keeps it complete.
//!
//! A copy's version comes from its own evidence: the library's answer when it
//! loaded with its own sub-libraries (`loaded_modules`, Linux), its DLL file
//! version, its real name (`libcudnn.so.9.1.0`), the store receipt of the
//! release it is a copy of, the headers of its installation. cuDNN 9's
//! `libcudnn.so.9` is a shim whose `cudnnGetVersion()` the graph library
//! answers, so a loaded answer with another folder's graph library is not the
//! copy's version.
//!
//! Cases of `docs/breakages.md` handled outside findings:
//! `#version-macros-moved-8-0` (version read from `cudnn_version.h`, its `_v8`
//! copy, then `cudnn.h`, following links — [`crate::archive::header`],
//! gathering); the preflight of `#toolkit-not-writable` and the refusal of
//! `#cudnn-from-another-cuda` belong to `use`.

pub mod binfmt;
pub mod checks;
pub mod finding;
pub mod finding_id;
pub mod fix;
pub mod gather;
pub mod loader;
mod probe;
pub mod process;
pub mod render;
pub mod snapshot;
pub mod spath;

pub use checks::{DriverFloor, Tables};
pub use finding::{AutoFix, Finding, Severity};
pub use finding_id::FindingId;
pub use snapshot::Snapshot;

/// The path-list variables (besides the loader's) whose entries doctor
/// resolves and checks for removed folders.
pub fn probe_vars() -> &'static [&'static str] {
    &probe::identity::LIST_VARS
}

/// Runs every check over `snapshot`: findings, errors first.
pub fn diagnose(snapshot: &Snapshot, tables: &Tables) -> Vec<Finding> {
    checks::run_all(snapshot, tables)
}

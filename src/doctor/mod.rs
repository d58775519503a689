//! `doctor` (DESIGN.md §7): find, explain and fix what breaks real cuDNN
//! setups.
//!
//! A [`Snapshot`] of the machine is gathered by small per-OS code
//! ([`gather`]); platform-neutral checks ([`checks`]) turn it into
//! [`Finding`]s; [`render`] prints text, `--json` and `--report` from that one
//! list; [`fix`] applies the safe, reversible fixes ([`crate::verify`], its
//! own module, re-hashes the store and the deployments). Because the checks read only the snapshot, every
//! Windows case is tested on Linux with a Windows snapshot as data.
//!
//! # Findings
//!
//! Ids are stable (scripts may match on them). Sources: issue 6 items
//! (#1–#13), field cases (F01–F26, ../shared/reference/field-cases.md).
//!
//! | id | severity | what | source |
//! | --- | --- | --- | --- |
//! | `os-not-64bit` | error | the OS is 32-bit | #1 |
//! | `wrong-architecture` | error | a library built for another machine (aarch64 on x86_64, 32-bit DLL) | #1 |
//! | `no-cuda-toolkit` | error (warning with pip CUDA) | no CUDA toolkit found | #2 |
//! | `nvcc-cuda-path-mismatch` | warning | `nvcc` on PATH is another CUDA than `CUDA_PATH`/`CUDA_HOME` | #2 |
//! | `driver-not-found` | info | no `nvidia-smi`; driver and GPU checks skipped | #3 |
//! | `driver-too-old` | error | the driver is older than a toolkit needs (catalog table) | #3 |
//! | `driver-minor-compat-only` | warning | runs only through CUDA minor-version compatibility | #3 |
//! | `gpu-too-old` | error | the GPU's compute capability is below what the active cuDNN supports | §5.2 |
//! | `cudnn-cuda-mismatch` | error | a cuDNN build that does not fit its toolkit's CUDA, or the loaded copy comes from another CUDA | #4, F26 |
//! | `missing-library` | error | a library of the set is missing (DLL/.so: loads fail) | #5 |
//! | `missing-header` | error | `cudnn.h`/`cudnn_version.h` missing (compiles fail) | #5 |
//! | `missing-link-library` | error | `cudnn.lib`/`libcudnn.so` missing (links fail) | #5 |
//! | `lib-not-in-x64` | error | import libraries in `lib` instead of `lib\x64` | #6 |
//! | `file-in-wrong-folder` | error | a cuDNN file in a toolkit folder where no tool looks | F20 |
//! | `toolkit-not-on-loader-path` | error (warning when another copy loads) | the toolkit's `bin` not on PATH / `lib64` not on the loader path | #7 |
//! | `path-points-at-archive-root` | error (warning when another copy loads) | a PATH/LD_LIBRARY_PATH entry above the folder holding the libraries | #7, F01 |
//! | `installer-subfolder-not-on-path` | error (warning when another copy loads) | NVIDIA's cuDNN 9 installer: `bin` on PATH, DLLs in `bin\<CUDA>` | F02 |
//! | `cuda-path-missing` | warning | Windows: `CUDA_PATH` not set | #8 |
//! | `cuda-path-invalid` | error | `CUDA_PATH`/`CUDA_HOME`/`CUDA_PATH_VX_Y` is not a toolkit | #8 |
//! | `cuda-path-other-version` | error/warning | `CUDA_PATH_VX_Y` names another version; `CUDA_PATH` names a toolkit without the cuDNN | #8 |
//! | `multiple-cudnn-copies` | warning (info when every copy's own files say the same version) | several copies reachable, in loader order, the winner marked | #9, F06, F12, F13 |
//! | `sub-libraries-mixed` | error/warning | a main library that takes sub-libraries from another copy (seen when loaded, or missing from its folder and found elsewhere), cuDNN 8/9 sub-libraries from different releases, or several sets visible | F14 |
//! | `header-library-mismatch` | error | headers and library of one installation disagree | #10, F24 |
//! | `framework-cudnn-mismatch` | error | the cuDNN that loads is not what the framework was built with | #11 |
//! | `framework-cuda-mismatch` | warning | the framework's CUDA major differs from the toolkit in use | #11 |
//! | `cudnn-major-mismatch` | error | a pin or framework needs major M, only another major is reachable | F08 |
//! | `vc-runtime-missing` | error | `vcruntime140(_1).dll`/`msvcp140(_1).dll` missing | #12, F10 |
//! | `ucrt-missing` | error | Windows before 10 without the Universal C Runtime | #12, F10 |
//! | `process-path-stale` | warning | the registry PATH holds the cuDNN folder, this process's PATH does not | #13 |
//! | `user-machine-path-differ` | warning (info when user-only) | user and machine PATH lead to different copies | #13 |
//! | `path-not-persistent` | info | the cuDNN folder is on PATH in this process only | #13 |
//! | `zlibwapi-missing` | error | Windows cuDNN 8.3–8.9 / 9.0–9.1 without `zlibwapi.dll` | F03 |
//! | `dependency-unresolved` | error | a present library whose DT_NEEDED/PE import does not resolve | F04 |
//! | `library-load-failed` | error | the library did not load; the loader's message | F04 |
//! | `cudnn-only-in-site-packages` | warning | cuDNN only inside a Python environment | F16 |
//! | `broken-soname-chain` | error (warning for the dev link) | `libcudnn.so.8` a copy instead of a link, or a dangling link | F19 |
//! | `toolkit-not-writable` | info | switching this toolkit needs elevated rights | F21 |
//! | `toolkit-change-unfinished` | error (warning while it runs) | another home's change to the toolkit is running, or was interrupted and not finished yet | — |
//! | `cudnn-not-found` | error | no cuDNN anywhere | — |
//! | `deployment-drift` | error (info for a change of yours a rollback restored; warning when the toolkit's own files now say another release) | files cudnnm deployed have changed | verify |
//! | `store-release-damaged` | error | a store release folder whose `receipt.toml` is missing or unreadable, or whose files changed by size, link or presence (edited through a link deployment) | verify |
//!
//! A copy's version comes from its own evidence: the library's answer when
//! it loaded with its own sub-libraries (`loaded_modules`, Linux), its DLL
//! file version, its real name (`libcudnn.so.9.1.0`), the store receipt of
//! the release it is a copy of, the headers of its installation. cuDNN 9's
//! `libcudnn.so.9` is a shim whose `cudnnGetVersion()` the graph library
//! answers, so a loaded answer with another folder's graph library is not
//! the copy's version.
//!
//! Field cases handled outside findings: F22 (version read from
//! `cudnn_version.h`, its `_v8` copy, then `cudnn.h`, following links —
//! [`header`], gathering); F21's preflight and F26's refusal belong to `use`.

pub mod binfmt;
pub mod checks;
pub mod finding;
pub mod fix;
pub mod gather;
pub mod loader;
pub mod render;
pub mod snapshot;
pub mod spath;

pub use checks::{DriverFloor, Tables};
pub use finding::{AutoFix, Finding, Severity};
pub use snapshot::Snapshot;

/// Every finding id, as in the table above.
pub const FINDING_IDS: &[&str] = &[
    "os-not-64bit",
    "wrong-architecture",
    "no-cuda-toolkit",
    "nvcc-cuda-path-mismatch",
    "driver-not-found",
    "driver-too-old",
    "driver-minor-compat-only",
    "gpu-too-old",
    "cudnn-cuda-mismatch",
    "missing-library",
    "missing-header",
    "missing-link-library",
    "lib-not-in-x64",
    "file-in-wrong-folder",
    "toolkit-not-on-loader-path",
    "path-points-at-archive-root",
    "installer-subfolder-not-on-path",
    "cuda-path-missing",
    "cuda-path-invalid",
    "cuda-path-other-version",
    "multiple-cudnn-copies",
    "sub-libraries-mixed",
    "header-library-mismatch",
    "framework-cudnn-mismatch",
    "framework-cuda-mismatch",
    "cudnn-major-mismatch",
    "vc-runtime-missing",
    "ucrt-missing",
    "process-path-stale",
    "user-machine-path-differ",
    "path-not-persistent",
    "zlibwapi-missing",
    "dependency-unresolved",
    "library-load-failed",
    "cudnn-only-in-site-packages",
    "broken-soname-chain",
    "toolkit-not-writable",
    "toolkit-change-unfinished",
    "cudnn-not-found",
    "deployment-drift",
    "store-release-damaged",
];

/// Runs every check over `snapshot`: findings, errors first.
pub fn diagnose(snapshot: &Snapshot, tables: &Tables) -> Vec<Finding> {
    checks::run_all(snapshot, tables)
}

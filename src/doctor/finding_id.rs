//! The finding ids: stable (scripts match on them), kebab-case in text and
//! `--json`, one enum in code so that a check cannot emit an id that is not
//! documented. The user-facing table of ids is README.md's ("### Doctor");
//! a test checks that it lists exactly these.
//!
//! Sources: each id names the case of `docs/breakages.md` it comes from (an
//! anchor there, `#anchor`), or the fact table in `docs/releases.md`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Declares [`FindingId`] with its text form and the list of all ids, from
/// one list (so the three never disagree).
macro_rules! finding_ids {
    ($($(#[$doc:meta])* $variant:ident = $id:literal,)*) => {
        /// What a finding is about: one variant per id. Severities named
        /// here are the usual ones; a check may lower one (the README table
        /// says when).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum FindingId {
            $($(#[$doc])* $variant,)*
        }

        impl FindingId {
            /// Every id, in the order of the README table.
            pub const ALL: &'static [FindingId] = &[$(FindingId::$variant,)*];

            /// The stable kebab-case id (`missing-library`).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(FindingId::$variant => $id,)*
                }
            }
        }
    };
}

finding_ids! {
    /// The OS is 32-bit. Severity: error. Source: `#os-not-64-bit`.
    OsNot64Bit = "os-not-64bit",
    /// A library built for another machine (aarch64 on x86_64, 32-bit DLL). Severity: error.
    /// Source: `#os-not-64-bit`.
    WrongArchitecture = "wrong-architecture",
    /// No CUDA toolkit found. Severity: error (info with CUDA from pip or conda). Source:
    /// `#no-cuda-toolkit`.
    NoCudaToolkit = "no-cuda-toolkit",
    /// `nvcc` on PATH is another CUDA than `CUDA_PATH`/`CUDA_HOME`. Severity: warning. Source:
    /// `#no-cuda-toolkit`.
    NvccCudaPathMismatch = "nvcc-cuda-path-mismatch",
    /// No `nvidia-smi`; driver and GPU checks skipped. Severity: info. Source: `#driver-too-old`.
    DriverNotFound = "driver-not-found",
    /// The driver is older than a toolkit needs (catalog table). Severity: error. Source:
    /// `#driver-too-old`.
    DriverTooOld = "driver-too-old",
    /// Runs only through CUDA minor-version compatibility. Severity: warning. Source:
    /// `#driver-too-old`.
    DriverMinorCompatOnly = "driver-minor-compat-only",
    /// A GPU's compute capability is below what a release in use (loaded, deployed, pinned)
    /// supports. Severity: error. Source: `#gpu-dropped-by-9-11`,
    /// `docs/releases.md#minimum-compute-capability`.
    GpuTooOld = "gpu-too-old",
    /// A GPU newer than a release in use supports: Blackwell (10.0, 12.0)
    /// before cuDNN 9.7 or a build for CUDA before 12.8, Hopper and Ada
    /// before 8.6. Severity: error. Source: `docs/releases.md#gpu-ceilings`.
    GpuTooNew = "gpu-too-new",
    /// A cuDNN build that does not fit its toolkit's CUDA, or the loaded copy comes from another
    /// CUDA. Severity: error. Source: `#build-for-other-cuda`, `#cudnn-from-another-cuda`.
    CudnnCudaMismatch = "cudnn-cuda-mismatch",
    /// A library of the set is missing (DLL/.so: loads fail). Severity: error. Source:
    /// `#file-missing-from-set`.
    MissingLibrary = "missing-library",
    /// `cudnn.h`/`cudnn_version.h` missing (compiles fail). Severity: error. Source:
    /// `#file-missing-from-set`.
    MissingHeader = "missing-header",
    /// `cudnn.lib`/`libcudnn.so` missing (links fail). Severity: error. Source:
    /// `#file-missing-from-set`.
    MissingLinkLibrary = "missing-link-library",
    /// Import libraries in `lib` instead of `lib\x64`. Severity: error. Source: `#lib-not-in-x64`.
    LibNotInX64 = "lib-not-in-x64",
    /// A cuDNN file in a toolkit folder where no tool looks. Severity: error. Source:
    /// `#archive-layout-changed-8-3`.
    FileInWrongFolder = "file-in-wrong-folder",
    /// The toolkit's `bin` not on PATH / `lib64` not on the loader path. Severity: error (warning
    /// when another copy loads). Source: `#toolkit-bin-not-on-path`.
    ToolkitNotOnLoaderPath = "toolkit-not-on-loader-path",
    /// Windows: `PATH` lists an older toolkit's `bin` before the one `CUDA_PATH` names, so
    /// that toolkit's CUDA DLLs (`cublas64_11.dll`, …) load. Severity: warning (error when the
    /// cuDNN that loads needs it). Source: `docs/system.md#library-search`.
    OlderToolkitFirstOnPath = "older-toolkit-first-on-path",
    /// An empty or relative `LD_LIBRARY_PATH` entry: ld.so searches the working folder. Severity:
    /// warning.
    LdLibraryPathCurrentFolder = "ld-library-path-current-folder",
    /// ld.so cache entries whose file is gone: ld.so skips them and falls back to the trusted
    /// folders. Severity: warning (error when that leaves a cuDNN name unresolved).
    LdCacheStale = "ld-cache-stale",
    /// A loader or compiler variable entry (`LD_LIBRARY_PATH`, `CPATH`, `CUDNN_PATH`, …), a
    /// loaded module or a `current/` link that points into a removed release or folder.
    /// Severity: warning.
    StaleActivation = "stale-activation",
    /// A PATH/LD_LIBRARY_PATH entry above the folder holding the libraries. Severity: error
    /// (warning when another copy loads). Source: `#toolkit-bin-not-on-path`,
    /// `#path-at-archive-root`.
    PathPointsAtArchiveRoot = "path-points-at-archive-root",
    /// NVIDIA's cuDNN 9 installer: `bin` on PATH, DLLs in `bin\<CUDA>`. Severity: error (warning
    /// when another copy loads). Source: `#installer-subfolder-not-on-path`.
    InstallerSubfolderNotOnPath = "installer-subfolder-not-on-path",
    /// Windows: `CUDA_PATH` not set. Severity: warning. Source: `#cuda-path-wrong`.
    CudaPathMissing = "cuda-path-missing",
    /// `CUDA_PATH`/`CUDA_HOME`/`CUDA_PATH_VX_Y` is not a toolkit. Severity: error. Source:
    /// `#cuda-path-wrong`.
    CudaPathInvalid = "cuda-path-invalid",
    /// `CUDA_PATH_VX_Y` names another version; `CUDA_PATH` names a toolkit without the cuDNN.
    /// Severity: error/warning. Source: `#cuda-path-wrong`.
    CudaPathOtherVersion = "cuda-path-other-version",
    /// Several copies reachable, in loader order, the winner marked. Severity: warning (info when
    /// every copy's own files say the same version). Source: `#several-copies-reachable`,
    /// `#older-copy-first-on-path`, `#stale-copy-on-ld-library-path`, `#conda-env-shadows-wheel`.
    MultipleCudnnCopies = "multiple-cudnn-copies",
    /// `doctor -- CMD` / `--pid`: the process mapped other cuDNN files than the loader model
    /// predicted. Severity: warning.
    LoadedNotAsPredicted = "loaded-not-as-predicted",
    /// A main library whose load takes sub-libraries from another copy (seen when loaded, or the
    /// loader's walk for them played through), or cuDNN 8/9 sub-libraries from different releases
    /// in one folder. Severity: error/warning (info for a same-release mix only a load by path
    /// gets). Source: `#sub-libraries-mixed`.
    SubLibrariesMixed = "sub-libraries-mixed",
    /// Headers and library of one installation disagree. Severity: error. Source:
    /// `#header-library-mismatch`.
    HeaderLibraryMismatch = "header-library-mismatch",
    /// The cuDNN that loads is not what the framework was built with. Severity: error. Source:
    /// `#framework-expects-other-version`.
    FrameworkCudnnMismatch = "framework-cudnn-mismatch",
    /// The framework's CUDA major differs from the toolkit in use. Severity: warning. Source:
    /// `#framework-expects-other-version`.
    FrameworkCudaMismatch = "framework-cuda-mismatch",
    /// A cuDNN in use (the one the loader takes, or a cuDNN wheel installed in a Python
    /// environment) is a release an advisory covers (`advisories.toml`, or a
    /// wheel the catalog says PyPI yanked). Severity: warning.
    /// Source: `#known-bad-release`.
    CudnnAdvisory = "cudnn-advisory",
    /// A pin or framework needs major M, only another major is reachable. Severity: error. Source:
    /// `#major-version-mismatch`.
    CudnnMajorMismatch = "cudnn-major-mismatch",
    /// The pin names a build for another CUDA than the toolkit in use. Severity: warning.
    PinToolkitMismatch = "pin-toolkit-mismatch",
    /// The project's `.cudnn-version.lock` names a build for another CUDA than the toolkit in
    /// use. Severity: warning.
    LockToolkitMismatch = "lock-toolkit-mismatch",
    /// The pin names another release of the same major than the one the loader takes.
    /// Severity: warning.
    PinReleaseMismatch = "pin-release-mismatch",
    /// The pin that applies here names a release the cudnnm store does not
    /// hold: `cudnnm exec`, `env` and the shell hook fail. Severity: error.
    PinNotInstalled = "pin-not-installed",
    /// The pin that applies here (`.cudnn-version`, `CUDNNM_VERSION`,
    /// `default`) cannot be read. Severity: error.
    PinUnreadable = "pin-unreadable",
    /// The home's `config.toml` cannot be parsed (error: commands that
    /// read the default, mode, mirror or backups to keep fail), or sets
    /// keys cudnnm does not know (warning: they change nothing).
    ConfigInvalid = "config-invalid",
    /// The first `cudnn.h` a compiler finds declares another release than
    /// the library the loader takes. Severity: warning. Source:
    /// `#compiler-header-mismatch`.
    CompilerHeaderMismatch = "compiler-header-mismatch",
    /// `vcruntime140(_1).dll`/`msvcp140(_1).dll` missing. Severity: error. Source:
    /// `#vc-runtime-missing`.
    VcRuntimeMissing = "vc-runtime-missing",
    /// Windows before 10 without the Universal C Runtime. Severity: error. Source:
    /// `#vc-runtime-missing`.
    UcrtMissing = "ucrt-missing",
    /// The registry PATH holds the cuDNN folder, this process's PATH does not. Severity: warning.
    /// Source: `#user-and-machine-path-differ`.
    ProcessPathStale = "process-path-stale",
    /// User and machine PATH lead to different copies. Severity: warning (info when user-only).
    /// Source: `#user-and-machine-path-differ`.
    UserMachinePathDiffer = "user-machine-path-differ",
    /// The cuDNN folder is on PATH in this process only. Severity: info. Source:
    /// `#user-and-machine-path-differ`.
    PathNotPersistent = "path-not-persistent",
    /// Windows cuDNN 8.3–8.9 / 9.0–9.1 without `zlibwapi.dll`. Severity: error. Source:
    /// `#dll-load-failed-zlibwapi`.
    ZlibwapiMissing = "zlibwapi-missing",
    /// A present library whose DT_NEEDED/PE import does not resolve. Severity: error. Source:
    /// `#dependency-unresolved`.
    DependencyUnresolved = "dependency-unresolved",
    /// The library did not load; the loader's message. Severity: error. Source:
    /// `#dependency-unresolved`.
    LibraryLoadFailed = "library-load-failed",
    /// A dependency the loader resolves (zlibwapi, cuBLAS, the CUDA runtime) built for another
    /// machine type than the cuDNN that needs it. Severity: error.
    DependencyWrongArchitecture = "dependency-wrong-architecture",
    /// A file under one cuDNN major's name whose content is another major (a renamed file).
    /// Severity: error.
    LibraryRenamed = "library-renamed",
    /// A file under a cuDNN name that is not cuDNN at all (a link to `libz`, `libcuda`).
    /// Severity: error.
    NotACudnnLibrary = "not-a-cudnn-library",
    /// A library this user may not read (mode, owner, ACL). Severity: error.
    LibraryUnreadable = "library-unreadable",
    /// A soname link the loader looks up (`libcudnn.so.9`) is missing beside
    /// the real file (`libcudnn.so.9.27.0`). Severity: error.
    SonameLinkMissing = "soname-link-missing",
    /// A library on a file system mounted `noexec`. Severity: error.
    LibraryOnNoexecMount = "library-on-noexec-mount",
    /// CuDNN only inside a Python environment. Severity: warning (info when a framework there
    /// loads it). Source: `#cudnn-only-in-site-packages`.
    CudnnOnlyInSitePackages = "cudnn-only-in-site-packages",
    /// `libcudnn.so.8` a copy instead of a link, or a dangling link. Severity: error (warning for
    /// the dev link). Source: `#soname-link-copied-as-file`.
    BrokenSonameChain = "broken-soname-chain",
    /// Switching this toolkit needs elevated rights. Severity: info. Source:
    /// `#toolkit-not-writable`.
    ToolkitNotWritable = "toolkit-not-writable",
    /// Another home's change to the toolkit is running, or was interrupted and not finished yet.
    /// Severity: error (warning while it runs).
    ToolkitChangeUnfinished = "toolkit-change-unfinished",
    /// No cuDNN anywhere. Severity: error.
    CudnnNotFound = "cudnn-not-found",
    /// Files cudnnm deployed have changed. Severity: error (info for a change of yours a rollback
    /// restored; warning when the toolkit's own files now say another release). Source: verify.
    DeploymentDrift = "deployment-drift",
    /// A store release folder whose `receipt.toml` is missing or unreadable, or whose files changed
    /// by size, link or presence (edited through a link deployment). Severity: error. Source:
    /// verify.
    StoreReleaseDamaged = "store-release-damaged",
    /// A store release whose `receipt.toml` (or folder) this user may not read: a permission
    /// problem, not damage. Severity: warning.
    StoreReleaseUnreadable = "store-release-unreadable",
    /// The home, the system store or a toolkit is on a network file system, where locking may not
    /// work. Severity: warning.
    NetworkFileSystem = "network-file-system",
    /// A folder an interrupted import left in the store (`store/.partial-*`), taking disk space
    /// no command shows. Severity: warning.
    StorePartialLeft = "store-partial-left",
}

impl fmt::Display for FindingId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FindingId {
    type Err = String;

    /// The id whose [`FindingId::as_str`] is `s`.
    fn from_str(s: &str) -> Result<FindingId, String> {
        FindingId::ALL
            .iter()
            .copied()
            .find(|id| id.as_str() == s)
            .ok_or_else(|| format!("unknown finding id '{s}'"))
    }
}

impl Serialize for FindingId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for FindingId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<FindingId, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_kebab_case_unique_and_read_back() {
        let mut seen = std::collections::BTreeSet::new();
        for &id in FindingId::ALL {
            let s = id.as_str();
            assert!(
                s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{s}"
            );
            assert!(seen.insert(s), "{s} twice");
            assert_eq!(s.parse::<FindingId>(), Ok(id));
            assert_eq!(serde_json::to_string(&id).unwrap(), format!("\"{s}\""));
            assert_eq!(
                serde_json::from_str::<FindingId>(&format!("\"{s}\"")).unwrap(),
                id
            );
        }
        assert_eq!(FindingId::OsNot64Bit.to_string(), "os-not-64bit");
        assert!("no-such-id".parse::<FindingId>().is_err());
        assert!(serde_json::from_str::<FindingId>("\"no-such-id\"").is_err());
    }

    /// The ids README.md's table under "### Doctor" lists: every `id` in
    /// the first column of its rows.
    fn readme_ids(readme: &str) -> Vec<String> {
        let section = readme
            .split("\n### ")
            .find(|s| s.starts_with("Doctor\n"))
            .expect("README.md has a '### Doctor' section");
        let mut ids = Vec::new();
        for row in section.lines().filter(|l| l.starts_with('|')) {
            let first = row.split('|').nth(1).unwrap_or("").trim();
            if first == "id" || first.starts_with("---") {
                continue;
            }
            ids.extend(
                first
                    .split(',')
                    .map(|c| c.trim().trim_matches('`').to_string()),
            );
        }
        ids
    }

    #[test]
    fn the_readme_table_lists_every_finding_id_and_no_other() {
        let listed = readme_ids(include_str!("../../README.md"));
        let ids: Vec<&str> = FindingId::ALL.iter().map(|id| id.as_str()).collect();
        for id in &ids {
            assert_eq!(
                listed.iter().filter(|l| l == id).count(),
                1,
                "{id} should be listed once in README.md's table of finding ids"
            );
        }
        for l in &listed {
            assert!(
                l.parse::<FindingId>().is_ok(),
                "README.md lists '{l}', which is no finding id"
            );
        }
        // The table parser itself.
        assert_eq!(
            readme_ids(
                "x\n### Doctor\n\n| id | s |\n| --- | --- |\n| `a`, `b` | e |\n| `c` | w |\n\n### Next\n| `d` | x |\n"
            ),
            vec!["a", "b", "c"]
        );
    }
}

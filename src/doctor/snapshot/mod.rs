//! The snapshot: everything `doctor` knows about a machine, as plain data.
//!
//! Gathering (the probes `gather.rs` runs) fills it; the checks read only
//! this. It is also what `doctor --report FILE.json` records and what
//! `doctor --snapshot FILE.json` diagnoses again elsewhere, so every field is
//! serialisable and every path is text in the snapshot OS's own spelling
//! (see [`crate::doctor::spath`]): a Windows snapshot is diagnosed on a Linux
//! host.
//!
//! The records by concern: `toolkits.rs` (toolkits and changes to them),
//! `files.rs` (cuDNN files and where they came from), `versions.rs` (what
//! version a copy is, from its own evidence), `frameworks.rs` (Python
//! packages), `consumers.rs` (the framework libraries that load cuDNN),
//! `process.rs` (a program watched and what it mapped), `activation.rs`
//! (`current/` links, loaded modules, the project lock), `home.rs` (cudnnm's own store and deployments).

mod activation;
mod consumers;
mod files;
mod frameworks;
mod home;
mod process;
mod toolkits;
mod versions;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use activation::{CurrentLink, LoadedModule, LockInfo};
pub use consumers::Consumer;
pub use files::{CudnnFile, InstallKind, StoreCopy, install_root};
pub use frameworks::Framework;
pub use home::{
    ChangedRelease, DamagedRelease, DeploymentState, FileState, PlacedState, StorePartial,
};
pub use process::ProcessView;
pub use toolkits::{ToolkitInfo, ToolkitLayout, UnfinishedChange};
pub use versions::{Known, cudart_to_version};

use super::spath;
use crate::version::Version;

/// Snapshot schema version written by this build.
pub const SNAPSHOT_SCHEMA: u32 = 1;

/// A machine, as `doctor` saw it.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Snapshot {
    /// [`SNAPSHOT_SCHEMA`].
    pub schema: u32,
    /// When it was taken, RFC 3339 UTC.
    pub taken_at: String,
    /// The cudnnm version that took it.
    pub cudnnm_version: String,
    /// Operating system and architecture.
    pub os: OsInfo,
    /// The working folder.
    pub cwd: String,
    /// The environment variables that matter to CUDA and cuDNN (`CUDA_PATH*`,
    /// `CUDA_HOME`, `CUDNN_*`, `CUDNNM_*`, `CONDA_PREFIX`, `VIRTUAL_ENV`,
    /// `SystemRoot`, …), by name.
    pub env: BTreeMap<String, String>,
    /// `PATH` entries in order.
    pub path: Vec<String>,
    /// `LD_LIBRARY_PATH` entries in order (Linux), as ld.so reads them: an
    /// empty entry is the working folder, a relative one is taken from it
    /// ([`crate::doctor::loader::ld_library_path_dirs`]).
    pub ld_library_path: Vec<String>,
    /// `LD_LIBRARY_PATH` exactly as set (Linux), when set.
    #[serde(default)]
    pub ld_library_path_raw: Option<String>,
    /// The ld.so cache (`ldconfig -p`) entries for the names that matter.
    pub ld_cache: Vec<LdCacheEntry>,
    /// Folders the loader always searches: Linux trusted folders (`/lib64`,
    /// `/usr/lib/x86_64-linux-gnu`, …); Windows `System32` then the Windows folder.
    pub system_dirs: Vec<String>,
    /// Windows: the folder of the program that loads cuDNN, when known; the
    /// loader searches it first.
    pub app_dir: Option<String>,
    /// Windows: the user and machine `Path` values from the registry, unexpanded.
    pub registry: Option<RegistryPaths>,
    /// CUDA toolkits found.
    pub toolkits: Vec<ToolkitInfo>,
    /// Every folder examined, with the names in it that matter (cuDNN files,
    /// system runtimes, and every library a cuDNN file needs).
    pub dirs: Vec<DirListing>,
    /// The folders the snapshot names (loader path entries, toolkit roots,
    /// variables, folders listed) whose resolved path differs from how they
    /// are spelled, or that do not exist: what makes two spellings one
    /// folder ([`Snapshot::same_place`]). Empty in snapshots from before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub folders: Vec<FolderIdentity>,
    /// Every cuDNN file found, with what it says about itself.
    pub files: Vec<CudnnFile>,
    /// `nvcc` on `PATH`, when present.
    pub nvcc: Option<Nvcc>,
    /// The NVIDIA driver, from `nvidia-smi`, when present.
    pub driver: Option<DriverInfo>,
    /// Installed Python frameworks and cuDNN wheels.
    pub frameworks: Vec<Framework>,
    /// The frameworks' own libraries that load cuDNN, with their search
    /// folders. Empty in snapshots from before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub consumers: Vec<Consumer>,
    /// The release pinned for the working folder, if any.
    pub pin: Option<PinInfo>,
    /// Why the pin that applies here cannot be read (`cudnnm current`'s
    /// error and hint), when it cannot.
    pub pin_error: Option<String>,
    /// The home's default spec (`cudnnm default`), when set.
    pub default_spec: Option<String>,
    /// The project's lock file beside the pin that applies, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<LockInfo>,
    /// The home's `current/cuda-<variant>` links.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub current_links: Vec<CurrentLink>,
    /// Environment modules loaded in this shell that concern cuDNN.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modules: Vec<LoadedModule>,
    /// Why the home's `config.toml` cannot be read (error, cause and hint),
    /// when it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_error: Option<String>,
    /// Keys the home's `config.toml` sets that cudnnm does not know.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config_unknown: Vec<String>,
    /// What cudnnm deployed into toolkits, and what is there now.
    pub deployments: Vec<DeploymentState>,
    /// cudnnm store folders that should hold a release but whose
    /// `receipt.toml` is missing or unreadable.
    pub store_damaged: Vec<DamagedRelease>,
    /// cudnnm store releases whose files no longer match their receipt
    /// (size, link target, presence): edited through a link deployment.
    pub store_changed: Vec<ChangedRelease>,
    /// cudnnm's folders (home, system store, toolkits) that are on a
    /// network file system, where locking may not work.
    pub network_fs: Vec<NetworkFs>,
    /// Every `cudnn.h` / `cudnn_version.h` a compiler would find, in its
    /// search order (see [`CompilerHeader`]).
    pub compiler_headers: Vec<CompilerHeader>,
    /// The releases installed in the cudnnm store (`9.12.0.46_cuda12`);
    /// `None` when not recorded (snapshots from before this field).
    pub store_releases: Option<Vec<crate::version::ReleaseId>>,
    /// Folders interrupted imports left in the store (`store/.partial-*`);
    /// none listed while another cudnnm holds the home lock.
    pub store_partials: Vec<StorePartial>,
    /// The program watched with `doctor -- CMD` or `doctor --pid PID`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessView>,
    /// Problems met while gathering (unreadable folders, tools that failed).
    pub notes: Vec<String>,
    /// Time spent per gathering phase, in milliseconds.
    pub timings_ms: Vec<(String, u64)>,
}

/// One of cudnnm's folders on a network file system.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct NetworkFs {
    /// What the folder is: `home`, `system store` or `toolkit`.
    pub what: String,
    /// The folder.
    pub path: String,
    /// The file system type as the mount table names it (`nfs4`, `lustre`).
    pub fs_type: String,
    /// Where it is mounted.
    pub mount: String,
}

/// Operating system and architecture.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct OsInfo {
    /// `linux` or `windows` (Rust's `std::env::consts::OS` names).
    pub family: String,
    /// A readable name: `Ubuntu 22.04.4 LTS`, `Windows 10 Pro`.
    pub name: Option<String>,
    /// The OS version: Windows `10.0.19045` or `6.1.7601` (Windows 7); Linux kernel release.
    pub version: Option<String>,
    /// The OS architecture: `x86_64`, `aarch64`, `x86`, `ppc64le`.
    pub arch: String,
    /// The OS word size: 64 or 32.
    pub bits: u32,
}

/// One ld.so cache entry.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LdCacheEntry {
    /// The name the loader looks up (`libcudnn.so.8`).
    pub name: String,
    /// The file it maps to.
    pub path: String,
    /// The file is gone: ld.so skips the entry and goes on to the trusted
    /// folders (`sudo ldconfig` rebuilds the cache).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gone: bool,
}

/// The `Path` values stored in the Windows registry.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RegistryPaths {
    /// `HKCU\Environment\Path`.
    pub user: Option<String>,
    /// `HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\Environment\Path`.
    pub machine: Option<String>,
}

/// What a folder named in the snapshot really is.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct FolderIdentity {
    /// The folder as spelled (`/usr/local/cuda/lib64`).
    pub path: String,
    /// Its resolved path, links followed (`/usr/local/cuda-12.4/targets/x86_64-linux/lib`);
    /// `None` when it does not exist.
    pub real: Option<String>,
}

/// One folder and the names in it that matter.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DirListing {
    /// The folder.
    pub path: String,
    /// File names in it (cuDNN files, runtimes, dependencies), as spelled on disk.
    pub names: Vec<String>,
    /// The machine each library among `names` that is not a cuDNN file is
    /// built for (`x86_64`, `x86`, `aarch64`), by name: a dependency of
    /// another machine type than the cuDNN that needs it does not load.
    #[serde(default)]
    pub machines: BTreeMap<String, String>,
}

/// `nvcc` found on `PATH`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Nvcc {
    /// The executable.
    pub path: String,
    /// `nvcc --version` output.
    pub output: Option<String>,
    /// The CUDA release it reports (`release 11.2` → `11.2`).
    pub release: Option<Version>,
}

/// A cuDNN header in a folder a compiler searches.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct CompilerHeader {
    /// Why the compiler looks there: `CPATH`, `C_INCLUDE_PATH`,
    /// `CPLUS_INCLUDE_PATH`, `INCLUDE`, `toolkit` or `system`.
    pub source: String,
    /// The header's path in that folder (`/usr/include/cudnn.h`).
    pub path: String,
    /// The links followed from `path`, each target as written resolved to
    /// a full path, last = the real file (empty when `path` is no link).
    pub chain: Vec<String>,
    /// The version its `CUDNN_MAJOR`/`MINOR`/`PATCHLEVEL` declare.
    pub version: Option<Version>,
}

/// The NVIDIA driver and GPUs.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct DriverInfo {
    /// The `nvidia-smi` used.
    pub tool: String,
    /// Its output.
    pub output: String,
    /// The driver version exactly as reported (`535.104.05`, `551.61`).
    pub version: Option<crate::version::DriverVersion>,
    /// The GPUs.
    pub gpus: Vec<Gpu>,
}

/// One GPU.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Gpu {
    /// Its name.
    pub name: String,
    /// Compute capability (`8.6`).
    pub compute_capability: Option<Version>,
    /// nvidia-smi's index (PCI bus order), when known.
    pub index: Option<u32>,
    /// The GPU's UUID (`GPU-8932f937-…`), when known.
    pub uuid: Option<String>,
    /// True when a CUDA program started here would not use it
    /// (`CUDA_VISIBLE_DEVICES`, [`crate::gpu::in_use`]): listed, not judged.
    pub hidden: bool,
}

/// The pinned release.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct PinInfo {
    /// The spec (`8.1`, `8.9.7.29_cuda12`).
    pub spec: String,
    /// Where it came from (`.cudnn-version` path, `CUDNNM_VERSION`, default).
    pub source: String,
}

impl Snapshot {
    /// True when the snapshot is of a Windows machine.
    pub fn windows(&self) -> bool {
        self.os.family == "windows"
    }

    /// An environment variable (case-insensitive on Windows).
    pub fn var(&self, name: &str) -> Option<&str> {
        if let Some(v) = self.env.get(name) {
            return Some(v.as_str()).filter(|v| !v.is_empty());
        }
        if self.windows() {
            return self
                .env
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
                .filter(|v| !v.is_empty());
        }
        None
    }

    /// `path` with every folder on its way resolved, as far as the snapshot
    /// knows ([`Snapshot::folders`]): `/usr/local/cuda/lib64/libcudnn.so.9`
    /// → `/usr/local/cuda-12.4/lib64/libcudnn.so.9`. The last component is
    /// kept as spelled (a file's own link is a name of its own). A path the
    /// snapshot knows nothing about is itself.
    pub fn resolve_folders(&self, path: &str) -> String {
        let w = self.windows();
        let mut best: Option<(usize, String)> = None;
        for f in &self.folders {
            let Some(real) = &f.real else { continue };
            let rest = if spath::same(path, &f.path, w) {
                Some(String::new())
            } else {
                spath::relative(path, &f.path, w)
            };
            let Some(rest) = rest else { continue };
            let len = spath::key(&f.path, w).len();
            if best.as_ref().is_none_or(|(l, _)| len > *l) {
                let to = if rest.is_empty() {
                    real.clone()
                } else {
                    spath::join(real, &rest, w)
                };
                best = Some((len, to));
            }
        }
        best.map_or_else(|| path.to_string(), |(_, p)| p)
    }

    /// True when `a` and `b` name the same place: the same spelling under
    /// the snapshot OS's rules, or the same folder reached through links
    /// (`/usr/local/cuda/lib64` and `/usr/local/cuda-12.4/lib64` when
    /// `/usr/local/cuda -> cuda-12.4`).
    pub fn same_place(&self, a: &str, b: &str) -> bool {
        let w = self.windows();
        spath::same(a, b, w)
            || (!self.folders.is_empty()
                && spath::same(&self.resolve_folders(a), &self.resolve_folders(b), w))
    }

    /// True when `child` is `ancestor` or lies inside it, links on the way
    /// of either followed ([`Snapshot::same_place`]).
    pub fn within(&self, child: &str, ancestor: &str) -> bool {
        let w = self.windows();
        spath::is_within(child, ancestor, w)
            || (!self.folders.is_empty()
                && spath::is_within(
                    &self.resolve_folders(child),
                    &self.resolve_folders(ancestor),
                    w,
                ))
    }

    /// True when `a` and `b` are the same file: the same place, or two
    /// names whose links lead to one file (`libcudnn.so.8` and
    /// `libcudnn.so.8.7.0` beside it).
    pub fn same_file(&self, a: &str, b: &str) -> bool {
        if self.same_place(a, b) {
            return true;
        }
        let real = |p: &str| {
            self.file(p)
                .and_then(|f| f.real_path.clone())
                .unwrap_or_else(|| p.to_string())
        };
        self.same_place(&real(a), &real(b))
    }

    /// True when the folder `dir` is known not to exist.
    pub fn folder_missing(&self, dir: &str) -> bool {
        let w = self.windows();
        self.folders
            .iter()
            .any(|f| f.real.is_none() && spath::same(&f.path, dir, w))
    }

    /// The file record at `path` (by any spelling of its folder).
    pub fn file(&self, path: &str) -> Option<&CudnnFile> {
        let w = self.windows();
        if let Some(f) = self.files.iter().find(|f| spath::same(&f.path, path, w)) {
            return Some(f);
        }
        if self.folders.is_empty() {
            return None;
        }
        let want = spath::key(&self.resolve_folders(path), w);
        self.files
            .iter()
            .find(|f| spath::key(&self.resolve_folders(&f.path), w) == want)
    }

    /// The listing of `dir`, when the folder was examined (by any spelling).
    pub fn listing(&self, dir: &str) -> Option<&DirListing> {
        let w = self.windows();
        if let Some(d) = self.dirs.iter().find(|d| spath::same(&d.path, dir, w)) {
            return Some(d);
        }
        if self.folders.is_empty() {
            return None;
        }
        self.dirs.iter().find(|d| self.same_place(&d.path, dir))
    }

    /// The name as spelled on disk when `dir` holds `name` (case-insensitive on Windows).
    pub fn name_in<'a>(&'a self, dir: &str, name: &str) -> Option<&'a str> {
        let w = self.windows();
        if let Some(l) = self.listing(dir)
            && let Some(n) = l.names.iter().find(|n| spath::name_eq(n, name, w))
        {
            return Some(n.as_str());
        }
        self.files
            .iter()
            .find(|f| {
                spath::name_eq(spath::file_name(&f.path, w), name, w)
                    && spath::parent(&f.path, w).is_some_and(|p| self.same_place(&p, dir))
            })
            .map(|f| spath::file_name(&f.path, w))
    }

    /// True when `dir` holds `name`.
    pub fn has(&self, dir: &str, name: &str) -> bool {
        self.name_in(dir, name).is_some()
    }

    /// The file a link resolves to, when it is in the snapshot; else `f` itself.
    pub fn resolve<'a>(&'a self, f: &'a CudnnFile) -> &'a CudnnFile {
        match &f.real_path {
            Some(r) if !spath::same(r, &f.path, self.windows()) => self.file(r).unwrap_or(f),
            _ => f,
        }
    }

    /// The toolkit whose root holds `path`, if any (the innermost, by any
    /// spelling of either).
    pub fn toolkit_of(&self, path: &str) -> Option<&ToolkitInfo> {
        self.toolkits
            .iter()
            .filter(|t| self.within(path, &t.root))
            .max_by_key(|t| self.resolve_folders(&t.root).len())
    }

    /// The cuDNN files of `root` (an installation root).
    pub fn files_in_root<'a>(&'a self, root: &'a str) -> impl Iterator<Item = &'a CudnnFile> + 'a {
        self.files
            .iter()
            .filter(move |f| self.same_place(&f.root, root))
    }

    /// Distinct installation roots, in the order first seen.
    pub fn roots(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for f in &self.files {
            if !out.iter().any(|r| self.same_place(r, &f.root)) {
                out.push(f.root.clone());
            }
        }
        out
    }
}

//! The snapshot: everything `doctor` knows about a machine, as plain data.
//!
//! Gathering (`gather.rs`, small per-OS parts) fills it; the checks read only
//! this. It is also what `doctor --report FILE.json` records and what
//! `doctor --snapshot FILE.json` diagnoses again elsewhere, so every field is
//! serialisable and every path is text in the snapshot OS's own spelling
//! (see [`super::spath`]): a Windows snapshot is diagnosed on a Linux host.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::spath;
use crate::names::{self, FileKind};
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
    /// `LD_LIBRARY_PATH` entries in order (Linux).
    pub ld_library_path: Vec<String>,
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
    /// Every cuDNN file found, with what it says about itself.
    pub files: Vec<CudnnFile>,
    /// `nvcc` on `PATH`, when present.
    pub nvcc: Option<Nvcc>,
    /// The NVIDIA driver, from `nvidia-smi`, when present.
    pub driver: Option<DriverInfo>,
    /// Installed Python frameworks and cuDNN wheels.
    pub frameworks: Vec<Framework>,
    /// The release pinned for the working folder, if any.
    pub pin: Option<PinInfo>,
    /// What cudnnm deployed into toolkits, and what is there now.
    pub deployments: Vec<DeploymentState>,
    /// cudnnm store folders that should hold a release but whose
    /// `receipt.toml` is missing or unreadable.
    pub store_damaged: Vec<DamagedRelease>,
    /// cudnnm store releases whose files no longer match their receipt
    /// (size, link target, presence): edited through a link deployment.
    pub store_changed: Vec<ChangedRelease>,
    /// Problems met while gathering (unreadable folders, tools that failed).
    pub notes: Vec<String>,
    /// Time spent per gathering phase, in milliseconds.
    pub timings_ms: Vec<(String, u64)>,
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

/// A toolkit's folder layout.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ToolkitLayout {
    /// `bin`, `include`, `lib\x64`.
    Windows,
    /// `include`, `lib64` (or `targets/<arch>/{include,lib}`).
    #[default]
    Linux,
}

/// A CUDA toolkit.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct ToolkitInfo {
    /// The toolkit root.
    pub root: String,
    /// Its CUDA version, when readable.
    pub cuda: Option<Version>,
    /// Its layout.
    pub layout: ToolkitLayout,
    /// How it was found (`--cuda-root`, `CUDA_PATH`, `nvcc on PATH`, …).
    pub found_by: String,
    /// Whether this user may change its cuDNN folders, when known.
    pub writable: Option<bool>,
    /// A change another cudnnm home began here and has not finished (its
    /// in-flight marker, [`crate::deploy::inflight`]), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unfinished_change: Option<UnfinishedChange>,
}

/// Another home's unfinished change to a toolkit.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct UnfinishedChange {
    /// The home whose journal holds it (empty when the marker could not be read).
    pub home: String,
    /// Its backup id.
    pub backup: u64,
    /// What had been asked (`use 9.27.0.42_cuda12`).
    pub action: String,
    /// The command that finishes it (run with that home); empty when the
    /// marker belongs to another user and could not be read.
    pub finish: String,
    /// Whether a cudnnm process holds the toolkit's lock now: the change
    /// is running, not interrupted.
    pub running: bool,
}

impl ToolkitInfo {
    /// True when the root is spelled the Windows way (`C:\…`, `\\server\…`),
    /// so paths below it are joined with `\`. The layout does not decide
    /// this: a Windows-layout toolkit examined on Linux has a `/` root.
    pub fn windows_paths(&self) -> bool {
        let b = self.root.as_bytes();
        self.root.contains('\\') || (b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic())
    }

    /// `sub` (`/`-separated) below the root, spelled like the root.
    fn below(&self, sub: &str) -> String {
        spath::join(&self.root, sub, self.windows_paths())
    }

    /// Where cuDNN DLLs go: `bin` (Windows layout only).
    pub fn bin_dir(&self) -> Option<String> {
        (self.layout == ToolkitLayout::Windows).then(|| self.below("bin"))
    }

    /// Where cuDNN headers go.
    pub fn include_dir(&self) -> String {
        self.below("include")
    }

    /// Where cuDNN libraries go: `lib\x64` or `lib64`.
    pub fn lib_dir(&self) -> String {
        match self.layout {
            ToolkitLayout::Windows => self.below("lib/x64"),
            ToolkitLayout::Linux => self.below("lib64"),
        }
    }

    /// The folder the loader must search for this toolkit's cuDNN: `bin` or `lib64`.
    pub fn loader_dir(&self) -> String {
        self.bin_dir().unwrap_or_else(|| self.lib_dir())
    }

    /// True for the Windows layout.
    pub fn is_windows(&self) -> bool {
        self.layout == ToolkitLayout::Windows
    }
}

/// One folder and the names in it that matter.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DirListing {
    /// The folder.
    pub path: String,
    /// File names in it (cuDNN files, runtimes, dependencies), as spelled on disk.
    pub names: Vec<String>,
}

/// Where a cuDNN copy came from.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// Inside a CUDA toolkit.
    Toolkit,
    /// cudnnm's own store.
    CudnnmStore,
    /// A pip wheel (`site-packages/nvidia/cudnn`, `torch/lib`).
    PipWheel,
    /// A conda environment.
    Conda,
    /// A distribution package (`/usr/lib/x86_64-linux-gnu`, `System32`).
    System,
    /// NVIDIA's cuDNN 9 Windows installer (`…\NVIDIA\CUDNN\v9.x`).
    NvidiaInstaller,
    /// Anywhere else: an unpacked archive, a manual copy.
    #[default]
    Other,
}

impl Origin {
    /// How the origin reads in messages.
    pub fn label(self) -> &'static str {
        match self {
            Origin::Toolkit => "CUDA toolkit",
            Origin::CudnnmStore => "cudnnm store",
            Origin::PipWheel => "pip wheel",
            Origin::Conda => "conda package",
            Origin::System => "system package",
            Origin::NvidiaInstaller => "NVIDIA installer",
            Origin::Other => "manual copy",
        }
    }
}

/// One cuDNN file and what it says about itself.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct CudnnFile {
    /// The file.
    pub path: String,
    /// The installation it belongs to: a toolkit root, `site-packages/nvidia/cudnn`,
    /// `/usr`, an archive folder (the parent of its `bin`/`include`/`lib*`).
    pub root: String,
    /// Where it came from.
    pub origin: Origin,
    /// More about the origin: the toolkit, wheel or conda environment.
    pub origin_detail: Option<String>,
    /// The kind of file.
    pub kind: Option<FileKind>,
    /// Size in bytes of what it points to (0 when dangling).
    pub size: u64,
    /// The file its links resolve to, when readable.
    pub real_path: Option<String>,
    /// For a symbolic link: its target as written.
    pub link_target: Option<String>,
    /// A link whose target does not exist.
    pub dangling: bool,
    /// Headers: the version the macros declare.
    pub header_version: Option<Version>,
    /// Libraries: the version `cudnnGetVersion()` returned when loaded.
    pub library_version: Option<Version>,
    /// Libraries: `cudnnGetCudartVersion()`, the CUDA runtime it was built
    /// with (`12090` = 12.9).
    pub cudart_version: Option<u64>,
    /// Libraries: the cuDNN files mapped in the process that loaded it
    /// (its own folder first on the loader path), when known (Linux): the
    /// sub-libraries it really got. Empty when unknown.
    pub loaded_modules: Vec<String>,
    /// Libraries: the cudnnm store release this file is a copy of — inside
    /// the store, or byte for byte the same as one of its files.
    pub store_copy: Option<StoreCopy>,
    /// Libraries: why loading failed, in the loader's words.
    pub load_error: Option<String>,
    /// DLLs: the file version resource.
    pub file_version: Option<Version>,
    /// ELF `DT_SONAME`.
    pub soname: Option<String>,
    /// Libraries it needs (ELF `DT_NEEDED`, PE imports).
    pub needed: Vec<String>,
    /// ELF `DT_RPATH`.
    pub rpath: Vec<String>,
    /// ELF `DT_RUNPATH`.
    pub runpath: Vec<String>,
    /// The machine it is built for (`x86_64`, `aarch64`, `x86`).
    pub machine: Option<String>,
}

/// A store release a file is a copy of.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct StoreCopy {
    /// The release id (`9.12.0.46_cuda12`).
    pub release: String,
    /// Its full version, from the receipt.
    pub version: Version,
    /// The receipt's path of the file (`lib/libcudnn.so.9`).
    pub file: String,
    /// True when the file is inside the store; false for a copy elsewhere
    /// with the same name, size and SHA-256.
    pub inside: bool,
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

/// The NVIDIA driver and GPUs.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct DriverInfo {
    /// The `nvidia-smi` used.
    pub tool: String,
    /// Its output.
    pub output: String,
    /// The driver version (`550.54.14`, `551.61`).
    pub version: Option<Version>,
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
}

/// An installed Python distribution that matters: a framework or a cuDNN wheel.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Framework {
    /// Normalised distribution name: `tensorflow`, `torch`, `nvidia-cudnn-cu12`, …
    pub name: String,
    /// Its version as written (`2.4.1+cu121`).
    pub version: String,
    /// The `site-packages` folder.
    pub location: String,
    /// The exact `nvidia-cudnn-*` version it requires (`Requires-Dist: nvidia-cudnn-cu12==9.1.0.70`).
    pub cudnn_requirement: Option<String>,
}

impl Framework {
    /// The version without a local part (`2.4.1` of `2.4.1+cu121`), if numeric.
    pub fn numeric_version(&self) -> Option<Version> {
        let v = self.version.split(['+', '-']).next()?;
        let parts: Vec<&str> = v.split('.').take(4).collect();
        let nums: Vec<u32> = parts
            .iter()
            .map_while(|p| {
                let d: String = p.chars().take_while(|c| c.is_ascii_digit()).collect();
                d.parse().ok()
            })
            .collect();
        (!nums.is_empty()).then(|| Version::from_parts(&nums))
    }

    /// True for a cuDNN wheel (`nvidia-cudnn-cu12`, `nvidia-cudnn-jit-cu12`).
    pub fn is_cudnn_wheel(&self) -> bool {
        self.name.starts_with("nvidia-cudnn")
    }
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

/// A store folder (`store/cuda-<variant>/<version>`) without a readable receipt.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct DamagedRelease {
    /// The folder.
    pub dir: String,
    /// The release id its folder names (`9.27.0.42_cuda12`), when they parse.
    pub release: Option<String>,
    /// Why the receipt cannot be used, with its causes.
    pub error: String,
}

/// A store release whose files changed since it was imported.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct ChangedRelease {
    /// The release id (`9.27.0.42_cuda12`).
    pub release: String,
    /// The release folder.
    pub dir: String,
    /// Each changed file, relative to the folder, with what changed
    /// (`include/cudnn_version.h: 300 bytes, expected 286`).
    pub files: Vec<String>,
    /// What `cudnnm install … --force` takes to import it again from its
    /// original source (`pip:nvidia-cudnn-jit-cu12==9.27.0.42`, a release
    /// id the catalog downloads, or the archive's file name).
    pub reinstall: String,
    /// True when `reinstall` is only the name of a local archive or folder
    /// (the user must give its path).
    pub reinstall_is_file: bool,
}

/// A deployment and the state of its files now.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct DeploymentState {
    /// The toolkit root.
    pub toolkit: String,
    /// The release id (`8.9.7.29_cuda12`).
    pub release: String,
    /// `symlink`, `hardlink` or `copy`.
    pub mode: String,
    /// The placed files.
    pub files: Vec<PlacedState>,
    /// cuDNN files in the toolkit's cuDNN folders that the deployment did
    /// not place (what `current` and `verify` call extra).
    pub extra: Vec<String>,
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

/// A version and where it was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Known {
    /// The version.
    pub version: Version,
    /// Where it came from: `loaded library`, `file version`, `file name`,
    /// `header`, `file name (major only)`.
    pub source: &'static str,
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

    /// The file record at `path`.
    pub fn file(&self, path: &str) -> Option<&CudnnFile> {
        let w = self.windows();
        self.files.iter().find(|f| spath::same(&f.path, path, w))
    }

    /// The listing of `dir`, when the folder was examined.
    pub fn listing(&self, dir: &str) -> Option<&DirListing> {
        let w = self.windows();
        self.dirs.iter().find(|d| spath::same(&d.path, dir, w))
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
                    && spath::parent(&f.path, w).is_some_and(|p| spath::same(&p, dir, w))
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

    /// The toolkit whose root holds `path`, if any.
    pub fn toolkit_of(&self, path: &str) -> Option<&ToolkitInfo> {
        let w = self.windows();
        self.toolkits
            .iter()
            .filter(|t| spath::is_within(path, &t.root, w))
            .max_by_key(|t| t.root.len())
    }

    /// The cuDNN files of `root` (an installation root).
    pub fn files_in_root<'a>(&'a self, root: &'a str) -> impl Iterator<Item = &'a CudnnFile> + 'a {
        let w = self.windows();
        self.files
            .iter()
            .filter(move |f| spath::same(&f.root, root, w))
    }

    /// Distinct installation roots, in the order first seen.
    pub fn roots(&self) -> Vec<String> {
        let w = self.windows();
        let mut out: Vec<String> = Vec::new();
        for f in &self.files {
            if !out.iter().any(|r| spath::same(r, &f.root, w)) {
                out.push(f.root.clone());
            }
        }
        out
    }

    /// The version a library file says it is, without looking at headers:
    /// the loaded library's answer when it loaded with its own sub-libraries,
    /// then its own evidence ([`Snapshot::own_library_version`]).
    pub fn library_version(&self, f: &CudnnFile) -> Option<Known> {
        let loaded = f
            .library_version
            .as_ref()
            .or(self.resolve(f).library_version.as_ref());
        if let Some(v) = loaded
            && self.foreign_modules(f).is_empty()
        {
            return Some(Known {
                version: v.clone(),
                source: "loaded library",
            });
        }
        self.own_library_version(f)
    }

    /// The version a library file's own evidence gives, never what loading it
    /// answered (cuDNN 9's main library answers with whichever graph library
    /// it found): the DLL file version, the real name (`libcudnn.so.8.9.7`,
    /// following links), the store receipt of the release it is a copy of.
    pub fn own_library_version(&self, f: &CudnnFile) -> Option<Known> {
        self.own_version_depth(f, 0)
    }

    /// The cuDNN files the process that loaded `f` took from another folder
    /// than `f`'s own (its real path's): sub-libraries from another copy.
    pub fn foreign_modules(&self, f: &CudnnFile) -> Vec<String> {
        let w = self.windows();
        let real = self.resolve(f);
        let real_path = real.real_path.as_deref().unwrap_or(&real.path);
        let Some(own) = spath::parent(real_path, w) else {
            return Vec::new();
        };
        let modules = if f.loaded_modules.is_empty() {
            &real.loaded_modules
        } else {
            &f.loaded_modules
        };
        modules
            .iter()
            .filter(|m| spath::parent(m, w).is_some_and(|d| !spath::same(&d, &own, w)))
            .cloned()
            .collect()
    }

    fn own_version_depth(&self, f: &CudnnFile, depth: u32) -> Option<Known> {
        if let Some(v) = &f.file_version {
            return Some(Known {
                version: v.clone(),
                source: "file version",
            });
        }
        let w = self.windows();
        if let Some(v) = names::classify(spath::file_name(&f.path, w)).and_then(|n| n.full_version)
        {
            return Some(Known {
                version: v,
                source: "file name",
            });
        }
        if let Some(c) = &f.store_copy {
            return Some(Known {
                version: c.version.clone(),
                source: "store receipt",
            });
        }
        if depth < 8 {
            let target = f
                .real_path
                .as_deref()
                .filter(|r| !spath::same(r, &f.path, w))
                .map(str::to_owned)
                .or_else(|| {
                    let t = f.link_target.as_deref()?;
                    let dir = spath::parent(&f.path, w)?;
                    Some(if t.starts_with('/') || t.contains(':') {
                        t.to_string()
                    } else {
                        spath::join(&dir, t, w)
                    })
                });
            if let Some(t) = target
                && let Some(tf) = self.file(&t)
            {
                return self.own_version_depth(tf, depth + 1);
            }
        }
        None
    }

    /// The version the headers of `root` declare (`cudnn_version.h` first,
    /// then the `_vM` copy, then `cudnn.h`).
    pub fn header_version(&self, root: &str) -> Option<Known> {
        let w = self.windows();
        let mut best: Option<(u8, Version)> = None;
        for f in self.files_in_root(root) {
            let Some(v) = &f.header_version else { continue };
            let name = spath::file_name(&f.path, w).to_ascii_lowercase();
            let rank = if name == "cudnn_version.h" {
                0
            } else if name.starts_with("cudnn_version") {
                1
            } else {
                2
            };
            if best.as_ref().is_none_or(|(r, _)| rank < *r) {
                best = Some((rank, v.clone()));
            }
        }
        best.map(|(_, version)| Known {
            version,
            source: "header",
        })
    }

    /// The best-known version of a library: [`Snapshot::library_version`],
    /// else its root's header when the majors agree, else the major from the name.
    pub fn version_of(&self, f: &CudnnFile) -> Option<Known> {
        if let Some(k) = self.library_version(f) {
            return Some(k);
        }
        let major =
            names::classify(spath::file_name(&f.path, self.windows())).and_then(|n| n.major);
        if let Some(h) = self.header_version(&f.root)
            && major.is_none_or(|m| m == h.version.major())
        {
            return Some(h);
        }
        major.map(|m| Known {
            version: Version::from_parts(&[m]),
            source: "file name (major only)",
        })
    }
}

/// The installation root of a cuDNN file at `path`: the folder above its
/// `bin`, `include`, `lib`, `lib64`, `lib\x64`, `bin\x64`, `bin\<CUDA>`,
/// `lib/<triplet>`, `include/<triplet>`; else its own folder.
pub fn install_root(path: &str, win: bool) -> String {
    let Some(dir) = spath::parent(path, win) else {
        return path.to_string();
    };
    let name = |p: &str| spath::file_name(p, win).to_ascii_lowercase();
    let is_top = |n: &str| matches!(n, "bin" | "include" | "lib" | "lib64");
    let d = name(&dir);
    if is_top(&d) {
        return spath::parent(&dir, win).unwrap_or(dir);
    }
    // One level more: lib\x64, bin\x64, bin\12.8, lib/x86_64-linux-gnu, include/x86_64-linux-gnu,
    // and the installer's lib\12.8\x64 (two levels).
    if let Some(up) = spath::parent(&dir, win) {
        if is_top(&name(&up)) {
            return spath::parent(&up, win).unwrap_or(up);
        }
        if let Some(up2) = spath::parent(&up, win)
            && name(&up2) == "lib"
        {
            return spath::parent(&up2, win).unwrap_or(up2);
        }
    }
    dir
}

/// A CUDA version from a `cudnnGetCudartVersion()` / `CUDART_VERSION`
/// integer: `12090` → `12.9`, `11020` → `11.2`, `10020` → `10.2`.
pub fn cudart_to_version(n: u64) -> Version {
    Version::from_parts(&[(n / 1000) as u32, ((n % 1000) / 10) as u32])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_roots_for_every_layout() {
        assert_eq!(
            install_root("/usr/local/cuda-12.4/lib64/libcudnn.so.9", false),
            "/usr/local/cuda-12.4"
        );
        assert_eq!(
            install_root(
                "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcudnn.so.9",
                false
            ),
            "/usr/local/cuda-12.4/targets/x86_64-linux"
        );
        assert_eq!(
            install_root("/usr/lib/x86_64-linux-gnu/libcudnn.so.8", false),
            "/usr"
        );
        assert_eq!(
            install_root("/usr/include/x86_64-linux-gnu/cudnn_v8.h", false),
            "/usr"
        );
        assert_eq!(install_root("/usr/include/cudnn.h", false), "/usr");
        assert_eq!(
            install_root(r"C:\CUDA\v11.2\lib\x64\cudnn.lib", true),
            r"C:\CUDA\v11.2"
        );
        assert_eq!(
            install_root(r"C:\NVIDIA\CUDNN\v9.7\bin\12.8\cudnn64_9.dll", true),
            r"C:\NVIDIA\CUDNN\v9.7"
        );
        assert_eq!(
            install_root(r"C:\NVIDIA\CUDNN\v9.7\lib\12.8\x64\cudnn.lib", true),
            r"C:\NVIDIA\CUDNN\v9.7"
        );
        assert_eq!(install_root("/x/cudnn.h", false), "/x");
    }

    #[test]
    fn versions_through_links_and_headers() {
        let mut s = Snapshot {
            os: OsInfo {
                family: "linux".into(),
                ..Default::default()
            },
            ..Default::default()
        };
        s.files.push(CudnnFile {
            path: "/r/lib/libcudnn.so.8".into(),
            root: "/r".into(),
            link_target: Some("libcudnn.so.8.9.7".into()),
            ..Default::default()
        });
        s.files.push(CudnnFile {
            path: "/r/lib/libcudnn.so.8.9.7".into(),
            root: "/r".into(),
            ..Default::default()
        });
        s.files.push(CudnnFile {
            path: "/r/include/cudnn_version.h".into(),
            root: "/r".into(),
            header_version: Some("8.9.2".parse().unwrap()),
            ..Default::default()
        });
        let k = s.library_version(&s.files[0]).unwrap();
        assert_eq!(
            (k.version.to_string().as_str(), k.source),
            ("8.9.7", "file name")
        );
        assert_eq!(s.header_version("/r").unwrap().version.to_string(), "8.9.2");
        assert_eq!(cudart_to_version(12090).to_string(), "12.9");
        assert_eq!(cudart_to_version(10020).to_string(), "10.2");
    }

    #[test]
    fn framework_versions() {
        let f = Framework {
            version: "2.4.1+cu121".into(),
            ..Default::default()
        };
        assert_eq!(f.numeric_version().unwrap().to_string(), "2.4.1");
        let f = Framework {
            version: "2.16.0rc0".into(),
            ..Default::default()
        };
        assert_eq!(f.numeric_version().unwrap().to_string(), "2.16.0");
    }
}

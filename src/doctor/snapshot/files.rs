//! cuDNN file records: one file and what it says about itself, where it
//! came from, and the installation it belongs to.

use serde::{Deserialize, Serialize};

use crate::doctor::spath;
use crate::names::FileKind;
use crate::version::Version;

/// The kind of installation a cuDNN copy belongs to (who put it there).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum InstallKind {
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

impl InstallKind {
    /// How the origin reads in messages.
    pub fn label(self) -> &'static str {
        match self {
            InstallKind::Toolkit => "CUDA toolkit",
            InstallKind::CudnnmStore => "cudnnm store",
            InstallKind::PipWheel => "pip wheel",
            InstallKind::Conda => "conda package",
            InstallKind::System => "system package",
            InstallKind::NvidiaInstaller => "NVIDIA installer",
            InstallKind::Other => "manual copy",
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
    pub origin: InstallKind,
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
    /// Libraries: the release marker compiled into the file
    /// (`cudnn_version_9_12_0_46_…`, cuDNN 9's graph library), when present.
    pub embedded_version: Option<Version>,
    /// Libraries (Linux): the sub-library names the main library asked the
    /// loader for when it was loaded, in order (`libcudnn_graph.so.9.27.0`
    /// first: cuDNN 9's main library asks for its own release's graph
    /// library before `libcudnn_graph.so.9`). Empty when unknown.
    pub asked_for: Vec<String>,
    /// Libraries (ELF): how many of the cuDNN symbols it needs no other
    /// cuDNN library of its folder defines, with up to three of them: the
    /// file belongs to another release than its neighbours. 0 when all
    /// resolve (or unknown).
    pub symbols_missing: usize,
    /// Up to three of those symbols, as the loader would name them.
    pub symbols_missing_examples: Vec<String>,
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
    /// True when opening it for reading was denied to this user (file mode,
    /// owner, ACL, or a folder on the way it may not enter).
    pub unreadable: bool,
    /// The mount point of the `noexec` file system it lives on, if it does:
    /// the loader may not map code from it.
    pub noexec_mount: Option<String>,
}

/// A store release a file is a copy of.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct StoreCopy {
    /// The release id (`9.12.0.46_cuda12`).
    pub release: crate::version::ReleaseId,
    /// Its full version, from the receipt.
    pub version: Version,
    /// The receipt's path of the file (`lib/libcudnn.so.9`).
    pub file: String,
    /// True when the file is inside the store; false for a copy elsewhere
    /// with the same name, size and SHA-256.
    pub inside: bool,
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
}

//! CUDA toolkits (`docs/architecture.md#toolkits`): finding them, reading their CUDA version, and
//! where cuDNN files go inside them. The layout is data chosen by the
//! toolkit's content (and the host as a tie-breaker), so Linux tests exercise
//! Windows toolkits too.
//!
//! Sources of facts (`docs/system.md#toolkit-locations`): Windows toolkits live in
//! `C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\vX.Y` with `bin`,
//! `include`, `lib\x64`, and the installer sets `CUDA_PATH` and
//! `CUDA_PATH_VX_Y`; Linux toolkits live in `/usr/local/cuda-X.Y` (with
//! `/usr/local/cuda` pointing at one of them) and keep their libraries in
//! `lib64 -> targets/<arch>/lib`. The CUDA version is in `version.json`
//! (11.1+), `version.txt` (up to 11.0) or `CUDA_VERSION` in `include/cuda.h`.
//!
//! Here: what a toolkit is and where cuDNN goes in it; `version.rs` reads
//! its CUDA version, `discover.rs` finds toolkits, `select.rs` picks one.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Kind, Result};
use crate::version::Version;

mod discover;
mod select;
#[cfg(test)]
mod tests;
mod version;

pub use discover::{
    DefaultFolders, Named, discover, discover_named, discover_named_with, discover_with,
};
pub use select::{Misnamed, Selector, misnamed, misnamed_phrase, select, select_with};
use version::read_cuda_version_for;
pub use version::{
    header_cudnn_version, parse_cuda_h, parse_nvcc_output, parse_version_json, parse_version_txt,
    read_cuda_version,
};

/// Which folder layout a toolkit uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// `bin`, `include`, `lib\x64` (NVIDIA's Windows installer).
    Windows,
    /// `include`, `lib64` (following `lib64 -> targets/x86_64-linux/lib`).
    Linux,
}

impl Layout {
    /// `windows` or `linux`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Layout::Windows => "windows",
            Layout::Linux => "linux",
        }
    }

    /// Whether a file name counts as a cuDNN file in this layout: it starts
    /// with `cudnn` or `libcudnn` (ASCII case-insensitive in the Windows
    /// layout, whose file systems ignore case) and reads as a cuDNN header or
    /// library ([`crate::names::is_cudnn_file`]) — not a
    /// cudnn-frontend header, a sample or a note that merely shares the prefix.
    pub fn is_cudnn_name(&self, name: &str) -> bool {
        let lower;
        let n = match self {
            Layout::Windows => {
                lower = name.to_ascii_lowercase();
                lower.as_str()
            }
            Layout::Linux => name,
        };
        (n.starts_with("cudnn") || n.starts_with("libcudnn")) && crate::names::is_cudnn_file(name)
    }
}

/// A CUDA toolkit root.
#[derive(Clone, Debug, Serialize)]
pub struct Toolkit {
    /// The toolkit root (`C:\Program Files\NVIDIA GPU Computing
    /// Toolkit\CUDA\v11.2`, `/usr/local/cuda-12.4`).
    pub root: PathBuf,
    /// Its CUDA version (`11.2.152`, `8.0.61`; at least major.minor).
    pub cuda: Version,
    /// Folder layout.
    pub layout: Layout,
    /// How it was found (`--cuda-root`, `CUDA_PATH`, `nvcc on PATH`, `default folder`, …).
    pub found_by: String,
}

impl Toolkit {
    /// Where cuDNN DLLs go (`bin`), Windows layout only.
    pub fn bin_dir(&self) -> Option<PathBuf> {
        match self.layout {
            Layout::Windows => Some(self.root.join("bin")),
            Layout::Linux => None,
        }
    }

    /// Where cuDNN headers go.
    pub fn include_dir(&self) -> PathBuf {
        self.root.join("include")
    }

    /// Where cuDNN libraries go: `lib\x64` (Windows) or `lib64` (Linux).
    pub fn lib_dir(&self) -> PathBuf {
        match self.layout {
            Layout::Windows => self.root.join("lib").join("x64"),
            Layout::Linux => self.root.join("lib64"),
        }
    }

    /// Every folder that holds cuDNN files in this layout: `bin`, `include`,
    /// `lib\x64` (Windows); `include`, `lib64`, and on Linux also the host's
    /// `targets/<arch>/include` and `targets/<arch>/lib` when they are
    /// folders of their own. NVIDIA's toolkit links `lib64` and `include`
    /// to those, but a toolkit whose `lib64` is a real folder (copied,
    /// repackaged) has two library folders, and the loader finds the second
    /// through the `targets/<arch>/lib` line NVIDIA's packages add to
    /// `/etc/ld.so.conf.d`: a stale cuDNN left there is loaded instead of
    /// the deployed one. Cross-compilation targets (`targets/aarch64-linux`
    /// on an x86_64 host) are not the host's, and a `targets/<arch>/lib`
    /// that links out of the root is another package's: both are left alone.
    pub fn cudnn_dirs(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = self.bin_dir().into_iter().collect();
        v.push(self.include_dir());
        v.push(self.lib_dir());
        if self.layout == Layout::Linux
            && let Some(arch) = host_target_dir()
        {
            let target = self.root.join("targets").join(arch);
            let root = std::fs::canonicalize(&self.root).unwrap_or_else(|_| self.root.clone());
            for (sub, main) in [("include", self.include_dir()), ("lib", self.lib_dir())] {
                let dir = target.join(sub);
                // Only a folder of the toolkit's own: a link out of the root
                // (to /usr/lib/x86_64-linux-gnu, say) is another package's,
                // outside the toolkit lock.
                let Ok(real) = std::fs::canonicalize(&dir) else {
                    continue;
                };
                if real.starts_with(&root) && std::fs::canonicalize(&main).ok() != Some(real) {
                    v.push(dir);
                }
            }
        }
        v
    }

    /// The toolkit at `root`, `found_by` naming how it was found. The root is
    /// made absolute and its links resolved (`/usr/local/cuda` →
    /// `/usr/local/cuda-12.4`), so one toolkit has one identity.
    /// `windows_host` breaks the tie when the content does not show the layout.
    ///
    /// # Errors
    /// [`Kind::NotFound`] when `root` is not a folder or holds no CUDA version.
    pub fn at(root: &Path, found_by: &str, windows_host: bool) -> Result<Toolkit> {
        if std::fs::metadata(root).is_ok_and(|m| !m.is_dir()) {
            return Err(Error::new(
                Kind::NotFound,
                format!("'{}' is a file, not a CUDA toolkit folder", root.display()),
            )
            .hint("pass the toolkit root folder (the one holding include/ and lib64/ or lib\\x64\\), e.g. --cuda-root /usr/local/cuda-12.4; `cudnnm toolkits` lists those found"));
        }
        if !root.is_dir() {
            return Err(Error::new(
                Kind::NotFound,
                format!("CUDA toolkit folder '{}' does not exist", root.display()),
            )
            .hint("pass the toolkit root, e.g. --cuda-root /usr/local/cuda-12.4 or --cuda-root \"C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\"; `cudnnm toolkits` lists those found"));
        }
        let root = canonical(root);
        let layout = detect_layout(&root, windows_host);
        let cuda = read_cuda_version_for(&root, layout)?;
        Ok(Toolkit {
            root,
            cuda,
            layout,
            found_by: found_by.to_string(),
        })
    }

    /// `major.minor` of the toolkit's CUDA.
    pub fn cuda_major_minor(&self) -> (u32, u32) {
        (self.cuda.major(), self.cuda.minor())
    }

    /// The toolkit's CUDA as `X.Y`.
    pub fn cuda_short(&self) -> String {
        format!("{}.{}", self.cuda.major(), self.cuda.minor())
    }

    /// The cuDNN version its headers declare (`cudnn_version.h`, else
    /// `cudnn.h`), if it holds cuDNN headers at all. Whoever put them there.
    /// `include` first, then a `targets/<arch>/include` of its own (see
    /// [`Toolkit::cudnn_dirs`]).
    pub fn header_cudnn_version(&self) -> Option<Version> {
        self.cudnn_dirs()
            .iter()
            .filter(|d| d.file_name().is_some_and(|n| n == "include"))
            .find_map(|d| header_cudnn_version(d))
    }
}

/// Resolves links and makes `p` absolute, without Windows' `\\?\` prefix
/// ([`crate::fsops::canonical`]); `p` itself when it cannot be resolved.
fn canonical(p: &Path) -> PathBuf {
    crate::fsops::canonical_or_self(p)
}

/// The host's folder under a Linux toolkit's `targets/` (CUDA installation
/// guide for Linux: `x86_64-linux`, `sbsa-linux` for Arm servers,
/// `ppc64le-linux`); `None` on other architectures.
fn host_target_dir() -> Option<&'static str> {
    match std::env::consts::ARCH {
        "x86_64" => Some("x86_64-linux"),
        "aarch64" => Some("sbsa-linux"),
        "powerpc64" => Some("ppc64le-linux"),
        _ => None,
    }
}

/// Whether the toolkit folder `root` is gone (deleted or moved): nothing
/// is there, or only a link to nothing. An unreadable path is not gone.
pub fn is_gone(root: &Path) -> bool {
    matches!(std::fs::metadata(root), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
}

/// The layout of the toolkit at `root`, by content: `lib/x64`, `bin/nvcc.exe`
/// or `bin/cudart64_*.dll` mean Windows; `lib64` or `targets/` mean Linux;
/// otherwise the host decides (`windows_host`).
pub fn detect_layout(root: &Path, windows_host: bool) -> Layout {
    if root.join("lib").join("x64").is_dir() || root.join("bin").join("nvcc.exe").is_file() {
        return Layout::Windows;
    }
    if let Ok(rd) = std::fs::read_dir(root.join("bin")) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().to_ascii_lowercase();
            if n.starts_with("cudart64_") && n.ends_with(".dll") {
                return Layout::Windows;
            }
        }
    }
    if root.join("lib64").exists() || root.join("targets").is_dir() {
        return Layout::Linux;
    }
    if windows_host {
        Layout::Windows
    } else {
        Layout::Linux
    }
}

/// True for the names of files cuDNN puts into a toolkit (see [`Layout::is_cudnn_name`]).
pub fn is_cudnn_file_name(name: &OsStr, layout: Layout) -> bool {
    name.to_str().is_some_and(|n| layout.is_cudnn_name(n))
}

//! One installed release: its folder and receipt, the error that says it
//! is damaged, and a store folder whose receipt cannot be read.

use std::path::{Path, PathBuf};

use super::receipt::{self, receipt_error};
use super::{RECEIPT_FILE, Receipt};
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::version::{CudaVariant, Flavour, Platform, ReleaseId, Version};

/// One installed release: its folder and receipt.
#[derive(Clone, Debug)]
pub struct Release {
    /// The release folder `store/cuda-<variant>/<version>`.
    pub dir: PathBuf,
    /// Its receipt.
    pub receipt: Receipt,
}

impl Release {
    /// The full version.
    pub fn version(&self) -> &Version {
        &self.receipt.version
    }

    /// The CUDA variant.
    pub fn cuda(&self) -> &CudaVariant {
        &self.receipt.cuda
    }

    /// The platform.
    pub fn platform(&self) -> Platform {
        self.receipt.platform
    }

    /// The release, `8.9.7.29_cuda12` (`9.27.0.42_cuda12+jit`): as the store keys it.
    pub fn release_id(&self) -> ReleaseId {
        self.receipt.release_id()
    }

    /// Which build its files are ([`Receipt::build_flavour`]).
    pub fn flavour(&self) -> Flavour {
        self.receipt.build_flavour()
    }

    /// The id as the user reads it: [`Release::id`], which says `+jit` for
    /// a JIT build, and ` (JIT build)` after the id of one an older cudnnm
    /// put in the full build's folder (its id stays the plain one).
    pub fn label(&self) -> String {
        let id = self.release_id();
        if id.flavour != self.flavour() {
            format!("{id} ({} build)", self.flavour().as_str().to_uppercase())
        } else {
            id.to_string()
        }
    }

    /// The canonical id as text, `8.9.7.29_cuda12`, for messages and commands.
    pub fn id(&self) -> String {
        self.receipt.id()
    }

    /// `bin/`: DLLs (Windows releases).
    pub fn bin_dir(&self) -> PathBuf {
        self.dir.join("bin")
    }

    /// `include/`: headers.
    pub fn include_dir(&self) -> PathBuf {
        self.dir.join("include")
    }

    /// `lib/`: shared and static libraries, import libraries.
    pub fn lib_dir(&self) -> PathBuf {
        self.dir.join("lib")
    }

    /// The folder the loader must search: `bin` on Windows, `lib` elsewhere.
    pub fn loader_dir(&self) -> PathBuf {
        if self.platform().is_windows() {
            self.bin_dir()
        } else {
            self.lib_dir()
        }
    }

    /// The refusal for a damaged store file `path` of this release (`why`:
    /// `is missing`, `was changed …`), with the command that imports it
    /// again from the source its receipt names — never another package of
    /// the same release id — and `verify` for the rest.
    pub fn damaged(&self, path: &Path, why: &str) -> Error {
        let (arg, is_file) = self.receipt.source.reinstall_arg(&self.id());
        let cmd = crate::command::CommandLine::install_from(&arg, is_file)
            .force()
            .for_host(crate::platform::HOST_WINDOWS);
        let how = if is_file {
            format!("reinstall it from the file it came from ({arg}): `{cmd}`")
        } else {
            format!("reinstall it: `{cmd}`")
        };
        Error::new(
            Kind::Integrity,
            format!(
                "cuDNN {} in the store is damaged: '{}' {why}",
                self.id(),
                path.display()
            ),
        )
        .hint(format!(
            "{how} (`cudnnm verify` lists every changed file, and for a deployed release the commands that switch its toolkits away first); nothing was changed"
        ))
    }
}

/// Loads the release in `dir`, `None` when it has no receipt.
pub(super) fn load_dir(dir: &Path) -> Result<Option<Release>> {
    let receipt = fsops::load_toml(&dir.join(RECEIPT_FILE), receipt_error)?;
    Ok(receipt.map(|receipt| Release {
        dir: dir.to_path_buf(),
        receipt,
    }))
}

/// A store folder that should hold a release but has no readable receipt.
#[derive(Clone, Debug)]
pub struct BrokenRelease {
    /// The folder.
    pub dir: PathBuf,
    /// Why its receipt cannot be used.
    pub error: Error,
}

impl BrokenRelease {
    /// The release its folder's name gives (`cuda-12/9.12.0.46` →
    /// `9.12.0.46_cuda12`).
    pub fn release_id(&self) -> Option<ReleaseId> {
        receipt::id_of_dir(&self.dir)
    }
}

/// The store folder and release of a path inside a cudnnm store release
/// (`…/store/cuda-12/9.27.0.42/lib/libcudnn.so.9` → (`…/store`,
/// 9.27.0.42_cuda12)), read from the text by the store's layout (any
/// home's store, `/` or `\` separators, so a Windows path reads the same on
/// Linux); `None` elsewhere.
pub fn release_in_store_path(path: &str) -> Option<(String, crate::version::ReleaseId)> {
    let parts: Vec<&str> = path.split(['/', '\\']).collect();
    parts.windows(3).enumerate().find_map(|(i, w)| {
        let cuda = w[1].strip_prefix("cuda-")?.parse().ok()?;
        let (version, flavour) = ReleaseId::parse_dir_name(w[2])?;
        (w[0] == "store").then(|| {
            let sep = if path.contains('/') { "/" } else { "\\" };
            (
                parts[..=i].join(sep),
                ReleaseId::new(version, cuda).with_flavour(flavour),
            )
        })
    })
}

/// Refusal to put the `wanted` build where `there`, the other build of the
/// same release, is (an older cudnnm put JIT builds in the full build's folder).
pub fn other_build_there(there: &Release, wanted: Flavour) -> Error {
    let cmd =
        crate::command::CommandLine::uninstall(there.id()).for_host(crate::platform::HOST_WINDOWS);
    Error::new(
        Kind::Conflict,
        format!(
            "'{}' holds the {} build of cuDNN {} for CUDA {}; the {} build cannot go there",
            there.dir.display(),
            there.flavour(),
            there.version(),
            there.cuda(),
            wanted
        ),
    )
    .hint(format!(
        "an older cudnnm stored the JIT build in the full build's folder; uninstall it first (`{cmd}`), then install again"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_inside_a_store_release_names_it() {
        let r = |p: &str| release_in_store_path(p).map(|(s, id)| (s, id.to_string()));
        assert_eq!(
            r("/home/u/.local/share/cudnnm/store/cuda-12/9.12.0.46/lib/libcudnn.so.9"),
            Some((
                "/home/u/.local/share/cudnnm/store".into(),
                "9.12.0.46_cuda12".into()
            ))
        );
        assert_eq!(
            r(r"C:\ProgramData\cudnnm\store\cuda-11.2\8.1.0.77\bin\cudnn64_8.dll"),
            Some((
                r"C:\ProgramData\cudnnm\store".into(),
                "8.1.0.77_cuda11.2".into()
            ))
        );
        assert_eq!(
            r("/h/store/cuda-13/9.27.0.42+jit/lib/libcudnn.so.9"),
            Some(("/h/store".into(), "9.27.0.42_cuda13+jit".into()))
        );
        assert_eq!(r("/usr/local/cuda-12.4/lib64/libcudnn.so.9"), None);
        assert_eq!(r("/srv/store/cuda-12/notaversion/x"), None);
    }
}

//! The store (`docs/architecture.md#home-layout`): unpacked releases in a normalized layout,
//! `store/cuda-<variant>/<version>/{bin,include,lib}` plus `receipt.toml`
//! (`<version>+jit` for the JIT build of a release).
//!
//! A release appears in the store only whole: imports build it in a
//! `store/.partial-*` folder and rename it into place (see [`PartialRelease`]),
//! so a crash leaves at most a partial folder that the next import sweeps.
//!
//! By concern: [`Store`] and where its folders are (here); a release and
//! its folder (`release`); finding installed releases (`lookup`); their
//! bytes against their receipts (`contents`); imports, from the partial
//! folder to the commit, and what an interrupted one left (`import`);
//! removing releases (`remove`); receipts (`receipt`).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::home::Home;
use crate::version::{CudaVariant, ReleaseId, Version};

mod contents;
mod import;
mod lookup;
mod receipt;
mod release;
mod remove;

pub use import::{BUSY_FILE, PartialLeft, PartialRelease, REPLACED_PREFIX};
pub use lookup::newest_first;
pub use receipt::{
    Distribution, FileRecord, Provenance, RECEIPT_FILE, RECEIPT_SCHEMA, Receipt, Source,
    flavour_of_files,
};
pub use release::{BrokenRelease, Release, other_build_there, release_in_store_path};

/// Which store a release was found in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreOrigin {
    /// The user's own store (`$CUDNNM_HOME/store`).
    User,
    /// The system store an administrator filled (`install --system`), read-only to users.
    System,
}

impl std::fmt::Display for StoreOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StoreOrigin::User => "user",
            StoreOrigin::System => "system",
        })
    }
}

/// The store under a home folder, and for a user home the system store
/// after it: reading sees the user's releases first, then the system's (a
/// system release with the id of one of the user's is hidden by it);
/// writing (imports, removal) only ever touches the home's own store.
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
    system: Option<PathBuf>,
    shared: bool,
    /// Test-only: abort right after this step of a replacing [`Store::commit`].
    fault_after_step: Option<u64>,
    /// Test-only: before committing (step 0), create this file and wait
    /// while it exists (at most a minute) or until a signal asks to stop.
    pause_file: Option<PathBuf>,
}

impl Store {
    /// The store of `home` (`$CUDNNM_HOME/store`), reading the system store
    /// too when `home` sees one ([`Home::system_store_dir`]).
    pub fn new(home: &Home) -> Store {
        Store {
            root: home.store_dir(),
            system: home.system_store_dir(),
            shared: home.is_system(),
            fault_after_step: None,
            pause_file: None,
        }
    }

    /// The store folder this store writes.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The system store this store also reads, if any.
    pub fn system_root(&self) -> Option<&Path> {
        self.system.as_deref()
    }

    /// The store folders read, in order, with their origin.
    fn roots(&self) -> Vec<(&Path, StoreOrigin)> {
        let own = if self.shared {
            StoreOrigin::System
        } else {
            StoreOrigin::User
        };
        let mut v = vec![(self.root.as_path(), own)];
        if let Some(s) = &self.system {
            v.push((s.as_path(), StoreOrigin::System));
        }
        v
    }

    /// Which store `release` lives in.
    pub fn origin(&self, release: &Release) -> StoreOrigin {
        match &self.system {
            Some(s) if release.dir.starts_with(s) => StoreOrigin::System,
            _ if self.shared => StoreOrigin::System,
            _ => StoreOrigin::User,
        }
    }

    /// The folder the full build of `version` for `cuda` is written to in
    /// this home's own store (whether or not it exists).
    pub fn release_dir(&self, version: &Version, cuda: &CudaVariant) -> PathBuf {
        self.release_dir_of(&ReleaseId::new(version.clone(), *cuda))
    }

    /// The folder release `id` is written to in this home's own store:
    /// `cuda-<variant>/<version>` (`<version>+jit` for the JIT build).
    pub fn release_dir_of(&self, id: &ReleaseId) -> PathBuf {
        self.root.join(id.cuda.dir_name()).join(id.dir_name())
    }

    /// The folder of release `id`: in the user's store when it is there,
    /// else in the system store when it is there, else where the user's
    /// store would hold it.
    pub fn dir_of(&self, id: &ReleaseId) -> PathBuf {
        let own = self.release_dir_of(id);
        if let Some(s) = &self.system
            && !own.exists()
        {
            let sys = s.join(id.cuda.dir_name()).join(id.dir_name());
            if sys.exists() {
                return sys;
            }
        }
        own
    }
}

/// `1.2 GiB`, `830 KiB`, `12 B`.
pub fn human_size(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Current time as RFC 3339 UTC with seconds (`2026-11-29T21:12:07Z`).
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Kind;
    use crate::version::{Flavour, Platform};

    /// A release folder with a receipt only (files are not read here).
    #[allow(clippy::disallowed_methods)] // a test fixture
    fn fake(
        store: &Store,
        dir: &Path,
        version: &str,
        flavour: Option<Flavour>,
        files: &[&str],
        dist: Option<&str>,
    ) {
        std::fs::create_dir_all(dir).unwrap();
        let receipt = Receipt {
            schema: RECEIPT_SCHEMA,
            version: version.parse().unwrap(),
            cuda: "12".parse().unwrap(),
            platform: Platform::LinuxX86_64,
            flavour,
            header_version: version.parse::<Version>().unwrap().triple(),
            installed_at: "2026-12-03T00:00:00Z".into(),
            source: Source {
                kind: "wheel".parse().unwrap(),
                name: "x.whl".into(),
                sha256: None,
                size: 0,
                from: Provenance::Local,
                dist: dist.map(|n| Distribution {
                    name: n.into(),
                    version: version.into(),
                    tags: vec![],
                }),
            },
            files: files
                .iter()
                .map(|f| FileRecord::link(format!("lib/{f}"), "x"))
                .collect(),
        };
        std::fs::write(dir.join(RECEIPT_FILE), receipt.to_toml()).unwrap();
        let _ = store;
    }

    /// Both builds of one release side by side (`9.27.0.42` and
    /// `9.27.0.42+jit`); a JIT build an older cudnnm put in the plain folder
    /// keeps its id there, is read as JIT, and blocks the full build.
    #[test]
    fn both_flavours_side_by_side_and_an_older_jit_where_it_is() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path().join("home"));
        let store = Store::new(&home);
        let full = ReleaseId::new("9.27.0.42".parse().unwrap(), "12".parse().unwrap());
        let jit = full.clone().with_flavour(Flavour::Jit);
        let libs_full = [
            "libcudnn.so.9",
            "libcudnn_engines_precompiled.so.9",
            "libcudnn_engines_runtime_compiled.so.9",
        ];
        let libs_jit = [
            "libcudnn.so.9",
            "libcudnn_graph.so.9",
            "libcudnn_engines_runtime_compiled.so.9",
        ];
        fake(
            &store,
            &store.release_dir_of(&full),
            "9.27.0.42",
            None,
            &libs_full,
            Some("nvidia-cudnn-cu12"),
        );
        fake(
            &store,
            &store.release_dir_of(&jit),
            "9.27.0.42",
            Some(Flavour::Jit),
            &libs_jit,
            Some("nvidia-cudnn-jit-cu12"),
        );
        assert!(
            store
                .release_dir_of(&jit)
                .ends_with("cuda-12/9.27.0.42+jit")
        );
        let ids: Vec<String> = store.releases().unwrap().iter().map(Release::id).collect();
        assert_eq!(ids, ["9.27.0.42_cuda12", "9.27.0.42_cuda12+jit"]);
        let pick = |s: &str| {
            store
                .newest_matching(&s.parse().unwrap())
                .unwrap()
                .map(|r| r.id())
        };
        assert_eq!(
            pick("9.27").as_deref(),
            Some("9.27.0.42_cuda12"),
            "the full build first"
        );
        assert_eq!(pick("9.27+jit").as_deref(), Some("9.27.0.42_cuda12+jit"));
        assert_eq!(pick("9.27+full").as_deref(), Some("9.27.0.42_cuda12"));
        assert_eq!(store.get_id(&jit).unwrap().unwrap().flavour(), Flavour::Jit);

        // An older cudnnm's JIT build in the plain folder: its id stays the
        // plain one, its build is read from the wheel's metadata (or its files).
        let old = ReleaseId::new("9.12.0.46".parse().unwrap(), "12".parse().unwrap());
        fake(
            &store,
            &store.release_dir_of(&old),
            "9.12.0.46",
            None,
            &libs_jit,
            None,
        );
        let r = store.get_id(&old).unwrap().unwrap();
        assert_eq!(
            (r.id(), r.flavour()),
            ("9.12.0.46_cuda12".to_string(), Flavour::Jit)
        );
        assert_eq!(pick("9.12+jit").as_deref(), Some("9.12.0.46_cuda12"));
        assert_eq!(pick("9.12+full"), None);
        assert_eq!(
            pick("9.12").as_deref(),
            Some("9.12.0.46_cuda12"),
            "a pin written before flavours keeps working"
        );
        let found = store
            .get_build(&old.version, &old.cuda, Flavour::Jit)
            .unwrap()
            .unwrap();
        assert_eq!(found.dir, store.release_dir_of(&old));
        assert!(
            store
                .get_build(&old.version, &old.cuda, Flavour::Full)
                .unwrap()
                .is_none(),
            "the folder holds the other build"
        );
        let e = other_build_there(&r, Flavour::Full);
        assert_eq!(e.kind(), Kind::Conflict);
        assert!(
            e.hint_text()
                .unwrap()
                .contains("cudnnm uninstall 9.12.0.46_cuda12"),
            "{e:?}"
        );
    }

    fn source(kind: &str, name: &str, url: Option<&str>) -> Source {
        Source {
            kind: kind.parse().unwrap(),
            name: name.into(),
            sha256: None,
            size: 0,
            from: match url {
                None => Provenance::Local,
                Some(u) => {
                    toml::from_str::<Source>(&format!(
                        "kind = \"folder\"\nname = \"x\"\nurl = \"{u}\""
                    ))
                    .unwrap()
                    .from
                }
            },
            dist: None,
        }
    }

    #[test]
    fn reinstall_from_the_receipts_own_source() {
        let id = "9.27.0.42_cuda12";
        let jit = source(
            "wheel",
            "nvidia_cudnn_jit_cu12-9.27.0.42-py3-none-manylinux2014_x86_64.whl",
            None,
        );
        assert_eq!(
            jit.reinstall_arg(id),
            ("pip:nvidia-cudnn-jit-cu12==9.27.0.42".to_string(), false)
        );
        let pip = source(
            "wheel",
            "x.whl",
            Some("pip:nvidia-cudnn-jit-cu12==9.27.0.42"),
        );
        assert_eq!(
            pip.reinstall_arg(id).0,
            "pip:nvidia-cudnn-jit-cu12==9.27.0.42"
        );
        let dl = source(
            "redist",
            "cudnn-linux-x86_64-9.27.0.42_cuda12-archive.tar.xz",
            Some("https://developer.download.nvidia.com/compute/cudnn/x.tar.xz"),
        );
        assert_eq!(dl.reinstall_arg(id), (id.to_string(), false));
        let local = source("redist", "cudnn-9.27-custom.tar.xz", None);
        assert_eq!(
            local.reinstall_arg(id),
            ("cudnn-9.27-custom.tar.xz".to_string(), true)
        );
        // What a lock records: one version, the wheel's own package.
        let v: crate::version::Version = "9.27.0.42".parse().unwrap();
        assert_eq!(
            jit.exact_pip_requirement(&v)
                .map(|r| r.to_string())
                .as_deref(),
            Some("nvidia-cudnn-jit-cu12==9.27.0.42")
        );
        assert_eq!(
            pip.exact_pip_requirement(&v)
                .map(|r| r.to_string())
                .as_deref(),
            Some("nvidia-cudnn-jit-cu12==9.27.0.42")
        );
        let ranged = source(
            "wheel",
            "nvidia_cudnn_cu12-9.27.0.42-py3-none-manylinux_2_27_x86_64.whl",
            Some("pip:nvidia-cudnn-cu12>=9.27"),
        );
        assert_eq!(
            ranged
                .exact_pip_requirement(&v)
                .map(|r| r.to_string())
                .as_deref(),
            Some("nvidia-cudnn-cu12==9.27.0.42")
        );
        assert_eq!(dl.exact_pip_requirement(&v), None);
        assert_eq!(local.exact_pip_requirement(&v), None);
        // A renamed file gives no requirement, nor one of another version.
        let copy = source(
            "wheel",
            "Copy of nvidia_cudnn_jit_cu12-9.27.0.42-py3-none-manylinux_2_27_x86_64 (1).whl",
            None,
        );
        assert_eq!(copy.exact_pip_requirement(&v), None);
        assert!(copy.reinstall_arg(id).1);
        let other = source(
            "wheel",
            "nvidia_cudnn_jit_cu12-9.28.0.1-py3-none-manylinux_2_27_x86_64.whl",
            None,
        );
        assert_eq!(other.exact_pip_requirement(&v), None);
        // The wheel's METADATA, recorded at install, decides whatever the name.
        let dist = Source {
            dist: Some(crate::store::Distribution {
                name: "nvidia_cudnn_JIT.cu12".into(),
                version: "9.27.0.42".into(),
                tags: vec![
                    "py3-none-manylinux_2_27_x86_64".into(),
                    "py3-none-manylinux2014_x86_64".into(),
                ],
            }),
            ..copy.clone()
        };
        assert_eq!(
            dist.exact_pip_requirement(&v)
                .map(|r| r.to_string())
                .as_deref(),
            Some("nvidia-cudnn-jit-cu12==9.27.0.42")
        );
        assert_eq!(
            dist.wheel_file_name(&v).as_deref(),
            Some(
                "nvidia_cudnn_jit_cu12-9.27.0.42-py3-none-manylinux_2_27_x86_64.manylinux2014_x86_64.whl"
            )
        );
        assert_eq!(
            dist.reinstall_arg(id),
            ("pip:nvidia-cudnn-jit-cu12==9.27.0.42".to_string(), false)
        );
        assert_eq!(copy.wheel_file_name(&v), None);
    }
}

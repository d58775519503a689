//! The one kind of PyPI requirement cudnnm hands to pip or records in a
//! lock: exactly `NAME==VERSION`, NAME one of NVIDIA's cuDNN packages. A
//! requirement is otherwise a door to running code (a path or a direct
//! reference `@` makes pip build a source package, which runs its
//! `setup.py`), so nothing else is ever accepted: no extras,
//! markers, options, other packages, other operators.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{CudaVariant, Flavour, ReleaseId, Version, python_name};
use crate::error::{Error, Kind, Result};

/// NVIDIA's cuDNN packages on PyPI (<https://pypi.org/project/nvidia-cudnn-cu12/>,
/// `-cu11`, `-cu13`, and the JIT-only builds
/// <https://pypi.org/project/nvidia-cudnn-jit-cu12/>, `-jit-cu13`). The name
/// ends in the CUDA major the wheels are built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CudnnPackage {
    /// `nvidia-cudnn-cu11`.
    Cu11,
    /// `nvidia-cudnn-cu12`.
    Cu12,
    /// `nvidia-cudnn-cu13`.
    Cu13,
    /// `nvidia-cudnn-jit-cu12`: the JIT-only build (no precompiled engines).
    JitCu12,
    /// `nvidia-cudnn-jit-cu13`.
    JitCu13,
}

impl CudnnPackage {
    /// Every package, in the order their names sort.
    pub const ALL: [CudnnPackage; 5] = [
        CudnnPackage::Cu11,
        CudnnPackage::Cu12,
        CudnnPackage::Cu13,
        CudnnPackage::JitCu12,
        CudnnPackage::JitCu13,
    ];

    /// The name as PyPI normalises it (`nvidia-cudnn-jit-cu12`).
    pub fn as_str(self) -> &'static str {
        match self {
            CudnnPackage::Cu11 => "nvidia-cudnn-cu11",
            CudnnPackage::Cu12 => "nvidia-cudnn-cu12",
            CudnnPackage::Cu13 => "nvidia-cudnn-cu13",
            CudnnPackage::JitCu12 => "nvidia-cudnn-jit-cu12",
            CudnnPackage::JitCu13 => "nvidia-cudnn-jit-cu13",
        }
    }

    /// The build its wheels carry: the `-jit-` packages the JIT build.
    pub fn flavour(self) -> Flavour {
        match self {
            CudnnPackage::JitCu12 | CudnnPackage::JitCu13 => Flavour::Jit,
            CudnnPackage::Cu11 | CudnnPackage::Cu12 | CudnnPackage::Cu13 => Flavour::Full,
        }
    }

    /// The CUDA variant its wheels are built for (the major in its name).
    pub fn cuda(self) -> CudaVariant {
        let major = match self {
            CudnnPackage::Cu11 => 11,
            CudnnPackage::Cu12 | CudnnPackage::JitCu12 => 12,
            CudnnPackage::Cu13 | CudnnPackage::JitCu13 => 13,
        };
        CudaVariant::new(major, None)
    }

    /// The package a project name names, however it is spelled
    /// (`Nvidia_CUDNN.cu12`; PEP 503 via [`python_name`]); `None` for any
    /// other project.
    pub fn from_name(name: &str) -> Option<CudnnPackage> {
        let n = python_name(name, '-');
        CudnnPackage::ALL.into_iter().find(|p| p.as_str() == n)
    }
}

impl fmt::Display for CudnnPackage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `NAME==VERSION` for one of NVIDIA's cuDNN packages
/// (`nvidia-cudnn-cu12==9.10.2.21`): what `install pip:REQ` accepts, what a
/// lock's `pip` entry holds, and the only requirement handed to pip. The
/// name is kept normalised; the version is a cuDNN [`Version`] (one to four
/// numbers), so it names exactly one release.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PipRequirement {
    package: CudnnPackage,
    version: Version,
}

impl PipRequirement {
    /// The requirement for `version` of `package`.
    pub fn new(package: CudnnPackage, version: Version) -> PipRequirement {
        PipRequirement { package, version }
    }

    /// The package.
    pub fn package(&self) -> CudnnPackage {
        self.package
    }

    /// The exact version.
    pub fn version(&self) -> &Version {
        &self.version
    }

    /// The release it names: its version for its package's CUDA, of its
    /// package's build (`nvidia-cudnn-jit-cu12==9.27.0.42` is
    /// `9.27.0.42_cuda12+jit`).
    pub fn release(&self) -> ReleaseId {
        ReleaseId::new(self.version.clone(), self.package.cuda())
            .with_flavour(self.package.flavour())
    }
}

impl FromStr for PipRequirement {
    type Err = Error;

    /// Reads `NAME==VERSION` (white space around either part allowed, the
    /// name spelled any way PEP 503 folds together).
    ///
    /// # Errors
    /// [`Kind::Usage`] for anything else, naming what is accepted.
    fn from_str(s: &str) -> Result<Self> {
        let bad = |why: &str| {
            Error::new(
                Kind::Usage,
                format!("'{s}' is not a cuDNN wheel requirement: {why}"),
            )
            .hint(format!(
                "give NAME==VERSION with NAME one of {}, e.g. nvidia-cudnn-cu12==9.10.2.21 (no paths, URLs, extras, markers or options)",
                CudnnPackage::ALL.map(CudnnPackage::as_str).join(", ")
            ))
        };
        let (name, version) = s
            .split_once("==")
            .ok_or_else(|| bad("it does not pin one version with =="))?;
        let name = name.trim();
        let fine = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        let package = fine
            .then(|| CudnnPackage::from_name(name))
            .flatten()
            .ok_or_else(|| bad("it does not name one of NVIDIA's cuDNN packages"))?;
        let version = version
            .trim()
            .parse::<Version>()
            .map_err(|_| bad("the part after == is not a cuDNN version such as 9.10.2.21"))?;
        Ok(PipRequirement { package, version })
    }
}

impl fmt::Display for PipRequirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}=={}", self.package, self.version)
    }
}

serde_as_text!(PipRequirement);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_requirements_of_cudnn_packages_are_read() {
        let r: PipRequirement = "nvidia-cudnn-cu12==9.10.2.21".parse().unwrap();
        assert_eq!(r.package(), CudnnPackage::Cu12);
        assert_eq!(r.to_string(), "nvidia-cudnn-cu12==9.10.2.21");
        assert_eq!(r.release().to_string(), "9.10.2.21_cuda12");
        let r: PipRequirement = " Nvidia_CUDNN.jit-cu13 == 9.27.0.42 ".parse().unwrap();
        assert_eq!(r.to_string(), "nvidia-cudnn-jit-cu13==9.27.0.42");
        // The JIT package's release is the JIT build (issue 26's flavours).
        assert_eq!(r.release().to_string(), "9.27.0.42_cuda13+jit");
        let r: PipRequirement = "nvidia-cudnn-cu11==8.6.0.163".parse().unwrap();
        assert_eq!(r.release().to_string(), "8.6.0.163_cuda11");
        for p in CudnnPackage::ALL {
            assert_eq!(CudnnPackage::from_name(p.as_str()), Some(p));
        }
    }

    /// Everything pip would build, fetch from elsewhere, or install besides
    /// a cuDNN wheel (among them the requirements of four hostile locks).
    #[test]
    fn anything_else_is_refused() {
        for s in [
            "./evilpkg",
            "evilpkg/",
            "evil @ file:///tmp/evil-1.0.tar.gz",
            "evil @ http://127.0.0.1/evil-1.0.tar.gz",
            "nvidia-cudnn-cu12 @ https://example.test/x.whl",
            "nvidia-cudnn-cu12",
            "nvidia-cudnn-cu12>=9",
            "nvidia-cudnn-cu12===9.1.0.70",
            "nvidia-cudnn-cu12~=9.1",
            "nvidia-cudnn-cu12[extra]==9.1.0.70",
            "nvidia-cudnn-cu12==9.1.0.70; python_version>'3'",
            "nvidia-cudnn-cu12==9.1.0.70 --index-url http://evil",
            "nvidia-cudnn-cu12==9.*",
            "nvidia-cudnn-cu12==0.0.1.dev5",
            "-r requirements.txt",
            "--no-binary=:all:",
            "numpy==2.0.0",
            "nvidia-cudnn-cu10==8.0.0",
            "nvidia-cudnn==9.1.0.70",
            "",
        ] {
            let e = s.parse::<PipRequirement>().unwrap_err();
            assert_eq!(e.kind(), Kind::Usage, "{s}");
            assert!(
                e.hint_text().unwrap().contains("nvidia-cudnn-jit-cu13"),
                "{s}"
            );
        }
    }

    #[test]
    fn it_is_text_in_records() {
        let r: PipRequirement = "nvidia-cudnn-cu12==9.1.0.70".parse().unwrap();
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(json, "\"nvidia-cudnn-cu12==9.1.0.70\"");
        assert_eq!(serde_json::from_str::<PipRequirement>(&json).unwrap(), r);
        assert!(serde_json::from_str::<PipRequirement>("\"./evil\"").is_err());
    }
}

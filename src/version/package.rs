//! The two builds NVIDIA publishes of one cuDNN release ([`Flavour`]) and
//! the PyPI packages that carry them ([`Package`]).
//!
//! From 9.10 NVIDIA ships, beside the full build, a "JIT" build of each
//! release: `nvidia-cudnn-jit-cu12` / `-cu13` on PyPI and the `cudnn_jit`
//! component of `redistrib_*.json`. It holds only `libcudnn`,
//! `libcudnn_graph` and `libcudnn_engines_runtime_compiled` (read from the
//! real `nvidia_cudnn_jit_cu12-9.27.0.42` wheel), so the same version is two
//! different sets of bytes (docs/releases.md#flavours).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{CudaVariant, python_name};
use crate::error::{Error, Kind, Result};

/// Which build of a release: NVIDIA's full library, or the JIT-only one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Flavour {
    /// Every engine, precompiled kernels included (`nvidia-cudnn-cu12`,
    /// `cudnn-linux-x86_64-…-archive`).
    #[default]
    Full,
    /// Runtime-compiled engines only (`nvidia-cudnn-jit-cu12`,
    /// `cudnn_jit-linux-x86_64-…-archive`).
    Jit,
}

impl Flavour {
    /// `full` or `jit`, as records and `--json` write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Flavour::Full => "full",
            Flavour::Jit => "jit",
        }
    }

    /// What a release id, a store folder and a spec append for it: nothing
    /// for the full build (so every id written before flavours existed
    /// still names it), `+jit` for the JIT build.
    pub fn suffix(self) -> &'static str {
        match self {
            Flavour::Full => "",
            Flavour::Jit => "+jit",
        }
    }

    /// True for [`Flavour::Full`] (serde's `skip_serializing_if`).
    pub fn is_full(&self) -> bool {
        *self == Flavour::Full
    }

    /// Splits a trailing `+jit` / `+full` (any case) off `text`: the rest
    /// and the flavour it names, `None` without one.
    pub fn split_suffix(text: &str) -> (&str, Option<Flavour>) {
        let t = text.trim_end();
        for f in [Flavour::Jit, Flavour::Full] {
            let s = f.as_str();
            let Some(i) = t.len().checked_sub(s.len() + 1).filter(|i| *i > 0) else {
                continue;
            };
            // `get` is `None` inside a multi-byte character: no suffix there.
            if let (Some(head), Some(tail)) = (t.get(..i), t.get(i..))
                && tail.starts_with('+')
                && tail[1..].eq_ignore_ascii_case(s)
            {
                return (head.trim_end(), Some(f));
            }
        }
        (text, None)
    }
}

impl fmt::Display for Flavour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Flavour {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "full" => Ok(Flavour::Full),
            "jit" => Ok(Flavour::Jit),
            _ => Err(
                Error::new(Kind::Usage, format!("'{s}' is not a cuDNN flavour"))
                    .hint("write full or jit"),
            ),
        }
    }
}

super::serde_as_text!(Flavour);

/// One of NVIDIA's cuDNN packages on PyPI: `nvidia-cudnn-cu11`, `-cu12`,
/// `-cu13`, `nvidia-cudnn-jit-cu12`, `-jit-cu13` (and any later `-cuNN`):
/// the flavour and the CUDA major are the name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Package {
    /// The build the package carries.
    pub flavour: Flavour,
    /// The CUDA major it is built for (`12`).
    pub cuda: u32,
}

impl Package {
    /// The packages PyPI publishes today (checked 2026-12 with the index's
    /// JSON API: `https://pypi.org/simple/nvidia-cudnn-cu13/`), in the
    /// order the catalog lists them.
    pub const PUBLISHED: [Package; 5] = [
        Package::new(Flavour::Full, 11),
        Package::new(Flavour::Full, 12),
        Package::new(Flavour::Full, 13),
        Package::new(Flavour::Jit, 12),
        Package::new(Flavour::Jit, 13),
    ];

    /// The package of `flavour` for CUDA `cuda`.
    pub const fn new(flavour: Flavour, cuda: u32) -> Package {
        Package { flavour, cuda }
    }

    /// The name as PyPI normalizes it (PEP 503): `nvidia-cudnn-jit-cu12`.
    pub fn name(&self) -> String {
        match self.flavour {
            Flavour::Full => format!("nvidia-cudnn-cu{}", self.cuda),
            Flavour::Jit => format!("nvidia-cudnn-jit-cu{}", self.cuda),
        }
    }

    /// The CUDA variant its builds are for (`12`: every 12.x toolkit).
    pub fn cuda_variant(&self) -> CudaVariant {
        CudaVariant::new(self.cuda, None)
    }
}

impl fmt::Display for Package {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for Package {
    type Err = Error;

    /// Reads any spelling PyPI takes for the same project
    /// (`nvidia_cudnn_cu12`, `NVIDIA-CUDNN-JIT-CU13`).
    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            Error::new(
                Kind::Usage,
                format!("'{s}' is not one of NVIDIA's cuDNN packages"),
            )
            .hint("NVIDIA's cuDNN packages are nvidia-cudnn-cu11, nvidia-cudnn-cu12, nvidia-cudnn-cu13, nvidia-cudnn-jit-cu12 and nvidia-cudnn-jit-cu13")
        };
        let name = python_name(s, '-');
        let rest = name.strip_prefix("nvidia-cudnn-").ok_or_else(bad)?;
        let (flavour, cu) = match rest.strip_prefix("jit-") {
            Some(r) => (Flavour::Jit, r),
            None => (Flavour::Full, rest),
        };
        let digits = cu.strip_prefix("cu").ok_or_else(bad)?;
        if digits.is_empty() || digits.len() > 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let cuda: u32 = digits.parse().map_err(|_| bad())?;
        if cuda < 11 {
            return Err(bad());
        }
        Ok(Package { flavour, cuda })
    }
}

super::serde_as_text!(Package);

/// The cuDNN release a package version carries (PEP 440, as PyPI
/// normalizes it in file names and `METADATA`): a final release
/// (`9.28.1.4`) or a post-release of one (`9.0.0.312.post1`, the
/// aarch64-only rebuilds) gives that version; a pre-release, development
/// or placeholder version (`0.0.0a0`, `9.26.0.33.dev63203437`) gives `None`:
/// not a cuDNN release, as pip does not install one unless asked.
pub fn release_of(version: &str) -> Option<super::Version> {
    let release = match version.split_once(".post") {
        Some((r, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => r,
        Some(_) => return None,
        None => version,
    };
    if !release.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    release
        .parse::<super::Version>()
        .ok()
        .filter(|v| v.parts().len() >= 3 && v.major() >= 5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names_read_back_and_say_their_flavour_and_cuda() {
        for p in Package::PUBLISHED {
            assert_eq!(p.name().parse::<Package>().unwrap(), p);
        }
        let p: Package = "Nvidia_CUDNN_jit.cu13".parse().unwrap();
        assert_eq!((p.flavour, p.cuda), (Flavour::Jit, 13));
        assert_eq!(p.cuda_variant().to_string(), "13");
        for bad in [
            "nvidia-cudnn",
            "nvidia-cudnn-cu",
            "nvidia-cudnn-cu1x",
            "nvidia-cudnn-cu10",
            "nvidia-cudnn-frontend",
            "nvidia-cublas-cu12",
            "torch",
        ] {
            assert!(bad.parse::<Package>().is_err(), "{bad}");
        }
    }

    #[test]
    fn flavour_suffixes() {
        assert_eq!(
            Flavour::split_suffix("9.27+jit"),
            ("9.27", Some(Flavour::Jit))
        );
        assert_eq!(
            Flavour::split_suffix("latest_cuda13+JIT"),
            ("latest_cuda13", Some(Flavour::Jit))
        );
        assert_eq!(
            Flavour::split_suffix("9.27.0.42+full"),
            ("9.27.0.42", Some(Flavour::Full))
        );
        assert_eq!(Flavour::split_suffix("9.27"), ("9.27", None));
        assert_eq!(Flavour::split_suffix("+jit"), ("+jit", None));
        assert_eq!(
            Flavour::split_suffix("\u{feff}9.12"),
            ("\u{feff}9.12", None)
        );
        assert_eq!(
            Flavour::split_suffix("9.1\u{e9}jit"),
            ("9.1\u{e9}jit", None)
        );
        assert_eq!(Flavour::Jit.suffix(), "+jit");
        assert_eq!(Flavour::Full.suffix(), "");
    }
}

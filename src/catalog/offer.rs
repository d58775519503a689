//! What the catalog can install on a platform, so that a suggested
//! `cudnnm install` (in `doctor` findings and `verify` advice) names only a
//! release that exists.

use crate::command::CommandLine;
use crate::version::{self, CudaVariant, Platform, Spec, Version};

use super::Catalog;

/// A release the catalog can install on a platform: an NVIDIA archive
/// (`cudnnm install 9.12.0.46_cuda12`) or a PyPI wheel
/// (`cudnnm install pip:nvidia-cudnn-cu12==9.12.0.46`).
#[derive(Clone, Debug, PartialEq)]
pub struct Offer {
    /// The release version.
    pub version: Version,
    /// The CUDA it is built for.
    pub cuda: CudaVariant,
    /// The PyPI package, for a wheel; `None` for an NVIDIA archive.
    pub wheel: Option<String>,
}

impl Offer {
    /// The release id, `9.12.0.46_cuda12`.
    pub fn id(&self) -> String {
        version::release_id(&self.version, &self.cuda)
    }

    /// The command that installs it: `cudnnm install ID` for an archive,
    /// `cudnnm install pip:PACKAGE==VERSION` for a wheel.
    pub fn install(&self) -> CommandLine {
        CommandLine::install(match &self.wheel {
            None => self.id(),
            Some(pkg) => format!("pip:{pkg}=={}", self.version),
        })
    }
}

/// The releases `catalog` can install on `platform`: its archives for that
/// platform and, where NVIDIA publishes cuDNN wheels (Linux x86_64 and Arm
/// servers, Windows x86_64), the PyPI versions.
pub fn offers_for(catalog: &Catalog, platform: Option<Platform>) -> Vec<Offer> {
    let mut offers: Vec<Offer> = catalog
        .archives()
        .iter()
        .filter(|a| Some(a.platform) == platform)
        .map(|a| Offer {
            version: a.version.clone(),
            cuda: a.cuda,
            wheel: None,
        })
        .collect();
    if matches!(
        platform,
        Some(Platform::LinuxX86_64 | Platform::LinuxSbsa | Platform::WindowsX86_64)
    ) {
        for w in catalog.wheels() {
            for v in &w.versions {
                offers.push(Offer {
                    version: v.clone(),
                    cuda: w.cuda,
                    wheel: Some(w.package.clone()),
                });
            }
        }
    }
    offers
}

/// The newest of `offers` that matches `spec` (a version or prefix, with
/// or without a CUDA variant) and, when `toolkit` is given, fits a toolkit
/// of that CUDA version; an NVIDIA archive before a wheel of the same
/// release. `None` when there is none: then say what to look for rather
/// than print a command that fails.
pub fn best_offer<'a>(
    offers: &'a [Offer],
    spec: &Spec,
    toolkit: Option<&Version>,
) -> Option<&'a Offer> {
    offers
        .iter()
        .filter(|o| spec.matches(&o.version, &o.cuda))
        .filter(|o| toolkit.is_none_or(|t| o.cuda.fits(t.major(), t.minor())))
        .max_by(|a, b| {
            a.version
                .cmp(&b.version)
                .then(a.cuda.cmp(&b.cuda))
                .then(b.wheel.is_some().cmp(&a.wheel.is_some()))
        })
}

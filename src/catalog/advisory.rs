//! Known-bad cuDNN releases: those that break programs built against
//! others (`advisories.toml`, embedded, each row citing its public source),
//! and those the package index withdrew — read from the catalog, which
//! knows every yanked wheel from PyPI's own answer ([`with_yanks`]), so a
//! yank is written down in one place only. `--for` never chooses a release
//! an advisory covers; `install`, `use` and `doctor` warn when one is in use.

use serde::{Deserialize, Serialize};

use crate::catalog::Catalog;
use crate::version::{CudaVariant, ReleaseId, Version};

/// `advisories.toml` as embedded at build time.
pub const EMBEDDED_ADVISORIES: &str = include_str!("../../advisories.toml");

/// What is wrong with the releases an advisory covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AdvisoryKind {
    /// Do not use: programs fail or compute wrong results with it.
    Broken,
    /// Withdrawn from the package index (PEP 592).
    Yanked,
}

/// One known-bad release range.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Advisory {
    /// Stable name (`cudnn-9.10.0-abi`).
    pub id: String,
    /// First and last release covered (see [`Advisory::covers`] for how bounds compare).
    pub cudnn: [Version; 2],
    /// Only the wheels of these PyPI packages; empty: every build.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<String>,
    /// Applies only beside a cuBLAS of at least this version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cublas: Option<Version>,
    /// Broken or yanked.
    pub kind: AdvisoryKind,
    /// What goes wrong, one sentence.
    pub summary: String,
    /// The public source, an address first.
    pub source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    advisory: Vec<Advisory>,
}

impl Advisory {
    /// Whether it covers release `version` (for any CUDA: cuDNN's faults are
    /// the same in every build) as shipped by `wheel` (a PyPI package) or as
    /// an archive (`None`). A bound of three parts compares major.minor.patch,
    /// one of four the whole version.
    pub fn covers(&self, version: &Version, _cuda: &CudaVariant, wheel: Option<&str>) -> bool {
        if !self.packages.is_empty()
            && !wheel.is_some_and(|w| {
                self.packages.iter().any(|p| {
                    crate::version::python_name(p, '-') == crate::version::python_name(w, '-')
                })
            })
        {
            return false;
        }
        let four = |bound: &Version| bound.parts().len() >= 4;
        let key = |bound: &Version| {
            if four(bound) {
                version.clone()
            } else {
                version.triple()
            }
        };
        let norm = |bound: &Version| {
            if four(bound) {
                bound.clone()
            } else {
                bound.triple()
            }
        };
        let [first, last] = &self.cudnn;
        key(first) >= norm(first) && key(last) <= norm(last)
    }

    /// Whether it applies with `cublas` loaded beside: always without a
    /// cuBLAS condition; with one, only when the cuBLAS is known and at
    /// least the condition's (a condition cudnnm cannot see is left to the
    /// warning of the program that can, as JAX's start-up check is).
    pub fn applies_with(&self, cublas: Option<&Version>) -> bool {
        match (&self.cublas, cublas) {
            (Some(min), Some(have)) => have >= min,
            (Some(_), None) => false,
            (None, _) => true,
        }
    }
}

/// The advisories of the embedded file (never a yank: see [`with_yanks`]).
///
/// # Panics
/// Never at run time: the embedded file is checked by the tests.
pub fn embedded() -> Vec<Advisory> {
    parse(EMBEDDED_ADVISORIES).expect("advisories.toml is valid (tested)")
}

/// The advisories in `text`.
///
/// # Errors
/// The TOML error, for a file that does not match the schema.
pub fn parse(text: &str) -> Result<Vec<Advisory>, toml::de::Error> {
    Ok(toml::from_str::<File>(text)?.advisory)
}

/// The embedded advisories and one per release `catalog` says PyPI yanked,
/// per package (`pypi-9.25.0.15-yanked` for `nvidia-cudnn-cu12` and for
/// `nvidia-cudnn-cu13`): the catalog, generated from PyPI's index, is the
/// one source of truth for yanked releases. A yank covers that package's
/// wheels only, never NVIDIA's archive of the release nor another package.
pub fn with_yanks(catalog: &Catalog) -> Vec<Advisory> {
    let mut all = embedded();
    for list in catalog.wheels() {
        let mut seen: Vec<&Version> = Vec::new();
        for f in &list.files {
            if seen.contains(&&f.version) {
                continue;
            }
            seen.push(&f.version);
            let id = ReleaseId::new(f.version.clone(), list.cuda).with_flavour(list.flavour);
            let Some(reason) = catalog.yanked(&id) else {
                continue;
            };
            let why = if reason.is_empty() {
                "no reason given".to_string()
            } else {
                format!("reason: {reason}")
            };
            all.push(Advisory {
                id: format!("pypi-{}-yanked", f.version),
                cudnn: [f.version.clone(), f.version.clone()],
                packages: vec![list.package.clone()],
                cublas: None,
                kind: AdvisoryKind::Yanked,
                summary: format!(
                    "the {} {} wheels were yanked from PyPI ({why}); pip installs them only when pinned exactly",
                    list.package, f.version
                ),
                source: list.source.clone(),
            });
        }
    }
    all
}

/// The advisories in `list` that cover `version` built for `cuda` as
/// shipped by `wheel` (or an archive) with `cublas` beside it.
pub fn covering<'a>(
    list: &'a [Advisory],
    version: &Version,
    cuda: &CudaVariant,
    wheel: Option<&str>,
    cublas: Option<&Version>,
) -> Vec<&'a Advisory> {
    list.iter()
        .filter(|a| a.covers(version, cuda, wheel) && a.applies_with(cublas))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn the_embedded_advisories_parse_and_cite_an_address() {
        let all = embedded();
        assert_eq!(all.len(), 2);
        assert!(all.iter().all(|a| a.source.starts_with("https://")));
        // Yanks are the catalog's (generated from PyPI), never written here too.
        assert!(all.iter().all(|a| a.kind != AdvisoryKind::Yanked));
    }

    #[test]
    fn yanked_releases_come_from_the_catalog_per_package() {
        let cat = Catalog::embedded();
        let all = with_yanks(&cat);
        let yanks: Vec<(&str, &str, &str)> = all
            .iter()
            .filter(|a| a.kind == AdvisoryKind::Yanked)
            .map(|a| (a.id.as_str(), a.packages[0].as_str(), a.source.as_str()))
            .collect();
        // What PyPI's index said on 2026-12-03 (docs/releases.md).
        assert_eq!(
            yanks,
            [
                (
                    "pypi-8.9.4.19-yanked",
                    "nvidia-cudnn-cu11",
                    "https://pypi.org/simple/nvidia-cudnn-cu11/ (PEP 691 JSON)"
                ),
                (
                    "pypi-9.25.0.15-yanked",
                    "nvidia-cudnn-cu12",
                    "https://pypi.org/simple/nvidia-cudnn-cu12/ (PEP 691 JSON)"
                ),
                (
                    "pypi-9.25.0.15-yanked",
                    "nvidia-cudnn-cu13",
                    "https://pypi.org/simple/nvidia-cudnn-cu13/ (PEP 691 JSON)"
                ),
            ]
        );
        let cu13 = CudaVariant::new(13, None);
        let hit = covering(
            &all,
            &v("9.25.0.15"),
            &cu13,
            Some("nvidia_cudnn_cu13"),
            None,
        );
        assert_eq!(hit.len(), 1);
        assert_eq!(
            hit[0].summary,
            "the nvidia-cudnn-cu13 9.25.0.15 wheels were yanked from PyPI (no reason given); pip installs them only when pinned exactly"
        );
    }

    #[test]
    fn bounds_of_three_parts_cover_every_build_of_that_patch() {
        let all = with_yanks(&Catalog::embedded());
        let cu12 = CudaVariant::new(12, None);
        let ids = |ver: &str, wheel: Option<&str>, cublas: Option<&str>| {
            let c = cublas.map(v);
            covering(&all, &v(ver), &cu12, wheel, c.as_ref())
                .iter()
                .map(|a| a.id.as_str())
                .collect::<Vec<_>>()
        };
        assert_eq!(ids("9.10.0.56", None, Some("12.8")), ["cudnn-9.10.0-abi"]);
        assert_eq!(
            ids("9.10.0.56", None, Some("12.9.1")),
            ["cudnn-9.10.0-abi", "cudnn-below-9.10.1-cublas-12.9"]
        );
        assert_eq!(
            ids("9.8.0.87", None, Some("12.9")),
            ["cudnn-below-9.10.1-cublas-12.9"]
        );
        assert!(ids("9.8.0.87", None, Some("12.8.4")).is_empty());
        assert!(ids("9.10.1.4", None, Some("13.2")).is_empty());
        assert!(ids("9.8.0.87", None, None).is_empty());
        // The yanked upload is PyPI's: its wheels, not an archive of that release.
        assert_eq!(
            ids("9.25.0.15", Some("nvidia_cudnn_cu12"), Some("12.9")),
            ["pypi-9.25.0.15-yanked"]
        );
        assert!(ids("9.25.0.15", None, None).is_empty());
        assert!(ids("9.25.0.15", Some("nvidia-cudnn-jit-cu12"), None).is_empty());
    }
}

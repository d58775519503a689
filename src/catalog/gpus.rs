//! Whether a cuDNN build runs on a GPU: the floor (the support matrix's
//! lowest compute capability, `[[support]]` rows) and the ceiling (the
//! newest architectures need a minimum cuDNN release and CUDA, `[[gpu]]`
//! rows; docs/releases.md#gpu-ceilings). `install` and `use` refuse a build
//! either way (exit 8) and `doctor` reports `gpu-too-old` / `gpu-too-new`.

use serde::Serialize;

use super::{Catalog, GpuRow};
use crate::version::{CudaVariant, Version};

/// Why a build is too old for the newest GPU architectures.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lacks {
    /// The cuDNN release predates the architecture's support.
    Release,
    /// The build is for a CUDA older than the first that compiles for it
    /// (a `cuda11` build on Blackwell, which needs CUDA 12.8).
    CudaBuild,
    /// The build could run, but not with this toolkit, older than the first
    /// that supports the architecture (a CUDA 12.4 toolkit on Blackwell).
    Toolkit(Version),
}

/// A build that does not support a GPU because the GPU is newer than it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TooNew {
    /// What the GPU's architecture needs.
    pub row: GpuRow,
    /// What the build lacks.
    pub lacks: Lacks,
}

impl TooNew {
    /// `needs cuDNN 9.7.0 or newer built for CUDA 12.8 or newer (driver 570.26 or newer)`:
    /// the words every refusal and finding use.
    pub fn needs(&self, windows: bool) -> String {
        let r = &self.row;
        let driver = if windows {
            r.driver_windows.as_ref()
        } else {
            r.driver_linux.as_ref()
        };
        let driver = driver
            .map(|d| format!(" and driver {d} or newer"))
            .unwrap_or_default();
        match &self.lacks {
            Lacks::Toolkit(t) => format!(
                "{} GPUs need CUDA {} or newer{driver}; this toolkit is CUDA {t}",
                r.architecture, r.cuda
            ),
            _ => format!(
                "{} GPUs need cuDNN {} or newer built for CUDA {} or newer{driver}",
                r.architecture, r.cudnn, r.cuda
            ),
        }
    }
}

/// Whether a build runs on a GPU.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Fit {
    /// Nothing the catalog knows says otherwise.
    Runs,
    /// The GPU is older than the build supports: it needs this compute capability.
    TooOld(Version),
    /// The GPU is newer than the build supports.
    TooNew(Box<TooNew>),
}

/// The row of `rows` for a GPU of compute capability `cc`: the row that
/// holds it, else, for a GPU newer than every row (an architecture released
/// after the catalog was written), the newest row — it needs at least what
/// that one needs.
pub fn row_for<'a>(rows: &'a [GpuRow], cc: &Version) -> Option<&'a GpuRow> {
    if let Some(r) = rows.iter().find(|r| r.holds(cc)) {
        return Some(r);
    }
    let newest = rows.iter().max_by(|a, b| a.last.cmp(&b.last))?;
    ((cc.major(), cc.minor()) > (newest.last.major(), newest.last.minor())).then_some(newest)
}

/// [`Catalog::too_new`] over `rows` (the catalog's `[[gpu]]` rows; `doctor`
/// holds a copy), for a build whose CUDA may be unknown (`None`: only the
/// release is judged).
pub fn too_new_in(
    rows: &[GpuRow],
    version: &Version,
    cuda: Option<&CudaVariant>,
    cc: &Version,
    toolkit: Option<&Version>,
) -> Option<TooNew> {
    let row = row_for(rows, cc)?;
    let lacks = if version.triple() < row.cudnn.triple() {
        Lacks::Release
    } else if cuda.is_some_and(|c| {
        c.major() < row.cuda.major()
            || (c.major() == row.cuda.major() && c.minor().is_some_and(|m| m < row.cuda.minor()))
    }) {
        Lacks::CudaBuild
    } else if let Some(t) = toolkit.filter(|t| {
        t.major() == row.cuda.major() && t.minor() < row.cuda.minor()
            || t.major() < row.cuda.major()
    }) {
        Lacks::Toolkit(Version::from_parts(&[t.major(), t.minor()]))
    } else {
        return None;
    };
    Some(TooNew {
        row: row.clone(),
        lacks,
    })
}

impl Catalog {
    /// The architecture row of a GPU of compute capability `cc` ([`row_for`]).
    pub fn gpu_row(&self, cc: &Version) -> Option<&GpuRow> {
        row_for(self.gpus(), cc)
    }

    /// Whether a build of `version` for `cuda` supports a GPU of compute
    /// capability `cc` newer than it: `None` when it does (or nothing is
    /// known). `toolkit`, the CUDA toolkit it is deployed into when known,
    /// must be new enough too.
    pub fn too_new(
        &self,
        version: &Version,
        cuda: &CudaVariant,
        cc: &Version,
        toolkit: Option<&Version>,
    ) -> Option<TooNew> {
        too_new_in(self.gpus(), version, Some(cuda), cc, toolkit)
    }

    /// Whether a build of `version` for `cuda` runs on a GPU of compute
    /// capability `cc` (the floor and the ceiling), `toolkit` as for
    /// [`Catalog::too_new`].
    pub fn fit(
        &self,
        version: &Version,
        cuda: &CudaVariant,
        cc: &Version,
        toolkit: Option<&Version>,
    ) -> Fit {
        if let Some(m) = self.min_compute(version, cuda).filter(|m| cc < m) {
            return Fit::TooOld(m);
        }
        match self.too_new(version, cuda, cc, toolkit) {
            Some(t) => Fit::TooNew(Box::new(t)),
            None => Fit::Runs,
        }
    }

    /// [`Catalog::fit`] is [`Fit::Runs`], whatever the toolkit.
    pub fn runs_on(&self, version: &Version, cuda: &CudaVariant, cc: &Version) -> bool {
        self.fit(version, cuda, cc, None) == Fit::Runs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }
    fn c(s: &str) -> CudaVariant {
        s.parse().unwrap()
    }

    /// Blackwell (10.0, 12.0) needs cuDNN 9.7 built for CUDA 12.8+;
    /// Hopper (9.0) and Ada (8.9) need 8.6 for CUDA 11.8+ (the embedded rows).
    #[test]
    fn the_newest_gpus_need_a_minimum_release_cuda_and_toolkit() {
        let cat = Catalog::embedded();
        let rtx5090 = v("12.0");
        assert!(matches!(
            cat.fit(&v("9.6.0.74"), &c("12"), &rtx5090, None),
            Fit::TooNew(t) if t.lacks == Lacks::Release && t.row.cudnn == v("9.7.0")
        ));
        assert!(matches!(
            cat.fit(&v("8.9.7.29"), &c("12"), &v("10.0"), None),
            Fit::TooNew(t) if t.lacks == Lacks::Release
        ));
        assert_eq!(cat.fit(&v("9.7.0.66"), &c("12"), &rtx5090, None), Fit::Runs);
        assert_eq!(cat.fit(&v("9.28.1.4"), &c("13"), &rtx5090, None), Fit::Runs);
        assert_eq!(
            cat.fit(&v("9.7.0.66"), &c("12"), &rtx5090, Some(&v("12.8"))),
            Fit::Runs
        );
        assert!(matches!(
            cat.fit(&v("9.10.2.21"), &c("11"), &rtx5090, None),
            Fit::TooNew(t) if t.lacks == Lacks::CudaBuild
        ));
        match cat.fit(&v("9.7.0.66"), &c("12"), &rtx5090, Some(&v("12.4.1"))) {
            Fit::TooNew(t) => {
                assert_eq!(t.lacks, Lacks::Toolkit(v("12.4")));
                assert!(t.needs(false).contains("need CUDA 12.8 or newer and driver 570.26 or newer; this toolkit is CUDA 12.4"), "{}", t.needs(false));
            }
            other => panic!("{other:?}"),
        }
        // A GPU newer than every row needs at least what the newest needs.
        assert!(
            cat.too_new(&v("9.6.0.74"), &c("12"), &v("14.0"), None)
                .is_some()
        );
        // Hopper and Ada: 8.6 for CUDA 11.8 and later.
        for gpu in ["9.0", "8.9"] {
            assert!(
                cat.too_new(&v("8.5.0.96"), &c("11"), &v(gpu), None)
                    .is_some(),
                "{gpu}"
            );
            assert!(
                cat.too_new(&v("8.6.0.163"), &c("10.2"), &v(gpu), None)
                    .is_some(),
                "{gpu}"
            );
            assert!(
                cat.too_new(&v("8.6.0.163"), &c("11"), &v(gpu), None)
                    .is_none(),
                "{gpu}"
            );
        }
        // Older GPUs have no ceiling; the floor still holds.
        assert!(
            cat.too_new(&v("7.6.5"), &c("10.2"), &v("7.5"), None)
                .is_none()
        );
        assert_eq!(
            cat.fit(&v("9.11.0.98"), &c("12"), &v("6.1"), None),
            Fit::TooOld(v("7.5"))
        );
    }
}

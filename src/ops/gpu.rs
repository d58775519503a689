//! Whether a release can run on the GPUs a CUDA program started here would
//! use: the one judgement `install` and `use` make before they change
//! anything, and the hints of `default`, `pin` and `export dir` follow
//! ([`crate::catalog::offer::advise_on`]). The GPUs come from
//! [`crate::gpu`]; the minimum compute capability of each release from the
//! catalog (NVIDIA's support matrix).

use crate::command::CommandLine;
use crate::env::Env;
use crate::error::Result;
use crate::home::Home;
use crate::store::Store;
use crate::version::{CudaVariant, Version};

use super::Session;

/// Whether a release can run on the GPUs a CUDA program started here would
/// use (`install` and `use`; never `env`, `exec` or the shell hooks). Built
/// once per command: it runs `nvidia-smi` once. With no GPU visible every
/// release passes and nothing is said.
#[derive(Clone, Debug)]
pub struct GpuGate {
    /// The GPUs CUDA would use (after `CUDA_VISIBLE_DEVICES`).
    pub gpus: Vec<crate::gpu::Gpu>,
    catalog: crate::catalog::Catalog,
    /// Installed releases: (version, CUDA variant), to suggest one that runs.
    installed: Vec<(Version, CudaVariant)>,
    windows: bool,
}

/// A release the oldest GPU in use cannot run.
#[derive(Clone, Debug, PartialEq)]
pub struct TooOld {
    /// That GPU.
    pub gpu: crate::gpu::Gpu,
    /// The lowest compute capability the release supports.
    pub needs: Version,
}

impl GpuGate {
    /// Reads the GPUs (through `nvidia-smi`), the catalog and the installed releases.
    pub fn read(session: &Session<'_>) -> GpuGate {
        let gpus = crate::gpu::visible(session.env, &crate::gpu::Processes);
        GpuGate::new(session.home, session.env, gpus)
    }

    /// A gate for `gpus` as given.
    pub fn new(home: &Home, env: &Env, gpus: Vec<crate::gpu::Gpu>) -> GpuGate {
        if gpus.is_empty() {
            return GpuGate {
                gpus,
                catalog: crate::catalog::Catalog::default(),
                installed: Vec::new(),
                windows: env.is_windows(),
            };
        }
        let catalog = crate::catalog::Catalog::load(home)
            .unwrap_or_else(|_| crate::catalog::Catalog::embedded());
        let installed = Store::new(home)
            .releases()
            .unwrap_or_default()
            .iter()
            .map(|r| (r.version().clone(), *r.cuda()))
            .collect();
        GpuGate {
            gpus,
            catalog,
            installed,
            windows: env.is_windows(),
        }
    }

    /// The oldest GPU in use (lowest compute capability), if any is visible.
    pub fn oldest(&self) -> Option<&crate::gpu::Gpu> {
        crate::gpu::oldest(&self.gpus)
    }

    /// The newest GPU in use (highest compute capability): the one a
    /// release must be new enough for (docs/releases.md#gpu-ceilings).
    pub fn newest(&self) -> Option<&crate::gpu::Gpu> {
        self.gpus.iter().max_by(|a, b| a.compute.cmp(&b.compute))
    }

    /// `Some` when the newest GPU in use is newer than `version` built for
    /// `cuda` supports (in a toolkit of CUDA `toolkit`, when known).
    pub fn too_new(
        &self,
        version: &Version,
        cuda: &CudaVariant,
        toolkit: Option<&Version>,
    ) -> Option<(crate::gpu::Gpu, crate::catalog::TooNew)> {
        let gpu = self.newest()?;
        let t = self.catalog.too_new(version, cuda, &gpu.compute, toolkit)?;
        Some((gpu.clone(), t))
    }

    /// Whether every GPU in use runs `version` built for `cuda`: none too
    /// old for it ([`GpuGate::too_old`]), none too new ([`GpuGate::too_new`]).
    pub fn runs(&self, version: &Version, cuda: &CudaVariant) -> bool {
        self.too_old(version, cuda).is_none() && self.too_new(version, cuda, None).is_none()
    }

    /// `Some` when the oldest GPU in use is below the minimum NVIDIA's
    /// support matrix gives for `version` built for `cuda`.
    pub fn too_old(&self, version: &Version, cuda: &CudaVariant) -> Option<TooOld> {
        let gpu = self.oldest()?;
        let needs = self.catalog.min_compute(version, cuda)?;
        (gpu.compute < needs).then(|| TooOld {
            gpu: gpu.clone(),
            needs,
        })
    }

    /// The newest release that runs on the oldest GPU, installed or in the
    /// catalog (a build for `prefer`'s CUDA major first), and the newest
    /// installed one when that is older: the one answer `install`, `use`,
    /// `default`, `pin` and `doctor` give
    /// ([`crate::catalog::offer::newest_that_runs`]).
    pub fn newest_that_runs(&self, prefer: &CudaVariant) -> crate::catalog::offer::NewestThatRuns {
        let Some(gpu) = self.oldest() else {
            return Default::default();
        };
        let offers =
            crate::catalog::offer::offers_for(&self.catalog, crate::version::Platform::host());
        crate::catalog::offer::newest_that_runs(&offers, &self.installed, Some(prefer), &|v, c| {
            self.catalog
                .min_compute(v, c)
                .is_some_and(|m| m <= gpu.compute)
                && self.too_new(v, c, None).is_none()
        })
    }

    /// What install hints must fit here ([`crate::catalog::offer::advise_on`]):
    /// `None` without a visible GPU.
    pub fn with_fit<T>(
        &self,
        f: impl FnOnce(Option<&crate::catalog::offer::GpuFit<'_>>) -> T,
    ) -> T {
        let Some(gpu) = self.oldest() else {
            return f(None);
        };
        let min = |v: &Version, c: &CudaVariant| self.catalog.min_compute(v, c);
        let too_new = |v: &Version, c: &CudaVariant| self.too_new(v, c, None).is_some();
        f(Some(&crate::catalog::offer::GpuFit {
            gpu,
            min_compute: &min,
            too_new: &too_new,
            installed: &self.installed,
        }))
    }

    /// Refuses (exit 8) a release the oldest GPU in use cannot run, naming the
    /// GPU, its compute capability, the release's minimum and the newest
    /// release that does run there; with `force` returns a warning instead.
    /// `doing` is the verb for the messages (`install`, `deploy`).
    ///
    /// # Errors
    /// [`crate::error::Kind::Conflict`] when the GPU is too old and `force` is not set.
    pub fn check(
        &self,
        version: &Version,
        cuda: &CudaVariant,
        force: bool,
        doing: &str,
    ) -> Result<Option<String>> {
        self.check_in(version, cuda, None, force, doing)
    }

    /// [`GpuGate::check`], and for a build deployed into a toolkit of CUDA
    /// `toolkit`, that toolkit: the newest GPUs need a minimum cuDNN, a build
    /// for a minimum CUDA and a toolkit of that CUDA
    /// (docs/releases.md#gpu-ceilings).
    ///
    /// # Errors
    /// [`crate::error::Kind::Conflict`] when a GPU in use cannot run it and `force` is not set.
    pub fn check_in(
        &self,
        version: &Version,
        cuda: &CudaVariant,
        toolkit: Option<&Version>,
        force: bool,
        doing: &str,
    ) -> Result<Option<String>> {
        let Some(t) = self.too_old(version, cuda) else {
            return self.check_ceiling(version, cuda, toolkit, force, doing);
        };
        let g = &t.gpu;
        let what = format!(
            "{} (GPU {}, compute capability {})",
            g.name, g.index, g.compute
        );
        if force {
            return Ok(Some(format!(
                "cuDNN {version} for CUDA {cuda} needs compute capability {} or newer and will not run on {what}; {doing}ing it anyway (--force)",
                t.needs
            )));
        }
        let render = |c: CommandLine| c.for_host(self.windows);
        let suggestion = match self.newest_that_runs(cuda).words(&render) {
            Some(w) => format!("{w}; or pass --force to {doing} this one anyway"),
            None => format!(
                "no known release runs on this GPU; pass --force to {doing} this one anyway"
            ),
        };
        Err(crate::error::Error::new(
            crate::error::Kind::Conflict,
            format!(
                "cuDNN {version} for CUDA {cuda} cannot run on {what}: it needs compute capability {} or newer",
                t.needs
            ),
        )
        .cause("NVIDIA's cuDNN support matrix for this release and CUDA lists no older GPUs; on them cuDNN calls fail with CUDNN_STATUS_ARCH_MISMATCH or \"no kernel image is available for execution on the device\"")
        .hint(suggestion))
    }
}

impl GpuGate {
    /// The ceiling half of [`GpuGate::check_in`]: the same refusal (exit 8)
    /// for a GPU newer than the build supports.
    fn check_ceiling(
        &self,
        version: &Version,
        cuda: &CudaVariant,
        toolkit: Option<&Version>,
        force: bool,
        doing: &str,
    ) -> Result<Option<String>> {
        let Some((g, t)) = self.too_new(version, cuda, toolkit) else {
            return Ok(None);
        };
        let what = format!(
            "{} (GPU {}, compute capability {})",
            g.name, g.index, g.compute
        );
        let needs = t.needs(self.windows);
        if force {
            return Ok(Some(format!(
                "cuDNN {version} for CUDA {cuda} will not run on {what}: {needs}; {doing}ing it anyway (--force)"
            )));
        }
        let render = |c: CommandLine| c.for_host(self.windows);
        let suggestion = match self.newest_that_runs(cuda).words(&render) {
            Some(w) => format!("{w}; or pass --force to {doing} this one anyway"),
            None => format!(
                "no known release runs on this GPU; pass --force to {doing} this one anyway"
            ),
        };
        let subject = match &t.lacks {
            crate::catalog::Lacks::Toolkit(tk) => {
                format!("cuDNN {version} for CUDA {cuda} in a CUDA {tk} toolkit")
            }
            _ => format!("cuDNN {version} for CUDA {cuda}"),
        };
        Err(crate::error::Error::new(
            crate::error::Kind::Conflict,
            format!("{subject} cannot run on {what}: {needs}"),
        )
        .cause(format!(
            "NVIDIA's cuDNN support matrix lists {} GPUs (compute capability {} to {}) only from cuDNN {} with CUDA {}; older builds fail there with \"no kernel image is available for execution on the device\" or CUDNN_STATUS_ARCH_MISMATCH",
            t.row.architecture, t.row.first, t.row.last, t.row.cudnn, t.row.cuda
        ))
        .hint(suggestion))
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;
    use crate::error::Kind;
    use crate::gpu::Gpu;
    use crate::ops::testing::{Fixture, folder};

    fn gtx_1080() -> Gpu {
        Gpu {
            index: 0,
            uuid: "GPU-1".into(),
            name: "NVIDIA GeForce GTX 1080".into(),
            compute: "6.1".parse().unwrap(),
        }
    }

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn cu(s: &str) -> CudaVariant {
        s.parse().unwrap()
    }

    #[test]
    fn a_release_the_oldest_gpu_cannot_run_is_refused_with_one_that_runs() {
        let f = Fixture::new();
        let gate = GpuGate::new(&f.home, &f.env, vec![gtx_1080()]);
        // NVIDIA's matrix: cuDNN 9.11 and newer for CUDA 12 need 7.5; 9.1 needs 5.0.
        let t = gate.too_old(&v("9.27.0.42"), &cu("12")).unwrap();
        assert_eq!(t.needs, v("7.5"));
        assert_eq!(gate.too_old(&v("9.1.0.70"), &cu("12")), None);
        let e = gate
            .check(&v("9.27.0.42"), &cu("12"), false, "install")
            .unwrap_err();
        assert_eq!(e.kind(), Kind::Conflict);
        assert!(
            e.message()
                .contains("cannot run on NVIDIA GeForce GTX 1080 (GPU 0, compute capability 6.1)"),
            "{e}"
        );
        let hint = e.hint_text().unwrap();
        assert!(hint.contains("9.10."), "{hint}");
        assert!(
            hint.ends_with("or pass --force to install this one anyway"),
            "{hint}"
        );
    }

    #[test]
    fn force_turns_the_refusal_into_a_warning() {
        let f = Fixture::new();
        let gate = GpuGate::new(&f.home, &f.env, vec![gtx_1080()]);
        let w = gate
            .check(&v("9.27.0.42"), &cu("12"), true, "deploy")
            .unwrap()
            .unwrap();
        assert!(w.ends_with("deploying it anyway (--force)"), "{w}");
        assert_eq!(
            gate.check(&v("9.1.0.70"), &cu("12"), false, "deploy")
                .unwrap(),
            None
        );
    }

    #[test]
    fn without_a_visible_gpu_every_release_passes() {
        let f = Fixture::new();
        let gate = GpuGate::new(&f.home, &f.env, Vec::new());
        assert_eq!(gate.oldest(), None);
        assert_eq!(
            gate.check(&v("9.27.0.42"), &cu("12"), false, "install")
                .unwrap(),
            None
        );
        assert_eq!(gate.newest_that_runs(&cu("12")), Default::default());
    }

    #[test]
    fn an_installed_release_that_runs_is_suggested() {
        let f = Fixture::new();
        f.release("9.5.1.17", "12", folder("cudnn-9.5"));
        let gate = GpuGate::new(&f.home, &f.env, vec![gtx_1080()]);
        let e = gate
            .check(&v("9.27.0.42"), &cu("12"), false, "deploy")
            .unwrap_err();
        assert!(e.hint_text().unwrap().contains("9.5.1.17"), "{e:?}");
    }
}

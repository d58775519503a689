//! What the catalog can install, and the one rule every install hint
//! follows ([`advise`]): a suggested `cudnnm install` (in `use`, `exec`,
//! `which`, `env`, `pin`, `default`, `export dir`, `install`'s own "not in
//! the catalog", `doctor` findings and `verify` advice) names only a
//! release the catalog has — an NVIDIA archive for the platform, or a PyPI
//! wheel for this machine, fetched from the package index — built for the
//! right CUDA, by its release id (`cudnnm install 9.12.0.46_cuda12`).

use crate::command::CommandLine;
use crate::version::{CudaVariant, Flavour, Platform, ReleaseId, Spec, Version};

use super::Catalog;

/// A release the catalog can install on a platform: an NVIDIA archive or
/// a PyPI wheel, either by `cudnnm install 9.12.0.46_cuda12`.
#[derive(Clone, Debug, PartialEq)]
pub struct Offer {
    /// The release version.
    pub version: Version,
    /// The CUDA it is built for.
    pub cuda: CudaVariant,
    /// Which build (full or JIT).
    pub flavour: Flavour,
    /// The PyPI package, for a wheel; `None` for an NVIDIA archive.
    pub wheel: Option<String>,
    /// For an archive of another platform than the machine's: that
    /// platform, which the command names (`--platform windows-x86_64`).
    pub platform: Option<Platform>,
}

impl Offer {
    /// The release id, `9.12.0.46_cuda12` (`…+jit` for the JIT build).
    pub fn id(&self) -> String {
        ReleaseId::new(self.version.clone(), self.cuda)
            .with_flavour(self.flavour)
            .to_string()
    }

    /// The command that installs it: `cudnnm install ID` (with
    /// `--platform` for another platform's archive), for a wheel too —
    /// install by version fetches it from the package index, no pip needed.
    pub fn install(&self) -> CommandLine {
        let c = CommandLine::install(self.id());
        match self.platform {
            Some(p) => c.platform(p),
            None => c,
        }
    }
}

/// The releases `catalog` can install on `platform`, for a machine of
/// platform `host`: its archives for `platform` (naming `--platform` when
/// it is not `host`) and, when `platform` is `host` (pip fetches wheels for
/// the machine it runs on), the PyPI releases with a wheel for it. A
/// release PyPI has yanked is never offered.
pub fn offers_from(catalog: &Catalog, platform: Platform, host: Option<Platform>) -> Vec<Offer> {
    let other = (host != Some(platform)).then_some(platform);
    let mut offers: Vec<Offer> = catalog
        .archives()
        .iter()
        .filter(|a| a.platform == platform && catalog.yanked(&a.release_id()).is_none())
        .map(|a| Offer {
            version: a.version.clone(),
            cuda: a.cuda,
            flavour: a.flavour,
            wheel: None,
            platform: other,
        })
        .collect();
    if other.is_none() && super::resolve::wheels_serve(platform) {
        for w in catalog.wheels() {
            for v in &w.versions {
                let id = ReleaseId::new(v.clone(), w.cuda).with_flavour(w.flavour);
                let here = w.files.is_empty()
                    || w.files
                        .iter()
                        .any(|f| &f.version == v && f.platform == platform);
                if !here || catalog.yanked(&id).is_some() {
                    continue;
                }
                offers.push(Offer {
                    version: v.clone(),
                    cuda: w.cuda,
                    flavour: w.flavour,
                    wheel: Some(w.package.clone()),
                    platform: None,
                });
            }
        }
    }
    offers
}

/// The releases `catalog` can install on the machine of `platform` itself
/// ([`offers_from`] with `platform` as the host); none without a platform.
pub fn offers_for(catalog: &Catalog, platform: Option<Platform>) -> Vec<Offer> {
    platform
        .map(|p| offers_from(catalog, p, Some(p)))
        .unwrap_or_default()
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
    best(
        offers
            .iter()
            .filter(|o| spec.matches(&o.version, &o.cuda) && o.flavour == spec.wanted_flavour())
            .filter(|o| toolkit.is_none_or(|t| o.cuda.fits(t.major(), t.minor()))),
    )
}

/// The newest version, then the newest CUDA, then an archive before a
/// wheel; among equals the first listed (the user's catalog rows come
/// before the embedded ones).
fn best<'a>(offers: impl DoubleEndedIterator<Item = &'a Offer>) -> Option<&'a Offer> {
    offers.rev().max_by(|a, b| {
        a.version
            .cmp(&b.version)
            .then(a.cuda.cmp(&b.cuda))
            .then(b.wheel.is_some().cmp(&a.wheel.is_some()))
    })
}

/// What the catalog has for a spec no store holds ([`advise`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Advice<'a> {
    /// A release the spec names, built for the toolkit's CUDA when there is
    /// a toolkit: install it.
    Install(&'a Offer),
    /// None; the release nearest the spec's version that the catalog has
    /// for the spec's CUDA.
    Nearest(&'a Offer),
    /// Nothing near.
    Nothing,
    /// The release the spec names does not run on the oldest GPU in use
    /// (`install` would refuse it): say so, and what does run there.
    NotOnGpu {
        /// The release the spec names.
        offer: &'a Offer,
        /// That GPU, and the compute capability the release needs (boxed:
        /// the other variants are one pointer).
        too_old: Box<TooOldGpu>,
        /// The newest release that runs there ([`newest_that_runs`]).
        instead: Box<NewestThatRuns>,
    },
}

/// A GPU below a release's minimum compute capability.
#[derive(Clone, Debug, PartialEq)]
pub struct TooOldGpu {
    /// The GPU (the oldest one in use).
    pub gpu: crate::gpu::Gpu,
    /// The lowest compute capability the release supports.
    pub needs: Version,
}

/// What a suggested install must run on: the oldest GPU in use, the
/// support matrix's minimum compute capability per build, and the
/// installed releases (which may be the newest that run there). Hints made
/// with it never name an install the GPU check of `install` refuses.
pub struct GpuFit<'a> {
    /// The oldest GPU in use.
    pub gpu: &'a crate::gpu::Gpu,
    /// The lowest compute capability a build supports, where known.
    pub min_compute: &'a dyn Fn(&Version, &CudaVariant) -> Option<Version>,
    /// Whether a GPU in use is newer than a build supports (the ceiling,
    /// docs/releases.md#gpu-ceilings).
    pub too_new: &'a dyn Fn(&Version, &CudaVariant) -> bool,
    /// The releases in the store.
    pub installed: &'a [(Version, CudaVariant)],
}

impl GpuFit<'_> {
    /// `Some` when `install` refuses the build for this GPU: its minimum is
    /// known and above the GPU's compute capability.
    pub fn too_old(&self, version: &Version, cuda: &CudaVariant) -> Option<TooOldGpu> {
        let needs = (self.min_compute)(version, cuda)?;
        (self.gpu.compute < needs).then(|| TooOldGpu {
            gpu: self.gpu.clone(),
            needs,
        })
    }

    /// Whether the build is known to run on this GPU (its minimum is known
    /// and met): only those are suggested in place of one that does not.
    pub fn known_to_run(&self, version: &Version, cuda: &CudaVariant) -> bool {
        (self.min_compute)(version, cuda).is_some_and(|m| m <= self.gpu.compute)
            && !(self.too_new)(version, cuda)
    }
}

/// A release that runs on the GPU in use, and where it comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct Runnable {
    /// The release version.
    pub version: Version,
    /// The CUDA it is built for.
    pub cuda: CudaVariant,
    /// `None` when installed; else what the catalog installs it from.
    pub offer: Option<Offer>,
}

impl Runnable {
    /// The command that gets it in use: `cudnnm use V` when installed, else
    /// the catalog's `cudnnm install …`.
    pub fn command(&self) -> CommandLine {
        match &self.offer {
            None => CommandLine::use_(self.version.to_string()),
            Some(o) => o.install(),
        }
    }

    /// The release id, `9.10.2.21_cuda12`.
    pub fn id(&self) -> String {
        crate::version::release_id(&self.version, &self.cuda)
    }

    /// `cuDNN V for CUDA C (installed: `CMD`)` or `(in the catalog: `CMD`)`.
    pub fn words(&self, render: &dyn Fn(CommandLine) -> String) -> String {
        format!(
            "cuDNN {} for CUDA {} ({}: `{}`)",
            self.version,
            self.cuda,
            if self.offer.is_none() {
                "installed"
            } else {
                "in the catalog"
            },
            render(self.command())
        )
    }
}

/// The answer to "which is the newest release that runs on this GPU"
/// ([`newest_that_runs`]), the one `install`, `use`, `default`, `pin` and
/// `doctor` all give.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NewestThatRuns {
    /// The newest release that runs there, installed or in the catalog.
    pub newest: Option<Runnable>,
    /// The newest installed one, when it is not [`NewestThatRuns::newest`].
    pub installed: Option<Runnable>,
}

impl NewestThatRuns {
    /// `the newest release that runs on it is cuDNN … (in the catalog:
    /// `CMD`); the newest installed one is cuDNN … (installed: `CMD`)`, or
    /// `None` when no known release runs there.
    pub fn words(&self, render: &dyn Fn(CommandLine) -> String) -> Option<String> {
        let newest = self.newest.as_ref()?;
        let mut s = format!(
            "the newest release that runs on it is {}",
            newest.words(render)
        );
        if let Some(i) = &self.installed {
            s.push_str(&format!(
                "; the newest installed one that does is {}",
                i.words(render)
            ));
        }
        Some(s)
    }
}

/// The one answer to "the newest release that runs on this GPU": among the
/// `installed` releases and the catalog's `offers`, those `runs` admits; a
/// build for `prefer`'s CUDA major before others; the newest version, an
/// installed one before the catalog's of the same release, an NVIDIA
/// archive before a wheel. Also names the newest installed one when the
/// newest is only in the catalog, so `use` can say both.
pub fn newest_that_runs(
    offers: &[Offer],
    installed: &[(Version, CudaVariant)],
    prefer: Option<&CudaVariant>,
    runs: &dyn Fn(&Version, &CudaVariant) -> bool,
) -> NewestThatRuns {
    let cands: Vec<Runnable> = installed
        .iter()
        .map(|(v, c)| Runnable {
            version: v.clone(),
            cuda: *c,
            offer: None,
        })
        .chain(offers.iter().map(|o| Runnable {
            version: o.version.clone(),
            cuda: o.cuda,
            offer: Some(o.clone()),
        }))
        .filter(|r| runs(&r.version, &r.cuda))
        .collect();
    // Newest version; then installed; then an archive over a wheel.
    let key = |r: &&Runnable| {
        (
            r.version.clone(),
            r.offer.is_none(),
            r.offer.as_ref().is_some_and(|o| o.wheel.is_none()),
        )
    };
    let best = |only_installed: bool| {
        let pool = || {
            cands
                .iter()
                .filter(move |r| !only_installed || r.offer.is_none())
        };
        pool()
            .filter(|r| prefer.is_none_or(|p| p.major() == r.cuda.major()))
            .max_by_key(key)
            .or_else(|| pool().max_by_key(key))
            .cloned()
    };
    let newest = best(false);
    let installed = best(true).filter(|_| newest.as_ref().is_some_and(|n| n.offer.is_some()));
    NewestThatRuns { newest, installed }
}

/// The one rule for what to suggest installing for `spec`, which no store
/// holds: among `offers` (archives and wheels this machine can install,
/// [`offers_from`]), the newest release `spec` names whose build fits a
/// toolkit of CUDA `toolkit` when there is one ([`best_offer`]); else the
/// release nearest the spec's version ([`Version::nearest`]) built for a
/// CUDA the spec admits; else nothing — never a command that cannot work.
pub fn advise<'a>(offers: &'a [Offer], spec: &Spec, toolkit: Option<&Version>) -> Advice<'a> {
    advise_on(offers, spec, toolkit, None)
}

/// [`advise`] on a machine whose oldest GPU in use is `gpu`: a prefix
/// names the newest matching release that runs there (as `install` picks
/// it), and a release that does not run there (an exact spec, or a prefix
/// with nothing that runs) is [`Advice::NotOnGpu`], naming what does —
/// never an install the GPU check refuses.
pub fn advise_on<'a>(
    offers: &'a [Offer],
    spec: &Spec,
    toolkit: Option<&Version>,
    gpu: Option<&GpuFit<'_>>,
) -> Advice<'a> {
    if let Some(o) = best_offer(offers, spec, toolkit) {
        let Some(fit) = gpu else {
            return Advice::Install(o);
        };
        let Some(too_old) = fit.too_old(&o.version, &o.cuda) else {
            return Advice::Install(o);
        };
        if !spec.is_exact() {
            let runnable: Vec<Offer> = offers
                .iter()
                .filter(|x| {
                    fit.too_old(&x.version, &x.cuda).is_none()
                        && !(fit.too_new)(&x.version, &x.cuda)
                })
                .cloned()
                .collect();
            if let Some(r) = best_offer(&runnable, spec, toolkit)
                && let Some(same) = offers.iter().find(|x| *x == r)
            {
                return Advice::Install(same);
            }
        }
        let instead = newest_that_runs(offers, fit.installed, Some(&o.cuda), &|v, c| {
            fit.known_to_run(v, c)
        });
        return Advice::NotOnGpu {
            offer: o,
            too_old: Box::new(too_old),
            instead: Box::new(instead),
        };
    }
    let admitted: Vec<&Offer> = offers
        .iter()
        .filter(|o| spec.cuda_admits(&o.cuda) && o.flavour == spec.wanted_flavour())
        .collect();
    let mut versions: Vec<Version> = admitted.iter().map(|o| o.version.clone()).collect();
    versions.sort();
    versions.dedup();
    let near = spec
        .anchor()
        .and_then(|a| a.nearest(&versions, 1).first().map(|v| (*v).clone()));
    // Of that release, the build that fits the toolkit when one does.
    let of = |v: &Version| {
        let same = || admitted.iter().copied().filter(move |o| o.version == *v);
        best(same().filter(|o| toolkit.is_some_and(|t| o.cuda.fits(t.major(), t.minor()))))
            .or_else(|| best(same()))
    };
    match near.and_then(|v| of(&v)) {
        Some(o) => Advice::Nearest(o),
        None => Advice::Nothing,
    }
}

impl Advice<'_> {
    /// The `help:` words: `install it with `CMD``; `the nearest release the
    /// catalog has is cuDNN V for CUDA C (`CMD`)`; or where to look. Each
    /// command as `render` writes it for the user's shell and home.
    pub fn hint(&self, render: &dyn Fn(CommandLine) -> String) -> String {
        match self {
            Advice::Install(o) => format!("install it with `{}`", render(o.install())),
            Advice::Nearest(o) => format!(
                "the nearest release the catalog has is cuDNN {} for CUDA {} (`{}`)",
                o.version,
                o.cuda,
                render(o.install())
            ),
            Advice::Nothing => "`cudnnm list --remote` lists what the catalog has".to_string(),
            Advice::NotOnGpu {
                offer,
                too_old,
                instead,
            } => {
                let g = &too_old.gpu;
                let head = format!(
                    "cuDNN {} for CUDA {} does not run on {} (GPU {}, compute capability {}; it needs {} or newer)",
                    offer.version, offer.cuda, g.name, g.index, g.compute, too_old.needs
                );
                let force = render(offer.install().force());
                match instead.words(render) {
                    Some(w) => format!("{head}: {w}; or `{force}` installs it anyway"),
                    None => {
                        format!("{head}, and no known release does; `{force}` installs it anyway")
                    }
                }
            }
        }
    }

    /// The command of [`Advice::Install`].
    pub fn command(&self) -> Option<CommandLine> {
        match self {
            Advice::Install(o) => Some(o.install()),
            _ => None,
        }
    }
}

/// [`advise`] for `spec` on the machine of `platform`, from the catalog
/// `home` reads (its `catalog.toml` over the embedded one, or the embedded
/// one alone when that file cannot be read): the `help:` words, each command
/// as `render` writes it.
pub fn install_hint(
    home: &crate::home::Home,
    spec: &Spec,
    platform: Option<Platform>,
    toolkit: Option<&Version>,
    render: &dyn Fn(CommandLine) -> String,
) -> String {
    let catalog = Catalog::load(home).unwrap_or_else(|_| Catalog::embedded());
    let offers = offers_for(&catalog, platform);
    advise(&offers, spec, toolkit).hint(render)
}

/// A `help:` line for a release that is not installed: the nearest installed
/// ones (`near`, nearest first), then `advice` (what the catalog has).
pub fn not_installed_hint(near: &[String], advice: &str) -> String {
    match near {
        [] => advice.to_string(),
        [one] => format!("the nearest installed release is: {one}; or {advice}"),
        many => format!(
            "the nearest installed releases are: {}; or {advice}",
            many.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(v: &str, cuda: &str, wheel: Option<&str>) -> Offer {
        Offer {
            version: v.parse().unwrap(),
            cuda: cuda.parse().unwrap(),
            flavour: Flavour::Full,
            wheel: wheel.map(str::to_string),
            platform: None,
        }
    }

    #[test]
    fn the_rule_offers_only_what_the_catalog_has_for_the_right_cuda() {
        let offers = vec![
            offer("9.10.2.21", "12", None),
            offer("9.10.2.21", "11", Some("nvidia-cudnn-cu11")),
            offer("9.12.0.46", "12", Some("nvidia-cudnn-cu12")),
        ];
        let spec = |s: &str| s.parse::<Spec>().unwrap();
        let v = |s: &str| s.parse::<Version>().unwrap();
        let plain = |c: CommandLine| c.for_host(false);
        // A wheel-only release: installed by its id too (from the index, no pip).
        let a = advise(&offers, &spec("9.12"), Some(&v("12.4")));
        assert_eq!(
            a.hint(&plain),
            "install it with `cudnnm install 9.12.0.46_cuda12`"
        );
        // Not for the toolkit's CUDA: the nearest for the spec's CUDA, never `install 9.12_cuda11`.
        let a = advise(&offers, &spec("9.12_cuda11"), Some(&v("12.4")));
        assert_eq!(
            a.hint(&plain),
            "the nearest release the catalog has is cuDNN 9.10.2.21 for CUDA 11 (`cudnnm install 9.10.2.21_cuda11`)"
        );
        // An archive before a wheel of the same release.
        assert_eq!(
            advise(&offers, &spec("9.10"), Some(&v("12.4"))).command(),
            Some(CommandLine::install("9.10.2.21_cuda12"))
        );
        assert_eq!(advise(&offers, &spec("7"), None), Advice::Nothing);
        // The nearest release, in the build that fits the toolkit (not the
        // newest CUDA's).
        let both = vec![
            offer("9.27.0.42", "12", None),
            offer("9.27.0.42", "13", None),
        ];
        assert_eq!(
            advise(&both, &spec("9.27.0.4"), Some(&v("12.4"))),
            Advice::Nearest(&both[0])
        );
        assert_eq!(
            advise(&both, &spec("9.27.0.4"), None),
            Advice::Nearest(&both[1])
        );
        assert_eq!(
            not_installed_hint(&["9.1.0.70_cuda12".into()], "x"),
            "the nearest installed release is: 9.1.0.70_cuda12; or x"
        );
    }

    #[test]
    fn another_platforms_archives_name_it_and_its_wheels_are_not_offered() {
        let cat = Catalog::embedded();
        let win = offers_from(&cat, Platform::WindowsX86_64, Some(Platform::LinuxX86_64));
        assert!(!win.is_empty());
        assert!(win.iter().all(|o| o.wheel.is_none()));
        let o = win.iter().find(|o| o.id() == "8.1.0.77_cuda11.2").unwrap();
        assert_eq!(
            o.install().for_host(false),
            "cudnnm install 8.1.0.77_cuda11.2 --platform windows-x86_64"
        );
        let here = offers_for(&cat, Some(Platform::LinuxX86_64));
        assert!(here.iter().any(|o| o.wheel.is_some()));
        assert!(here.iter().all(|o| o.platform.is_none()));
    }
}

//! The cuDNN the frameworks of a Python environment need, and the release
//! that satisfies them all here (`cudnnm frameworks`, `--for python`).
//!
//! A framework's need comes from its wheel metadata first: the `Requires-Dist`
//! naming a cuDNN wheel (`nvidia-cudnn-cu13==9.26.0.51` for torch 2.15,
//! `nvidia-cudnn-cu12>=9.3.0.75,<10` for `tensorflow[and-cuda]` 2.21), with
//! markers and extras evaluated for the environment ([`crate::python`]).
//! A framework whose metadata names none here (TensorFlow without
//! `[and-cuda]`, PyTorch's Windows wheels) falls back to the catalog's build
//! row: the same cuDNN major, at least the minor it was built with
//! (docs/releases.md#framework-builds). The cuDNN wheels of different CUDA
//! majors install the same files (`nvidia/cudnn/lib/libcudnn.so.9`), and a
//! process loads one `libcudnn.so.9`, so needs for different CUDA majors
//! conflict. The choice is the newest release the catalog can install here
//! that satisfies every need, runs on the oldest GPU in use and the driver,
//! fits the toolkit when one is given, and no advisory covers.

use std::collections::{BTreeMap, BTreeSet};

use pep440_rs::{Version as PyVersion, VersionSpecifiers};
use pep508_rs::{PackageName, VersionOrUrl};
use serde::Serialize;

use crate::catalog::advisory::{self, Advisory};
use crate::catalog::offer::Offer;
use crate::catalog::{Catalog, FrameworkBuild};
use crate::python::{Distribution, Environment};
use crate::version::{CudaVariant, DriverVersion, ReleaseId, Version};

mod pick;

pub use pick::{For, Frameworks, Pick, choice_lines, pick, report_advisories};

/// One of NVIDIA's cuDNN packages on PyPI, from its name:
/// `nvidia-cudnn-cu13`, `nvidia-cudnn-jit-cu12` (a small local type until a
/// shared one for `pip:` requirements exists).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CudnnPackage {
    /// The package (`nvidia-cudnn-cu13`).
    pub name: String,
    /// The CUDA major it is built for.
    pub cuda: CudaVariant,
    /// The JIT flavour (`nvidia-cudnn-jit-cu*`: only the runtime-compiled engines).
    pub jit: bool,
}

impl CudnnPackage {
    /// The cuDNN package `name` is, if any.
    pub fn from_name(name: &PackageName) -> Option<CudnnPackage> {
        let n = name.as_ref();
        let rest = n.strip_prefix("nvidia-cudnn-")?;
        let (jit, cu) = match rest.strip_prefix("jit-") {
            Some(cu) => (true, cu),
            None => (false, rest),
        };
        let major: u32 = cu.strip_prefix("cu")?.parse().ok()?;
        Some(CudnnPackage {
            name: n.to_string(),
            cuda: CudaVariant::new(major, None),
            jit,
        })
    }
}

/// Where a need comes from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NeedSource {
    /// A `Requires-Dist` of the framework's installed metadata.
    Metadata {
        /// The cuDNN wheel it names.
        package: CudnnPackage,
    },
    /// The catalog's build row: built with this CUDA and cuDNN; it loads the
    /// same cuDNN major at the same or a newer minor.
    BuildRow {
        /// CUDA it was built with.
        cuda: Version,
        /// cuDNN it was built with.
        cudnn: Version,
    },
}

/// What one framework needs of cuDNN.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Need {
    /// The framework's distribution name (`torch`).
    pub framework: String,
    /// Its installed version (`2.15.0`).
    pub framework_version: String,
    /// The requirement as its metadata says it (normalized PEP 508:
    /// `nvidia-cudnn-cu13==9.26.0.51 ; platform_system == 'Linux'`), or the
    /// range a build row gives (`cuDNN >=9.3, <10 for CUDA 12`).
    pub requirement: String,
    /// The CUDA major the cuDNN must be built for.
    pub cuda: CudaVariant,
    /// The cuDNN versions it accepts (PEP 440).
    #[serde(serialize_with = "as_text")]
    pub specifiers: VersionSpecifiers,
    /// Where it comes from.
    pub from: NeedSource,
}

fn as_text<S: serde::Serializer, T: std::fmt::Display>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

impl Need {
    /// Whether release `version` built for `cuda` satisfies it.
    pub fn accepts(&self, version: &Version, cuda: &CudaVariant) -> bool {
        cuda.major() == self.cuda.major() && self.specifiers.contains(&py(version))
    }

    /// A one-line description: `torch 2.15.0 requires nvidia-cudnn-cu13==9.26.0.51`.
    pub fn describe(&self) -> String {
        let verb = match self.from {
            NeedSource::Metadata { .. } => "requires",
            NeedSource::BuildRow { .. } => "needs",
        };
        format!(
            "{} {} {verb} {}",
            self.framework, self.framework_version, self.requirement
        )
    }
}

/// A cuDNN release as PEP 440 sees it.
fn py(v: &Version) -> PyVersion {
    PyVersion::new(v.parts().iter().map(|p| u64::from(*p)))
}

/// How a framework's process finds cuDNN.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Loads {
    /// The cuDNN wheel installed in its environment, loaded by path before
    /// anything else: torch (`_preload_cuda_deps` in `torch/__init__.py`)
    /// and JAX's CUDA plugin (`_load_nvidia_libraries`) on Linux.
    Wheel {
        /// The wheel (`nvidia-cudnn-cu13`).
        package: String,
        /// Its version.
        version: String,
    },
    /// The copy inside its own wheel (torch on Windows, `torch\lib`).
    Bundled,
    /// By name from the loader path (`LD_LIBRARY_PATH`, `PATH`, the system):
    /// what `cudnnm exec`, `cudnnm env` or a deployment puts there.
    LoaderPath,
}

/// An installed cuDNN wheel and whether it satisfies a need.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WheelState {
    /// The package (`nvidia-cudnn-cu13`).
    pub package: String,
    /// Its installed version (`9.26.0.51`).
    pub version: String,
    /// Whether it satisfies every need of the framework.
    pub satisfies: bool,
}

/// One framework of the environment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Framework {
    /// Its distribution name.
    pub name: String,
    /// Its installed version.
    pub version: String,
    /// What it needs of cuDNN; empty when neither its metadata nor the catalog says.
    pub needs: Vec<Need>,
    /// The CUDA and cuDNN it was built with, where the catalog knows it.
    pub built_with: Option<(Version, Version)>,
    /// The cuDNN wheels its needs name that are installed here.
    pub wheels: Vec<WheelState>,
    /// Whether the release that applies here (pin, default) satisfies its
    /// needs; `None` when no release applies or it has no need.
    pub applies_ok: Option<bool>,
    /// How its process finds cuDNN.
    pub loads: Loads,
}

/// What stops a release from being chosen.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PassedOver {
    /// An advisory covers it.
    Advisory {
        /// The advisory's id.
        id: String,
        /// Its summary.
        summary: String,
    },
    /// The oldest GPU in use is below its minimum compute capability.
    Gpu {
        /// The minimum.
        needs: Version,
        /// The GPU's.
        has: Version,
    },
    /// The driver is older than its CUDA needs.
    Driver {
        /// The minimum driver.
        needs: DriverVersion,
        /// The installed driver.
        has: DriverVersion,
    },
    /// It is not built for the CUDA of the toolkit it must fit.
    Toolkit {
        /// The toolkit's CUDA.
        cuda: Version,
    },
}

/// A release passed over, and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Skipped {
    /// The release.
    pub release: ReleaseId,
    /// Why.
    pub why: PassedOver,
}

/// A way out of a conflict.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Resolution {
    /// A build of one framework for the other's CUDA major (from the catalog's build rows).
    OtherBuild {
        /// The framework to change.
        framework: String,
        /// A version that has such a build.
        version: Version,
        /// The CUDA of that build.
        cuda: Version,
        /// The cuDNN it was built with.
        cudnn: Version,
    },
    /// Each framework in its own environment (and so its own process).
    SeparateEnvironments {
        /// The frameworks to separate.
        frameworks: [String; 2],
    },
}

/// Two needs no release satisfies together.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Conflict {
    /// The first need.
    pub first: Need,
    /// The second need.
    pub second: Need,
    /// What would resolve it.
    pub resolutions: Vec<Resolution>,
}

/// The release chosen for every framework, or why there is none.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Choice {
    /// No framework here needs a cuDNN.
    NoNeeds,
    /// The newest release satisfying every need that runs here.
    Release {
        /// The release.
        release: ReleaseId,
        /// The PyPI package, when the catalog has it only as a wheel.
        wheel: Option<String>,
        /// Newer releases satisfying every need that were passed over.
        passed_over: Vec<Skipped>,
    },
    /// Two needs no release satisfies together.
    Conflict(Box<Conflict>),
    /// Releases satisfy every need, but none of them can be chosen here.
    NoneRuns {
        /// Each candidate and why it was passed over.
        passed_over: Vec<Skipped>,
    },
    /// The catalog has no release satisfying every need (each pair has one).
    NoneKnown,
}

/// The machine the release must run on.
#[derive(Clone, Debug, Default)]
pub struct Machine {
    /// The compute capability of the oldest GPU in use.
    pub gpu: Option<Version>,
    /// The installed driver.
    pub driver: Option<DriverVersion>,
    /// The CUDA of the toolkit the release must fit (`use` deploys into it).
    pub toolkit: Option<Version>,
    /// Windows driver floors.
    pub windows: bool,
}

/// What the evaluation reads.
pub struct Request<'a> {
    /// The Python environment.
    pub env: &'a Environment,
    /// The catalog (build rows, support matrix, driver floors).
    pub catalog: &'a Catalog,
    /// The releases the catalog can install here ([`crate::catalog::offer::offers_for`]).
    pub offers: &'a [Offer],
    /// The advisories.
    pub advisories: &'a [Advisory],
    /// The machine.
    pub machine: &'a Machine,
    /// Only this framework (`--for torch`); `None`: every one.
    pub only: Option<&'a PackageName>,
    /// The release that applies here (pin, default), if any.
    pub applies: Option<&'a ReleaseId>,
}

/// The frameworks of an environment and the release that suits them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// The frameworks, by name.
    pub frameworks: Vec<Framework>,
    /// The cuBLAS installed beside them (`nvidia-cublas*`), for advisories.
    pub cublas: Option<Version>,
    /// The choice.
    pub choice: Choice,
    /// Releases in use here that an advisory covers.
    pub advised: Vec<AdvisedInUse>,
}

/// A release in use that an advisory covers: the one that applies here, or
/// a cuDNN wheel installed in the environment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AdvisedInUse {
    /// The release (`9.10.0.56_cuda12`).
    pub release: ReleaseId,
    /// The wheel holding it, for an installed wheel; `None` for the release that applies here.
    pub wheel: Option<String>,
    /// The advisory's id.
    pub id: String,
    /// Its summary.
    pub summary: String,
    /// Its source.
    pub source: String,
}

/// Distributions that load cuDNN though their metadata may not say so.
const KNOWN: &[&str] = &[
    "torch",
    "tensorflow",
    "onnxruntime-gpu",
    "paddlepaddle-gpu",
    "jax-cuda12-plugin",
    "jax-cuda13-plugin",
    "ctranslate2",
];

/// The catalog's name for a framework's build rows.
fn catalog_name(dist: &str) -> Option<&'static str> {
    match dist {
        "tensorflow" => Some("tensorflow"),
        "torch" => Some("pytorch"),
        "onnxruntime-gpu" => Some("onnxruntime"),
        "jax-cuda12-plugin" => Some("jax-cuda12-plugin"),
        "jax-cuda13-plugin" => Some("jax-cuda13-plugin"),
        _ => None,
    }
}

/// Evaluates `req`: every framework's needs and the release for them all.
pub fn evaluate(req: &Request<'_>) -> Report {
    let env = req.env;
    let extras = env.extras_in_use();
    let windows = env.markers().sys_platform() == "win32";
    let mut frameworks = Vec::new();
    for d in &env.distributions {
        if CudnnPackage::from_name(&d.name).is_some() {
            continue;
        }
        if req.only.is_some_and(|o| o != &d.name) {
            continue;
        }
        let mut needs: Vec<Need> = env
            .requirements_here(d, &extras)
            .into_iter()
            .filter_map(|r| {
                let package = CudnnPackage::from_name(&r.name)?;
                let specifiers = match &r.version_or_url {
                    Some(VersionOrUrl::VersionSpecifier(s)) => s.clone(),
                    None => VersionSpecifiers::empty(),
                    Some(VersionOrUrl::Url(_)) => return None,
                };
                Some(Need {
                    framework: d.name.to_string(),
                    framework_version: d.version.to_string(),
                    requirement: r.to_string(),
                    cuda: package.cuda,
                    specifiers,
                    from: NeedSource::Metadata { package },
                })
            })
            .collect();
        let row = build_row(req.catalog, d, windows);
        if !needs.is_empty() || KNOWN.contains(&d.name.as_ref()) || row.is_some() {
            let bundled = windows && d.name.as_ref() == "torch" && bundles_cudnn(env, d);
            if needs.is_empty()
                && !bundled
                && let Some(r) = row
            {
                needs.push(row_need(d, r));
            }
            let wheels = wheel_states(env, &needs);
            let loads = loads(d, windows, bundled, &wheels);
            let applies_ok = req
                .applies
                .filter(|_| !needs.is_empty())
                .map(|id| needs.iter().all(|n| n.accepts(&id.version, &id.cuda)));
            frameworks.push(Framework {
                name: d.name.to_string(),
                version: d.version.to_string(),
                built_with: row.map(|r| (r.cuda.clone(), r.cudnn.clone())),
                needs,
                wheels,
                applies_ok,
                loads,
            });
        }
    }
    let cublas = cublas(env);
    let needs: Vec<&Need> = frameworks.iter().flat_map(|f| &f.needs).collect();
    let choice = choose(req, &needs, cublas.as_ref());
    let advised = advised(req, cublas.as_ref());
    Report {
        frameworks,
        cublas,
        choice,
        advised,
    }
}

/// What [`gather`] reads from the machine.
pub struct Gather<'a> {
    /// The process environment (PATH, `VIRTUAL_ENV`, `CUDA_VISIBLE_DEVICES` …).
    pub env: &'a crate::env::Env,
    /// The home (catalog, pin, default, store).
    pub home: &'a crate::home::Home,
    /// `--python PATH`: an interpreter or environment folder; `None`: the active one.
    pub python: Option<&'a std::path::Path>,
    /// Only this framework (`--for torch`).
    pub only: Option<&'a PackageName>,
    /// The CUDA of the toolkit the release must fit, when it is deployed into one.
    pub toolkit: Option<Version>,
}

/// A Python environment read and evaluated.
pub struct Gathered {
    /// The environment.
    pub environment: Environment,
    /// The release that applies here (pin, default), when one resolves to an installed release.
    pub applies: Option<ReleaseId>,
    /// The catalog's warnings (unreadable user catalog rows).
    pub catalog_warnings: Vec<String>,
    /// The evaluation.
    pub report: Report,
}

/// Locates the environment, reads it, reads the GPUs and driver
/// (`nvidia-smi`), the catalog and the release that applies here, and
/// evaluates ([`evaluate`]).
///
/// # Errors
/// When no Python environment is found ([`crate::python::locate`]), or the
/// home's catalog cannot be read.
pub fn gather(g: &Gather<'_>) -> crate::error::Result<Gathered> {
    let located = crate::python::locate(g.env, g.python)?;
    let environment = Environment::read(located);
    let catalog = Catalog::load(g.home)?;
    let offers = crate::catalog::offer::offers_for(&catalog, g.env.platform());
    let gpus = crate::gpu::visible(g.env, &crate::gpu::Processes);
    let driver = crate::gpu::find_nvidia_smi(g.env).and_then(|smi| {
        use crate::gpu::Runner;
        crate::gpu::Processes
            .run(&smi, &crate::gpu::DRIVER_QUERY)
            .ok()
            .and_then(|out| crate::gpu::parse_driver(&out))
    });
    let machine = Machine {
        gpu: crate::gpu::oldest(&gpus).map(|x| x.compute.clone()),
        driver,
        toolkit: g.toolkit.clone(),
        windows: g.env.is_windows(),
    };
    let applies = crate::pin::resolve_installed(None, g.env, g.home)
        .ok()
        .flatten()
        .map(|(_, r)| ReleaseId::new(r.version().clone(), *r.cuda()));
    let advisories = advisory::with_yanks(&catalog);
    let report = evaluate(&Request {
        env: &environment,
        catalog: &catalog,
        offers: &offers,
        advisories: &advisories,
        machine: &machine,
        only: g.only,
        applies: applies.as_ref(),
    });
    Ok(Gathered {
        environment,
        applies,
        catalog_warnings: catalog.warnings().to_vec(),
        report,
    })
}

/// The releases in use that an advisory covers: the one that applies here
/// and the cuDNN wheels installed in the environment.
fn advised(req: &Request<'_>, cublas: Option<&Version>) -> Vec<AdvisedInUse> {
    let mut out = Vec::new();
    let mut push = |release: ReleaseId, wheel: Option<String>| {
        for a in advisory::covering(
            req.advisories,
            &release.version,
            &release.cuda,
            wheel.as_deref(),
            cublas,
        ) {
            out.push(AdvisedInUse {
                release: release.clone(),
                wheel: wheel.clone(),
                id: a.id.clone(),
                summary: a.summary.clone(),
                source: a.source.clone(),
            });
        }
    };
    if let Some(id) = req.applies {
        push(id.clone(), None);
    }
    for d in &req.env.distributions {
        let Some(p) = CudnnPackage::from_name(&d.name) else {
            continue;
        };
        let parts: Option<Vec<u32>> = d
            .version
            .release()
            .iter()
            .map(|x| u32::try_from(*x).ok())
            .collect();
        if let Some(parts) = parts.filter(|p| !p.is_empty()) {
            push(
                ReleaseId::new(Version::from_parts(&parts), p.cuda),
                Some(p.name),
            );
        }
    }
    out
}

/// The catalog row describing `d`'s build on this OS, if any.
fn build_row<'a>(cat: &'a Catalog, d: &Distribution, windows: bool) -> Option<&'a FrameworkBuild> {
    let name = catalog_name(d.name.as_ref())?;
    let release = d.version.release();
    let parts: Vec<u32> = release
        .iter()
        .take(3)
        .map(|p| u32::try_from(*p).unwrap_or(u32::MAX))
        .collect();
    let v = Version::from_parts(&parts);
    let key = |x: &Version| (x.major(), x.minor());
    let os = if windows { "windows" } else { "linux" };
    cat.frameworks().iter().find(|r| {
        r.framework == name
            && r.os.as_deref().is_none_or(|o| o == os)
            && key(&r.first) <= key(&v)
            && key(&v) <= key(&r.last)
    })
}

/// The need a build row gives: the same major, at least the minor it was built with.
fn row_need(d: &Distribution, r: &FrameworkBuild) -> Need {
    let (major, minor) = (r.cudnn.major(), r.cudnn.minor());
    let specifiers: VersionSpecifiers = format!(">={major}.{minor}, <{}", major + 1)
        .parse()
        .expect("a range of two numbers parses");
    Need {
        framework: d.name.to_string(),
        framework_version: d.version.to_string(),
        requirement: format!(
            "cuDNN >={major}.{minor}, <{} for CUDA {} (built with cuDNN {} and CUDA {})",
            major + 1,
            r.cuda.major(),
            r.cudnn,
            r.cuda
        ),
        cuda: CudaVariant::new(r.cuda.major(), None),
        specifiers,
        from: NeedSource::BuildRow {
            cuda: r.cuda.clone(),
            cudnn: r.cudnn.clone(),
        },
    }
}

/// True when torch's own wheel holds cuDNN DLLs (`torch\lib\cudnn64_*.dll`).
fn bundles_cudnn(env: &Environment, d: &Distribution) -> bool {
    let lib = env.site_of(d).join("torch").join("lib");
    std::fs::read_dir(lib).is_ok_and(|rd| {
        rd.flatten().take(10_000).any(|e| {
            let n = e.file_name().to_string_lossy().to_ascii_lowercase();
            n.starts_with("cudnn64_") && n.ends_with(".dll")
        })
    })
}

/// The installed cuDNN wheels the needs name, and whether each satisfies them.
fn wheel_states(env: &Environment, needs: &[Need]) -> Vec<WheelState> {
    let mut out: Vec<WheelState> = Vec::new();
    for n in needs {
        let NeedSource::Metadata { package } = &n.from else {
            continue;
        };
        if out.iter().any(|w| w.package == package.name) {
            continue;
        }
        let Ok(name) = package.name.parse::<PackageName>() else {
            continue;
        };
        let Some(w) = env.get(&name) else { continue };
        let satisfies = needs
            .iter()
            .filter(|x| matches!(&x.from, NeedSource::Metadata { package: p } if p.name == package.name))
            .all(|x| x.specifiers.contains(&w.version));
        out.push(WheelState {
            package: package.name.clone(),
            version: w.version.to_string(),
            satisfies,
        });
    }
    out
}

/// How `d`'s process finds cuDNN (see [`Loads`]).
fn loads(d: &Distribution, windows: bool, bundled: bool, wheels: &[WheelState]) -> Loads {
    if bundled {
        return Loads::Bundled;
    }
    let preloads = matches!(
        d.name.as_ref(),
        "torch" | "jax-cuda12-plugin" | "jax-cuda13-plugin"
    );
    match wheels.first() {
        Some(w) if preloads && !windows => Loads::Wheel {
            package: w.package.clone(),
            version: w.version.clone(),
        },
        _ => Loads::LoaderPath,
    }
}

/// The cuBLAS installed in the environment (`nvidia-cublas`, `nvidia-cublas-cu12`).
fn cublas(env: &Environment) -> Option<Version> {
    env.distributions
        .iter()
        .filter(|d| {
            let n = d.name.as_ref();
            n == "nvidia-cublas" || n.strip_prefix("nvidia-cublas-cu").is_some()
        })
        .filter_map(|d| {
            let parts: Vec<u32> = d
                .version
                .release()
                .iter()
                .take(4)
                .map(|p| u32::try_from(*p).ok())
                .collect::<Option<_>>()?;
            Some(Version::from_parts(&parts))
        })
        .max()
}

/// The newest offer that satisfies every need and can be chosen here.
fn choose(req: &Request<'_>, needs: &[&Need], cublas: Option<&Version>) -> Choice {
    if needs.is_empty() {
        return Choice::NoNeeds;
    }
    // Newest first; for one release, an archive before a wheel (as `install` lists them).
    let mut offers: Vec<&Offer> = req.offers.iter().collect();
    offers.sort_by(|a, b| {
        b.version
            .cmp(&a.version)
            .then(a.wheel.is_some().cmp(&b.wheel.is_some()))
    });
    let all = |o: &Offer| needs.iter().all(|n| n.accepts(&o.version, &o.cuda));
    let mut passed_over: Vec<Skipped> = Vec::new();
    let mut seen: BTreeSet<ReleaseId> = BTreeSet::new();
    let mut any = false;
    for o in offers.iter().copied().filter(|o| all(o)) {
        any = true;
        let id = ReleaseId::new(o.version.clone(), o.cuda);
        match why_not(req, o, cublas) {
            None => {
                passed_over.retain(|s| s.release != id);
                return Choice::Release {
                    release: id,
                    wheel: o.wheel.clone(),
                    passed_over,
                };
            }
            Some(why) => {
                if seen.insert(id.clone()) {
                    passed_over.push(Skipped { release: id, why });
                }
            }
        }
    }
    if any {
        return Choice::NoneRuns { passed_over };
    }
    // No release satisfies them all: name the first pair that no release satisfies together.
    for (i, a) in needs.iter().enumerate() {
        for b in &needs[i + 1..] {
            let together = req
                .offers
                .iter()
                .any(|o| a.accepts(&o.version, &o.cuda) && b.accepts(&o.version, &o.cuda));
            if !together {
                return Choice::Conflict(Box::new(Conflict {
                    first: (*a).clone(),
                    second: (*b).clone(),
                    resolutions: resolutions(req.catalog, a, b),
                }));
            }
        }
    }
    Choice::NoneKnown
}

/// Why offer `o` cannot be chosen here, if it cannot.
fn why_not(req: &Request<'_>, o: &Offer, cublas: Option<&Version>) -> Option<PassedOver> {
    if let Some(a) = advisory::covering(
        req.advisories,
        &o.version,
        &o.cuda,
        o.wheel.as_deref(),
        cublas,
    )
    .first()
    {
        return Some(PassedOver::Advisory {
            id: a.id.clone(),
            summary: a.summary.clone(),
        });
    }
    let m = req.machine;
    if let Some(t) = &m.toolkit
        && !o.cuda.fits(t.major(), t.minor())
    {
        return Some(PassedOver::Toolkit { cuda: t.clone() });
    }
    if let Some(has) = &m.gpu
        && let Some(needs) = req.catalog.min_compute(&o.version, &o.cuda)
        && *has < needs
    {
        return Some(PassedOver::Gpu {
            needs,
            has: has.clone(),
        });
    }
    if let Some(has) = &m.driver {
        let cuda = Version::from_parts(&[o.cuda.major(), o.cuda.minor().unwrap_or(0)]);
        if let Some(needs) = req.catalog.min_driver(&cuda, m.windows)
            && *has < needs
        {
            return Some(PassedOver::Driver {
                needs,
                has: has.clone(),
            });
        }
    }
    None
}

/// What resolves a conflict between `a` and `b`: a build of either framework
/// for the other's CUDA major (the newest the catalog's build rows know), and
/// separate environments.
fn resolutions(cat: &Catalog, a: &Need, b: &Need) -> Vec<Resolution> {
    let mut out = Vec::new();
    for (this, other) in [(a, b), (b, a)] {
        let Some(name) = catalog_name(&this.framework) else {
            continue;
        };
        let mut best: BTreeMap<(u32, u32), &FrameworkBuild> = BTreeMap::new();
        for r in cat.frameworks().iter().filter(|r| {
            r.framework == name
                && r.cuda.major() == other.cuda.major()
                && other.accepts(&r.cudnn, &other.cuda)
        }) {
            best.entry((r.last.major(), r.last.minor())).or_insert(r);
        }
        if let Some((_, r)) = best.iter().next_back() {
            out.push(Resolution::OtherBuild {
                framework: this.framework.clone(),
                version: r.last.clone(),
                cuda: r.cuda.clone(),
                cudnn: r.cudnn.clone(),
            });
        }
    }
    out.push(Resolution::SeparateEnvironments {
        frameworks: [a.framework.clone(), b.framework.clone()],
    });
    out
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;
    use crate::python::{FoundBy, Located};
    use pep508_rs::{MarkerEnvironment, MarkerEnvironmentBuilder};

    /// Real `METADATA` headers (tests/fixtures/frameworks/SOURCES.md).
    fn fixture(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/frameworks")
            .join(format!("{name}.METADATA"));
        std::fs::read_to_string(p).unwrap()
    }

    fn markers(windows: bool) -> MarkerEnvironment {
        MarkerEnvironment::try_from(MarkerEnvironmentBuilder {
            implementation_name: "cpython",
            implementation_version: "3.12.3",
            os_name: if windows { "nt" } else { "posix" },
            platform_machine: if windows { "AMD64" } else { "x86_64" },
            platform_python_implementation: "CPython",
            platform_release: "",
            platform_system: if windows { "Windows" } else { "Linux" },
            platform_version: "",
            python_full_version: "3.12.3",
            python_version: "3.12",
            sys_platform: if windows { "win32" } else { "linux" },
        })
        .unwrap()
    }

    /// An environment of real fixtures (`torch-2.15.0`) and minimal
    /// companions (`("nvidia-cublas", "13.2.1.1")`).
    fn env(
        real: &[&str],
        plain: &[(&str, &str)],
        windows: bool,
    ) -> (tempfile::TempDir, Environment) {
        let d = tempfile::tempdir().unwrap();
        for name in real {
            let dir = d.path().join(format!("{name}.dist-info"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("METADATA"), fixture(name)).unwrap();
        }
        for (n, v) in plain {
            let dir = d
                .path()
                .join(format!("{}-{v}.dist-info", n.replace('-', "_")));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("METADATA"), format!("Name: {n}\nVersion: {v}\n")).unwrap();
        }
        let located = Located {
            site_packages: vec![d.path().to_path_buf()],
            markers: markers(windows),
            found_by: FoundBy::Layout(d.path().to_path_buf()),
        };
        (d, Environment::read(located))
    }

    fn offer(v: &str, cuda: u32) -> Offer {
        Offer {
            version: v.parse().unwrap(),
            cuda: CudaVariant::new(cuda, None),
            flavour: crate::version::Flavour::Full,
            wheel: Some(format!("nvidia-cudnn-cu{cuda}")),
            platform: None,
        }
    }

    fn offers() -> Vec<Offer> {
        let mut o = Vec::new();
        for v in [
            "9.10.0.56",
            "9.10.2.21",
            "9.20.0.48",
            "9.25.0.15",
            "9.26.0.51",
            "9.28.0.42",
        ] {
            o.push(offer(v, 12));
        }
        for v in ["9.12.0.46", "9.25.0.15", "9.26.0.51", "9.28.1.4"] {
            o.push(offer(v, 13));
        }
        o
    }

    fn report(e: &Environment, machine: &Machine, only: Option<&PackageName>) -> Report {
        let cat = Catalog::embedded();
        let offers = offers();
        let adv = advisory::with_yanks(&cat);
        evaluate(&Request {
            env: e,
            catalog: &cat,
            offers: &offers,
            advisories: &adv,
            machine,
            only,
            applies: None,
        })
    }

    #[test]
    fn torch_and_onnxruntime_choose_torchs_exact_cudnn() {
        let (_d, e) = env(
            &[
                "torch-2.15.0",
                "onnxruntime_gpu-1.31.1",
                "nvidia_cudnn_cu13-9.26.0.51",
            ],
            &[],
            false,
        );
        let r = report(&e, &Machine::default(), None);
        let needs: Vec<String> = r
            .frameworks
            .iter()
            .flat_map(|f| &f.needs)
            .map(Need::describe)
            .collect();
        assert_eq!(
            needs,
            [
                // onnxruntime-gpu[cudnn] is in use: nvidia-cudnn-cu13 is installed.
                "onnxruntime-gpu 1.31.1 requires nvidia-cudnn-cu13~=9.0 ; extra == 'cudnn'",
                "torch 2.15.0 requires nvidia-cudnn-cu13==9.26.0.51 ; platform_system == 'Linux'",
            ]
        );
        let Choice::Release { release, .. } = &r.choice else {
            panic!("{:?}", r.choice)
        };
        assert_eq!(release.to_string(), "9.26.0.51_cuda13");
        let torch = r.frameworks.iter().find(|f| f.name == "torch").unwrap();
        assert_eq!(
            torch.loads,
            Loads::Wheel {
                package: "nvidia-cudnn-cu13".into(),
                version: "9.26.0.51".into()
            }
        );
        assert!(torch.wheels[0].satisfies);
        let ort = r
            .frameworks
            .iter()
            .find(|f| f.name == "onnxruntime-gpu")
            .unwrap();
        assert_eq!(ort.loads, Loads::LoaderPath);
    }

    #[test]
    fn torch_on_windows_needs_nothing_of_the_wheel() {
        let (_d, e) = env(&["torch-2.15.0"], &[], true);
        let r = report(&e, &Machine::default(), None);
        // The nvidia-cudnn-cu13 requirement is for Linux only, and the catalog has no row
        // for 2.15 on Windows (PyTorch's wheels bundle cuDNN there).
        assert!(
            r.frameworks[0]
                .needs
                .iter()
                .all(|n| !matches!(n.from, NeedSource::Metadata { .. }))
        );
    }

    #[test]
    fn torch_and_a_cuda_12_framework_conflict_naming_both() {
        let (_d, e) = env(
            &[
                "torch-2.15.0",
                "tensorflow-2.21.0",
                "nvidia_cudnn_cu12-9.10.2.21",
            ],
            &[
                ("nvidia-cublas-cu12", "12.5.3.2"),
                ("nvidia-cuda-cupti-cu12", "12.5.82"),
                ("nvidia-cuda-nvcc-cu12", "12.5.82"),
                ("nvidia-cuda-nvrtc-cu12", "12.5.82"),
                ("nvidia-cuda-runtime-cu12", "12.5.82"),
                ("nvidia-cufft-cu12", "11.2.3.61"),
                ("nvidia-curand-cu12", "10.3.6.82"),
                ("nvidia-cusolver-cu12", "11.6.3.83"),
                ("nvidia-cusparse-cu12", "12.5.1.3"),
                ("nvidia-nccl-cu12", "2.27.7"),
                ("nvidia-nvjitlink-cu12", "12.5.82"),
            ],
            false,
        );
        let r = report(&e, &Machine::default(), None);
        let Choice::Conflict(c) = &r.choice else {
            panic!("{:?}", r.choice)
        };
        assert_eq!(
            c.first.describe(),
            "tensorflow 2.21.0 requires nvidia-cudnn-cu12>=9.3.0.75,<10.0 ; extra == 'and-cuda'"
        );
        assert_eq!(
            c.second.describe(),
            "torch 2.15.0 requires nvidia-cudnn-cu13==9.26.0.51 ; platform_system == 'Linux'"
        );
        assert!(c.resolutions.contains(&Resolution::SeparateEnvironments {
            frameworks: ["tensorflow".into(), "torch".into()]
        }));
        // torch's own metadata is not satisfied by the cu12 wheel it sees.
        let torch = r.frameworks.iter().find(|f| f.name == "torch").unwrap();
        assert!(torch.wheels.is_empty());
        // `--for torch` alone has an answer.
        let only: PackageName = "torch".parse().unwrap();
        let r = report(&e, &Machine::default(), Some(&only));
        assert!(
            matches!(&r.choice, Choice::Release { release, .. } if release.to_string() == "9.26.0.51_cuda13")
        );
    }

    #[test]
    fn an_advisory_release_is_never_chosen() {
        // jax[cuda12] accepts >=9.10.2.21; TensorFlow's build row >=9.3: alone, TF would take the
        // newest, and a range over the yanked upload skips it.
        let (_d, e) = env(&["tensorflow-2.21.0"], &[], false);
        let cat = Catalog::embedded();
        let adv = advisory::with_yanks(&cat);
        let offers = vec![offer("9.10.0.56", 12), offer("9.25.0.15", 12)];
        let r = evaluate(&Request {
            env: &e,
            catalog: &cat,
            offers: &offers,
            advisories: &adv,
            machine: &Machine::default(),
            only: None,
            applies: None,
        });
        let Choice::NoneRuns { passed_over } = &r.choice else {
            panic!("{:?}", r.choice)
        };
        let ids: Vec<(String, String)> = passed_over
            .iter()
            .map(|s| {
                let PassedOver::Advisory { id, .. } = &s.why else {
                    panic!("{s:?}")
                };
                (s.release.to_string(), id.clone())
            })
            .collect();
        assert_eq!(
            ids,
            [
                (
                    "9.25.0.15_cuda12".to_string(),
                    "pypi-9.25.0.15-yanked".to_string()
                ),
                (
                    "9.10.0.56_cuda12".to_string(),
                    "cudnn-9.10.0-abi".to_string()
                ),
            ]
        );
        let offers = vec![
            offer("9.10.0.56", 12),
            offer("9.25.0.15", 12),
            offer("9.24.1.1", 12),
        ];
        let r = evaluate(&Request {
            env: &e,
            catalog: &cat,
            offers: &offers,
            advisories: &adv,
            machine: &Machine::default(),
            only: None,
            applies: None,
        });
        let Choice::Release {
            release,
            passed_over,
            ..
        } = &r.choice
        else {
            panic!("{:?}", r.choice)
        };
        assert_eq!(release.to_string(), "9.24.1.1_cuda12");
        assert_eq!(passed_over.len(), 1);
    }

    #[test]
    fn jax_with_cuda_13_takes_its_range_and_the_gpu_and_driver_limit_it() {
        let (_d, e) = env(
            &[
                "jax-0.12.0.1",
                "jaxlib-0.12.0.1",
                "jax_cuda13_plugin-0.12.0.1",
                "nvidia_cudnn_cu13-9.26.0.51",
            ],
            &[("jax-cuda13-pjrt", "0.12.0.1")],
            false,
        );
        let r = report(&e, &Machine::default(), None);
        let plugin = r
            .frameworks
            .iter()
            .find(|f| f.name == "jax-cuda13-plugin")
            .unwrap();
        assert_eq!(
            plugin.needs[0].requirement,
            "nvidia-cudnn-cu13>=9.12.0.46,<10.0 ; sys_platform == 'linux' and extra == 'with-cuda'"
        );
        assert!(
            matches!(&r.choice, Choice::Release { release, .. } if release.to_string() == "9.28.1.4_cuda13")
        );
        // A driver below CUDA 13's floor passes every CUDA 13 build over.
        let old = Machine {
            driver: Some("535.104.05".parse().unwrap()),
            ..Machine::default()
        };
        let r = report(&e, &old, None);
        let Choice::NoneRuns { passed_over } = &r.choice else {
            panic!("{:?}", r.choice)
        };
        assert!(passed_over.iter().all(|s| matches!(
            s.why,
            PassedOver::Driver { .. } | PassedOver::Advisory { .. }
        )));
    }
}

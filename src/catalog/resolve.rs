//! Picking one archive for `cudnnm install SPEC [--cuda V] [--platform P]`.
//!
//! The spec narrows versions (`8.1.0.77`, a prefix `8.1`, NVIDIA's
//! `8.9.7.29_cuda12`); `--cuda` names the CUDA the user builds against; the
//! platform is the host's unless `--platform` says otherwise. The newest
//! matching version wins. When that version is built for several CUDA
//! variants, `--cuda` or the detected toolkits choose; if neither does, the
//! user is asked to say `--cuda`, with the variants listed. Failures say what
//! the catalog does have: the nearest known versions, the platforms a release
//! exists for, or the PyPI package that carries it.
//!
//! The flavour is the spec's (`+jit`), else the full build. A release PyPI
//! has yanked is never picked by a prefix, a range or `latest`; named
//! exactly it is, and the pick carries the reason for the warning. A GPU
//! "runs" a build when it is neither below its floor nor newer than it
//! supports ([`Catalog::runs_on`]).

use super::{Archive, Catalog, FetchRequest, WheelFile, offer};
use crate::error::{Error, Kind, Result};
use crate::toolkit::Toolkit;
use crate::version::{CudaVariant, Flavour, Platform, ReleaseId, Version};

/// Whether a build for `variant` serves a user who asked for `--cuda want`.
/// `want` without a minor (`12`) takes every build of that major; with a minor
/// (`11.8`, `10.2`) it takes builds that fit such a toolkit: the same
/// major.minor before CUDA 11, the same major from 11 on
/// (docs/releases.md#minor-version-compatibility).
pub fn cuda_serves(want: &CudaVariant, variant: &CudaVariant) -> bool {
    match want.minor() {
        None => variant.major() == want.major(),
        Some(mi) => variant == want || variant.fits(want.major(), mi),
    }
}

/// How well `variant` matches `want` (lower is better): the same variant,
/// then a major-only build, then the nearest older minor, then the rest.
fn rank(want: &CudaVariant, variant: &CudaVariant) -> (u8, u32) {
    if variant == want {
        return (0, 0);
    }
    match (want.minor(), variant.minor()) {
        (_, None) => (1, 0),
        (Some(w), Some(v)) if v <= w => (2, w - v),
        (Some(w), Some(v)) => (3, v - w),
        (None, Some(v)) => (3, 100 - v.min(100)),
    }
}

/// [`select`], but for a version prefix (`9`, `9.1`) on a machine whose
/// oldest GPU in use has compute capability `gpu`: the newest archive that
/// runs on that GPU (by the support matrix's `min_compute`; releases with no
/// known minimum count as running). Returns the pick and, when a newer
/// archive was passed over for the GPU, that archive. An exact spec, or a
/// prefix with nothing that runs, picks as [`select`] does (the caller then
/// refuses or warns).
///
/// # Errors
/// As [`select`].
pub fn select_for_gpu(
    cat: &Catalog,
    req: &FetchRequest,
    toolkits: &[Toolkit],
    gpu: Option<&Version>,
) -> Result<(Archive, Option<Archive>)> {
    select_for_gpu_on(cat, req, toolkits, gpu, Platform::host())
}

/// [`select_for_gpu`] on a machine of platform `host`.
///
/// # Errors
/// As [`select`].
pub fn select_for_gpu_on(
    cat: &Catalog,
    req: &FetchRequest,
    toolkits: &[Toolkit],
    gpu: Option<&Version>,
    host: Option<Platform>,
) -> Result<(Archive, Option<Archive>)> {
    let best = select_on(cat, req, toolkits, host).cloned();
    let Some(cc) = gpu else {
        return best.map(|b| (b, None));
    };
    let runs = |a: &Archive| cat.runs_on(&a.version, &a.cuda, cc);
    if req.spec.is_exact() {
        return best.map(|b| (b, None));
    }
    if let Ok(b) = &best
        && runs(b)
    {
        return Ok((b.clone(), None));
    }
    // The GPU first: a choice among CUDA builds (several variants and no
    // toolkit to choose by) is made among the builds that run here, so
    // neither the pick nor the error's example names one that cannot.
    let mut runnable = cat.clone();
    runnable.archives.retain(runs);
    match select_on(&runnable, req, toolkits, host) {
        Ok(a) => {
            let passed = best.ok().or_else(|| {
                cat.archives()
                    .iter()
                    .filter(|x| x.platform == req.platform && admitted(cat, req, x))
                    .filter(|x| !runs(x))
                    .max_by(|x, y| x.version.cmp(&y.version))
                    .cloned()
            });
            Ok((a.clone(), passed))
        }
        Err(e) => match best {
            Ok(b) => Ok((b, None)),
            Err(_) => Err(e),
        },
    }
}

/// The one archive `req` names for `req.platform`.
///
/// # Errors
/// [`Kind::Usage`] when the spec's CUDA suffix and `--cuda` disagree, or when
/// several CUDA variants remain and nothing chooses among them;
/// [`Kind::NotFound`] when nothing matches (the message lists what exists).
pub fn select<'a>(
    cat: &'a Catalog,
    req: &FetchRequest,
    toolkits: &[Toolkit],
) -> Result<&'a Archive> {
    select_on(cat, req, toolkits, Platform::host())
}

/// [`select`] on a machine of platform `host`.
///
/// # Errors
/// As [`select`].
pub fn select_on<'a>(
    cat: &'a Catalog,
    req: &FetchRequest,
    toolkits: &[Toolkit],
    host: Option<Platform>,
) -> Result<&'a Archive> {
    let spec = &req.spec;
    if let (Some(s), Some(w)) = (&spec.cuda, &req.cuda)
        && !cuda_serves(w, s)
        && !cuda_serves(s, w)
    {
        return Err(Error::new(
            Kind::Usage,
            format!("'{spec}' names CUDA {s} but --cuda says {w}"),
        )
        .hint("drop one of them, or make them agree"));
    }
    let by_spec: Vec<&Archive> = cat
        .archives()
        .iter()
        .filter(|a| spec.matches(&a.version, &a.cuda) && a.flavour == spec.wanted_flavour())
        .collect();
    let on_platform: Vec<&Archive> = by_spec
        .iter()
        .copied()
        .filter(|a| a.platform == req.platform)
        .collect();
    let mut cands: Vec<&Archive> = on_platform
        .iter()
        .copied()
        .filter(|a| req.cuda.as_ref().is_none_or(|w| cuda_serves(w, &a.cuda)))
        .filter(|a| admitted(cat, req, a))
        .collect();
    if cands.is_empty() {
        return Err(not_found(cat, req, &on_platform, host));
    }
    if req.cuda.is_none() && spec.cuda.is_none() && !toolkits.is_empty() {
        let fitting: Vec<&Archive> = cands
            .iter()
            .copied()
            .filter(|a| fits_any(&a.cuda, toolkits))
            .collect();
        if !fitting.is_empty() {
            cands = fitting;
        }
    }
    let newest = cands
        .iter()
        .map(|a| &a.version)
        .max()
        .expect("candidates are not empty")
        .clone();
    let mut same: Vec<&Archive> = cands.into_iter().filter(|a| a.version == newest).collect();
    if same.len() == 1 {
        return Ok(same[0]);
    }
    same.sort_by_key(|a| a.cuda);
    if let Some(w) = req.cuda.as_ref().or(spec.cuda.as_ref()) {
        let best = same
            .iter()
            .map(|a| rank(w, &a.cuda))
            .min()
            .expect("not empty");
        let top: Vec<&Archive> = same
            .iter()
            .copied()
            .filter(|a| rank(w, &a.cuda) == best)
            .collect();
        if top.len() == 1 {
            return Ok(top[0]);
        }
        return Err(ask_cuda(&newest, req, &top, None));
    }
    let fitting: Vec<&Archive> = same
        .iter()
        .copied()
        .filter(|a| fits_any(&a.cuda, toolkits))
        .collect();
    if let [one] = fitting.as_slice() {
        return Ok(one);
    }
    if fitting.len() > 1 {
        // Several toolkits (or one toolkit several builds fit): the one that fits
        // the most toolkits exactly wins, else ask.
        let exact = |a: &&Archive| {
            toolkits
                .iter()
                .filter(|t| {
                    Some(t.cuda.minor()) == a.cuda.minor() && t.cuda.major() == a.cuda.major()
                })
                .count()
        };
        let max = fitting.iter().map(exact).max().unwrap_or(0);
        let top: Vec<&Archive> = fitting
            .iter()
            .copied()
            .filter(|a| exact(a) == max)
            .collect();
        if let ([one], true) = (top.as_slice(), max > 0) {
            return Ok(one);
        }
        return Err(ask_cuda(&newest, req, &fitting, Some(toolkits)));
    }
    Err(ask_cuda(&newest, req, &same, Some(toolkits)))
}

/// Whether an archive the spec matches may be picked: of the spec's
/// flavour, and not yanked unless the spec names its version exactly.
fn admitted(cat: &Catalog, req: &FetchRequest, a: &Archive) -> bool {
    req.spec.matches(&a.version, &a.cuda)
        && a.flavour == req.spec.wanted_flavour()
        && (req.spec.names_exactly(&a.version) || cat.yanked(&a.release_id()).is_none())
}

fn fits_any(variant: &CudaVariant, toolkits: &[Toolkit]) -> bool {
    toolkits
        .iter()
        .any(|t| variant.fits(t.cuda.major(), t.cuda.minor()))
}

/// Several CUDA builds and nothing to choose by: ask for `--cuda`. The
/// example keeps the user's spec (and `--platform` when it is not this
/// machine's), so it picks what that spec picks with `--cuda`: a prefix
/// may then reach a newer release, a PyPI wheel, than the archive named.
fn ask_cuda(
    version: &Version,
    req: &FetchRequest,
    options: &[&Archive],
    toolkits: Option<&[Toolkit]>,
) -> Error {
    let list: Vec<String> = options.iter().map(|a| a.cuda.to_string()).collect();
    let seen = match toolkits {
        Some([]) | None => "no CUDA toolkit was found to choose by".to_string(),
        Some(ts) => format!(
            "toolkits found: {}",
            ts.iter()
                .map(|t| format!("CUDA {} at '{}'", t.cuda, t.root.display()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let platform = req.platform;
    let mut example = req.asked_by.example(req);
    if let Some(a) = options.last() {
        example = example.cuda(a.cuda);
    }
    Error::new(
        Kind::Usage,
        format!(
            "cuDNN {version} for {platform} is built for several CUDA versions ({}); say which with --cuda",
            list.join(", ")
        ),
    )
    .cause(seen)
    .hint(format!(
        "e.g. `{}`",
        example.for_host(crate::platform::HOST_WINDOWS)
    ))
}

/// The releases of the spec's flavour that `req` matches, whatever the
/// platform, with the CUDA `--cuda` asks for: from the archives and the
/// wheel lists, newest first.
fn matching_releases(cat: &Catalog, req: &FetchRequest) -> Vec<ReleaseId> {
    let spec = &req.spec;
    let flavour = spec.wanted_flavour();
    let mut ids: Vec<ReleaseId> = cat
        .archives()
        .iter()
        .filter(|a| a.flavour == flavour)
        .map(|a| a.release_id())
        .chain(
            cat.wheels()
                .iter()
                .filter(|w| w.flavour == flavour)
                .flat_map(|w| {
                    w.versions
                        .iter()
                        .map(move |v| ReleaseId::new(v.clone(), w.cuda).with_flavour(w.flavour))
                }),
        )
        .filter(|id| spec.matches(&id.version, &id.cuda))
        .filter(|id| req.cuda.as_ref().is_none_or(|w| cuda_serves(w, &id.cuda)))
        .collect();
    ids.sort();
    ids.dedup();
    ids.reverse();
    ids
}

/// Why nothing in the catalog matches `req`, and what would: by the rule
/// every install hint follows ([`offer`]), only what this machine can
/// install — an archive for the platform or a PyPI wheel pip fetches here —
/// for the CUDA asked for. A spec that matches only yanked releases says
/// so; a release published for other platforms names them.
fn not_found(
    cat: &Catalog,
    req: &FetchRequest,
    on_platform: &[&Archive],
    host: Option<Platform>,
) -> Error {
    let spec = &req.spec;
    let platform = req.platform;
    let windows = crate::platform::HOST_WINDOWS;
    let offers: Vec<offer::Offer> = offer::offers_from(cat, platform, host)
        .into_iter()
        .filter(|o| req.cuda.as_ref().is_none_or(|w| cuda_serves(w, &o.cuda)))
        .collect();
    // Only a wheel can match here (no archive for the platform does).
    if let Some(o) = offer::best_offer(&offers, spec, None)
        && let Some(package) = &o.wheel
    {
        return Error::new(
            Kind::NotFound,
            format!(
                "cuDNN {spec} has no archive in the catalog; it is published on PyPI as {package} {}",
                o.version
            ),
        )
        .hint(format!(
            "install the wheel: `{}` (or `cudnnm manifest refresh` to look for NVIDIA's archive)",
            o.install().for_host(windows)
        ));
    }
    let here = |id: &ReleaseId| {
        cat.archive_of(id, platform).is_some() || !cat.wheel_files(id, platform).is_empty()
    };
    let matching = matching_releases(cat, req);
    // Every match for this platform is yanked: say so, and how to have one anyway.
    let live_here = matching
        .iter()
        .any(|id| here(id) && cat.yanked(id).is_none());
    if let Some(id) = matching
        .iter()
        .find(|id| here(id) && cat.yanked(id).is_some())
        && !live_here
    {
        let reason = cat.yanked(id).unwrap_or_default();
        let exact = crate::command::CommandLine::install(id.to_string());
        return Error::new(
            Kind::NotFound,
            format!("cuDNN {spec} matches only releases PyPI has yanked"),
        )
        .cause(format!(
            "cuDNN {} is yanked{}",
            id,
            if reason.is_empty() {
                " (no reason given)".to_string()
            } else {
                format!(": {reason}")
            }
        ))
        .hint(format!(
            "a prefix, a range or `latest` never picks a yanked release; name it exactly to install it anyway: `{}`",
            exact.for_host(windows)
        ));
    }
    // The release exists, but not for the CUDA asked for: say for which.
    if let Some(w) = &req.cuda {
        let mut for_cuda: Vec<CudaVariant> = offer::offers_from(cat, platform, host)
            .into_iter()
            .filter(|o| o.flavour == spec.wanted_flavour() && spec.matches(&o.version, &o.cuda))
            .map(|o| o.cuda)
            .collect();
        for_cuda.sort();
        for_cuda.dedup();
        if let Some(newest) = for_cuda.last() {
            let listed: Vec<String> = for_cuda.iter().map(ToString::to_string).collect();
            return Error::new(
                Kind::NotFound,
                format!("there is no CUDA {w} build of cuDNN {spec} for {platform}"),
            )
            .cause(format!(
                "cuDNN {spec} exists for {platform} for CUDA {}",
                listed.join(", ")
            ))
            .hint(format!(
                "choose one of those with --cuda, e.g. `{}`",
                req.asked_by.example(req).cuda(*newest).for_host(windows)
            ));
        }
    }
    if let (Some(w), false) = (&req.cuda, on_platform.is_empty()) {
        let mut vs: Vec<String> = on_platform.iter().map(|a| a.cuda.to_string()).collect();
        vs.dedup();
        return Error::new(
            Kind::NotFound,
            format!("cuDNN {spec} has no {platform} build for CUDA {w} in the catalog"),
        )
        .cause(format!(
            "its builds for {platform} are for CUDA {}",
            vs.join(", ")
        ))
        .hint(format!(
            "choose one with --cuda, or see `cudnnm list --remote --platform {platform}`"
        ));
    }
    // Published, but not for this platform (or only as a wheel pip cannot
    // fetch for another machine): name the platforms that have it.
    if let Some(id) = matching.first() {
        let plats = cat.platforms_of(id);
        let wheel_here = !cat.wheel_files(id, platform).is_empty();
        if wheel_here && host != Some(platform) {
            let file = cat.wheel_files(id, platform)[0].filename.clone();
            return Error::new(
                Kind::NotFound,
                format!(
                    "cuDNN {id} for {platform} is published only as a PyPI wheel ({file})"
                ),
            )
            .cause(format!(
                "pip fetches wheels for the machine it runs on, and this machine is {}",
                host.map_or("another platform", |h| h.as_str())
            ))
            .hint(format!(
                "run `{}` on the {platform} machine, or pick a release with an NVIDIA archive for {platform} (`cudnnm list --remote --platform {platform}`)",
                crate::command::CommandLine::install(id.to_string()).for_host(platform.is_windows())
            ));
        }
        if !plats.contains(&platform) && !plats.is_empty() {
            let names: Vec<&str> = plats.iter().map(Platform::as_str).collect();
            return Error::new(
                Kind::NotFound,
                format!("cuDNN {id} has no {platform} build"),
            )
            .cause(format!("it is published for {}", names.join(", ")))
            .hint(format!(
                "on this machine pick another release (`cudnnm list --remote --platform {platform}`); for another machine pass its platform with --platform"
            ));
        }
    }
    // The nearest releases this machine can install (archives and PyPI
    // wheels), each with its command; else any platform's versions.
    // Of the build the spec asks for (`+jit`): never a hint that installs the other.
    let offers: Vec<offer::Offer> = offers
        .into_iter()
        .filter(|o| o.flavour == spec.wanted_flavour())
        .collect();
    let mut known: Vec<Version> = offers.iter().map(|o| o.version.clone()).collect();
    if known.is_empty() {
        known = cat.archives().iter().map(|a| a.version.clone()).collect();
    }
    known.sort();
    known.dedup();
    let near = spec
        .anchor()
        .map(|a| nearest(a, &known, 5))
        .unwrap_or_default();
    let mut e = Error::new(
        Kind::NotFound,
        format!("cuDNN {spec} is not in the catalog for {platform}"),
    );
    if !near.is_empty() {
        let named: Vec<String> = near
            .iter()
            .map(|v| {
                let exact = crate::version::Spec {
                    flavour: spec.flavour,
                    ..crate::version::Spec::prefix(v.clone(), None)
                };
                match offer::best_offer(&offers, &exact, None).filter(|o| &o.version == v) {
                    Some(o) => format!("{v} (`{}`)", o.install().for_host(windows)),
                    None => v.to_string(),
                }
            })
            .collect();
        e = e.cause(format!("nearest known: {}", named.join(", ")));
    }
    e.hint("`cudnnm list --remote` shows the catalog; `cudnnm manifest refresh` reads PyPI's and NVIDIA's newest indexes; an archive you have installs with `cudnnm install PATH`")
}

/// Up to `n` versions of `known` (sorted, distinct) nearest to `want`: the
/// same major.minor first, then the same major, then any, each by closeness
/// in version order.
pub fn nearest(want: &Version, known: &[Version], n: usize) -> Vec<Version> {
    let pos = known.partition_point(|k| k < want);
    let mut scored: Vec<(u8, usize, &Version)> = known
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let tier = if k.major() == want.major() && k.minor() == want.minor() {
                0
            } else if k.major() == want.major() {
                1
            } else {
                2
            };
            let dist = if i < pos { pos - i } else { i - pos + 1 };
            (tier, dist, k)
        })
        .collect();
    scored.sort_by_key(|s| (s.0, s.1));
    let mut out: Vec<Version> = scored
        .into_iter()
        .take(n)
        .map(|(_, _, k)| k.clone())
        .collect();
    out.sort();
    out
}

/// A release the catalog knows from a PyPI wheel list: installed with the
/// user's pip as `pip:<package>==<version>` (docs/releases.md#pip-wheels).
#[derive(Clone, Debug, PartialEq)]
pub struct WheelPick {
    /// The package (`nvidia-cudnn-cu12`).
    pub package: String,
    /// The release version.
    pub version: Version,
    /// The CUDA the package is built for.
    pub cuda: CudaVariant,
    /// The build the package carries.
    pub flavour: Flavour,
    /// The package version to ask pip for (`9.0.0.312.post1` where only the
    /// post-release has a wheel for the platform).
    pub dist_version: String,
    /// The wheel file the index publishes for the platform, with its URL,
    /// size and SHA-256; `None` where the catalog lists versions only.
    pub file: Option<WheelFile>,
    /// `Some(reason)` when PyPI has yanked the release (picked only when
    /// named exactly; the reason empty when none was given).
    pub yanked: Option<String>,
}

impl WheelPick {
    /// `nvidia-cudnn-cu12==9.27.0.42`.
    pub fn requirement(&self) -> String {
        format!("{}=={}", self.package, self.dist_version)
    }

    /// The release it carries.
    pub fn release_id(&self) -> ReleaseId {
        ReleaseId::new(self.version.clone(), self.cuda).with_flavour(self.flavour)
    }

    /// The same as the only requirement pip is ever handed.
    ///
    /// # Errors
    /// [`crate::error::Kind::Usage`] for a catalog row naming a package
    /// that is not one of NVIDIA's cuDNN packages.
    pub fn pip_requirement(&self) -> crate::error::Result<crate::version::PipRequirement> {
        self.requirement().parse()
    }
}

/// Where the release `install SPEC` picks comes from.
#[derive(Clone, Debug)]
pub enum Pick {
    /// An NVIDIA archive, and a newer one passed over for the GPU (see
    /// [`select_for_gpu`]).
    Archive {
        /// The archive.
        archive: Box<Archive>,
        /// A newer matching archive that does not run on the GPU in use.
        passed_over: Option<Box<Archive>>,
        /// `Some(reason)` when PyPI has yanked the release (see [`WheelPick::yanked`]).
        yanked: Option<String>,
    },
    /// A release published only (or newest) as a PyPI wheel.
    Wheel(Box<WheelPick>),
}

impl Pick {
    /// The release version and CUDA variant picked.
    pub fn release(&self) -> (&Version, &CudaVariant) {
        match self {
            Pick::Archive { archive, .. } => (&archive.version, &archive.cuda),
            Pick::Wheel(w) => (&w.version, &w.cuda),
        }
    }

    /// The release picked, its flavour included.
    pub fn release_id(&self) -> ReleaseId {
        match self {
            Pick::Archive { archive, .. } => archive.release_id(),
            Pick::Wheel(w) => w.release_id(),
        }
    }

    /// `Some(reason)` when the release picked is yanked (named exactly).
    pub fn yanked(&self) -> Option<&str> {
        match self {
            Pick::Archive { yanked, .. } => yanked.as_deref(),
            Pick::Wheel(w) => w.yanked.as_deref(),
        }
    }

    /// The warning an exact request of a yanked release gives:
    /// `cuDNN 9.25.0.15_cuda12 is yanked on PyPI (REASON); installing it because it was named exactly`.
    pub fn yanked_warning(&self) -> Option<String> {
        let reason = self.yanked()?;
        let why = if reason.is_empty() {
            "no reason given".to_string()
        } else {
            reason.to_string()
        };
        Some(format!(
            "cuDNN {} is yanked on PyPI ({why}); installing it because it was named exactly (a prefix, range or `latest` never picks it)",
            self.release_id()
        ))
    }
}

/// Whether NVIDIA publishes cuDNN wheels for `platform` (manylinux x86_64
/// and aarch64, win_amd64, win_arm64).
pub fn wheels_serve(platform: Platform) -> bool {
    matches!(
        platform,
        Platform::LinuxX86_64
            | Platform::LinuxSbsa
            | Platform::WindowsX86_64
            | Platform::WindowsArm64
    )
}

/// The newest release `req` names among the catalog's NVIDIA archives and
/// PyPI wheel lists together, by the same rules for both: the spec, `--cuda`
/// or the spec's CUDA suffix, the toolkits' CUDA, the GPU floor of a prefix
/// (`9` on a Pascal GPU is the newest 9.x it runs). An archive wins a tie
/// with a wheel of the same version. Most cuDNN 9 releases exist only as
/// wheels, so `install 9.27.0.42` and `install latest` reach them too.
///
/// # Errors
/// As [`select_for_gpu`] when no wheel matches either.
pub fn pick(
    cat: &Catalog,
    req: &FetchRequest,
    toolkits: &[Toolkit],
    gpu: Option<&Version>,
) -> Result<Pick> {
    pick_on(cat, req, toolkits, gpu, Platform::host())
}

/// [`pick`] on a machine of platform `host`: a wheel only when
/// `req.platform` is the host's (pip fetches wheels for the machine it runs
/// on), so an Arm machine, or `--platform`, never gets another platform's build.
///
/// # Errors
/// As [`pick`].
pub fn pick_on(
    cat: &Catalog,
    req: &FetchRequest,
    toolkits: &[Toolkit],
    gpu: Option<&Version>,
    host: Option<Platform>,
) -> Result<Pick> {
    let archive = select_for_gpu_on(cat, req, toolkits, gpu, host);
    let wheel = select_wheel_on(cat, req, toolkits, gpu, host);
    match (archive, wheel) {
        (Ok((a, _)), Some(w)) if w.version > a.version => Ok(Pick::Wheel(Box::new(w))),
        (Ok((archive, passed_over)), _) => Ok(Pick::Archive {
            yanked: cat.yanked(&archive.release_id()).map(str::to_owned),
            archive: Box::new(archive),
            passed_over: passed_over.map(Box::new),
        }),
        (Err(e), Some(w)) if e.kind() == Kind::NotFound => Ok(Pick::Wheel(Box::new(w))),
        (Err(e), _) => Err(e),
    }
}

/// `pick` for a user who named a package index for cudnnm (`--index-url`,
/// `CUDNNM_INDEX_URL`, `index_url`): where it is an archive that is also
/// published as a wheel of the same build for the platform, the wheel —
/// the named index is where that user wants the bytes from (a lab's
/// mirror, a proxy that reaches PyPI only); else `pick` itself.
///
/// # Errors
/// As [`pick`].
pub fn prefer_wheel(
    cat: &Catalog,
    req: &FetchRequest,
    toolkits: &[Toolkit],
    gpu: Option<&Version>,
    host: Option<Platform>,
    pick: Pick,
) -> Result<Pick> {
    if let Pick::Archive { archive, .. } = &pick {
        // The same release asked for exactly, so the GPU and toolkit
        // rules already applied to the archive pick it again.
        let exact = FetchRequest {
            spec: format!("{}", archive.release_id()).parse()?,
            cuda: Some(archive.cuda),
            ..req.clone()
        };
        if let Some(w) = select_wheel_on(cat, &exact, toolkits, gpu, host)
            && w.release_id() == archive.release_id()
        {
            return Ok(Pick::Wheel(Box::new(w)));
        }
    }
    Ok(pick)
}

/// The newest wheel-list release `req` names for `req.platform` (see
/// [`pick`]); among builds of that version for several CUDA versions, the
/// one `--cuda` or the spec names, else one that fits a toolkit found, else
/// the newest CUDA.
pub fn select_wheel(
    cat: &Catalog,
    req: &FetchRequest,
    toolkits: &[Toolkit],
    gpu: Option<&Version>,
) -> Option<WheelPick> {
    select_wheel_on(cat, req, toolkits, gpu, Platform::host())
}

/// [`select_wheel`] on a machine of platform `host`: none unless
/// `req.platform` is `host`.
pub fn select_wheel_on(
    cat: &Catalog,
    req: &FetchRequest,
    toolkits: &[Toolkit],
    gpu: Option<&Version>,
    host: Option<Platform>,
) -> Option<WheelPick> {
    if !wheels_serve(req.platform) || host != Some(req.platform) {
        return None;
    }
    let spec = &req.spec;
    let want = req.cuda.as_ref().or(spec.cuda.as_ref());
    let flavour = spec.wanted_flavour();
    let mut cands: Vec<WheelPick> = Vec::new();
    for w in cat.wheels().iter().filter(|w| w.flavour == flavour) {
        for v in &w.versions {
            if !spec.matches(v, &w.cuda)
                || req.cuda.as_ref().is_some_and(|c| !cuda_serves(c, &w.cuda))
            {
                continue;
            }
            let id = ReleaseId::new(v.clone(), w.cuda).with_flavour(w.flavour);
            let yanked = cat.yanked(&id).map(str::to_owned);
            if yanked.is_some() && !spec.names_exactly(v) {
                continue;
            }
            // The platform's wheel (the newest build: a `.post1` over the
            // first); a list with files and none for the platform has no
            // build there; a list of versions only, as before files.
            let file = w
                .files
                .iter()
                .filter(|f| &f.version == v && f.platform == req.platform)
                .max_by(|a, b| {
                    (a.yanked.is_none(), &a.dist_version)
                        .cmp(&(b.yanked.is_none(), &b.dist_version))
                })
                .cloned();
            if file.is_none() && !w.files.is_empty() {
                continue;
            }
            cands.push(WheelPick {
                package: w.package.clone(),
                version: v.clone(),
                cuda: w.cuda,
                flavour: w.flavour,
                dist_version: file
                    .as_ref()
                    .map_or_else(|| v.to_string(), |f| f.dist_version.clone()),
                file,
                yanked,
            });
        }
    }
    let narrow = |cands: &mut Vec<WheelPick>, keep: &dyn Fn(&WheelPick) -> bool| {
        if cands.iter().any(keep) {
            cands.retain(|w| keep(w));
        }
    };
    if want.is_none() && !toolkits.is_empty() {
        narrow(&mut cands, &|w| fits_any(&w.cuda, toolkits));
    }
    if let Some(cc) = gpu.filter(|_| !spec.is_exact()) {
        narrow(&mut cands, &|w| cat.runs_on(&w.version, &w.cuda, cc));
    }
    let newest = cands.iter().map(|w| w.version.clone()).max()?;
    cands.retain(|w| w.version == newest);
    cands
        .into_iter()
        .min_by_key(|w| (want.map(|c| rank(c, &w.cuda)), std::cmp::Reverse(w.cuda)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolkit::Layout;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn req(spec: &str, cuda: Option<&str>, p: Platform) -> FetchRequest {
        FetchRequest {
            spec: spec.parse().unwrap(),
            cuda: cuda.map(|c| c.parse().unwrap()),
            platform: p,
            mirror: None,
            sha256: None,
            allow_unverified: false,
            asked_by: crate::catalog::AskedBy::Install,
        }
    }

    fn tk(cuda: &str) -> Toolkit {
        Toolkit {
            root: format!("/usr/local/cuda-{cuda}").into(),
            cuda: v(cuda),
            layout: Layout::Linux,
            found_by: "test".into(),
        }
    }

    const L: Platform = Platform::LinuxX86_64;
    const W: Platform = Platform::WindowsX86_64;

    /// [`pick_on`] on a machine of the request's platform (so the PyPI
    /// wheels of a Linux request are candidates on any host running the tests).
    fn pick_here(
        cat: &Catalog,
        req: &FetchRequest,
        toolkits: &[Toolkit],
        gpu: Option<&Version>,
    ) -> Result<Pick> {
        pick_on(cat, req, toolkits, gpu, Some(req.platform))
    }

    /// Most cuDNN 9 releases are wheels only: `install 9.27.0.42`, `latest`
    /// and a prefix reach them, by the same CUDA and GPU rules as archives.
    #[test]
    fn a_pick_spans_archives_and_wheels() {
        let cat = Catalog::embedded();
        // Only on PyPI: the wheel, for the newest CUDA without a toolkit to choose by.
        let p = pick_here(&cat, &req("9.26.0.51", None, L), &[], None).unwrap();
        match &p {
            Pick::Wheel(w) => {
                assert_eq!(w.requirement(), "nvidia-cudnn-cu13==9.26.0.51");
                let f = w.file.as_ref().unwrap();
                assert_eq!(f.tag, "manylinux_2_27_x86_64");
                assert!(f.url.starts_with("https://files.pythonhosted.org/") && f.size > 0);
            }
            other => panic!("{other:?}"),
        }
        let p = pick_here(&cat, &req("9.26.0.51", Some("12"), L), &[], None).unwrap();
        match &p {
            Pick::Wheel(w) => assert_eq!(w.requirement(), "nvidia-cudnn-cu12==9.26.0.51"),
            other => panic!("{other:?}"),
        }
        // An archive the catalog has stays an archive (the wheel is no
        // newer); named exactly, a yanked one is picked, with the reason.
        let p = pick_here(&cat, &req("9.25.0.15", Some("12"), L), &[], None).unwrap();
        assert!(matches!(p, Pick::Archive { .. }), "{p:?}");
        assert_eq!(p.yanked(), Some(""));
        assert!(
            p.yanked_warning()
                .unwrap()
                .contains("9.25.0.15_cuda12 is yanked on PyPI (no reason given)")
        );
        // `latest` with a CUDA 12.4 toolkit: the newest CUDA 12 release of
        // either kind, never older than the newest wheel.
        let p = pick_here(&cat, &req("latest", None, L), &[tk("12.4")], None).unwrap();
        let (version, cuda) = p.release();
        assert_eq!(cuda.major(), 12, "{p:?}");
        assert!(*version >= v("9.28.0.42"), "{p:?}");
        // A Pascal GPU (6.1): the newest 9.x it runs, 9.10.2.21.
        let p = pick_here(&cat, &req("9", None, L), &[tk("12.4")], Some(&v("6.1"))).unwrap();
        assert_eq!(p.release().0, &v("9.10.2.21"), "{p:?}");
        // A CUDA 11.8 toolkit: the cu11 package.
        let p = pick_here(&cat, &req("9.10.2.21", None, L), &[tk("11.8")], None).unwrap();
        match &p {
            Pick::Wheel(w) => assert_eq!(w.package, "nvidia-cudnn-cu11"),
            Pick::Archive { archive, .. } => assert_eq!(archive.cuda.major(), 11),
        }
        // `--cuda 11` asks for the cu11 build even where cu12 is newer.
        let w =
            select_wheel_on(&cat, &req("9.10.2.21", Some("11"), W), &[], None, Some(W)).unwrap();
        assert_eq!(w.requirement(), "nvidia-cudnn-cu11==9.10.2.21");
        // No wheels for other platforms; nothing at all for a version nobody published.
        assert!(
            select_wheel(
                &cat,
                &req("9.27.0.42", None, Platform::LinuxPpc64le),
                &[],
                None
            )
            .is_none()
        );
        assert_eq!(
            pick_here(&cat, &req("9.99", None, L), &[], None)
                .unwrap_err()
                .kind(),
            Kind::NotFound
        );
    }

    #[test]
    fn a_prefix_picks_the_newest_release_the_gpu_runs() {
        let cat = Catalog::embedded();
        let p = Platform::LinuxX86_64;
        let r = req("9", Some("12"), p);
        let (newest, none) = select_for_gpu(&cat, &r, &[], None).unwrap();
        assert!(newest.version >= v("9.11"), "{}", newest.version);
        assert!(none.is_none());
        // Turing (7.5) runs the newest CUDA 12 build.
        let (a, none) = select_for_gpu(&cat, &r, &[], Some(&v("7.5"))).unwrap();
        assert_eq!(a.version, newest.version);
        assert!(none.is_none());
        // Pascal (6.1): the newest 9.10.x, and the newer one passed over is named.
        let (a, over) = select_for_gpu(&cat, &r, &[], Some(&v("6.1"))).unwrap();
        assert!(v("9.10").is_prefix_of(&a.version), "{}", a.version);
        assert_eq!(over.unwrap().version, newest.version);
        // An exact version is not swapped for another (install then refuses).
        let exact = req(&newest.version.to_string(), Some("12"), p);
        let (a, over) = select_for_gpu(&cat, &exact, &[], Some(&v("6.1"))).unwrap();
        assert_eq!(a.version, newest.version);
        assert!(over.is_none());
    }

    #[test]
    fn without_cuda_or_toolkit_an_old_gpu_is_offered_only_builds_it_runs() {
        let cat = Catalog::embedded();
        let p = Platform::LinuxX86_64;
        {
            let r = req("9", None, p);
            // Without a GPU: several CUDA variants, nothing to choose by.
            assert!(select_for_gpu(&cat, &r, &[], None).is_err());
            // Pascal: the CUDA 13 builds (7.5 and newer) are out of the
            // choice; what is left is a CUDA 12 (or 11) build of 9.10 or
            // older, or an error whose example is one of those.
            match select_for_gpu(&cat, &r, &[], Some(&v("6.1"))) {
                Ok((a, over)) => {
                    assert!(a.cuda.major() <= 12 && a.version < v("9.11"), "{}", a.id());
                    assert!(over.unwrap().version >= v("9.11"));
                }
                Err(e) => {
                    let hint = e.hint_text().unwrap_or_default().to_string();
                    assert!(!hint.contains("--cuda 13"), "{hint}");
                    // The example keeps the spec: `install 9 --cuda 12`
                    // picks what it says, which an exact 9.10 id may not be.
                    // (`--platform` named where the host is another one.)
                    let platform = if Platform::host() == Some(p) {
                        ""
                    } else {
                        " --platform linux-x86_64"
                    };
                    assert_eq!(hint, format!("e.g. `cudnnm install 9{platform} --cuda 12`"));
                    assert!(e.message().contains("9.10."), "{}", e.message());
                }
            }
        }
        // With a CUDA 12.4 toolkit: the newest 9.10 CUDA 12 build.
        let r = req("9", None, p);
        let (a, _) = select_for_gpu(&cat, &r, &[tk("12.4")], Some(&v("6.1"))).unwrap();
        assert_eq!(
            (a.cuda.major(), v("9.10").is_prefix_of(&a.version)),
            (12, true),
            "{}",
            a.id()
        );
    }

    #[test]
    fn exact_prefix_and_suffix_forms() {
        let cat = Catalog::embedded();
        let a = select(&cat, &req("7.1.3", None, W), &[]).unwrap();
        assert_eq!(
            (a.id(), a.name()),
            ("7.1.3_cuda8.0".into(), "cudnn-8.0-windows7-x64-v7.1.zip")
        );
        let a = select(&cat, &req("8.1.0.77", Some("11.2"), W), &[]).unwrap();
        assert_eq!(a.name(), "cudnn-11.2-windows-x64-v8.1.0.77.zip");
        let a = select(&cat, &req("8.9.7.29_cuda12", None, L), &[]).unwrap();
        assert_eq!(
            a.name(),
            "cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz"
        );
        let a = select(&cat, &req("8.1", Some("11.2"), L), &[]).unwrap();
        assert_eq!(a.version, v("8.1.1.33"), "a prefix takes the newest match");
        let a = select(&cat, &req("8.9", Some("11.8"), L), &[]).unwrap();
        assert_eq!(
            a.id(),
            "8.9.7.29_cuda11",
            "CUDA 11.8 is served by the cuda11 build"
        );
        let a = select(&cat, &req("8.0.5", Some("11.1"), L), &[]).unwrap();
        assert_eq!(
            a.cuda.to_string(),
            "11.1",
            "the exact variant beats another 11.x"
        );
    }

    #[test]
    fn toolkits_choose_the_variant_or_the_user_is_asked() {
        let cat = Catalog::embedded();
        let e = select(&cat, &req("8.9.7.29", None, L), &[]).unwrap_err();
        assert_eq!(e.kind(), Kind::Usage);
        assert!(
            e.message().contains("several CUDA versions (11, 12)"),
            "{e}"
        );
        assert!(e.hint_text().unwrap().contains("--cuda 12"));
        let a = select(&cat, &req("8.9.7.29", None, L), &[tk("12.4")]).unwrap();
        assert_eq!(a.id(), "8.9.7.29_cuda12");
        let a = select(&cat, &req("8.1.0.77", None, W), &[tk("11.2")]).unwrap();
        assert_eq!(a.id(), "8.1.0.77_cuda11.2");
        let a = select(&cat, &req("9", None, L), &[tk("11.8")]).unwrap();
        assert_eq!(
            a.id(),
            "9.10.0.56_cuda11",
            "the newest 9.x that fits CUDA 11.8"
        );
        let e = select(&cat, &req("8.9.7.29", None, L), &[tk("11.8"), tk("12.4")]).unwrap_err();
        assert!(
            e.to_string()
                .contains("CUDA 11.8 at '/usr/local/cuda-11.8'"),
            "{e}"
        );
    }

    #[test]
    fn failures_say_what_exists() {
        let cat = Catalog::embedded();
        let e = select(&cat, &req("8.1.0.78", None, W), &[]).unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound);
        assert!(e.to_string().contains("nearest known: "), "{e}");
        assert!(e.causes()[0].contains("8.1.0.77"), "{e}");
        let e = select(&cat, &req("8.1.1.33", None, W), &[]).unwrap_err();
        assert_eq!(
            e.message(),
            "cuDNN 8.1.1.33_cuda11.2 has no windows-x86_64 build",
            "{e}"
        );
        assert_eq!(e.causes()[0], "it is published for linux-x86_64");
        // pip fetches wheels for the machine it runs on: the host's platform.
        let host = Platform::host().unwrap();
        let e = select_on(&cat, &req("9.11.0.98", Some("12"), L), &[], Some(L)).unwrap_err();
        assert!(
            e.hint_text()
                .unwrap()
                .contains("`cudnnm install 9.11.0.98_cuda12`"),
            "{e:?}"
        );
        // The nearest known include releases only PyPI has, each with the
        // command that installs it.
        let e = select_on(&cat, &req("9.11.0.9", None, L), &[], Some(L)).unwrap_err();
        assert!(e.causes()[0].starts_with("nearest known: "), "{e:?}");
        assert!(
            e.causes()[0].contains("9.11.0.98 (`cudnnm install 9.11.0.98_cuda12`)"),
            "{e:?}"
        );
        // For a JIT spec, the JIT builds near it, each with its `+jit` command.
        let e = select_on(&cat, &req("9.12.0.99+jit", Some("12"), L), &[], Some(L)).unwrap_err();
        assert!(
            e.causes()[0].contains("9.12.0.46 (`cudnnm install 9.12.0.46_cuda12+jit`)"),
            "{e:?}"
        );
        // An archive's own command where the catalog has one.
        let e = select(&cat, &req("8.9.7.3", None, host), &[]).unwrap_err();
        assert!(
            e.causes()[0].contains("8.9.7.29 (`cudnnm install 8.9.7.29_cuda12`)"),
            "{e:?}"
        );
        let e = select(&cat, &req("8.9.7.29", Some("10.2"), L), &[]).unwrap_err();
        assert_eq!(
            e.message(),
            "there is no CUDA 10.2 build of cuDNN 8.9.7.29 for linux-x86_64",
            "{e}"
        );
        assert_eq!(
            e.causes(),
            ["cuDNN 8.9.7.29 exists for linux-x86_64 for CUDA 11, 12"]
        );
        let e = select(&cat, &req("8.9.7.29_cuda12", Some("11"), L), &[]).unwrap_err();
        assert_eq!(e.kind(), Kind::Usage);
    }

    /// An Arm server (`linux-sbsa`, the manylinux aarch64 wheels): every
    /// pick is an aarch64 build, never an x86_64 one; a release without
    /// one says where it is published.
    #[test]
    fn an_arm_host_never_gets_an_x86_64_build() {
        let cat = Catalog::embedded();
        let s = Platform::LinuxSbsa;
        for (spec, cuda) in [
            ("9.28", Some("13")),
            ("latest", Some("12")),
            ("9.0.0", Some("12")),
            ("9.26.0.51", Some("12")),
            ("9.27+jit", Some("13")),
        ] {
            let p = pick_on(&cat, &req(spec, cuda, s), &[], None, Some(s)).unwrap();
            match &p {
                Pick::Wheel(w) => {
                    let f = w.file.as_ref().unwrap();
                    assert!(f.tag.ends_with("_aarch64"), "{spec}: {p:?}");
                    assert!(f.filename.ends_with("_aarch64.whl"), "{spec}: {p:?}");
                }
                Pick::Archive { archive, .. } => {
                    assert_eq!(archive.platform, s, "{spec}: {p:?}");
                    assert!(
                        archive
                            .urls(None)
                            .iter()
                            .all(|u| u.contains("/linux-sbsa/")),
                        "{spec}: {p:?}"
                    );
                }
            }
        }
        // 9.0.0 for CUDA 12 on aarch64 is the post-release only aarch64 has.
        let p = pick_on(&cat, &req("9.0.0", Some("12"), s), &[], None, Some(s)).unwrap();
        match &p {
            Pick::Archive { archive, .. } => assert_eq!(archive.platform, s),
            Pick::Wheel(w) => assert_eq!(w.dist_version, "9.0.0.312.post1", "{p:?}"),
        }
        // 8.9.5.29 exists only as a win_amd64 wheel.
        let e = pick_on(&cat, &req("8.9.5.29", Some("12"), s), &[], None, Some(s)).unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound);
        assert_eq!(
            e.message(),
            "cuDNN 8.9.5.29_cuda12 has no linux-sbsa build",
            "{e:?}"
        );
        assert_eq!(e.causes()[0], "it is published for windows-x86_64", "{e:?}");
        // An x86_64 machine asking for the Arm build of a wheel-only
        // release: pip could not fetch it here.
        let e = pick_on(&cat, &req("9.28.1.4", Some("13"), s), &[], None, Some(L)).unwrap_err();
        assert!(
            e.message()
                .starts_with("cuDNN 9.28.1.4_cuda13 for linux-sbsa is published only as a PyPI wheel (nvidia_cudnn_cu13-9.28.1.4-py3-none-manylinux_2_27_aarch64.whl"),
            "{e:?}"
        );
    }

    #[test]
    fn nearest_prefers_the_same_minor() {
        let known: Vec<Version> = [
            "7.6.5.32", "8.0.5.39", "8.1.0.77", "8.1.1.33", "8.2.0.53", "9.1.0.70",
        ]
        .iter()
        .map(|s| v(s))
        .collect();
        assert_eq!(
            nearest(&v("8.1.0.78"), &known, 3),
            vec![v("8.0.5.39"), v("8.1.0.77"), v("8.1.1.33")]
        );
        assert_eq!(
            nearest(&v("6"), &known, 2),
            vec![v("7.6.5.32"), v("8.0.5.39")]
        );
        assert!(nearest(&v("1"), &[], 3).is_empty());
    }

    #[test]
    fn cuda_serving_rules() {
        let c = |s: &str| s.parse::<CudaVariant>().unwrap();
        assert!(cuda_serves(&c("12"), &c("12")));
        assert!(cuda_serves(&c("11.8"), &c("11")));
        assert!(cuda_serves(&c("11.8"), &c("11.2")));
        assert!(!cuda_serves(&c("10.1"), &c("10.2")));
        assert!(cuda_serves(&c("11"), &c("11.2")));
        assert!(!cuda_serves(&c("12"), &c("11")));
    }

    /// A catalog fixture: 9.1.0.70, 9.10.2.21, 9.11.0.98 for CUDA 12 and
    /// 11, 9.11.0.98 also for CUDA 13, a support row that puts 9.11 out of
    /// reach of GPUs below compute capability 7.5 (as NVIDIA's matrix does
    /// for the CUDA 12 builds of 9.11, docs/releases.md#minimum-compute-capability).
    fn ranged() -> Catalog {
        let mut t = String::from("schema = 1\n\n");
        for (v, cudas) in [
            ("9.1.0.70", &["12", "11"][..]),
            ("9.10.2.21", &["12", "11"][..]),
            ("9.11.0.98", &["12", "11", "13"][..]),
        ] {
            for c in cudas {
                t.push_str(&format!(
                    "[[archive]]\nversion = \"{v}\"\ncuda = \"{c}\"\nplatform = \"linux-x86_64\"\n\
                     path = \"cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-{v}_cuda{c}-archive.tar.xz\"\n\
                     source = \"test\"\nhashes = [{{ sha256 = \"{}\", source = \"test\" }}]\n\n",
                    "a".repeat(64)
                ));
            }
        }
        t.push_str("[[support]]\ncudnn = [\"9.11.0\", \"9.11.0\"]\ncuda = \"12\"\nmin_compute = \"7.5\"\nsource = \"test\"\n");
        let c = Catalog::from_texts(&t, None);
        assert!(c.warnings().is_empty(), "{:?}", c.warnings());
        c
    }

    fn pick(spec: &str, cuda: Option<&str>, gpu: Option<&str>) -> String {
        let cat = ranged();
        let gpu = gpu.map(v);
        match select_for_gpu(&cat, &req(spec, cuda, L), &[tk("12.4")], gpu.as_ref()) {
            Ok((a, _)) => a.id(),
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn ranges_and_aliases_resolve_against_the_catalog() {
        assert_eq!(pick(">=9.1,<9.11", None, None), "9.10.2.21_cuda12");
        assert_eq!(
            pick("<9.11", Some("11.8"), None),
            "9.10.2.21_cuda11",
            "<9.11 excludes 9.11.0.x"
        );
        assert_eq!(pick(">=9.11", None, None), "9.11.0.98_cuda12");
        assert_eq!(
            pick(">9.10", None, None),
            "9.11.0.98_cuda12",
            ">9.10 starts at 9.11"
        );
        assert_eq!(
            pick("<=9.10", None, None),
            "9.10.2.21_cuda12",
            "<=9.10 includes 9.10.2"
        );
        assert_eq!(pick("9.10.x", None, None), "9.10.2.21_cuda12");
        assert_eq!(
            pick("9.1.x", None, None),
            "9.1.0.70_cuda12",
            "9.1.x excludes 9.10.x and 9.11.x"
        );
        assert_eq!(pick("=9.1", None, None), "9.1.0.70_cuda12");
        assert_eq!(
            pick("latest", None, None),
            "9.11.0.98_cuda12",
            "the toolkit's CUDA picks among builds"
        );
        assert_eq!(pick("latest_cuda13", None, None), "9.11.0.98_cuda13");
        assert_eq!(pick("latest_cuda11", None, None), "9.11.0.98_cuda11");
        assert_eq!(pick("9.10.x_cuda11", None, None), "9.10.2.21_cuda11");
        assert_eq!(pick(">=9.1,<9.11_cuda11", None, None), "9.10.2.21_cuda11");
        let none = pick(">=9.12", None, None);
        assert!(
            none.starts_with("error: cuDNN >=9.12 is not in the catalog"),
            "{none}"
        );
        assert!(pick(">=9.1,<9.1", None, None).starts_with("error: "));
    }

    #[test]
    fn a_cuda_no_build_is_for_names_the_cuda_versions_the_release_exists_for() {
        let cat = Catalog::embedded();
        let host = Platform::host().unwrap();
        let e = select(&cat, &req("9.12", Some("99"), host), &[]).unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound);
        assert_eq!(
            e.message(),
            format!("there is no CUDA 99 build of cuDNN 9.12 for {host}")
        );
        // PyPI has 9.12.0.46 as nvidia-cudnn-cu12 and -cu13 (the catalog's wheel rows).
        assert_eq!(
            e.causes(),
            [format!("cuDNN 9.12 exists for {host} for CUDA 12, 13")]
        );
        assert!(
            e.hint_text()
                .unwrap()
                .ends_with("`cudnnm install 9.12 --cuda 13`"),
            "{e:?}"
        );
    }

    #[test]
    fn a_range_or_latest_honours_the_gpu_floor_an_exact_version_does_not() {
        // A Pascal GPU (6.1) cannot run the CUDA 12 build of 9.11: the newest match it runs wins.
        assert_eq!(pick("latest", None, Some("6.1")), "9.10.2.21_cuda12");
        assert_eq!(pick(">=9.1", None, Some("6.1")), "9.10.2.21_cuda12");
        assert_eq!(pick(">=9.1", None, Some("8.0")), "9.11.0.98_cuda12");
        // A build the floor does not name (CUDA 11) still runs there.
        assert_eq!(pick("latest_cuda11", None, Some("6.1")), "9.11.0.98_cuda11");
        // An exact version stays what it is (install then refuses it for the GPU).
        assert_eq!(pick("9.11.0.98", None, Some("6.1")), "9.11.0.98_cuda12");
    }
}

//! `use`: deploys a release into a CUDA toolkit as one journaled
//! transaction (`docs/architecture.md#deploying`): which release (the spec,
//! else the pin), which toolkit, whether the release fits it (platform,
//! CUDA, the GPUs in use), by which mode; the change itself is
//! [`crate::deploy::Change`].

use std::path::PathBuf;

use serde::Serialize;

use super::gpu::GpuGate;
use super::{Event, Session};
use crate::catalog::offer::{
    Advice, Offer, advise, advise_on, best_offer, not_installed_hint, offers_from,
};
use crate::command::CommandLine;
use crate::deploy::{
    self, Applied, Deployments, Done, Mode, ModeRequest, Recovered, existing_toolkit_dir,
};
use crate::error::{Error, Kind, Result};
use crate::pin;
use crate::store::{Release, Store};
use crate::toolkit::{self, Layout, Selector, Toolkit};
use crate::version::{Platform, Spec, Version};

/// What `use` is asked.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The release; `None`: the pin (or default) that applies here.
    pub spec: Option<String>,
    /// The toolkit root to deploy into.
    pub cuda_root: Option<PathBuf>,
    /// The toolkit's CUDA version (`X.Y`, or a major).
    pub cuda: Option<String>,
    /// `auto`, `symlink`, `hardlink` or `copy` [default: `mode` in `config.toml`, else auto].
    pub mode: Option<String>,
    /// Deploy even a release that does not fit the toolkit's CUDA or the GPUs.
    pub force: bool,
    /// `--for`: deploy the release the frameworks of a Python environment
    /// choose ([`super::frameworks::pick`]), fitting `cuda`'s toolkit, instead of `spec`.
    pub for_: Option<super::frameworks::For>,
}

/// What `use` did (`--json` prints it).
#[derive(Debug, Serialize)]
pub struct Used {
    /// The toolkit root.
    pub toolkit: PathBuf,
    /// The release deployed.
    pub release: String,
    /// What the toolkit held before (a release, or `no cuDNN`).
    pub from: String,
    /// What it holds now.
    pub to: String,
    /// How the files were placed.
    pub mode: Mode,
    /// Whether anything changed (else the release was active already).
    pub changed: bool,
    /// The backup holding what was replaced.
    pub backup: Option<u64>,
    /// Files moved into the backup that look like cuDNN's but that no release ships.
    pub not_from_a_release: Vec<String>,
    /// Old backups of the toolkit removed afterwards.
    pub pruned: Vec<u64>,
    /// Changes a crash left that were finished or undone first.
    pub recovered: Vec<Recovered>,
}

/// Deploys the release `req` names into the toolkit it names (or the one
/// chosen), under the home lock, after recovering what a crash left.
///
/// # Errors
/// A bad mode, a `--for` no release can satisfy, no spec and no pin, no toolkit, no installed release that
/// fits (with what installs one), a GPU that cannot run it, or a failed
/// change (undone).
pub fn use_release(session: &Session<'_>, req: &Request) -> Result<Used> {
    // Arguments first: a bad mode is named before any toolkit or GPU query.
    let request = mode_request(session, req.mode.as_deref())?;
    // `--cuda X.Y` names the toolkit: the release chosen for the frameworks must fit it.
    let chosen = match &req.for_ {
        Some(f) => {
            let toolkit_cuda = req.cuda.as_deref().and_then(|c| c.parse::<Version>().ok());
            Some(
                super::frameworks::pick(session, f, toolkit_cuda)?
                    .id
                    .to_string(),
            )
        }
        None => None,
    };
    let change = session.guard()?;
    let recovered = change.recovered().to_vec();
    let (spec, from) = spec_here(session, chosen.as_deref().or(req.spec.as_deref()))?;
    let known = super::toolkits::recorded(session, &Deployments::load(session.home)?);
    let (wants, wants_label) = super::toolkits::wanted_cudas(session.home, &spec, from.as_ref());
    let toolkit = toolkit::select(
        session.env,
        &Selector {
            root: req.cuda_root.as_deref(),
            cuda: req.cuda.as_deref(),
            known: &known,
            wants: &wants,
            wants_label: &wants_label,
        },
    )?;
    session.report.event(&Event::ToolkitChosen(&toolkit));
    let store = Store::new(session.home);
    let gate = GpuGate::read(session);
    let release = pick_release(session, &store, &spec, &toolkit, req.force, &gate)
        .map_err(|e| lock_hint(session, &store, &spec, from.as_ref(), e))?;
    if let Some(w) = gate.check_in(
        release.version(),
        release.cuda(),
        Some(&toolkit.cuda),
        req.force,
        "deploy",
    )? {
        session.report.event(&Event::Warning(&w));
    }
    super::frameworks::report_advisories(session, release.version(), release.cuda());
    let probe_dir = existing_toolkit_dir(&toolkit);
    let mode = request.resolve(&release.dir, &probe_dir, session.env.is_windows())?;
    let hint = deploy::elevate_hint(
        session.env,
        session.home,
        CommandLine::use_(release.id()),
        &toolkit.root,
        Some(&release.id()),
    );
    let mut used = Used {
        toolkit: toolkit.root.clone(),
        release: release.id(),
        from: release.version().to_string(),
        to: release.version().to_string(),
        mode,
        changed: false,
        backup: None,
        not_from_a_release: Vec::new(),
        pruned: Vec::new(),
        recovered,
    };
    let Applied { outcome, pruned } = match change.use_release(&toolkit, &release, mode, &hint)? {
        Done::Changed(applied) => *applied,
        Done::AlreadyActive => return Ok(used),
    };
    let p = &outcome.plan;
    used.from = p.from_label.clone();
    used.to = p.to_label.clone();
    used.changed = true;
    used.backup = Some(p.id);
    used.not_from_a_release = deploy::moved_not_from_a_release(p);
    used.pruned = pruned;
    Ok(used)
}

/// The spec to deploy: `spec`, else the one that applies here (reported
/// as [`Event::UsingPinned`]) and where it came from.
fn spec_here(session: &Session<'_>, spec: Option<&str>) -> Result<(Spec, Option<pin::SpecSource>)> {
    if let Some(s) = spec {
        return Ok((s.parse::<Spec>()?, None));
    }
    match pin::resolve_spec(None, session.env, session.home)? {
        Some(r) => {
            session.report.event(&Event::UsingPinned {
                spec: &r.spec,
                source: &r.source,
            });
            Ok((r.spec, Some(r.source)))
        }
        None => Err(Error::new(
            Kind::Usage,
            "no SPEC given and no .cudnn-version pin or default found",
        )
        .hint("name a release (`cudnnm use 9.1`), pin one for this folder (`cudnnm pin 9.1`), or set a default (`cudnnm default 9.1`)")),
    }
}

/// The link mode asked for: `--mode`, else `mode` in `config.toml`, else
/// auto. A bad value from the file names the file and the key.
fn mode_request(session: &Session<'_>, flag: Option<&str>) -> Result<ModeRequest> {
    if let Some(m) = flag {
        return m.parse();
    }
    match session.home.config()?.mode {
        Some(m) => m.parse().map_err(|e: Error| {
            let file = session.home.config_file();
            Error::new(
                Kind::Usage,
                format!("{} (the `mode` key in '{}')", e.message(), file.display()),
            )
            .hint(format!(
                "set `mode` in '{}' to one of auto, symlink, hardlink, copy, or remove the line",
                file.display()
            ))
        }),
        None => Ok(ModeRequest::Auto),
    }
}

/// The newest installed release matching `spec` that fits `toolkit` (its
/// platform, and its CUDA: exact major.minor before CUDA 11, the same major
/// from 11 on). With `force`, the newest match of the right platform. A
/// version prefix (`9`) prefers the newest release that runs on the GPUs in
/// use, saying which newer one it passed over.
fn pick_release(
    session: &Session<'_>,
    store: &Store,
    spec: &Spec,
    toolkit: &Toolkit,
    force: bool,
    gate: &GpuGate,
) -> Result<Release> {
    let (ma, mi) = toolkit.cuda_major_minor();
    let platform_ok =
        |r: &Release| r.platform().is_windows() == (toolkit.layout == Layout::Windows);
    if let Some(gpu) = gate.oldest().filter(|_| !spec.is_exact()) {
        let fits = |r: &Release| platform_ok(r) && r.cuda().fits(ma, mi);
        if let Some(r) =
            store.newest_matching_where(spec, |r| fits(r) && gate.runs(r.version(), r.cuda()))?
        {
            if let Some(newer) = store.newest_matching_where(spec, fits)?
                && let Some(t) = gate.too_old(newer.version(), newer.cuda())
            {
                session.report.event(&Event::PickedForGpu {
                    spec,
                    picked: &r,
                    gpu,
                    newer: &newer,
                    needs: &t.needs,
                });
            }
            return Ok(r);
        }
    }
    // The common case reads only the chosen release's receipt; the others
    // are read only to explain a refusal.
    if let Some(r) =
        store.newest_matching_where(spec, |r| platform_ok(r) && r.cuda().fits(ma, mi))?
    {
        return Ok(r);
    }
    let matching = store.matching(spec)?;
    if matching.is_empty() {
        return store
            .resolve(spec)
            .map_err(|e| not_installed(session, store, spec, toolkit, gate, e));
    }
    let Some(newest) = matching.iter().find(|r| platform_ok(r)) else {
        return Err(wrong_platform(session, spec, toolkit, &matching));
    };
    if force {
        session.report.event(&Event::DeployingMisfit {
            release: newest,
            toolkit,
        });
        return Ok(newest.clone());
    }
    let fitting: Vec<String> = store
        .releases()?
        .iter()
        .rev()
        .filter(|r| platform_ok(r) && r.cuda().fits(ma, mi))
        .map(|r| r.id())
        .collect();
    let cuda_arg = if ma >= 11 {
        ma.to_string()
    } else {
        format!("{ma}.{mi}")
    };
    Err(Error::new(
        Kind::Conflict,
        format!(
            "cuDNN {} is built for CUDA {} and does not fit the CUDA {ma}.{mi} toolkit in '{}'",
            newest.id(),
            newest.cuda(),
            toolkit.root.display()
        ),
    )
    .cause("a build fits only its exact CUDA major.minor before CUDA 11, and any toolkit of its major from CUDA 11 on")
    .hint(if fitting.is_empty() {
        let offers: Vec<Offer> = toolkit_offers(session, toolkit)
            .into_iter()
            .filter(|o| o.cuda.fits(ma, mi))
            .collect();
        let render = |c| session.printed(c);
        match best_offer(&offers, spec, None) {
            Some(o) => format!(
                "install a build for CUDA {cuda_arg} (`{}`), or pass --force to deploy this one anyway",
                render(o.install())
            ),
            None => match best_offer(&offers, &"latest".parse::<Spec>()?, None) {
                Some(o) => format!(
                    "the catalog has no build of cuDNN {spec} for CUDA {ma}.{mi}; the newest release that has one is cuDNN {} (`{}`); or pass --force to deploy this one anyway",
                    o.version,
                    render(o.install())
                ),
                None => format!(
                    "the catalog has no cuDNN build for CUDA {ma}.{mi}; pass --force to deploy this one anyway"
                ),
            },
        }
    } else {
        format!(
            "installed releases that fit: {}; or pass --force to deploy this one anyway",
            fitting.join(", ")
        )
    }))
}

/// A pinned spec installed nowhere, with a lock beside the pin naming its
/// bytes: the hint is the bare `install` that honours the lock, not a
/// catalog pick that could fetch other bytes.
fn lock_hint(
    session: &Session<'_>,
    store: &Store,
    spec: &Spec,
    from: Option<&pin::SpecSource>,
    e: Error,
) -> Error {
    let Some(source) = from else { return e };
    if !store.matching(spec).map(|m| m.is_empty()).unwrap_or(false) {
        return e;
    }
    match pin::lock_install_hint(source, spec, &|c| session.printed(c)) {
        Some(h) => e.hint(h),
        None => e,
    }
}

/// The platform whose builds fit `toolkit`'s layout.
fn toolkit_platform(toolkit: &Toolkit) -> Platform {
    if toolkit.layout == Layout::Windows {
        Platform::WindowsX86_64
    } else {
        Platform::LinuxX86_64
    }
}

/// What the catalog (the user's, else the embedded one) can install for
/// `toolkit` from this machine ([`offers_from`]): archives of the toolkit
/// layout's platform, and PyPI wheels when that is this machine's.
fn toolkit_offers(session: &Session<'_>, toolkit: &Toolkit) -> Vec<Offer> {
    offers_from(
        &session.catalog_or_embedded(),
        toolkit_platform(toolkit),
        session.env.platform(),
    )
}

/// `spec` is installed nowhere in the store: the error names the nearest
/// installed releases and what the catalog has ([`advise`], the rule every
/// install hint follows): the command that installs `spec` for the
/// toolkit's CUDA when the catalog has it, else (saying the catalog lacks
/// it) the nearest release it has.
fn not_installed(
    session: &Session<'_>,
    store: &Store,
    spec: &Spec,
    toolkit: &Toolkit,
    gate: &GpuGate,
    store_error: Error,
) -> Error {
    let (ma, mi) = toolkit.cuda_major_minor();
    let offers = toolkit_offers(session, toolkit);
    // Never an install the GPU check would refuse.
    let advice = gate.with_fit(|fit| advise_on(&offers, spec, Some(&toolkit.cuda), fit));
    let e = if matches!(advice, Advice::Install(_) | Advice::NotOnGpu { .. }) {
        store_error
    } else {
        store_error.cause(format!(
            "the catalog has no cuDNN {spec} release for CUDA {ma}.{mi} (no archive for {}, no PyPI wheel), so `cudnnm install {spec}` would not give this toolkit one",
            toolkit_platform(toolkit)
        ))
    };
    e.hint(not_installed_hint(
        &store.nearest(spec),
        &advice.hint(&|c| session.printed(c)),
    ))
}

/// `spec` is installed only for another platform than `toolkit`'s layout:
/// the hint installs a build of the layout's platform the catalog has
/// ([`advise`] over the builds that fit the toolkit's CUDA: archives with
/// `--platform`, and wheels when that platform is this machine's), else
/// says none exists and names the nearest one that does.
fn wrong_platform(
    session: &Session<'_>,
    spec: &Spec,
    toolkit: &Toolkit,
    matching: &[Release],
) -> Error {
    let (ma, mi) = toolkit.cuda_major_minor();
    let platform = toolkit_platform(toolkit);
    let e = Error::new(
        Kind::Conflict,
        format!(
            "cuDNN {spec} is installed only for {}; the toolkit '{}' has the {} layout",
            matching
                .iter()
                .map(|r| r.platform().to_string())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
                .join(", "),
            toolkit.root.display(),
            toolkit.layout.as_str()
        ),
    );
    let builds: Vec<Offer> = toolkit_offers(session, toolkit)
        .into_iter()
        .filter(|o| o.cuda.fits(ma, mi))
        .collect();
    match advise(&builds, spec, None) {
        Advice::Install(o) => e.hint(format!(
            "install a {} build (`{}`)",
            toolkit.layout.as_str(),
            session.printed(o.install())
        )),
        Advice::Nearest(o) => e
            .cause(format!(
                "the catalog has no {platform} build of cuDNN {spec} for CUDA {ma}.{mi} (NVIDIA published it for other platforms only, or as a wheel pip fetches for its own platform alone)"
            ))
            .hint(format!(
                "the nearest release with a {platform} build is cuDNN {} (`{}`)",
                o.version,
                session.printed(o.install())
            )),
        a @ Advice::NotOnGpu { .. } => e.hint(a.hint(&|c| session.printed(c))),
        Advice::Nothing => e.hint(format!(
            "no {platform} build of a cuDNN {spec} release for CUDA {ma}.{mi} is in the catalog; `cudnnm list --remote --platform {platform}` lists what there is"
        )),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;
    use crate::ops::testing::{Fixture, folder};

    fn toolkit(cuda: &str, layout: Layout) -> Toolkit {
        Toolkit {
            root: "/opt/cuda".into(),
            cuda: cuda.parse().unwrap(),
            layout,
            found_by: "CUDA_PATH".into(),
        }
    }

    fn no_gpu(f: &Fixture) -> GpuGate {
        GpuGate::new(&f.home, &f.env, Vec::new())
    }

    #[test]
    fn the_newest_installed_build_that_fits_the_toolkits_cuda_is_picked() {
        let f = Fixture::new();
        f.release("9.1.0.70", "11", folder("a"));
        f.release("9.1.0.70", "12", folder("b"));
        f.release("9.2.0.82", "11", folder("c"));
        let store = Store::new(&f.home);
        let spec: Spec = "9".parse().unwrap();
        let tk = toolkit("12.4.1", Layout::Linux);
        let r = pick_release(&f.session(), &store, &spec, &tk, false, &no_gpu(&f)).unwrap();
        assert_eq!(r.id(), "9.1.0.70_cuda12");
        assert!(f.events().is_empty());
    }

    #[test]
    fn a_build_for_another_cuda_is_refused_naming_what_fits_and_deployed_with_force() {
        let f = Fixture::new();
        f.release("9.2.0.82", "11", folder("c"));
        f.release("8.9.7.29", "12", folder("d"));
        let store = Store::new(&f.home);
        let spec: Spec = "9.2".parse().unwrap();
        let tk = toolkit("12.4.1", Layout::Linux);
        let e = pick_release(&f.session(), &store, &spec, &tk, false, &no_gpu(&f)).unwrap_err();
        assert_eq!(e.kind(), Kind::Conflict);
        assert!(
            e.message().contains("does not fit the CUDA 12.4 toolkit"),
            "{e}"
        );
        let hint = e.hint_text().unwrap();
        assert!(
            hint.starts_with("installed releases that fit: 8.9.7.29_cuda12"),
            "{hint}"
        );
        let r = pick_release(&f.session(), &store, &spec, &tk, true, &no_gpu(&f)).unwrap();
        assert_eq!(r.id(), "9.2.0.82_cuda11");
        let events = f.events();
        assert!(
            events.len() == 1 && events[0].starts_with("DeployingMisfit"),
            "{events:?}"
        );
    }

    #[test]
    fn a_release_installed_only_for_linux_does_not_go_into_a_windows_toolkit() {
        let f = Fixture::new();
        f.release("9.1.0.70", "12", folder("a"));
        let store = Store::new(&f.home);
        let spec: Spec = "9.1".parse().unwrap();
        let tk = toolkit("12.4.1", Layout::Windows);
        let e = pick_release(&f.session(), &store, &spec, &tk, true, &no_gpu(&f)).unwrap_err();
        assert_eq!(e.kind(), Kind::Conflict);
        assert!(
            e.message().contains("installed only for linux-x86_64"),
            "{e}"
        );
        let hint = e.hint_text().unwrap();
        assert!(hint.starts_with("install a windows build (`"), "{hint}");
        // From another platform, the catalog's archive names its platform.
        if !crate::platform::HOST_WINDOWS {
            assert!(hint.contains("--platform windows-x86_64"), "{hint}");
        }
    }

    #[test]
    fn the_mode_comes_from_the_flag_then_the_config_whose_bad_value_names_the_file() {
        let f = Fixture::new();
        assert!(matches!(
            mode_request(&f.session(), None).unwrap(),
            ModeRequest::Auto
        ));
        f.home
            .save_config(&crate::home::Config {
                mode: Some("sideways".into()),
                ..Default::default()
            })
            .unwrap();
        let e = mode_request(&f.session(), None).unwrap_err();
        assert_eq!(e.kind(), Kind::Usage);
        assert!(e.message().contains("(the `mode` key in '"), "{e}");
        assert!(mode_request(&f.session(), Some("copy")).is_ok());
    }

    #[test]
    fn without_a_spec_the_pin_is_used_and_said() {
        let f = Fixture::new();
        std::fs::write(f.root().join(crate::pin::PIN_FILE), "9.1\n").unwrap();
        let (spec, from) = spec_here(&f.session(), None).unwrap();
        assert_eq!(spec.to_string(), "9.1");
        assert!(matches!(
            from,
            Some(pin::SpecSource::PinFile { line: 1, .. })
        ));
        assert!(f.events()[0].starts_with("UsingPinned"), "{:?}", f.events());
        std::fs::remove_file(f.root().join(crate::pin::PIN_FILE)).unwrap();
        assert_eq!(
            spec_here(&f.session(), None).unwrap_err().kind(),
            Kind::Usage
        );
    }
}

//! What frameworks and pins expect against what loads: `framework-cudnn-mismatch`
//! `framework-cuda-mismatch` (`docs/breakages.md#framework-expects-other-version`),
//! `cudnn-major-mismatch` (`docs/breakages.md#major-version-mismatch`).

use super::Cx;
use crate::doctor::FindingId;
use crate::doctor::finding::{Finding, Severity};
use crate::doctor::snapshot::Framework;
use crate::doctor::spath;
use crate::version::{CudaVariant, Spec, Version};

pub(super) fn check(cx: &Cx, out: &mut Vec<Finding>) {
    pinned_wheels(cx, out);
    ranged_wheels(cx, out);
    advisories(cx, out);
    table_rows(cx, out);
    majors(cx, out);
    pins(cx, out);
}

/// `pin-toolkit-mismatch` and `pin-release-mismatch`: the pinned (or
/// default) release against the toolkit a build uses and against the
/// release the loader takes in this environment.
fn pins(cx: &Cx, out: &mut Vec<Finding>) {
    if let Some(e) = &cx.s.pin_error {
        let (what, hint) = e.split_once("\nhint: ").unwrap_or((e.as_str(), ""));
        let mut f = Finding::new(
            FindingId::PinUnreadable,
            Severity::Error,
            format!("the pin here cannot be read: {what}"),
        )
        .why("`cudnnm exec`, `cudnnm env`, `cudnnm current` and the shell hook read this pin, so they fail in this folder.");
        f = if hint.is_empty() {
            f.fix("Write a release there (`9`, `9.1`, `8.9.7.29_cuda12`), or remove the pin.")
        } else {
            f.fix(hint.to_string())
        };
        // A pin that works here: the newest installed release, else none to name.
        if let Some(id) = cx.newest_installed(|_| true) {
            f = f.command(format!("cudnnm pin {id}"));
        }
        out.push(f);
    }
    let Some(p) = &cx.s.pin else { return };
    let Ok(spec) = p.spec.parse::<Spec>() else {
        return;
    };
    let who = format!("the pin `{}` ({})", p.spec, p.source);
    not_installed(cx, &spec, &who, p.source.starts_with("default"), out);
    // Against the toolkit: only a pin that names its CUDA build says which it is.
    if let (Some(variant), Some(tk)) = (&spec.cuda, cx.toolkit_in_use())
        && let Some(c) = &tk.cuda
        && !variant.fits(c.major(), c.minor())
    {
        let fitting: Vec<&str> =
            cx.s.toolkits
                .iter()
                .filter(|t| {
                    t.cuda
                        .as_ref()
                        .is_some_and(|tc| variant.fits(tc.major(), tc.minor()))
                })
                .map(|t| t.root.as_str())
                .collect();
        let mut f = Finding::new(
            FindingId::PinToolkitMismatch,
            Severity::Warning,
            format!("{who} is a build for CUDA {variant}; the toolkit in use is CUDA {}.{}", c.major(), c.minor()),
        )
        .seen(format!("pinned: cuDNN {spec}"))
        .seen(format!("toolkit in use: {} (CUDA {c}, {})", tk.root, tk.found_by))
        .why(format!("A cuDNN build runs with the CUDA it was built for (the same major.minor before CUDA 11, the same major from 11 on): with the CUDA {}.{} runtime this build fails to load or stops with CUDNN_STATUS_VERSION_MISMATCH / \"CUDA driver version is insufficient\".", c.major(), c.minor()));
        f = match fitting.first() {
            Some(root) => f
                .fix(format!("Point the build at a CUDA {variant} toolkit ({root} is one: set CUDA_PATH/CUDA_HOME and PATH to it), or pin a build of this cuDNN for CUDA {}.", c.major()))
                .command(format!("cudnnm pin {}", repin(&spec, c))),
            None => f
                .fix(format!("Pin a build of this cuDNN for the toolkit in use (CUDA {}), or install a CUDA {variant} toolkit.", c.major()))
                .command(format!("cudnnm pin {}", repin(&spec, c))),
        };
        out.push(f);
    }
    // Against the loaded release of the same major (another major is `cudnn-major-mismatch`).
    // A range or `latest` names no one version to compare with.
    let Some(version) = spec.version() else {
        return;
    };
    let m = version.major();
    let Some(a) = cx.active(m) else { return };
    let Some(k) = &a.version else { return };
    if version.parts().len() < 2 || k.version.parts().len() < 2 {
        return;
    }
    // Compare on what both say (a loaded library gives major.minor.patch).
    let n = version.parts().len().min(k.version.parts().len());
    if version.parts()[..n] == k.version.parts()[..n] {
        return;
    }
    out.push(
        Finding::new(
            FindingId::PinReleaseMismatch,
            Severity::Warning,
            format!("{who} asks for cuDNN {}; the loader takes cuDNN {} here", version, k.version),
        )
        .seen(format!("pinned: cuDNN {spec}"))
        .seen(format!("the loader takes {}", cx.describe(&a.hit.path)))
        .why("A pin applies to programs started through cudnnm (`cudnnm exec`, or a shell where `cudnnm env` ran); anything else — an IDE, a service, a plain shell — loads what the loader path gives, so the project builds or runs against a release it did not pin.")
        .fix("Run the project through cudnnm, activate the pin in this shell, or deploy the pinned release into the toolkit.")
        .command("cudnnm exec -- <your program>")
        .command(if cx.w { "cudnnm env --shell powershell | Invoke-Expression".to_string() } else { "eval \"$(cudnnm env --shell bash)\"".to_string() })
        .command(match cx.toolkit_in_use() {
            Some(t) => crate::command::CommandLine::use_(&p.spec).cuda_root(&t.root).for_host(cx.w),
            None => format!("cudnnm use {}", p.spec),
        }),
    );
}

/// `pin-not-installed`: the pin names a release the store does not hold.
/// The command offered is the catalog's for the newest release that matches
/// the spec and fits the toolkit in use (an archive id or a `pip:`
/// requirement, both of which `cudnnm install` takes).
fn not_installed(cx: &Cx, spec: &Spec, who: &str, default: bool, out: &mut Vec<Finding>) {
    let Some(installed) = &cx.s.store_releases else {
        return;
    };
    if installed
        .iter()
        .any(|id| spec.matches(&id.version, &id.cuda))
    {
        return;
    }
    let mut f = Finding::new(
        FindingId::PinNotInstalled,
        Severity::Error,
        format!("{who} names cuDNN {spec}, which is not installed"),
    )
    .seen(format!("pinned: cuDNN {spec} ({who})"))
    .seen(if installed.is_empty() {
        "installed: none".to_string()
    } else {
        format!(
            "installed: {}",
            installed
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
    .why("`cudnnm exec`, `cudnnm env`, `cudnnm current` and the shell hook resolve this pin to an installed release, so in this folder they stop with \"not installed\".");
    // The default is what vanished (uninstalled, by an administrator from
    // the system store): making an installed release the default is the fix.
    let tk_cuda = cx.toolkit_in_use().and_then(|t| t.cuda.clone());
    if default
        && let Some(id) = cx.newest_installed(|id| {
            tk_cuda
                .as_ref()
                .is_none_or(|c| id.cuda.fits(c.major(), c.minor()))
        })
    {
        let gone: Vec<String> =
            cx.s.current_links
                .iter()
                .filter(|l| l.gone)
                .map(|l| format!("{} leads to it and dangles", l.path))
                .collect();
        for g in gone {
            f = f.seen(g);
        }
        out.push(
            f.fix(format!("Make an installed release the default ({id} is the newest that fits), or install {spec} again."))
                .command(crate::command::CommandLine::default_(id.to_string()).for_host(cx.w)),
        );
        return;
    }
    let tk = tk_cuda.as_ref();
    // A build that does not fit the toolkit in use is no fix to offer here:
    // the same report says it does not fit (pin-toolkit-mismatch).
    if let Some(c) = tk
        && cx.t.offer(spec, tk).is_none()
        && let Some(o) = cx.t.offer(spec, None)
    {
        let fitting = spec
            .version()
            .map(|v| Spec::prefix(v.clone(), None))
            .and_then(|any| cx.t.offer(&any, tk));
        f = f.fix(format!(
            "The catalog's {} is a build for CUDA {}, which does not fit the toolkit in use (CUDA {}.{}): pin a build for CUDA {}{}, or install it where a CUDA {} toolkit is used.",
            o.id(),
            o.cuda,
            c.major(),
            c.minor(),
            c.major(),
            fitting
                .map(|x| format!(" ({} is one)", x.id()))
                .unwrap_or_default(),
            o.cuda
        ));
        if let Some(x) = fitting {
            f = f.command(format!("cudnnm pin {}", x.id()));
        }
        out.push(f);
        return;
    }
    let offer = cx.t.offer(spec, tk).or_else(|| cx.t.offer(spec, None));
    f = match offer {
        Some(o) => f
            .fix(format!("Install cuDNN {} (the newest release the catalog has for `{spec}`), or pin a release that is installed.", o.id()))
            .command(cx.install_cmd(o).for_host(cx.w)),
        None => f.fix(format!("{} Or pin a release that is installed (`cudnnm list`).", super::look_for(&format!("release matching `{spec}`")))),
    };
    out.push(f);
}

/// Something that wants a cuDNN: a framework build or a pin.
pub(crate) struct Expectation {
    /// Who wants it: `TensorFlow 2.5.0`, `pin 8.1 (.cudnn-version)`.
    pub who: String,
    /// The cuDNN wanted (`8.1`, `9.1.0.70`).
    pub version: Version,
    /// The CUDA the framework was built with, when known.
    pub cuda: Option<Version>,
    /// The CUDA variant of the build it names: a pin's `_cuda12`, a wheel's `-cu12`.
    pub variant: Option<CudaVariant>,
}

/// The catalog's framework name for a distribution name.
fn catalog_name(dist: &str) -> Option<&'static str> {
    match dist {
        "tensorflow" | "tensorflow-gpu" | "tensorflow-intel" => Some("tensorflow"),
        "torch" => Some("pytorch"),
        _ => None,
    }
}

fn pretty(dist: &str) -> &str {
    match dist {
        "torch" => "PyTorch",
        d if d.starts_with("tensorflow") => "TensorFlow",
        d => d,
    }
}

/// The CUDA a wheel's local version names: `2.4.1+cu121` → 12.1, `+cu118` → 11.8.
fn cuda_tag(f: &Framework) -> Option<(u32, u32)> {
    let (_, local) = f.version.split_once('+')?;
    let digits = local.strip_prefix("cu")?;
    if digits.len() < 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (ma, mi) = digits.split_at(digits.len() - 1);
    Some((ma.parse().ok()?, mi.parse().ok()?))
}

/// The table row that describes framework `f`, if any: among the rows of
/// its version and OS, the one of the CUDA its local version names
/// (PyTorch's `+cu121`), else the first (the stable build).
fn row_for<'a>(cx: &'a Cx, f: &Framework) -> Option<&'a crate::catalog::FrameworkBuild> {
    let name = catalog_name(&f.name)?;
    let v = f.numeric_version()?;
    let key = |x: &Version| (x.major(), x.minor());
    let mut rows = cx.t.frameworks.iter().filter(|r| {
        r.framework == name
            && r.os.as_deref().is_none_or(|o| o == cx.s.os.family)
            && key(&r.first) <= key(&v)
            && key(&v) <= key(&r.last)
    });
    match cuda_tag(f) {
        Some(c) => rows
            .clone()
            .find(|r| key(&r.cuda) == c)
            .or_else(|| rows.next()),
        None => rows.next(),
    }
}

/// True when the framework carries its own cuDNN (PyTorch's Windows wheels
/// bundle the DLLs in `torch\lib`) and so does not depend on the loader path.
fn bundles_cudnn(cx: &Cx, f: &Framework) -> bool {
    let own = spath::join(&f.location, "torch", cx.w);
    f.name == "torch"
        && cx
            .shared()
            .any(|(file, n)| n.is_main() && cx.s.within(&file.path, &own))
}

/// Every expectation in the snapshot: the pin, then frameworks.
pub(crate) fn expectations(cx: &Cx) -> Vec<Expectation> {
    let mut v = Vec::new();
    if let Some(p) = &cx.s.pin
        && let Ok(spec) = p.spec.parse::<Spec>()
        && let Some(version) = spec.version().cloned()
    {
        v.push(Expectation {
            who: format!("the pin {} ({})", p.spec, p.source),
            version,
            cuda: None,
            variant: spec.cuda,
        });
    }
    for f in &cx.s.frameworks {
        if let Some((pkg, want)) = requirement(f) {
            v.push(Expectation {
                who: format!("{} {}", pretty(&f.name), f.version),
                version: want,
                cuda: None,
                variant: pkg
                    .rsplit_once("-cu")
                    .and_then(|(_, c)| c.parse::<CudaVariant>().ok()),
            });
        } else if let Some(r) = row_for(cx, f).filter(|_| !bundles_cudnn(cx, f)) {
            v.push(Expectation {
                who: format!("{} {}", pretty(&f.name), f.version),
                version: r.cudnn.clone(),
                cuda: Some(r.cuda.clone()),
                variant: None,
            });
        }
    }
    v
}

/// The requirement a framework's metadata puts on a cuDNN wheel, parsed
/// (PEP 508; the probe evaluated its markers and extras for this machine).
fn parsed(f: &Framework) -> Option<(String, pep508_rs::pep440_rs::VersionSpecifiers)> {
    let r: pep508_rs::Requirement = f.cudnn_requirement.as_deref()?.parse().ok()?;
    let specs = match r.version_or_url {
        Some(pep508_rs::VersionOrUrl::VersionSpecifier(s)) => s,
        _ => return None,
    };
    Some((r.name.to_string(), specs))
}

/// `nvidia-cudnn-cu12==9.1.0.70` → (`nvidia-cudnn-cu12`, 9.1.0.70): an
/// exact pin (a range is judged by [`ranged_wheels`]).
fn requirement(f: &Framework) -> Option<(String, Version)> {
    let (pkg, specs) = parsed(f)?;
    let [one] = specs.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    if *one.operator() != pep508_rs::pep440_rs::Operator::Equal {
        return None;
    }
    Some((pkg, one.version().to_string().parse().ok()?))
}

/// `cudnn-advisory`: the cuDNN the loader takes, or a cuDNN wheel installed
/// in a Python environment, is a release an advisory covers.
fn advisories(cx: &Cx, out: &mut Vec<Finding>) {
    let all = &cx.t.advisories;
    let any_cuda = CudaVariant::new(0, None);
    let mut push = |what: String, version: &Version, wheel: Option<&str>, seen: String| {
        for a in crate::catalog::advisory::covering(all, version, &any_cuda, wheel, None) {
            out.push(
                Finding::new(
                    FindingId::CudnnAdvisory,
                    Severity::Warning,
                    format!("{what} is cuDNN {version}, which advisory {} covers", a.id),
                )
                .seen(seen.clone())
                .why(format!("{} ({})", a.summary, a.source))
                .fix("Use another release: `cudnnm frameworks` names the newest that satisfies the frameworks of a Python environment, `cudnnm install --for python` installs it."),
            );
        }
    };
    for m in cx.majors_present() {
        if let Some(a) = cx.active(m)
            && let Some(k) = &a.version
        {
            push(
                "the cuDNN the loader takes".to_string(),
                &k.version,
                None,
                format!("the loader takes {}", cx.describe(&a.hit.path)),
            );
        }
    }
    for w in cx.s.frameworks.iter().filter(|f| f.is_cudnn_wheel()) {
        if let Some(v) = w.numeric_version() {
            push(
                format!("the {} wheel in {}", w.name, w.location),
                &v,
                Some(&w.name),
                format!("{} {} in {}", w.name, w.version, w.location),
            );
        }
    }
}

/// `framework-cudnn-mismatch` for a framework whose metadata accepts a range
/// of a cuDNN wheel (`tensorflow[and-cuda]`: `nvidia-cudnn-cu12>=9.3.0.75,<10`,
/// JAX's plugins, `onnxruntime-gpu[cudnn]`) when the installed wheel is outside it.
fn ranged_wheels(cx: &Cx, out: &mut Vec<Finding>) {
    for f in &cx.s.frameworks {
        if requirement(f).is_some() {
            continue;
        }
        let Some((pkg, specs)) = parsed(f) else {
            continue;
        };
        let Some(w) =
            cx.s.frameworks
                .iter()
                .find(|w| w.name == pkg && spath::same(&w.location, &f.location, cx.w))
        else {
            continue;
        };
        let Ok(have) = w.version.parse::<pep508_rs::pep440_rs::Version>() else {
            continue;
        };
        if specs.contains(&have) {
            continue;
        }
        let who = format!("{} {}", pretty(&f.name), f.version);
        out.push(
            Finding::new(
                FindingId::FrameworkCudnnMismatch,
                Severity::Error,
                format!("{who} requires {pkg}{specs}, but {have} is installed"),
            )
            .seen(format!("{} {} in {} requires {pkg}{specs}", f.name, f.version, f.location))
            .seen(format!("{pkg} {have} in {}", w.location))
            .why("The framework loads the cuDNN wheel of its environment; a release outside the range its metadata declares fails at start-up (\"Loaded runtime CuDNN library: X but source was compiled with: Y\") or on missing symbols.")
            .fix("Install a release in that range in this environment (`cudnnm frameworks` shows the newest that satisfies every framework there).")
            .command(format!("python -m pip install \"{pkg}{specs}\"")),
        );
    }
}

/// `framework-cudnn-mismatch` for frameworks that pin a cuDNN wheel
/// (PyTorch's Linux wheels: `Requires-Dist: nvidia-cudnn-cu12==9.1.0.70`).
fn pinned_wheels(cx: &Cx, out: &mut Vec<Finding>) {
    for f in &cx.s.frameworks {
        let Some((pkg, want)) = requirement(f) else {
            continue;
        };
        let wheel =
            cx.s.frameworks
                .iter()
                .find(|w| w.name == pkg && cx.s.same_place(&w.location, &f.location));
        let have = wheel.and_then(|w| w.numeric_version());
        if have.as_ref() == Some(&want) {
            loader_first(cx, f, &pkg, &want, out);
            continue;
        }
        let mut fd = Finding::new(
            FindingId::FrameworkCudnnMismatch,
            Severity::Error,
            match &have {
                Some(h) => format!(
                    "{} {} requires {pkg}=={want}, but {h} is installed",
                    pretty(&f.name),
                    f.version
                ),
                None => format!(
                    "{} {} requires {pkg}=={want}, which is not installed",
                    pretty(&f.name),
                    f.version
                ),
            },
        )
        .seen(format!("{} {} in {}", f.name, f.version, f.location))
        .seen(match &have {
            Some(h) => format!("{pkg} {h} in {}", f.location),
            None => format!("no {pkg} in {}", f.location),
        });
        fd = fd
            .why("The framework is built against exactly that cuDNN and loads it from its own wheel: another version fails at start-up (\"Loaded runtime CuDNN library: X but source was compiled with: Y\") or on missing symbols. An environment holds one copy of each pip package, so installing a second framework that pins another cuDNN replaces the one this framework needs.")
            .fix("Reinstall the version it requires in that environment (or give each framework its own environment).".to_string())
            .command(format!("python -m pip install \"{pkg}=={want}\""));
        out.push(fd);
    }
}

/// `framework-cudnn-mismatch` for a framework whose pinned wheel is the
/// right one but loses to another copy. With the framework's own library
/// that loads cuDNN known ([`super::processes`]), its load is played through
/// as ld.so does it: PyTorch's `libtorch_cuda.so` carries a `DT_RPATH` into
/// its wheel, searched before `LD_LIBRARY_PATH`, so another copy there does
/// not take the main library's place (its sub-libraries may still come from
/// there: `sub-libraries-mixed`). Without it, the framework is taken to ask
/// by name, and `LD_LIBRARY_PATH` supplies the cuDNN it loads.
fn loader_first(cx: &Cx, f: &Framework, pkg: &str, want: &Version, out: &mut Vec<Finding>) {
    if cx.w {
        return;
    }
    let modeled = super::processes::mapped(cx).into_iter().find(|(c, m, _)| {
        *m == want.major() && c.framework == f.name && cx.s.within(&c.path, &f.location)
    });
    let (path, via, asker) = match &modeled {
        Some((c, _, files)) => (
            files[0].path.clone(),
            files[0].via.clone(),
            Some(cx.name(&c.path).to_string()),
        ),
        None => {
            let Some(a) = cx.active(want.major()) else {
                return;
            };
            if !matches!(a.hit.via, crate::doctor::loader::Via::LdLibraryPath(_)) {
                return;
            }
            (a.hit.path.clone(), a.hit.via.clone(), None)
        }
    };
    if cx.s.within(&path, &f.location) {
        return;
    }
    let Some(k) = cx.s.file(&path).and_then(|file| cx.s.version_of(file)) else {
        return;
    };
    let n = want.parts().len().min(k.version.parts().len());
    if n < 2 || want.parts()[..n] == k.version.parts()[..n] {
        return;
    }
    let who = format!("{} {}", pretty(&f.name), f.version);
    let how = match &asker {
        Some(lib) => format!(
            "{who}'s {lib} asks the loader for {}, and its search finds {path} first ({via}): {lib} carries no RPATH into its own wheel that comes before it",
            cx.loader_name("cudnn", want.major())
        ),
        None => format!(
            "ld.so searches LD_LIBRARY_PATH before the RUNPATH that points {who} at its own wheel"
        ),
    };
    out.push(
        Finding::new(
            FindingId::FrameworkCudnnMismatch,
            Severity::Error,
            format!("{who} requires {pkg}=={want} (installed), but the loader takes cuDNN {} first", k.version),
        )
        .seen(format!("{} {} in {} requires {pkg}=={want}", f.name, f.version, f.location))
        .seen(format!("{pkg} {want} in {}", f.location))
        .seen(format!("the loader takes {}", cx.describe(&path)))
        .why(format!("{how}, so it loads cuDNN {} and stops with \"Loaded runtime CuDNN library: {} but source was compiled with: {want}\" or fails on missing symbols.", k.version, k.version))
        .fix(format!("Remove {} from LD_LIBRARY_PATH for this environment (conda: do not export the env's lib folder), or run other programs with that cuDNN through `cudnnm exec`.", cx.dir(&path))),
    );
}

/// `framework-cudnn-mismatch` and `framework-cuda-mismatch` from the
/// framework tables (`docs/releases.md#framework-builds`): TensorFlow loads cuDNN by name from the
/// loader path and needs the same major and at least the minor it was built with.
fn table_rows(cx: &Cx, out: &mut Vec<Finding>) {
    for f in &cx.s.frameworks {
        if requirement(f).is_some() || bundles_cudnn(cx, f) {
            continue;
        }
        let Some(r) = row_for(cx, f) else { continue };
        let who = format!("{} {}", pretty(&f.name), f.version);
        if let Some(a) = cx.active(r.cudnn.major())
            && let Some(k) = &a.version
            && k.version.parts().len() >= 2
            && k.version.minor() < r.cudnn.minor()
        {
            let tk = cx.toolkit_in_use();
            let spec = Spec::prefix(r.cudnn.clone(), None);
            let cuda = tk
                .and_then(|t| t.cuda.clone())
                .unwrap_or_else(|| r.cuda.clone());
            let cmds = cx.install_and_use(&spec, Some(&cuda), tk);
            let mut fd = Finding::new(
                    FindingId::FrameworkCudnnMismatch,
                    Severity::Error,
                    format!("{who} is built with cuDNN {}; the loaded cuDNN is {}", r.cudnn, k.version),
                )
                .seen(format!("{who} in {}: built with CUDA {} and cuDNN {}", f.location, r.cuda, r.cudnn))
                .seen(format!("loaded: {}", cx.describe(&a.hit.path)))
                .why(format!("cuDNN is backward compatible within a major only towards newer minors: {who} checks at start-up and stops with \"Loaded runtime CuDNN library: {} but source was compiled with: {}. CuDNN library needs to have matching major version and equal or higher minor version.\"", k.version, r.cudnn))
                .fix(match &cmds {
                    Some((id, _)) => format!("Activate cuDNN {} or a newer {}.x built for CUDA {}.{}: the catalog has {id}.", r.cudnn, r.cudnn.major(), cuda.major(), cuda.minor()),
                    None => format!("Activate cuDNN {} or a newer {}.x built for CUDA {}.{}. {}", r.cudnn, r.cudnn.major(), cuda.major(), cuda.minor(), super::look_for(&format!("cuDNN {} build for CUDA {}.{}", r.cudnn, cuda.major(), cuda.minor()))),
                });
            for c in cmds.map(|(_, c)| c).unwrap_or_default() {
                fd = fd.command(c);
            }
            out.push(fd);
        }
        if let Some(t) = cx.toolkit_in_use()
            && let Some(c) = &t.cuda
            && c.major() != r.cuda.major()
        {
            out.push(
                Finding::new(
                    FindingId::FrameworkCudaMismatch,
                    Severity::Warning,
                    format!("{who} is built with CUDA {}; the toolkit in use is CUDA {c}", r.cuda),
                )
                .seen(format!("{who}: CUDA {}, cuDNN {}", r.cuda, r.cudnn))
                .seen(format!("toolkit in use: {} (CUDA {c})", t.root))
                .why(format!("The framework loads the CUDA {} runtime libraries by name (e.g. cudart64_{}0.dll / libcudart.so.{}); a CUDA {} toolkit does not provide them, unless the framework brings its own from pip.", r.cuda.major(), r.cuda.major(), r.cuda.major(), c.major()))
                .fix(format!("Install CUDA {} (toolkits coexist) and put it first, or use a framework release built for CUDA {}.", r.cuda, c.major())),
            );
        }
    }
}

/// `cudnn-major-mismatch`: something needs cuDNN M, only other majors load.
fn majors(cx: &Cx, out: &mut Vec<Finding>) {
    let reachable: Vec<u32> = cx
        .majors_present()
        .into_iter()
        .filter(|m| cx.active(*m).is_some())
        .collect();
    let mut done = Vec::new();
    for e in expectations(cx) {
        let m = e.version.major();
        if reachable.contains(&m) || reachable.is_empty() || done.contains(&(m, e.who.clone())) {
            continue;
        }
        done.push((m, e.who.clone()));
        let others: Vec<String> = reachable
            .iter()
            .filter_map(|o| cx.active(*o).map(|a| cx.describe(&a.hit.path)))
            .collect();
        let name = cx.loader_name("cudnn", m);
        let mut f = Finding::new(
            FindingId::CudnnMajorMismatch,
            Severity::Error,
            format!(
                "{} needs cuDNN {m} ({name}); only cuDNN {} is reachable",
                e.who,
                reachable
                    .iter()
                    .map(|r| r.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
        .seen(format!("{} wants cuDNN {}", e.who, e.version));
        for o in others {
            f = f.seen(format!("reachable: {o}"));
        }
        if let Some(c) = &e.cuda {
            f = f.seen(format!("built with CUDA {c}"));
        }
        let tk = cx.toolkit_in_use();
        let spec = Spec::prefix(e.version.clone(), e.variant);
        let cuda = tk.and_then(|t| t.cuda.clone()).or_else(|| e.cuda.clone());
        let cmds = cx.install_and_use(&spec, cuda.as_ref(), tk);
        let wanted = match (&e.variant, &cuda) {
            (Some(v), _) => format!("cuDNN {} for CUDA {v}", e.version),
            (None, Some(c)) => format!(
                "cuDNN {} build for CUDA {}.{}",
                e.version,
                c.major(),
                c.minor()
            ),
            (None, None) => format!("cuDNN {} build", e.version),
        };
        f = f
            .why(format!("cuDNN majors are different libraries with a different ABI and file names ({name} is not {}): renaming a file does not work (PaddlePaddle#34837); the program stops with \"Could not load dynamic library '{name}'\".", cx.loader_name("cudnn", reachable[0])))
            .fix(match &cmds {
                Some((id, _)) => format!("Install a cuDNN {m} release next to the one you have (majors coexist) and activate it — the catalog has {id} — or update the program to cuDNN {}.", reachable[0]),
                None => format!("Install a cuDNN {m} release next to the one you have (majors coexist) and activate it, or update the program to cuDNN {}. {}", reachable[0], super::look_for(&wanted)),
            });
        for c in cmds.map(|(_, c)| c).unwrap_or_default() {
            f = f.command(c);
        }
        out.push(f);
    }
}

/// The pin `spec` with its CUDA suffix changed to the toolkit `c`'s variant
/// (its major from CUDA 11 on, `major.minor` before).
fn repin(spec: &Spec, c: &Version) -> Spec {
    let minor = (c.major() < 11).then(|| c.minor());
    Spec {
        req: spec.req.clone(),
        cuda: Some(CudaVariant::new(c.major(), minor)),
        flavour: spec.flavour,
    }
}

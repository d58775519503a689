//! Windows runtime pitfalls (`docs/system.md#windows-runtime`): the Visual C++ runtime, the
//! Universal C Runtime, and the user/machine `PATH` in the registry.

use super::Cx;
use crate::doctor::FindingId;
use crate::doctor::finding::{Finding, Severity};
use crate::doctor::loader;
use crate::doctor::spath;
use crate::names;

pub(super) fn check(cx: &Cx, out: &mut Vec<Finding>) {
    if !cx.w {
        return;
    }
    runtimes(cx, out);
    registry_path(cx, out);
    older_toolkit_first(cx, out);
}

/// `older-toolkit-first-on-path`: the CUDA DLLs the cuDNN that loads
/// imports (`cublasLt64_12.dll`, `cudart64_110.dll`) come from another
/// toolkit's `bin` although the toolkit `CUDA_PATH` names holds them too:
/// `PATH` lists the other first (or not the named one at all). DLLs of one
/// CUDA major share their names across minors, so the older ones load
/// (`docs/system.md#library-search`).
fn older_toolkit_first(cx: &Cx, out: &mut Vec<Finding>) {
    let Some(v) = cx.s.var("CUDA_PATH") else {
        return;
    };
    let Some(t) = cx.s.toolkits.iter().find(|t| cx.s.same_place(&t.root, v)) else {
        return;
    };
    let tbin = spath::join(&t.root, "bin", true);
    let mut shadowed: Vec<(String, String, &crate::doctor::snapshot::ToolkitInfo)> = Vec::new();
    for m in cx.majors_present() {
        let Some(a) = cx.active(m) else { continue };
        let mut libs: Vec<&crate::doctor::snapshot::CudnnFile> = a.file.into_iter().collect();
        for x in loader::sublibraries(cx.s, m, &a.hit.path, &[]) {
            libs.extend(cx.s.file(&x.path));
        }
        for g in libs {
            let g = cx.s.resolve(g);
            for n in g
                .needed
                .iter()
                .filter(|n| super::files::cuda_of_library(n).is_some())
            {
                let Some(h) = loader::find_for(cx.s, n, g).into_iter().next() else {
                    continue;
                };
                let Some(o) = cx.s.toolkit_of(&h.path) else {
                    continue;
                };
                if cx.s.same_place(&o.root, &t.root)
                    || !cx.s.has(&tbin, n)
                    || shadowed.iter().any(|(d, _, _)| spath::name_eq(d, n, true))
                {
                    continue;
                }
                shadowed.push((n.clone(), h.path, o));
            }
        }
    }
    let Some((_, _, o)) = shadowed.first() else {
        return;
    };
    let ver = |t: &crate::doctor::snapshot::ToolkitInfo| {
        t.cuda
            .as_ref()
            .map_or_else(|| "?".to_string(), ToString::to_string)
    };
    let pos = |dir: &str| cx.s.path.iter().position(|e| cx.s.same_place(e, dir));
    let obin = spath::join(&o.root, "bin", true);
    let mut f = Finding::new(
        FindingId::OlderToolkitFirstOnPath,
        Severity::Warning,
        format!(
            "PATH lists CUDA {}'s bin before CUDA_PATH's CUDA {}: the CUDA DLLs cuDNN needs load from CUDA {}",
            ver(o),
            ver(t),
            ver(o)
        ),
    );
    f = f.seen(match pos(&obin) {
        Some(i) => format!("PATH entry {}: {obin} (CUDA {})", i + 1, ver(o)),
        None => format!("{obin} (CUDA {})", ver(o)),
    });
    f = f.seen(match pos(&tbin) {
        Some(i) => format!("PATH entry {}: {tbin} (CUDA_PATH, CUDA {})", i + 1, ver(t)),
        None => format!("{tbin} (CUDA_PATH, CUDA {}) is not on PATH", ver(t)),
    });
    for (n, p, _) in &shadowed {
        f = f.seen(format!("{n} loads from {p}; {tbin} has its own"));
    }
    out.push(
        f.why(format!("Windows takes each DLL from the first folder that holds its name (the DLL's own folder, System32, the Windows folder, the working folder, then PATH in order); CUDA_PATH is read by build tools, never by the loader. The DLLs of one CUDA major share their names across minors (cublasLt64_12.dll in 12.1 and 12.4), so cuDNN runs with CUDA {}'s copies: a cuDNN built with a newer CUDA stops at a missing entry point (\"The procedure entry point … could not be located\") or misbehaves.", ver(o)))
            .fix(format!("Put {tbin} first on PATH (or take {obin} off it), then open a new terminal."))
            .command(crate::doctor::finding::persist_user_path(&tbin))
            .command(crate::doctor::finding::prepend_loader_path(&tbin, true)),
    );
}

/// `vc-runtime-missing`, `ucrt-missing` (`docs/breakages.md#vc-runtime-missing`).
fn runtimes(cx: &Cx, out: &mut Vec<Finding>) {
    let s = cx.s;
    if cx.shared().next().is_none() && s.frameworks.is_empty() {
        return;
    }
    let missing: Vec<&str> = names::VC_RUNTIME_DLLS
        .iter()
        .copied()
        .filter(|n| loader::find(s, n).is_empty())
        .collect();
    if !missing.is_empty() {
        out.push(
            Finding::new(
                FindingId::VcRuntimeMissing,
                Severity::Error,
                format!("the Visual C++ runtime is missing: {}", missing.join(", ")),
            )
            .seen(format!("not in System32, the Windows folder or PATH: {}", missing.join(", ")))
            .why(format!("This is not a cuDNN problem: programs built with Visual Studio 2015–2022 (TensorFlow, PyTorch, and what loads cuDNN) stop with \"DLL load failed\" or \"The code execution cannot proceed because {} was not found\" even when cuDNN is correct (tensorflow#36407).", missing[0].to_ascii_uppercase()))
            .fix("Install the latest Microsoft Visual C++ Redistributable for Visual Studio 2015–2022 (x64): https://aka.ms/vs/17/release/vc_redist.x64.exe")
            .command("winget install Microsoft.VCRedist.2015+.x64"),
        );
    }
    let old = loader::windows_major(s).is_none_or(|m| m < 10);
    if old
        && loader::find(s, names::UCRT_DLL).is_empty()
        && loader::find(s, "ucrtbase.dll").is_empty()
    {
        out.push(
            Finding::new(FindingId::UcrtMissing, Severity::Error, "the Universal C Runtime is not installed")
                .seen(format!(
                    "Windows {}; no {} or ucrtbase.dll in System32",
                    s.os.version.as_deref().unwrap_or("version unknown"),
                    names::UCRT_DLL
                ))
                .why(format!("This is not a cuDNN problem: before Windows 10 the UCRT is a separate update, and every program built with Visual Studio 2015+ fails with \"The program can't start because {} is missing\" (tensorflow#15003).", names::UCRT_DLL))
                .fix("Install \"Update for Universal C Runtime in Windows\" (KB2999226) from Windows Update or Microsoft's download center, or the Visual C++ 2015–2022 Redistributable, which includes it."),
        );
    }
}

/// Splits a registry `Path` value into expanded entries.
fn split(s: &crate::doctor::snapshot::Snapshot, v: &str) -> Vec<String> {
    v.split(';')
        .filter(|e| !e.trim().is_empty())
        .map(|e| spath::expand_vars(e.trim(), |n| s.var(n).map(str::to_owned)))
        .collect()
}

/// `process-path-stale`, `user-machine-path-differ`, `path-not-persistent`
/// (`docs/breakages.md#user-and-machine-path-differ`): the folders holding
/// cuDNN DLLs in the registry's user and machine `Path` against this process's
/// `PATH`.
fn registry_path(cx: &Cx, out: &mut Vec<Finding>) {
    let s = cx.s;
    let Some(reg) = &s.registry else { return };
    let user = reg.user.as_deref().map(|v| split(s, v)).unwrap_or_default();
    let machine = reg
        .machine
        .as_deref()
        .map(|v| split(s, v))
        .unwrap_or_default();
    let has = |list: &[String], d: &str| list.iter().any(|e| cx.s.same_place(e, d));
    // Folders that hold cuDNN DLLs, in the order first seen.
    let mut dirs: Vec<String> = Vec::new();
    for (f, _) in cx.shared() {
        let d = cx.dir(&f.path);
        if !dirs.iter().any(|x| cx.s.same_place(x, &d)) {
            dirs.push(d);
        }
    }
    for d in &dirs {
        let (u, m, p) = (has(&user, d), has(&machine, d), has(&s.path, d));
        if (u || m) && !p {
            out.push(
                Finding::new(FindingId::ProcessPathStale, Severity::Warning, format!("{d} is on the {} PATH but not on this process's PATH", if u { "user" } else { "machine" }))
                    .seen(format!("registry {} Path holds {d}", if u { "user (HKCU)" } else { "machine (HKLM)" }))
                    .seen("this process's PATH does not")
                    .why("A process copies PATH when it starts: terminals, IDEs, Jupyter and services started before the change keep the old PATH and still fail with \"Could not load dynamic library\".")
                    .fix("Restart the program that runs your framework (and the terminal or IDE it was started from); for services, restart the service or sign out and in."),
            );
        }
        if p && !u && !m {
            out.push(
                Finding::new(FindingId::PathNotPersistent, Severity::Info, format!("{d} is on PATH for this process only"))
                    .seen(format!("neither the user nor the machine Path in the registry holds {d}"))
                    .why("It was set in this shell (`set PATH=…`, an activation script): other programs and new terminals do not see it.")
                    .fix("Keep it per process on purpose (`cudnnm exec`/`cudnnm env`), or add it to your user PATH."),
            );
        }
    }
    // One registry Path gives one cuDNN, the other another.
    let holder = |list: &[String]| {
        list.iter()
            .find(|e| dirs.iter().any(|d| cx.s.same_place(d, e)))
            .cloned()
    };
    if let (Some(ud), Some(md)) = (holder(&user), holder(&machine))
        && !cx.s.same_place(&ud, &md)
    {
        out.push(
            Finding::new(FindingId::UserMachinePathDiffer, Severity::Warning, "the user PATH and the machine PATH lead to different cuDNN copies")
                .seen(format!("user Path (HKCU): {}", cx.describe_dir(&ud)))
                .seen(format!("machine Path (HKLM): {}", cx.describe_dir(&md)))
                .why("Windows puts the machine Path before the user Path: your programs get the machine's copy, while a service or another account sees only the machine Path. Editing only one of them changes less than it seems.")
                .fix("Keep the cuDNN folder in one of the two Paths (the machine Path for services, needs an elevated prompt), and remove it from the other."),
        );
    } else if let Some(ud) = holder(&user)
        && holder(&machine).is_none()
    {
        out.push(
            Finding::new(FindingId::UserMachinePathDiffer, Severity::Info, format!("{ud} is on your user PATH only"))
                .seen(format!("user Path (HKCU) holds {ud}; the machine Path (HKLM) does not"))
                .why("Programs run by another account or as a service (Jupyter or a web server started as a service, scheduled tasks as SYSTEM) read only the machine Path and do not find cuDNN.")
                .fix("If your framework runs as a service or another user, add the folder to the machine Path (System Properties → Environment Variables, elevated)."),
        );
    }
}

impl Cx<'_> {
    /// The first cuDNN library in `dir`, described.
    fn describe_dir(&self, dir: &str) -> String {
        self.shared()
            .find(|(f, n)| n.is_main() && self.s.same_place(&self.dir(&f.path), dir))
            .map(|(f, _)| self.describe(&f.path))
            .unwrap_or_else(|| dir.to_string())
    }
}

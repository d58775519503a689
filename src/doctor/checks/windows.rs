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

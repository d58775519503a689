//! `compiler-header-mismatch` (`docs/breakages.md#compiler-header-mismatch`):
//! the first `cudnn.h` a compiler finds declares another release than the
//! library the loader takes, so a build compiles against one cuDNN and runs
//! with another.

use super::Cx;
use crate::doctor::FindingId;
use crate::doctor::finding::{Finding, Severity};
use crate::doctor::snapshot::CompilerHeader;
use crate::doctor::spath;
use crate::version::Version;

/// The first `cudnn.h` of a compiler's search, and the version its folder
/// declares (`cudnn_version.h` beside it for cuDNN 8 and later).
fn first_of<'a>(cx: &Cx, hs: &[&'a CompilerHeader]) -> Option<(&'a CompilerHeader, Version)> {
    let first = *hs.iter().find(|h| cx.name(&h.path) == "cudnn.h")?;
    let dir = cx.dir(&first.path);
    let beside = hs
        .iter()
        .find(|h| cx.name(&h.path) == "cudnn_version.h" && cx.s.same_place(&cx.dir(&h.path), &dir));
    let v = beside
        .and_then(|h| h.version.clone())
        .or_else(|| first.version.clone())?;
    Some((first, v))
}

pub(super) fn check(cx: &Cx, out: &mut Vec<Finding>) {
    let all: Vec<&CompilerHeader> = cx.s.compiler_headers.iter().collect();
    // Two compilers: nvcc, whose own -I of its toolkit's include comes
    // before every variable, and one without it (gcc or cl with CPATH /
    // INCLUDE alone).
    let plain: Vec<&CompilerHeader> = all
        .iter()
        .copied()
        .filter(|h| h.source != "nvcc -I")
        .collect();
    let nvcc = first_of(cx, &all).filter(|(h, _)| h.source == "nvcc -I");
    let host = first_of(cx, &plain);
    let Some((_, probe)) = host.as_ref().or(nvcc.as_ref()) else {
        return;
    };
    let active = cx
        .active(probe.major())
        .or_else(|| cx.majors_present().iter().rev().find_map(|m| cx.active(*m)));
    let Some(a) = active else { return };
    let Some(k) = &a.version else { return };
    let differs = |v: &Version| {
        let n = v.parts().len().min(k.version.parts().len()).min(3);
        v.parts()[..n] != k.version.parts()[..n]
    };
    // The loaded copy's own installation holds these headers: its headers
    // and library disagree, one cause that `header-library-mismatch`
    // reports (pointing CPATH at the same folder would change nothing).
    let own_inc = a
        .file
        .map(|file| file.root.clone())
        .filter(|r| !r.is_empty())
        .map(|r| spath::join(&r, "include", cx.w));
    let own = |h: &CompilerHeader| {
        own_inc
            .as_deref()
            .is_some_and(|i| cx.s.same_place(i, &cx.dir(&h.path)))
    };
    let nvcc_bad = nvcc.as_ref().filter(|(h, v)| differs(v) && !own(h));
    let host_bad = host.as_ref().filter(|(h, v)| differs(v) && !own(h));
    let (first, hv) = match (nvcc_bad, host_bad) {
        (Some(n), _) => n.clone(),
        (None, Some(h)) => h.clone(),
        (None, None) => return,
    };
    let mut f = Finding::new(
        FindingId::CompilerHeaderMismatch,
        Severity::Warning,
        format!(
            "the compiler finds the cuDNN {hv} headers first ({}); the loader takes cuDNN {}",
            first.path, k.version
        ),
    );
    if let Some((h, v)) = &nvcc {
        f = f.seen(format!(
            "nvcc finds {} first (cuDNN {v}): its own -I of the toolkit's include comes before CPATH",
            h.path
        ));
    }
    if let Some((h, v)) = &host
        && nvcc
            .as_ref()
            .is_some_and(|(n, _)| !cx.s.same_place(&n.path, &h.path))
    {
        f = f.seen(format!(
            "a compiler without that -I (gcc or cl with CPATH/INCLUDE alone) finds {} first (cuDNN {v})",
            h.path
        ));
    }
    for h in &all {
        f = f.seen(describe(h));
    }
    f = f
        .seen(format!("the loader takes {}", cx.describe(&a.hit.path)))
        .why("A build includes the first cudnn.h on the compiler's search path (`-I` folders — nvcc adds its own toolkit's include as one — then CPATH / C_INCLUDE_PATH / CPLUS_INCLUDE_PATH, or INCLUDE for MSVC, then the system folders), so it compiles against that release's API while it runs with another: build scripts report the wrong version (https://github.com/pytorch/pytorch/issues/41593), and code fails to compile or calls functions the loaded library lacks.");
    let via_alternatives = first
        .chain
        .iter()
        .any(|c| c.starts_with("/etc/alternatives/"));
    f = if via_alternatives {
        f.fix("This header is a link the package manager owns (Debian/Ubuntu alternatives): choose the matching release with update-alternatives, or put the loaded release's include folder first with CPATH (or -I). cudnnm does not change these links.")
            .command("sudo update-alternatives --config libcudnn")
    } else if first.source == "nvcc -I" {
        f.fix("nvcc's own -I of its toolkit comes before CPATH: deploy the release that loads into that toolkit (headers and libraries together), or load the toolkit's own release.")
    } else {
        f.fix("Put the include folder of the release that loads first (CPATH, or -I in the build), remove the stale headers, or deploy one release's headers and libraries together into the toolkit.")
    };
    // Only a folder that holds the loaded release's cudnn.h helps on CPATH.
    if first.source != "nvcc -I"
        && let Some(inc) = own_inc.filter(|i| cx.s.has(i, "cudnn.h"))
    {
        f = f.command(if cx.w {
            format!("$env:INCLUDE = \"{inc};$env:INCLUDE\"")
        } else {
            format!("export CPATH=\"{inc}${{CPATH:+:$CPATH}}\"")
        });
    }
    out.push(f);
}

/// One line per header: where it is, why the compiler looks there, the links
/// followed, and the version it declares.
fn describe(h: &CompilerHeader) -> String {
    let mut line = format!("{} ({})", h.path, h.source);
    for c in &h.chain {
        line.push_str(" -> ");
        line.push_str(c);
    }
    match &h.version {
        Some(v) => line.push_str(&format!(": cuDNN {v}")),
        None => line.push_str(": no version"),
    }
    line
}

//! `compiler-header-mismatch` (`docs/breakages.md#compiler-header-mismatch`):
//! the first `cudnn.h` a compiler finds declares another release than the
//! library the loader takes, so a build compiles against one cuDNN and runs
//! with another.

use super::Cx;
use crate::doctor::FindingId;
use crate::doctor::finding::{Finding, Severity};
use crate::doctor::snapshot::CompilerHeader;
use crate::doctor::spath;

pub(super) fn check(cx: &Cx, out: &mut Vec<Finding>) {
    let hs = &cx.s.compiler_headers;
    let Some(first) = hs.iter().find(|h| cx.name(&h.path) == "cudnn.h") else {
        return;
    };
    let dir = cx.dir(&first.path);
    // cuDNN 8 and later declare the version in `cudnn_version.h` beside `cudnn.h`.
    let beside = hs
        .iter()
        .find(|h| cx.name(&h.path) == "cudnn_version.h" && cx.s.same_place(&cx.dir(&h.path), &dir));
    let Some(hv) = beside
        .and_then(|h| h.version.clone())
        .or_else(|| first.version.clone())
    else {
        return;
    };
    let active = cx
        .active(hv.major())
        .or_else(|| cx.majors_present().iter().rev().find_map(|m| cx.active(*m)));
    let Some(a) = active else { return };
    let Some(k) = &a.version else { return };
    let n = hv.parts().len().min(k.version.parts().len()).min(3);
    if hv.parts()[..n] == k.version.parts()[..n] {
        return;
    }
    // The loaded copy's own installation holds these headers: its headers
    // and library disagree, one cause that `header-library-mismatch`
    // reports (pointing CPATH at the same folder would change nothing).
    let own_inc = a
        .file
        .map(|file| file.root.clone())
        .filter(|r| !r.is_empty())
        .map(|r| spath::join(&r, "include", cx.w));
    if own_inc.as_deref().is_some_and(|i| cx.s.same_place(i, &dir)) {
        return;
    }
    let mut f = Finding::new(
        FindingId::CompilerHeaderMismatch,
        Severity::Warning,
        format!(
            "the compiler finds the cuDNN {hv} headers first ({}); the loader takes cuDNN {}",
            first.path, k.version
        ),
    );
    for h in hs {
        f = f.seen(describe(h));
    }
    f = f
        .seen(format!("the loader takes {}", cx.describe(&a.hit.path)))
        .why("A build includes the first cudnn.h on the compiler's search path (`-I` folders, then CPATH / C_INCLUDE_PATH / CPLUS_INCLUDE_PATH, or INCLUDE for MSVC, then the system folders), so it compiles against that release's API while it runs with another: build scripts report the wrong version (https://github.com/pytorch/pytorch/issues/41593), and code fails to compile or calls functions the loaded library lacks.");
    let via_alternatives = first
        .chain
        .iter()
        .any(|c| c.starts_with("/etc/alternatives/"));
    f = if via_alternatives {
        f.fix("This header is a link the package manager owns (Debian/Ubuntu alternatives): choose the matching release with update-alternatives, or put the loaded release's include folder first with CPATH (or -I). cudnnm does not change these links.")
            .command("sudo update-alternatives --config libcudnn")
    } else {
        f.fix("Put the include folder of the release that loads first (CPATH, or -I in the build), remove the stale headers, or deploy one release's headers and libraries together into the toolkit.")
    };
    // Only a folder that holds the loaded release's cudnn.h helps on CPATH.
    if let Some(inc) = own_inc.filter(|i| cx.s.has(i, "cudnn.h")) {
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

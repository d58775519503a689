//! What the loader finds: copies in search order, sub-library mixing, `PATH`
//! and `LD_LIBRARY_PATH` mistakes, unresolved dependencies, zlib.
//!
//! Here: `cudnn-not-found`. `copies.rs`: copies in search order;
//! `mixing.rs`: sub-libraries from several copies; `paths.rs`: loader path
//! mistakes; `dependencies.rs`: unresolved dependencies, zlib.

mod copies;
mod dependencies;
mod mixing;
mod paths;

use super::Cx;
use crate::doctor::FindingId;
use crate::doctor::finding::{Finding, Severity};
use crate::doctor::snapshot::CudnnFile;
use crate::names::{self, FileKind};
use crate::version::{Spec, Version};

pub(super) fn check(cx: &Cx, out: &mut Vec<Finding>) {
    not_found(cx, out);
    copies::copies(cx, out);
    mixing::mixing(cx, out);
    paths::toolkit_on_path(cx, out);
    paths::current_folder(cx, out);
    paths::path_too_high(cx, out);
    paths::only_in_site_packages(cx, out);
    dependencies::dependencies(cx, out);
    dependencies::machine_types(cx, out);
    dependencies::zlib(cx, out);
}

/// The name of the loader variable on this OS.
fn loader_var(cx: &Cx) -> &'static str {
    if cx.w { "PATH" } else { "LD_LIBRARY_PATH" }
}

/// `cudnn-not-found`: no cuDNN library or header anywhere looked.
fn not_found(cx: &Cx, out: &mut Vec<Finding>) {
    if cx.s.files.iter().any(|f| {
        names::classify(cx.name(&f.path)).is_some_and(|n| {
            n.kind == FileKind::Header || (n.kind == FileKind::Shared && n.windows == cx.w)
        })
    }) {
        return;
    }
    // The newest release the catalog has for the toolkit in use.
    let tk = cx.toolkit_in_use();
    let cmds = [9, 8, 7].iter().find_map(|m| {
        cx.install_and_use(&Spec::prefix(Version::from_parts(&[*m]), None), None, tk)
    });
    let fix = match (&cmds, tk) {
        (Some((id, _)), Some(t)) => format!(
            "Install a release and deploy it into your toolkit: the newest the catalog has for {} is {id}.",
            t.root
        ),
        (Some((id, _)), None) => format!(
            "Install a release and deploy it into your toolkit (the newest the catalog has is {id}; `cudnnm list --remote` lists the others)."
        ),
        (None, _) => format!(
            "Install a release and deploy it into your toolkit. {}",
            super::look_for("cuDNN release for this machine")
        ),
    };
    let mut fd =
        Finding::new(FindingId::CudnnNotFound, Severity::Error, "no cuDNN found on this machine")
            .seen(format!(
                "looked in: the toolkits, {}, the loader's system folders, Python environments",
                loader_var(cx)
            ))
            .why(if cx.w {
                "Programs that use cuDNN stop at start-up: \"Could not load dynamic library 'cudnn64_8.dll'\" / \"Could not find 'cudnn64_7.dll'\"."
            } else {
                "Programs that use cuDNN stop at start-up: \"libcudnn.so.9: cannot open shared object file: No such file or directory\"."
            })
            .fix(fix)
            .command("cudnnm list --remote");
    for c in cmds.map(|(_, c)| c).unwrap_or_default() {
        fd = fd.command(c);
    }
    out.push(fd);
}

fn triple(cx: &Cx, f: Option<&CudnnFile>) -> Option<Version> {
    let k = cx.s.version_of(f?)?;
    (k.version.parts().len() >= 3).then(|| k.version.triple())
}

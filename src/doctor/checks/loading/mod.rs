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

/// `cudnn-not-found`: no cuDNN library or header anywhere looked. With
/// releases in the store, says so and names the command that activates one;
/// an install suggestion runs on the GPUs in use (catalog minimum compute).
fn not_found(cx: &Cx, out: &mut Vec<Finding>) {
    if cx.s.files.iter().any(|f| {
        names::classify(cx.name(&f.path)).is_some_and(|n| {
            n.kind == FileKind::Header || (n.kind == FileKind::Shared && n.windows == cx.w)
        })
    }) {
        return;
    }
    // A toolkit mid-change from this home: finishing it (toolkit-change-
    // unfinished) puts cuDNN back, so "not found" would mislead.
    if cx
        .s
        .toolkits
        .iter()
        .any(|t| t.unfinished_change.as_ref().is_some_and(|u| u.own_home))
    {
        return;
    }
    let tk = cx.toolkit_in_use();
    // The oldest compute capability among the GPUs a program would use.
    let cc =
        cx.s.driver
            .iter()
            .flat_map(|d| &d.gpus)
            .filter(|g| !g.hidden)
            .filter_map(|g| g.compute_capability.clone())
            .min();
    let runs = |version: &Version, cuda: &crate::version::CudaVariant| {
        cc.as_ref().is_none_or(|cc| {
            cx.t.min_compute(version, Some(cuda))
                .is_none_or(|n| n <= *cc)
        })
    };
    // Releases already in the store: activating one is the fix.
    let installed: Vec<crate::version::ReleaseId> = cx.installed().collect();
    if let Some(best) = installed
        .iter()
        .filter(|id| runs(&id.version, &id.cuda))
        .max_by(|a, b| a.version.cmp(&b.version))
    {
        let id = best.to_string();
        let list = installed
            .iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let activate = match tk {
            Some(t) => crate::command::CommandLine::use_(&id)
                .cuda_root(&t.root)
                .for_host(cx.w),
            None => crate::command::CommandLine::exec(&id, "<your program>").for_host(cx.w),
        };
        out.push(
            Finding::new(FindingId::CudnnNotFound, Severity::Error, "no cuDNN reachable by the loader: the installed releases are not deployed or activated")
                .seen(format!("installed in the cudnnm store: {list}"))
                .seen(format!(
                    "not found in: the toolkits, {}, the loader's system folders, Python environments",
                    loader_var(cx)
                ))
                .why("Releases in the store are used only once deployed into a toolkit (`cudnnm use`) or activated for a process (`cudnnm exec`, `cudnnm env`); until then programs stop at start-up, unable to load cuDNN.")
                .fix(format!("Activate an installed release, e.g. {id}:"))
                .command(activate),
        );
        return;
    }
    // The newest release the catalog has for the toolkit in use (one that
    // runs on the GPUs in use, when their compute capability is known).
    let cmds = match &cc {
        Some(cc) => super::system::newest_that_runs(cx, cc, None).map(|o| {
            let id = o.id();
            let activate = match tk {
                Some(t) => crate::command::CommandLine::use_(&id)
                    .cuda_root(&t.root)
                    .for_host(cx.w),
                None => crate::command::CommandLine::exec(&id, "<your program>").for_host(cx.w),
            };
            let install = o.offer.as_ref().map(|x| cx.install_cmd(x).for_host(cx.w));
            (id, install.into_iter().chain([activate]).collect())
        }),
        None => None,
    }
    .or_else(|| {
        [9, 8, 7].iter().find_map(|m| {
            cx.install_and_use(&Spec::prefix(Version::from_parts(&[*m]), None), None, tk)
        })
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
    let title = if installed.is_empty() {
        "no cuDNN found on this machine".to_string()
    } else {
        "no cuDNN reachable by the loader, and the installed releases do not run on the GPUs in use"
            .to_string()
    };
    let mut fd = Finding::new(FindingId::CudnnNotFound, Severity::Error, title);
    if !installed.is_empty() {
        let list = installed
            .iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        fd = fd.seen(format!("installed in the cudnnm store (not deployed or activated, and too new for the GPUs in use; see gpu-too-old): {list}"));
    }
    let mut fd = fd
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

//! `doctor -- CMD` / `doctor --pid PID`: the cuDNN files the process really
//! mapped against what the loader model predicts for it — the program with
//! its own search folders asking for the main library by name (or, when it
//! mapped a main library the model does not reach by name, that library's
//! own walk for its sub-libraries). A disagreement is
//! `loaded-not-as-predicted`; files of two releases in the process are
//! `sub-libraries-mixed`, seen rather than predicted.

use std::collections::BTreeSet;

use serde::Serialize;

use super::Cx;
use crate::doctor::FindingId;
use crate::doctor::finding::{Finding, Severity};
use crate::doctor::loader::{self, Mapped, Requester};
use crate::names;
use crate::version::Version;

/// One file the watched process mapped, and what doctor predicted for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Compared {
    /// The file mapped.
    pub path: String,
    /// Its version, from its own evidence, when known.
    pub version: Option<String>,
    /// The file doctor predicted for the same library, when it predicted one.
    pub predicted: Option<String>,
    /// Why the loader takes the predicted file (`LD_LIBRARY_PATH entry 1`).
    pub via: Option<String>,
    /// The mapped file is the predicted one.
    pub agrees: bool,
}

/// The watched process's mapped cuDNN files, each against the prediction.
pub fn compare(cx: &Cx) -> Vec<Compared> {
    let Some(p) = &cx.s.process else {
        return Vec::new();
    };
    let none: &[String] = &[];
    let exe = p.exe.as_deref().map(|e| Requester {
        path: e,
        rpath: if p.exe_rpath.is_empty() {
            none
        } else {
            &p.exe_rpath
        },
        runpath: if p.exe_runpath.is_empty() {
            none
        } else {
            &p.exe_runpath
        },
    });
    let chain: Vec<Requester> = exe.into_iter().collect();
    let majors: BTreeSet<u32> = p
        .mapped
        .iter()
        .filter_map(|m| names::classify(cx.name(m)))
        .filter(|n| n.is_main() && !n.dev_link)
        .filter_map(|n| n.major)
        .collect();
    let mut predicted: Vec<Mapped> = Vec::new();
    for m in majors {
        let by_name = loader::process(cx.s, m, &chain);
        let mapped_main = p.mapped.iter().find(|f| {
            names::classify(cx.name(f)).is_some_and(|n| n.is_main() && n.major == Some(m))
        });
        match (by_name.first(), mapped_main) {
            // A main library the program got some other way (its full
            // path, a framework library's RPATH): its own walk for the
            // sub-libraries is what can be predicted.
            (Some(first), Some(main))
                if !cx.s.same_file(&first.path, main) && !reachable_by_name(cx, m, main) =>
            {
                predicted.push(first.clone());
                predicted.extend(loader::sublibraries(cx.s, m, main, &chain));
            }
            (None, Some(main)) => predicted.extend(loader::sublibraries(cx.s, m, main, &chain)),
            _ => predicted.extend(by_name),
        }
    }
    // The main library first, then the sub-libraries in the order mapped.
    let mut mapped: Vec<&String> = p.mapped.iter().collect();
    mapped.sort_by_key(|f| !names::classify(cx.name(f)).is_some_and(|n| n.is_main()));
    mapped
        .into_iter()
        .map(|path| {
            let stem = names::classify(cx.name(path)).map(|n| (n.stem, n.major));
            let guess = predicted
                .iter()
                .find(|x| names::classify(cx.name(&x.path)).map(|n| (n.stem, n.major)) == stem);
            Compared {
                path: path.clone(),
                version: cx
                    .s
                    .file(path)
                    .and_then(|f| cx.s.version_of(f))
                    .map(|k| k.version.to_string()),
                predicted: guess.map(|g| g.path.clone()),
                via: guess.map(|g| g.via.to_string()),
                agrees: guess.is_some_and(|g| cx.s.same_file(&g.path, path)),
            }
        })
        .collect()
}

/// Whether the loader would find `main` for a program asking by name at all
/// (some copy further down its order): then taking it instead of the first
/// is a disagreement, not a load by path.
fn reachable_by_name(cx: &Cx, major: u32, main: &str) -> bool {
    cx.hits(&cx.loader_name("cudnn", major))
        .iter()
        .any(|h| cx.s.same_file(&h.path, main))
}

pub(super) fn check(cx: &Cx, out: &mut Vec<Finding>) {
    let Some(p) = &cx.s.process else { return };
    let rows = compare(cx);
    let wrong: Vec<&Compared> = rows.iter().filter(|r| !r.agrees).collect();
    if !wrong.is_empty() {
        let mut f = Finding::new(
            FindingId::LoadedNotAsPredicted,
            Severity::Warning,
            format!(
                "{} mapped other cuDNN files than doctor predicted",
                p.command
            ),
        );
        for r in &wrong {
            f = f.seen(match (&r.predicted, &r.via) {
                (Some(pr), Some(via)) => format!(
                    "mapped {}; doctor predicted {pr} (via {via})",
                    cx.describe(&r.path)
                ),
                _ => format!(
                    "mapped {}; doctor predicted no such library for this program",
                    cx.describe(&r.path)
                ),
            });
        }
        if let Some(pre) = cx.s.var("LD_PRELOAD") {
            f = f.seen(format!("LD_PRELOAD={pre}"));
        }
        out.push(
            f.why("Doctor follows the loader's documented search (ld.so(8); Windows' DLL search order) for this program in the environment it saw. A program can still take another way: it loads cuDNN by its full path, changes its own search path before loading (os.add_dll_directory, a wrapper script that sets LD_LIBRARY_PATH), or something is preloaded (LD_PRELOAD, /etc/ld.so.preload). What the process mapped is what runs; the other findings judge what doctor predicted.")
                .fix("Trust the mapped files above. If the program loads cuDNN the plain way (by name, no preload), this is a doctor bug: keep the report (`cudnnm doctor --report doctor.json -- <your program>`) and send it."),
        );
    }
    // Files of more than one release in the process: seen, not predicted.
    let mut releases: BTreeSet<Version> = BTreeSet::new();
    for r in &rows {
        if let Some(v) = r
            .version
            .as_deref()
            .and_then(|v| v.parse::<Version>().ok())
            .filter(|v| v.parts().len() >= 3)
        {
            releases.insert(v.triple());
        }
    }
    let already = out.iter().any(|f| {
        f.id == FindingId::SubLibrariesMixed && rows.iter().any(|r| f.title.contains(&r.path))
    });
    if releases.len() > 1 && !already {
        let list: Vec<String> = releases.iter().map(ToString::to_string).collect();
        let mut f = Finding::new(
            FindingId::SubLibrariesMixed,
            Severity::Error,
            format!(
                "{} mapped cuDNN files of {} releases ({})",
                p.command,
                releases.len(),
                list.join(" and ")
            ),
        );
        for r in &rows {
            f = f.seen(format!("mapped {}", cx.describe(&r.path)));
        }
        out.push(
            f.why("cuDNN checks at its first call that its libraries are one release: this process fails with CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH / \"undefined symbol\", or reports another version than the one it was built for.")
                .fix("Keep one complete cuDNN set where this program looks first (remove the other folder from LD_LIBRARY_PATH or PATH, or make its own folder whole)."),
        );
    }
}

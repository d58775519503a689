//! `multiple-cudnn-copies`: several copies reachable, in the loader's
//! order, the winner marked, each with its origin and its own version.

use std::collections::BTreeSet;

use super::mixing::foreign;
use super::{loader_var, triple};
use crate::doctor::FindingId;
use crate::doctor::checks::{self, Cx};
use crate::doctor::finding::{Finding, Severity, prepend_loader_path};
use crate::doctor::loader::Hit;
use crate::doctor::snapshot::CudnnFile;

use crate::names;
use crate::version::Version;

/// Distinct copies among hits (links to the same file count once).
fn distinct<'a>(cx: &Cx<'a>, hits: &[Hit]) -> Vec<(Hit, Option<&'a CudnnFile>)> {
    hits.iter()
        .map(|h| (h.clone(), cx.s.file(&h.path)))
        .collect()
}

/// What the framework or pin in this snapshot wants of `major`, if anything.
fn wanted(cx: &Cx, major: u32) -> Option<(Version, String)> {
    checks::frameworks::expectations(cx)
        .into_iter()
        .find(|e| e.version.major() == major)
        .map(|e| (e.version, e.who))
}

/// `multiple-cudnn-copies` (`docs/breakages.md#several-copies-reachable`,
/// `#older-copy-first-on-path`, `#stale-copy-on-ld-library-path`,
/// `#conda-env-shadows-wheel`).
pub(super) fn copies(cx: &Cx, out: &mut Vec<Finding>) {
    for m in cx.majors_present() {
        let name = cx.loader_name("cudnn", m);
        let hits = distinct(cx, &cx.hits(&name));
        if hits.len() < 2 {
            continue;
        }
        // "The same version" only when every copy's own evidence says so and
        // none loads another copy's sub-libraries.
        let versions: BTreeSet<Option<Version>> =
            hits.iter().map(|(_, f)| triple(cx, *f)).collect();
        let unknown = hits
            .iter()
            .filter(|(_, f)| triple(cx, *f).is_none())
            .count();
        let mixed = hits.iter().enumerate().any(|(i, (_, f))| {
            // The copy programs get is played through; the others as
            // far as their own folder goes.
            let chain: &[crate::doctor::loader::Requester] = &[];
            f.is_some_and(|f| !foreign(cx, f, m, (i == 0).then_some(chain)).is_empty())
        });
        let differ = versions.len() > 1 || unknown > 0 || mixed;
        let sev = if differ {
            Severity::Warning
        } else {
            Severity::Info
        };
        let winner = &hits[0];
        let mut f = Finding::new(
            FindingId::MultipleCudnnCopies,
            sev,
            format!(
                "{} copies of {name} are reachable; the loader takes {}",
                hits.len(),
                winner.0.path
            ),
        );
        for (i, (h, _)) in hits.iter().enumerate() {
            let mark = if i == 0 { "  ← loaded" } else { "" };
            f = f.seen(format!(
                "{}. {} (via {}){mark}",
                i + 1,
                cx.describe(&h.path),
                h.via
            ));
        }
        let subs = names::sublib_stems(m)
            .iter()
            .filter(|st| cx.hits(&cx.loader_name(st, m)).len() > 1)
            .count();
        if subs > 0 {
            f = f.seen(format!(
                "the same applies to {subs} sub-librar{} of cuDNN {m}",
                if subs == 1 { "y" } else { "ies" }
            ));
        }
        let mut why = if differ {
            format!(
                "The loader stops at the first {name} in its search order ({}), whatever the others are: a program built for another version gets this one, and a later edit of the order silently switches releases.",
                search_order_words(cx)
            )
        } else {
            "Every copy's own files (headers, versioned names, receipts, the library's own answer) say the same version, so the order does not change behaviour today; it will when one is updated.".to_string()
        };
        if unknown > 0 {
            why.push_str(&format!(" The version of {unknown} of them is unknown from its own files (no header, versioned file name or store receipt beside it), so they may be different releases."));
        }
        if mixed {
            why.push_str(" A copy that takes its sub-libraries from another folder is a mix of releases (see sub-libraries-mixed).");
        }
        f = f.why(why);
        // The fix: the copy an expectation wants, first.
        let want = wanted(cx, m);
        let good = want.as_ref().and_then(|(v, _)| {
            hits.iter().find(|(_, file)| {
                triple(cx, *file).is_some_and(|t| t.major() == v.major() && t.minor() == v.minor())
            })
        });
        match (want, good) {
            (Some((v, who)), Some((h, _))) if !cx.s.same_place(&h.path, &winner.0.path) => {
                let dir = cx.dir(&h.path);
                f = f
                    .seen(format!("{who} wants cuDNN {v}: that is {}", h.path))
                    .fix(format!(
                        "Put {dir} first on {}, or remove the other folders from it.",
                        loader_var(cx)
                    ))
                    .command(prepend_loader_path(&dir, cx.w));
            }
            _ => {
                f = f.fix(format!(
                    "Keep one copy on {} (remove the folders of the others), or put the one you want first; `cudnnm exec`/`cudnnm env` put a chosen release first for one process.",
                    loader_var(cx)
                ));
            }
        }
        out.push(f);
    }
}

fn search_order_words(cx: &Cx) -> &'static str {
    if cx.w {
        "application folder, System32, Windows folder, working folder, then PATH in order"
    } else {
        "LD_LIBRARY_PATH in order, then the ld.so cache, then /lib and /usr/lib"
    }
}

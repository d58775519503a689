//! `sub-libraries-mixed`: a main library that takes sub-libraries from
//! another copy (seen when it was loaded, or missing from its folder and
//! found elsewhere), cuDNN 8/9 sub-libraries of different releases in one
//! folder, several sets visible.

use std::collections::BTreeSet;

use super::{loader_var, triple};
use crate::doctor::FindingId;
use crate::doctor::checks::Cx;
use crate::doctor::finding::{Finding, Severity};
use crate::doctor::loader;
use crate::doctor::snapshot::{CudnnFile, InstallKind};
use crate::doctor::spath;
use crate::names;
use crate::version::Version;

/// `sub-libraries-mixed` (`docs/breakages.md#sub-libraries-mixed`): cuDNN 8/9
/// load their sub-libraries by name, so with several sets visible they can come
/// from different copies.
pub(super) fn mixing(cx: &Cx, out: &mut Vec<Finding>) {
    let mixed_majors = foreign_sublibraries(cx, out);
    for m in cx.majors_present().into_iter().filter(|m| *m >= 8) {
        let mut stems: Vec<&str> = vec!["cudnn"];
        stems.extend(names::sublib_stems(m));
        // Winners per library and every root that holds a reachable copy.
        let mut winners: Vec<(String, String, Option<Version>)> = Vec::new();
        let mut roots: Vec<String> = Vec::new();
        for st in &stems {
            let hits = cx.hits(&cx.loader_name(st, m));
            for (i, h) in hits.iter().enumerate() {
                let file = cx.s.file(&h.path);
                let root = file
                    .map(|f| f.root.clone())
                    .unwrap_or_else(|| cx.dir(&h.path));
                if !roots.iter().any(|r| spath::same(r, &root, cx.w)) {
                    roots.push(root.clone());
                }
                if i == 0 {
                    winners.push((cx.loader_name(st, m), root, triple(cx, file)));
                }
            }
        }
        // Framework-owned copies loaded by absolute path (pip wheels) count too.
        for f in cx
            .shared()
            .filter(|(f, n)| f.origin == InstallKind::PipWheel && n.is_main() && n.major == Some(m))
            .map(|(f, _)| f)
        {
            if !roots.iter().any(|r| spath::same(r, &f.root, cx.w)) {
                roots.push(f.root.clone());
            }
        }
        let win_roots: BTreeSet<String> = winners
            .iter()
            .map(|(_, r, _)| spath::key(r, cx.w))
            .collect();
        let win_versions: BTreeSet<Version> =
            winners.iter().filter_map(|(_, _, v)| v.clone()).collect();
        // One cause, one finding: a main library already reported as taking
        // sub-libraries from another copy is this same mix.
        if win_roots.len() > 1 && win_versions.len() > 1 && !mixed_majors.contains(&m) {
            let mut f = Finding::new(
                FindingId::SubLibrariesMixed,
                Severity::Error,
                format!("cuDNN {m} libraries load from different releases"),
            );
            for (n, r, v) in &winners {
                f = f.seen(format!(
                    "{n} from {r} ({})",
                    v.as_ref()
                        .map(|v| v.to_string())
                        .unwrap_or_else(|| "version unknown".into())
                ));
            }
            out.push(
                f.why(format!("cuDNN {m} loads each sub-library by name, so each comes from the first folder in the search order that has it; here they come from different releases, which fails at the first call (\"CUDNN_STATUS_VERSION_MISMATCH\", \"undefined symbol\") or corrupts results."))
                    .fix(format!("Keep one complete set on {}; remove partial copies.", loader_var(cx))),
            );
        } else if roots.len() > 1 && !mixed_majors.contains(&m) {
            let mut f = Finding::new(
                FindingId::SubLibrariesMixed,
                Severity::Warning,
                format!(
                    "{} sets of cuDNN {m} are visible; its sub-libraries can mix between them",
                    roots.len()
                ),
            );
            for r in &roots {
                let v = cx
                    .shared()
                    .find(|(f, n)| {
                        spath::same(&f.root, r, cx.w) && n.is_main() && n.major == Some(m)
                    })
                    .and_then(|(f, _)| cx.s.version_of(f))
                    .map(|k| k.version.to_string())
                    .unwrap_or_else(|| "version unknown".into());
                f = f.seen(format!("{r} ({v})"));
            }
            out.push(
                f.why(format!("A program that loads lib/cudnn from one set by path (a framework's own wheel, an RPATH) still gets every sub-library by name from the first folder of {} that has it: two sets on the system means sub-libraries from the other one (pytorch#119989).", loader_var(cx)))
                    .fix(format!("Keep one set of cuDNN {m} reachable: remove the other folder from {}, or uninstall the duplicate.", loader_var(cx))),
            );
        }
    }
    one_folder(cx, out);
}

/// `sub-libraries-mixed` within one folder: the cuDNN libraries of a folder
/// whose own evidence names more than one release — the versioned real
/// name, the DLL file version, the release marker compiled into the file
/// (cuDNN 9's graph library), the graph release the main library asks the
/// loader for, the store receipt. The loader takes every one of them from
/// that folder, so the set fails at run time ("CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH").
/// Each file is listed with its release; files with no evidence are named as unknown.
fn one_folder(cx: &Cx, out: &mut Vec<Finding>) {
    let mut dirs: Vec<String> = Vec::new();
    for (f, _) in cx.shared() {
        let d = cx.dir(&f.path);
        if !dirs.iter().any(|x| spath::same(x, &d, cx.w)) {
            dirs.push(d);
        }
    }
    for dir in dirs {
        let mut rows: Vec<(String, u32, Option<crate::doctor::snapshot::Known>)> = Vec::new();
        let mut done: Vec<String> = Vec::new();
        for (f, n) in cx.shared().filter(|(f, n)| {
            !n.dev_link && !f.dangling && spath::same(&cx.dir(&f.path), &dir, cx.w)
        }) {
            let Some(m) = n.major else { continue };
            // Only what the loader can reach: a file under a loader name
            // (`libcudnn.so.9`, a DLL name) or the target of one. A versioned
            // file no link leads to (a leftover `libcudnn.so.9.12.0` beside
            // the chain to 9.27.0) is never loaded.
            if n.full_version.is_some()
                && !cx.shared().any(|(g, gn)| {
                    gn.full_version.is_none()
                        && !gn.dev_link
                        && spath::same(&cx.dir(&g.path), &dir, cx.w)
                        && g.real_path.as_deref().is_some_and(|r| {
                            spath::same(r, f.real_path.as_deref().unwrap_or(&f.path), cx.w)
                        })
                })
            {
                continue;
            }
            // One row per real file (a chain's links say what their target says).
            let real = f.real_path.clone().unwrap_or_else(|| f.path.clone());
            let real_in_dir = spath::same(&cx.dir(&real), &dir, cx.w);
            let key = spath::key(if real_in_dir { &real } else { &f.path }, cx.w);
            if done.contains(&key) {
                continue;
            }
            done.push(key);
            // A file whose content is another major or no cuDNN at all is
            // `library-renamed` / `not-a-cudnn-library`.
            if super::super::files::content_of(f, m).is_some() {
                continue;
            }
            let known =
                cx.s.own_library_version(f)
                    .filter(|k| k.version.parts().len() >= 3 && k.version.major() == m);
            rows.push((
                cx.name(if real_in_dir { &real } else { &f.path })
                    .to_string(),
                m,
                known,
            ));
        }
        // A library with no version of its own whose cuDNN symbols all
        // resolve in the sibling it links against (ELF) is of that sibling's release.
        if !cx.w {
            let known: Vec<(String, crate::doctor::snapshot::Known)> = rows
                .iter()
                .filter_map(|(n, _, k)| Some((n.clone(), k.clone()?)))
                .collect();
            for (name, _, k) in rows.iter_mut().filter(|(_, _, k)| k.is_none()) {
                let Some(f) = cx.shared().map(|(f, _)| f).find(|f| {
                    spath::same(&cx.dir(&f.path), &dir, cx.w) && cx.name(&f.path) == name.as_str()
                }) else {
                    continue;
                };
                if f.symbols_missing > 0 {
                    continue;
                }
                if let Some((_, pk)) = known.iter().find(|(n, _)| f.needed.iter().any(|x| x == n)) {
                    *k = Some(crate::doctor::snapshot::Known {
                        version: pk.version.clone(),
                        source: "links against a library of that release here; all its cuDNN symbols resolve",
                    });
                }
            }
        }
        let majors: BTreeSet<u32> = rows.iter().map(|(_, m, _)| *m).collect();
        for m in majors {
            let of_m: Vec<&(String, u32, Option<crate::doctor::snapshot::Known>)> =
                rows.iter().filter(|(_, x, _)| *x == m).collect();
            let releases: BTreeSet<Version> = of_m
                .iter()
                .filter_map(|(_, _, k)| k.as_ref().map(|k| k.version.triple()))
                .collect();
            // A file that needs cuDNN symbols its folder's libraries lack
            // is from another release than they are, whatever they say.
            // (Unless a sibling is no library at all — an empty file:
            // `not-a-cudnn-library` reports that cause.)
            let broken = cx.shared().any(|(g, gn)| {
                spath::same(&cx.dir(&g.path), &dir, cx.w)
                    && gn.major.is_some_and(|gm| {
                        matches!(
                            super::super::files::content_of(g, gm),
                            Some(super::super::files::Content::NotCudnn(_))
                        )
                    })
            });
            let strays: Vec<&CudnnFile> = cx
                .shared()
                .filter(|(f, n)| {
                    !broken
                        && n.major == Some(m)
                        && f.symbols_missing > 0
                        && spath::same(&cx.dir(&f.path), &dir, cx.w)
                })
                .map(|(f, _)| f)
                .collect();
            if releases.len() < 2 && strays.is_empty() {
                continue;
            }
            let count =
                releases.len().max(1) + usize::from(!strays.is_empty() && releases.len() < 2);
            let list = releases
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(" and ");
            let mut f = Finding::new(
                FindingId::SubLibrariesMixed,
                Severity::Error,
                if releases.len() >= 2 {
                    format!("{dir} holds cuDNN {m} libraries of {count} releases ({list})")
                } else if releases.is_empty() {
                    format!("{dir} holds cuDNN {m} libraries of different releases")
                } else {
                    format!(
                        "{dir} holds cuDNN {m} libraries of {count} releases ({list} and another)"
                    )
                },
            );
            for v in &releases {
                let files: Vec<String> = of_m
                    .iter()
                    .filter_map(|(name, _, k)| {
                        let k = k.as_ref().filter(|k| k.version.triple() == *v)?;
                        Some(format!("{name} ({})", k.source))
                    })
                    .collect();
                f = f.seen(format!("cuDNN {v}: {}", files.join(", ")));
            }
            let unknown: Vec<&str> = of_m
                .iter()
                .filter(|(_, _, k)| k.is_none())
                .map(|(n, _, _)| n.as_str())
                .collect();
            if !unknown.is_empty() {
                f = f.seen(format!(
                    "release unknown (no version in the file): {}",
                    unknown.join(", ")
                ));
            }
            for x in &strays {
                f = f.seen(format!(
                    "{} needs {} cuDNN symbols no library of this folder defines (e.g. {}): it is from another release than the library it links against",
                    cx.name(&x.path),
                    x.symbols_missing,
                    x.symbols_missing_examples.join(", ")
                ));
            }
            let newest = releases
                .iter()
                .next_back()
                .cloned()
                .unwrap_or_else(|| Version::from_parts(&[m]));
            f = f
                .why(format!("The loader takes every cuDNN {m} library from this one folder, and cuDNN checks at its first call that they are one release: a partial copy over another release fails with CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH (\"cuDNN version mismatch\"), \"undefined symbol\" or \"Unable to load any of {{libcudnn_graph.so.{newest}, …}}\"."))
                .fix(format!("Replace every cuDNN {m} file of {dir} by one release's complete set (the files of {newest} or of the other release, all from the same archive or wheel), or let cudnnm deploy one."));
            let spec = crate::version::Spec::prefix(newest, None);
            let tk = cx.s.toolkit_of(&dir);
            if releases.is_empty() {
                out.push(f);
                continue;
            }
            if let Some((_, cmds)) = cx.install_and_use(&spec, None, tk) {
                for c in cmds {
                    f = f.command(c);
                }
            }
            out.push(f);
        }
    }
}

/// A sub-library a main library takes from another folder than its own.
pub(super) struct Foreign {
    /// Its loader name (`libcudnn_graph.so.9`).
    pub name: String,
    /// The file it comes from.
    pub path: String,
    /// How doctor knows: `loaded` (mapped in the process that loaded the
    /// main library) or the loader search step that finds it.
    pub how: String,
}

/// The sub-libraries of cuDNN `major` that the main library `f` takes from
/// another folder: those mapped from elsewhere when it was loaded (with its
/// own folder first on the loader path), and those its own folder lacks that
/// the loader's search finds in another copy.
pub(super) fn foreign(cx: &Cx, f: &CudnnFile, major: u32) -> Vec<Foreign> {
    let real = cx.s.resolve(f);
    let own_dirs: Vec<String> = [
        Some(cx.dir(&f.path)),
        f.real_path.as_deref().map(|r| cx.dir(r)),
    ]
    .into_iter()
    .flatten()
    .collect();
    let is_own = |p: &str| own_dirs.iter().any(|d| spath::same(&cx.dir(p), d, cx.w));
    let mut out: Vec<Foreign> =
        cx.s.foreign_modules(f)
            .into_iter()
            .filter(|p| !is_own(p))
            .map(|p| Foreign {
                name: cx.name(&p).to_string(),
                path: p,
                how: "mapped in the process that loaded it".into(),
            })
            .collect();
    // A release's own version, when known, leaves out the sub-libraries it
    // predates (9.20 has no `cudnn_engines_tensor_ir` to take from elsewhere).
    let own = cx.s.own_library_version(f).map(|k| k.version);
    for st in names::sublib_stems(major).iter().filter(|st| {
        own.as_ref()
            .is_none_or(|v| v.major() != major || names::ships(st, v))
    }) {
        let ln = cx.loader_name(st, major);
        if out.iter().any(|x| spath::name_eq(&x.name, &ln, cx.w))
            || own_dirs.iter().any(|d| cx.s.has(d, &ln))
        {
            continue;
        }
        if let Some(h) = loader::find_for(cx.s, &ln, real)
            .into_iter()
            .find(|h| !is_own(&h.path))
        {
            out.push(Foreign {
                name: ln,
                path: h.path,
                how: format!("found via {}", h.via),
            });
        }
    }
    out
}

/// The version of the copy in folder `dir`: its main library's own evidence,
/// else the headers of its installation.
fn folder_version(cx: &Cx, dir: &str) -> Option<crate::doctor::snapshot::Known> {
    let main = cx
        .shared()
        .find(|(f, n)| n.is_main() && !n.dev_link && spath::same(&cx.dir(&f.path), dir, cx.w));
    if let Some((f, _)) = main
        && let Some(k) = cx.s.library_version(f)
    {
        return Some(k);
    }
    let root =
        cx.s.files
            .iter()
            .find(|f| spath::same(&cx.dir(&f.path), dir, cx.w))?;
    cx.s.header_version(&root.root)
}

/// `sub-libraries-mixed` for one copy at a time: a main library whose
/// folder lacks sub-libraries that another copy provides — loading it runs
/// one copy's main library with another's sub-libraries. Errors unless every
/// version involved is known from the copies' own files and the same.
/// Returns the majors reported.
fn foreign_sublibraries(cx: &Cx, out: &mut Vec<Finding>) -> BTreeSet<u32> {
    let mut majors = BTreeSet::new();
    let mut done = BTreeSet::new();
    for (f, n) in cx.shared().filter(|(_, n)| n.is_main() && !n.dev_link) {
        let Some(m) = n.major.filter(|m| *m >= 8) else {
            continue;
        };
        let real = f.real_path.clone().unwrap_or_else(|| f.path.clone());
        if !done.insert((spath::key(&cx.dir(&f.path), cx.w), spath::key(&real, cx.w))) {
            continue;
        }
        let foreign = foreign(cx, f, m);
        if foreign.is_empty() {
            continue;
        }
        majors.insert(m);
        let own = cx.s.own_library_version(f).or_else(|| {
            cx.s.header_version(&f.root)
                .filter(|h| h.version.major() == m)
        });
        let loaded = cx.s.resolve(f).library_version.clone();
        let mut versions: Vec<Option<Version>> = vec![own.as_ref().map(|k| k.version.triple())];
        let dir = cx.dir(&f.path);
        let names_list: Vec<&str> = foreign.iter().map(|x| x.name.as_str()).collect();
        let mut fd = Finding::new(
            FindingId::SubLibrariesMixed,
            Severity::Error,
            format!(
                "{} loads {} from another cuDNN copy",
                f.path,
                names_list.join(", ")
            ),
        )
        .seen(match (&own, &cx.s.resolve(f).store_copy) {
            (Some(k), Some(c)) if k.source == "store receipt" => format!(
                "{}: cuDNN {} by its own bytes (the same as {} of store release {})",
                f.path, k.version, c.file, c.release
            ),
            (Some(k), _) => format!("{}: cuDNN {} by its own {}", f.path, k.version, k.source),
            (None, _) => format!(
                "{}: its own version is unknown (no header, versioned file name or store receipt beside it)",
                f.path
            ),
        });
        let mut others: Vec<String> = Vec::new();
        for x in &foreign {
            let odir = cx.dir(&x.path);
            let v = folder_version(cx, &odir);
            versions.push(v.as_ref().map(|k| k.version.triple()));
            let v = v
                .map(|k| format!("cuDNN {} ({})", k.version, k.source))
                .unwrap_or_else(|| "version unknown".into());
            fd = fd.seen(format!("{} comes from {} — {v}; {}", x.name, x.path, x.how));
            if !others.iter().any(|o| spath::same(o, &odir, cx.w)) {
                others.push(odir);
            }
        }
        if let Some(l) = &loaded {
            let differs = own
                .as_ref()
                .is_none_or(|k| k.version.triple() != l.triple());
            if differs {
                versions.push(Some(l.triple()));
                let graph = names::soname("cudnn_graph", m);
                fd = fd.seen(match foreign.iter().find(|x| m >= 9 && x.name == graph) {
                    Some(g) => format!(
                        "loaded, it reports cuDNN {l}: cudnnGetVersion() is answered by {graph}, which comes from {}",
                        g.path
                    ),
                    None => format!("loaded, it reports cuDNN {l}, not its own version"),
                });
            }
        }
        let same = versions.iter().all(|v| v.is_some())
            && versions.iter().flatten().collect::<BTreeSet<_>>().len() == 1;
        if same {
            fd.severity = Severity::Warning;
        }
        let release_words = match &own {
            Some(k) => format!("cuDNN {}'s main library", k.version),
            None => "this main library".to_string(),
        };
        fd = fd.why(format!(
            "cuDNN {m} loads its sub-libraries by name at run time, and {dir} does not hold {}: the loader takes {} from {}. A program that loads this copy runs {release_words} with another copy's sub-libraries; {}",
            names_list.join(", "),
            if foreign.len() == 1 { "it" } else { "them" },
            others.join(", "),
            if same {
                "today both are the same release, so it works until either is updated."
            } else {
                "they must come from one release, so the first call fails (\"CUDNN_STATUS_VERSION_MISMATCH\", \"undefined symbol\") or reports another version than it is (pytorch#119989)."
            }
        ));
        let mut fix = format!(
            "Keep each cuDNN set whole in one folder: copy {} of the same release next to {}, or take this partial copy off {}.",
            names_list.join(", "),
            f.path,
            loader_var(cx)
        );
        let store =
            cx.s.resolve(f)
                .store_copy
                .clone()
                .or_else(|| f.store_copy.clone());
        if let Some(c) = &store {
            fix.push_str(&format!(
                " The cudnnm store holds the whole release {}: `cudnnm exec --version {} -- PROGRAM` runs a program with it.",
                c.release, c.release
            ));
        }
        fd = fd.fix(fix);
        if let Some(c) = store {
            fd = fd.command(format!(
                "cudnnm exec --version {} -- <your program>",
                c.release
            ));
        }
        out.push(fd);
    }
    majors
}

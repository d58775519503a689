//! `sub-libraries-mixed`: a main library whose load takes sub-libraries
//! from another copy (seen when it was loaded, or played through as ld.so
//! walks its search for them), cuDNN 8/9 sub-libraries of different
//! releases in one folder.

use std::collections::BTreeSet;

use super::loader_var;
use crate::doctor::FindingId;
use crate::doctor::checks::Cx;
use crate::doctor::finding::{Finding, Severity};
use crate::doctor::loader;
use crate::doctor::snapshot::CudnnFile;
use crate::doctor::spath;
use crate::names;
use crate::version::Version;

/// `sub-libraries-mixed` (`docs/breakages.md#sub-libraries-mixed`): cuDNN 8/9
/// load their sub-libraries by name, so a load can take them from another
/// copy than the main library. Every load doctor can name is played through
/// as ld.so does it ([`loader::sublibraries`]): a program asking for cuDNN by
/// name, each framework library that loads it, and every other copy as a
/// program that loads it by its path would get it.
pub(super) fn mixing(cx: &Cx, out: &mut Vec<Finding>) {
    foreign_sublibraries(cx, out);
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
        if !dirs.iter().any(|x| cx.s.same_place(x, &d)) {
            dirs.push(d);
        }
    }
    for dir in dirs {
        let mut rows: Vec<(String, u32, Option<crate::doctor::snapshot::Known>)> = Vec::new();
        let mut done: Vec<String> = Vec::new();
        for (f, n) in cx
            .shared()
            .filter(|(f, n)| !n.dev_link && !f.dangling && cx.s.same_place(&cx.dir(&f.path), &dir))
        {
            let Some(m) = n.major else { continue };
            // Only what the loader can reach: a file under a loader name
            // (`libcudnn.so.9`, a DLL name) or the target of one. A versioned
            // file no link leads to (a leftover `libcudnn.so.9.12.0` beside
            // the chain to 9.27.0) is never loaded.
            if n.full_version.is_some()
                && !cx.shared().any(|(g, gn)| {
                    gn.full_version.is_none()
                        && !gn.dev_link
                        && cx.s.same_place(&cx.dir(&g.path), &dir)
                        && g.real_path.as_deref().is_some_and(|r| {
                            cx.s.same_place(r, f.real_path.as_deref().unwrap_or(&f.path))
                        })
                })
            {
                continue;
            }
            // One row per real file (a chain's links say what their target says).
            let real = f.real_path.clone().unwrap_or_else(|| f.path.clone());
            let real_in_dir = cx.s.same_place(&cx.dir(&real), &dir);
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
                    cx.s.same_place(&cx.dir(&f.path), &dir) && cx.name(&f.path) == name.as_str()
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
                cx.s.same_place(&cx.dir(&g.path), &dir)
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
                        && cx.s.same_place(&cx.dir(&f.path), &dir)
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

/// Who loads a copy of the main library, as far as doctor can tell.
pub(super) enum Role<'a> {
    /// Programs that ask the loader for it by name get this copy.
    ByName(loader::Via),
    /// A framework's library loads it.
    Framework(&'a crate::doctor::snapshot::Consumer, loader::Via),
    /// The program `doctor -- CMD` ran (or `--pid` watched) mapped it.
    Watched(&'a str),
    /// Nothing known here asks for it by name: only a program that loads
    /// it by its path (an RPATH of its own, a framework's preload) gets it.
    ByPath,
}

/// Who loads the main library `f` of cuDNN `major`.
pub(super) fn role_of<'a>(cx: &Cx<'a>, f: &CudnnFile, major: u32) -> Role<'a> {
    if let Some(p) = &cx.s.process
        && p.mapped.iter().any(|m| cx.s.same_file(m, &f.path))
    {
        return Role::Watched(&p.command);
    }
    if let Some(a) = cx.active(major)
        && cx.s.same_file(&a.hit.path, &f.path)
    {
        return Role::ByName(a.hit.via);
    }
    for (c, m, files) in crate::doctor::checks::processes::mapped(cx) {
        if m == major
            && let Some(main) = files.first()
            && cx.s.same_file(&main.path, &f.path)
        {
            return Role::Framework(c, main.via.clone());
        }
    }
    Role::ByPath
}

/// The sub-libraries of cuDNN `major` that the main library `f` takes from
/// another folder: those mapped from elsewhere when it was loaded (with its
/// own folder first on the loader path), and those the loader's walk finds
/// in another copy when the main library asks for them by name — loaded on
/// behalf of `chain` ([`loader::sublibraries`]; its own `DT_RUNPATH` comes
/// after `LD_LIBRARY_PATH`, its `DT_RPATH` before). Without `chain`, only
/// those its own folder lacks.
pub(super) fn foreign(
    cx: &Cx,
    f: &CudnnFile,
    major: u32,
    chain: Option<&[loader::Requester]>,
) -> Vec<Foreign> {
    let real = cx.s.resolve(f);
    let own_dirs: Vec<String> = [
        Some(cx.dir(&f.path)),
        f.real_path.as_deref().map(|r| cx.dir(r)),
    ]
    .into_iter()
    .flatten()
    .collect();
    let is_own = |p: &str| own_dirs.iter().any(|d| cx.s.same_place(&cx.dir(p), d));
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
    let base = |n: &str| names::classify(n).map(|c| cx.loader_name(&c.stem, major));
    let mapped = match chain {
        Some(chain) => loader::sublibraries(cx.s, major, &f.path, chain),
        None => names::sublib_stems(major)
            .iter()
            .filter(|st| {
                own.as_ref()
                    .is_none_or(|v| v.major() != major || names::ships(st, v))
            })
            .filter_map(|st| {
                let ln = cx.loader_name(st, major);
                if own_dirs.iter().any(|d| cx.s.has(d, &ln)) {
                    return None;
                }
                let h = loader::find_for(cx.s, &ln, real)
                    .into_iter()
                    .find(|h| !is_own(&h.path))?;
                Some(loader::Mapped {
                    name: ln,
                    path: h.path,
                    via: h.via,
                    by: String::new(),
                })
            })
            .collect(),
    };
    for m in mapped {
        let ln = base(&m.name).unwrap_or(m.name.clone());
        if is_own(&m.path)
            || out
                .iter()
                .any(|x| base(&x.name).is_some_and(|b| spath::name_eq(&b, &ln, cx.w)))
        {
            continue;
        }
        out.push(Foreign {
            name: ln,
            path: m.path,
            how: format!("found via {}", m.via),
        });
    }
    out
}

/// The version of the copy in folder `dir`: its main library's own evidence,
/// else the headers of its installation.
fn folder_version(cx: &Cx, dir: &str) -> Option<crate::doctor::snapshot::Known> {
    let main = cx
        .shared()
        .find(|(f, n)| n.is_main() && !n.dev_link && cx.s.same_place(&cx.dir(&f.path), dir));
    if let Some((f, _)) = main
        && let Some(k) = cx.s.library_version(f)
    {
        return Some(k);
    }
    let root =
        cx.s.files
            .iter()
            .find(|f| cx.s.same_place(&cx.dir(&f.path), dir))?;
    cx.s.header_version(&root.root)
}

/// `sub-libraries-mixed` for one copy at a time: a main library whose load
/// takes sub-libraries from another copy — its folder lacks them, or the
/// loader finds another copy's first (`LD_LIBRARY_PATH` before its own
/// `DT_RUNPATH`) — so it runs one copy's main library with another's
/// sub-libraries. For the copy programs get by name and one a framework
/// loads: an error unless every version involved is known from the copies'
/// own files and the same (then a warning). For a copy nothing here loads
/// by name, what a load by its path would get: a warning (a note when the
/// versions are the same).
fn foreign_sublibraries(cx: &Cx, out: &mut Vec<Finding>) {
    let mut done = BTreeSet::new();
    for (f, n) in cx.shared().filter(|(_, n)| n.is_main() && !n.dev_link) {
        let Some(m) = n.major.filter(|m| *m >= 8) else {
            continue;
        };
        let real = f.real_path.clone().unwrap_or_else(|| f.path.clone());
        if !done.insert((spath::key(&cx.dir(&f.path), cx.w), spath::key(&real, cx.w))) {
            continue;
        }
        let role = role_of(cx, f, m);
        let consumer = match &role {
            Role::Framework(c, _) => Some(crate::doctor::checks::processes::requester(c)),
            _ => None,
        };
        let chain: Vec<loader::Requester> = consumer.into_iter().collect();
        let foreign = foreign(cx, f, m, Some(&chain));
        if foreign.is_empty() {
            continue;
        }
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
            if !others.iter().any(|o| cx.s.same_place(o, &odir)) {
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
        fd = match &role {
            Role::ByName(via) => fd.seen(format!(
                "programs that ask for {} get this copy (via {via})",
                cx.loader_name("cudnn", m)
            )),
            Role::Framework(c, via) => fd.seen(format!(
                "{} {} loads this copy ({}, via {via})",
                c.framework,
                c.version,
                cx.name(&c.path)
            )),
            Role::Watched(cmd) => fd.seen(format!("{cmd} mapped this copy")),
            Role::ByPath => fd.seen(format!(
                "nothing here asks the loader for it by name: this is what a program that loads {} by its path gets",
                f.path
            )),
        };
        fd.severity = match (&role, same) {
            (Role::ByPath, true) => Severity::Info,
            (Role::ByPath, false) | (_, true) => Severity::Warning,
            (_, false) => Severity::Error,
        };
        let release_words = match &own {
            Some(k) => format!("cuDNN {}'s main library", k.version),
            None => "this main library".to_string(),
        };
        fd = fd.why(format!(
            "cuDNN {m} loads its sub-libraries by name at run time, and the loader does not take {} from {dir}: it takes {} from {} (a folder that lacks them, or one searched first: LD_LIBRARY_PATH comes before a library's RUNPATH, after its RPATH). A program that loads this copy runs {release_words} with another copy's sub-libraries; {}",
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
}

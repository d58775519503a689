//! What the loader finds: copies in search order, sub-library mixing, `PATH`
//! and `LD_LIBRARY_PATH` mistakes, unresolved dependencies, zlib.

use std::collections::BTreeSet;

use super::Cx;
use crate::doctor::finding::{AutoFix, Finding, Severity, persist_user_path, prepend_loader_path};
use crate::doctor::loader::{self, Hit};
use crate::doctor::snapshot::{CudnnFile, Origin};
use crate::doctor::spath;
use crate::names::{self, FileKind};
use crate::quote::{quote_arg, sh_quote};
use crate::version::{Spec, Version};

pub(super) fn check(cx: &Cx, out: &mut Vec<Finding>) {
    not_found(cx, out);
    copies(cx, out);
    mixing(cx, out);
    toolkit_on_path(cx, out);
    path_too_high(cx, out);
    only_in_site_packages(cx, out);
    dependencies(cx, out);
    zlib(cx, out);
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
        cx.install_and_use(
            &Spec {
                version: Version::from_parts(&[*m]),
                cuda: None,
            },
            None,
            tk,
        )
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
        Finding::new("cudnn-not-found", Severity::Error, "no cuDNN found on this machine")
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

/// Distinct copies among hits (links to the same file count once).
fn distinct<'a>(cx: &Cx<'a>, hits: &[Hit]) -> Vec<(Hit, Option<&'a CudnnFile>)> {
    hits.iter()
        .map(|h| (h.clone(), cx.s.file(&h.path)))
        .collect()
}

fn triple(cx: &Cx, f: Option<&CudnnFile>) -> Option<Version> {
    let k = cx.s.version_of(f?)?;
    (k.version.parts().len() >= 3).then(|| k.version.triple())
}

/// What the framework or pin in this snapshot wants of `major`, if anything.
fn wanted(cx: &Cx, major: u32) -> Option<(Version, String)> {
    super::frameworks::expectations(cx)
        .into_iter()
        .find(|e| e.version.major() == major)
        .map(|e| (e.version, e.who))
}

/// `multiple-cudnn-copies` (issue item 9, F06, F12, F13).
fn copies(cx: &Cx, out: &mut Vec<Finding>) {
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
        let mixed = hits
            .iter()
            .any(|(_, f)| f.is_some_and(|f| !foreign(cx, f, m).is_empty()));
        let differ = versions.len() > 1 || unknown > 0 || mixed;
        let sev = if differ {
            Severity::Warning
        } else {
            Severity::Info
        };
        let winner = &hits[0];
        let mut f = Finding::new(
            "multiple-cudnn-copies",
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
            (Some((v, who)), Some((h, _))) if !spath::same(&h.path, &winner.0.path, cx.w) => {
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

/// `sub-libraries-mixed` (F14): cuDNN 8/9 load their sub-libraries by name,
/// so with several sets visible they can come from different copies.
fn mixing(cx: &Cx, out: &mut Vec<Finding>) {
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
            .filter(|(f, n)| f.origin == Origin::PipWheel && n.is_main() && n.major == Some(m))
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
        if win_roots.len() > 1 && win_versions.len() > 1 {
            let mut f = Finding::new(
                "sub-libraries-mixed",
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
                "sub-libraries-mixed",
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
    // Sub-libraries of one folder from different releases (Linux real names).
    for root in cx.s.roots() {
        let vs: BTreeSet<(u32, Version)> = cx
            .shared()
            .filter(|(f, _)| spath::same(&f.root, &root, cx.w))
            .filter_map(|(_, n)| Some((n.major?, n.full_version?.triple())))
            .collect();
        let majors: BTreeSet<u32> = vs.iter().map(|(m, _)| *m).collect();
        for m in majors {
            let of_m: Vec<&Version> = vs.iter().filter(|(x, _)| *x == m).map(|(_, v)| v).collect();
            if of_m.len() > 1 {
                out.push(
                    Finding::new("sub-libraries-mixed", Severity::Error, format!("{root} holds cuDNN {m} libraries of {} releases", of_m.len()))
                        .seen(format!("versions in file names: {}", of_m.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")))
                        .why("A partial copy over an older release: the main library and its sub-libraries must be from one release (\"CUDNN_STATUS_VERSION_MISMATCH\").")
                        .fix("Remove the older files and copy one release's complete set (or let cudnnm deploy it)."),
                );
            }
        }
    }
}

/// `toolkit-not-on-loader-path` (issue item 7).
fn toolkit_on_path(cx: &Cx, out: &mut Vec<Finding>) {
    for t in &cx.s.toolkits {
        let mains: Vec<(&CudnnFile, names::NameInfo)> = cx
            .shared()
            .filter(|(f, n)| n.is_main() && !n.dev_link && spath::is_within(&f.path, &t.root, cx.w))
            .collect();
        let Some((main, n)) = mains.first() else {
            continue;
        };
        let dir = cx.dir(&main.path);
        if loader::is_searched(cx.s, &dir) {
            continue;
        }
        let m = n.major.unwrap_or(0);
        let active = cx.active(m);
        let sev = if active.is_none() {
            Severity::Error
        } else {
            Severity::Warning
        };
        let mut f = Finding::new(
            "toolkit-not-on-loader-path",
            sev,
            format!("{dir} holds cuDNN {m} but is not on {}", loader_var(cx)),
        )
        .seen(cx.describe(&main.path).to_string());
        f = match &active {
            Some(a) => f.seen(format!(
                "programs load {} instead",
                cx.describe(&a.hit.path)
            )),
            None => f.seen("no other copy is reachable"),
        };
        f = f.why(if cx.w {
            format!("Windows finds DLLs only in the program's folder, the system folders, the working folder and PATH: \"Could not load dynamic library '{}'\" (error 126).", cx.loader_name("cudnn", m))
        } else {
            format!("The loader searches LD_LIBRARY_PATH, the ld.so cache and /lib, /usr/lib only; a toolkit's lib64 is found only when listed there (ld.so(8)): \"{}: cannot open shared object file\".", cx.loader_name("cudnn", m))
        });
        if cx.w {
            f = f
                .fix("Add the toolkit's bin folder to PATH (`cudnnm doctor --fix` adds it to your user PATH in the registry), then open a new terminal.")
                .command(persist_user_path(&dir))
                .command(prepend_loader_path(&dir, true))
                .auto(AutoFix::AddToUserPath { dir: dir.clone() });
        } else {
            f = f
                .fix("Add the folder to LD_LIBRARY_PATH (this shell, or your shell profile), or register it with the loader system-wide.")
                .command(prepend_loader_path(&dir, false))
                .command(format!("echo {} | sudo tee /etc/ld.so.conf.d/cudnn.conf && sudo ldconfig", sh_quote(&dir)));
        }
        out.push(f);
    }
}

/// A folder name that is a CUDA version (`12.8`), as in the cuDNN 9 installer's `bin\12.8`.
fn cuda_dir_version(name: &str) -> Option<Version> {
    let v: Version = name.parse().ok()?;
    (v.parts().len() == 2 && v.major() >= 10).then_some(v)
}

/// `path-points-at-archive-root` (issue item 7, F01) and
/// `installer-subfolder-not-on-path` (F02): a loader path entry above the
/// folder that holds the libraries; the loader never looks into subfolders.
fn path_too_high(cx: &Cx, out: &mut Vec<Finding>) {
    let entries: &[String] = if cx.w {
        &cx.s.path
    } else {
        &cx.s.ld_library_path
    };
    for e in entries {
        let holds = |f: &CudnnFile| cx.dir(&f.path);
        let direct = cx.shared().any(|(f, _)| spath::same(&holds(f), e, cx.w));
        if direct {
            continue;
        }
        let below: Vec<(String, &CudnnFile, u32)> = cx
            .shared()
            .filter(|(_, n)| n.is_main() && !n.dev_link)
            .filter_map(|(f, n)| Some((spath::relative(&holds(f), e, cx.w)?, f, n.major?)))
            .collect();
        // A subfolder already on the loader path makes this entry merely redundant.
        if below.iter().any(|b| loader::is_searched(cx.s, &holds(b.1))) {
            continue;
        }
        if below.is_empty() {
            continue;
        }
        let reachable = |m: u32| cx.active(m).is_some();
        // The installer layout: bin\<CUDA>\.
        let versioned: Vec<(Version, &(String, &CudnnFile, u32))> = below
            .iter()
            .filter_map(|b| {
                let parts: Vec<&str> = b.0.split('/').collect();
                match parts.as_slice() {
                    [.., "bin", v] | [v] => Some((cuda_dir_version(v)?, b)),
                    _ => None,
                }
            })
            .collect();
        if !versioned.is_empty() {
            let cuda = cx.toolkit_in_use().and_then(|t| t.cuda.clone());
            let pick = pick_cuda_dir(
                &versioned.iter().map(|(v, _)| v.clone()).collect::<Vec<_>>(),
                cuda.as_ref(),
            );
            let chosen = versioned
                .iter()
                .find(|(v, _)| Some(v) == pick.as_ref())
                .unwrap_or(&versioned[0]);
            let dir = cx.dir(&chosen.1.1.path);
            let m = chosen.1.2;
            let sev = if reachable(m) {
                Severity::Warning
            } else {
                Severity::Error
            };
            let mut f = Finding::new(
                "installer-subfolder-not-on-path",
                sev,
                format!(
                    "{e} is on {} but the cuDNN {m} DLLs are one level down, in per-CUDA subfolders",
                    loader_var(cx)
                ),
            );
            for (v, b) in &versioned {
                f = f.seen(format!("{} (for CUDA {v})", cx.dir(&b.1.path)));
            }
            f = f.seen(match &cuda {
                Some(c) => format!("the toolkit in use is CUDA {c}: use {dir}"),
                None => format!("no toolkit version known: {dir} is the newest"),
            });
            f = f
                .why(format!("NVIDIA's cuDNN 9 installer puts {e} on PATH but the DLLs in bin\\<CUDA version>\\; Windows does not search subfolders, so \"Could not load library {}\" follows (faster-whisper#1230).", cx.loader_name("cudnn", m)))
                .fix(format!("Add the subfolder that matches your CUDA ({dir}) to PATH."))
                .command(persist_user_path(&dir))
                .command(prepend_loader_path(&dir, cx.w));
            if cx.w {
                f = f.auto(AutoFix::AddToUserPath { dir: dir.clone() });
            }
            out.push(f);
            continue;
        }
        let dirs: Vec<String> =
            below
                .iter()
                .map(|b| cx.dir(&b.1.path))
                .fold(Vec::new(), |mut v, d| {
                    if !v.iter().any(|x| spath::same(x, &d, cx.w)) {
                        v.push(d);
                    }
                    v
                });
        let m = below[0].2;
        let sev = if reachable(m) {
            Severity::Warning
        } else {
            Severity::Error
        };
        let mut f = Finding::new(
            "path-points-at-archive-root",
            sev,
            format!(
                "{e} is on {} but holds no cuDNN library; it is in {}",
                loader_var(cx),
                dirs[0]
            ),
        )
        .seen(format!("{} entry: {e}", loader_var(cx)));
        for d in &dirs {
            f = f.seen(format!("cuDNN library below it: {d}"));
        }
        // `cudnnm install FOLDER` needs the headers (the version is read there).
        let importable = has_version_header(cx, e);
        out.push(
            f.why(format!("The loader looks only in the folders listed, never in their subfolders: the folder an archive was unpacked into (or its `cuda`) is not where its libraries are (tensorflow#10033), so \"{}\" is not found.", cx.loader_name("cudnn", m)))
                .fix(if importable {
                    format!("Replace the entry with {}, or import the archive into cudnnm and activate it (`cudnnm install {}`).", dirs[0], quote_arg(e, cx.w))
                } else {
                    format!("Replace the entry with {}.", dirs[0])
                })
                .command(prepend_loader_path(&dirs[0], cx.w)),
        );
    }
}

/// True when a cuDNN version header lies in `dir` or below: what
/// `cudnnm install FOLDER` reads the version from.
fn has_version_header(cx: &Cx, dir: &str) -> bool {
    cx.s.files
        .iter()
        .any(|f| f.header_version.is_some() && spath::is_within(&f.path, dir, cx.w))
}

/// The per-CUDA subfolder to use for a toolkit of CUDA `cuda`: the same
/// major.minor, else the newest of the same major not above it, else the
/// newest of the same major, else the newest.
fn pick_cuda_dir(vs: &[Version], cuda: Option<&Version>) -> Option<Version> {
    let newest = |it: &mut dyn Iterator<Item = &Version>| it.max().cloned();
    if let Some(c) = cuda {
        if let Some(v) = vs
            .iter()
            .find(|v| v.major() == c.major() && v.minor() == c.minor())
        {
            return Some(v.clone());
        }
        if let Some(v) = newest(
            &mut vs
                .iter()
                .filter(|v| v.major() == c.major() && v.minor() <= c.minor()),
        ) {
            return Some(v);
        }
        if let Some(v) = newest(&mut vs.iter().filter(|v| v.major() == c.major())) {
            return Some(v);
        }
    }
    newest(&mut vs.iter())
}

/// `cudnn-only-in-site-packages` (F16).
fn only_in_site_packages(cx: &Cx, out: &mut Vec<Finding>) {
    let majors = cx.majors_present();
    if majors.iter().any(|m| cx.active(*m).is_some()) {
        return;
    }
    let mut done = BTreeSet::new();
    for (f, n) in cx.shared().filter(|(f, n)| {
        n.is_main() && !n.dev_link && matches!(f.origin, Origin::PipWheel | Origin::Conda)
    }) {
        let dir = cx.dir(&f.path);
        if !done.insert(spath::key(&dir, cx.w)) {
            continue;
        }
        let v =
            cx.s.version_of(f)
                .map(|k| k.version.to_string())
                .unwrap_or_else(|| n.major.unwrap_or(0).to_string());
        let mut fd = Finding::new(
            "cudnn-only-in-site-packages",
            Severity::Warning,
            format!("cuDNN {v} exists only inside a Python environment, on no loader path"),
        )
        .seen(cx.describe(&f.path))
        .why(format!("Only the framework that owns it finds it (through its own RPATH or os.add_dll_directory); every other program (CTranslate2, onnxruntime, your own builds) fails: \"Unable to load any of {{{}}}\" (CTranslate2#1826).", cx.loader_name("cudnn", n.major.unwrap_or(0))))
        .fix(if has_version_header(cx, &f.root) {
            format!("Make the folder visible to the loader, or import it into cudnnm (`cudnnm install {}`) and activate it from there.", quote_arg(&f.root, cx.w))
        } else {
            "Make the folder visible to the loader (the copy has no headers, so it cannot be imported into cudnnm as a release).".to_string()
        })
        .command(prepend_loader_path(&dir, cx.w));
        if cx.w {
            fd = fd.command(format!("python -c \"import os; os.add_dll_directory(r'{dir}')\"  # in your program, before importing it"));
        }
        out.push(fd);
    }
}

/// `dependency-unresolved` (F04): a present library whose imports
/// (`DT_NEEDED`, PE import table) do not resolve in the loader's search.
fn dependencies(cx: &Cx, out: &mut Vec<Finding>) {
    let mut done = BTreeSet::new();
    for (_, _, name) in cx.loader_names() {
        let Some(h) = cx.hits(&name).into_iter().next() else {
            continue;
        };
        let Some(f) = cx.s.file(&h.path) else {
            continue;
        };
        let f = cx.s.resolve(f);
        let real = f.real_path.clone().unwrap_or_else(|| f.path.clone());
        if !done.insert(spath::key(&real, cx.w)) {
            continue;
        }
        let missing: Vec<&String> = f
            .needed
            .iter()
            .filter(|d| !loader::is_virtual(cx.s, d))
            .filter(|d| !(is_driver_library(d) && cx.s.driver.is_none()))
            .filter(|d| loader::find_for(cx.s, d, f).is_empty())
            .collect();
        if missing.is_empty() {
            continue;
        }
        let first = missing[0];
        let mut fd = Finding::new(
            "dependency-unresolved",
            Severity::Error,
            format!(
                "{} is present but cannot load: {first} is not found",
                cx.name(&f.path)
            ),
        )
        .seen(h.path.clone());
        for d in &missing {
            fd = fd.seen(format!("needs {d}: not in the loader's search folders"));
        }
        let hint = dependency_hint(first);
        out.push(
            fd.why(if cx.w {
                format!("A DLL loads only when every DLL it imports loads: \"Could not load library {}. Error code 126\" (\"The specified module could not be found\") names the cuDNN file, not the missing {first} (whisper-ctranslate2#41).", cx.name(&f.path))
            } else {
                format!("\"{}: {first}: cannot open shared object file: No such file or directory\".", cx.name(&f.path))
            })
            .fix(hint),
        );
    }
}

/// The CUDA driver library (`libcuda.so.1`, `nvcuda.dll`): it comes with the
/// NVIDIA driver, so without a driver its absence is `driver-not-found`'s news.
fn is_driver_library(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    l.starts_with("libcuda.so") || l == "nvcuda.dll"
}

/// What to install for a missing dependency, by name.
fn dependency_hint(name: &str) -> String {
    let l = name.to_ascii_lowercase();
    if is_driver_library(name) {
        format!(
            "{name} comes with the NVIDIA driver: install the driver (in a container, run it with the NVIDIA container toolkit so the driver's libraries are mounted)."
        )
    } else if l.starts_with("cublas")
        || l.starts_with("libcublas")
        || l.starts_with("cudart")
        || l.starts_with("libcudart")
        || l.starts_with("nvrtc")
        || l.starts_with("libnvrtc")
    {
        format!(
            "{name} comes with the CUDA toolkit (or pip's nvidia-* wheels) of the CUDA version this cuDNN was built for; install it, or put its folder on the loader path."
        )
    } else if l.starts_with("zlibwapi") {
        "Install zlibwapi.dll next to the cuDNN DLLs (see the zlibwapi-missing finding).".into()
    } else if l.starts_with("libz.so") {
        "Install zlib (`sudo apt install zlib1g` or `sudo dnf install zlib`).".into()
    } else if l.starts_with("vcruntime") || l.starts_with("msvcp") {
        "Install the Microsoft Visual C++ 2015–2022 Redistributable (x64).".into()
    } else {
        format!("Install the package that provides {name}, or add its folder to the loader path.")
    }
}

/// `zlibwapi-missing` (F03): cuDNN 8.3–8.9 and 9.0–9.1 on Windows load
/// `zlibwapi.dll` (cudnn-facts §7.1).
fn zlib(cx: &Cx, out: &mut Vec<Finding>) {
    if !cx.w {
        return;
    }
    for m in cx.majors_present() {
        let Some(a) = cx.active(m) else { continue };
        let Some(f) = a.file else { continue };
        let imports = f
            .needed
            .iter()
            .any(|n| n.eq_ignore_ascii_case(names::ZLIBWAPI_DLL));
        let by_version = a
            .version
            .as_ref()
            .is_some_and(|k| k.version.parts().len() >= 2 && names::needs_zlibwapi(&k.version));
        if !(imports || by_version) {
            continue;
        }
        if !loader::find_for(cx.s, names::ZLIBWAPI_DLL, f).is_empty() {
            continue;
        }
        let dir = cx.dir(&f.path);
        let v = a
            .version
            .as_ref()
            .map(|k| k.version.to_string())
            .unwrap_or_else(|| m.to_string());
        out.push(
            Finding::new("zlibwapi-missing", Severity::Error, format!("cuDNN {v} needs zlibwapi.dll, which is not on the DLL search path"))
                .seen(cx.describe(&f.path))
                .seen("zlibwapi.dll: not in the DLL's folder, System32, the Windows folder, the working folder or PATH")
                .why("cuDNN 8.3 to 9.1 on Windows load zlib's WINAPI build at run time and stop with \"Could not locate zlibwapi.dll. Please make sure it is in your library path!\" (cupy#6226, darknet#8551). From 9.2 zlib is built in.")
                .fix(format!("Download zlib123dllx64.zip (http://www.winimage.com/zLibDll/zlib123dllx64.zip, SHA-256 fd324c6923aa4f45a60413665e0b68bb34a7779d0861849e02d2711ff8efb9a4) and copy dll_x64\\zlibwapi.dll into {dir}."))
                .command(format!("copy dll_x64\\zlibwapi.dll \"{dir}\\\"")),
        );
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
    for st in names::sublib_stems(major) {
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
fn folder_version(cx: &Cx, dir: &str) -> Option<super::super::snapshot::Known> {
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

/// `sub-libraries-mixed` for one copy at a time (F14): a main library whose
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
            "sub-libraries-mixed",
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

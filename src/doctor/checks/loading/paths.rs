//! Loader path mistakes: the toolkit's folder not on it
//! (`toolkit-not-on-loader-path`), an entry above the folder holding the
//! libraries (`path-points-at-archive-root`,
//! `installer-subfolder-not-on-path`), cuDNN only inside a Python
//! environment (`cudnn-only-in-site-packages`).

use std::collections::BTreeSet;

use super::loader_var;
use crate::doctor::FindingId;
use crate::doctor::checks::Cx;
use crate::doctor::finding::{AutoFix, Finding, Severity, persist_user_path, prepend_loader_path};
use crate::doctor::loader;
use crate::doctor::snapshot::{CudnnFile, InstallKind};
use crate::doctor::spath;
use crate::names;
use crate::quote::{quote_arg, sh_quote};
use crate::version::Version;

/// `ld-library-path-current-folder`: an empty or relative `LD_LIBRARY_PATH`
/// entry, which ld.so takes from the working folder of each program. The
/// loader order (`loader::find`) already searches it; this says so, and
/// names the cuDNN it makes win here.
pub(super) fn current_folder(cx: &Cx, out: &mut Vec<Finding>) {
    if cx.w {
        return;
    }
    let Some(raw) = &cx.s.ld_library_path_raw else {
        return;
    };
    let rel = loader::ld_library_path_relative(raw);
    if rel.is_empty() {
        return;
    }
    let entries: Vec<&str> = raw.split([':', ';']).collect();
    let which: Vec<String> = rel
        .iter()
        .map(|&i| match entries.get(i).copied().unwrap_or("") {
            "" => format!("entry {} is empty", i + 1),
            e => format!("entry {} is the relative `{e}`", i + 1),
        })
        .collect();
    let mut f = Finding::new(
        FindingId::LdLibraryPathCurrentFolder,
        Severity::Warning,
        "LD_LIBRARY_PATH makes every program search the folder it runs in",
    )
    .seen(format!("LD_LIBRARY_PATH={raw}"))
    .seen(which.join("; "));
    // The cuDNN the working folder supplies here, and whether it wins.
    for major in cx.majors_present() {
        if let Some(a) = cx.active(major)
            && matches!(a.hit.via, loader::Via::LdLibraryPath(i) if rel.contains(&i))
        {
            f = f.seen(format!(
                "here the loader takes {} through that entry",
                cx.describe(&a.hit.path)
            ));
        }
    }
    let kept: Vec<&str> = entries
        .iter()
        .copied()
        .filter(|e| e.starts_with('/'))
        .collect();
    out.push(
        f.why("ld.so reads an empty entry (a leading or trailing `:`, or `::`) as the current folder, and a relative entry as a folder below it (ld.so(8)). A program started in a folder that holds a libcudnn.so.* — an unpacked archive, a project's own copy — loads that copy before any other. An empty entry is what `export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/x` leaves when the variable was unset.")
            .fix("Drop the empty and relative entries (use absolute folders), and append without leaving one behind: `export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/x`.")
            .command(format!("export LD_LIBRARY_PATH={}", sh_quote(&kept.join(":")))),
    );
}

/// `toolkit-not-on-loader-path` (`docs/breakages.md#toolkit-bin-not-on-path`).
pub(super) fn toolkit_on_path(cx: &Cx, out: &mut Vec<Finding>) {
    // With no copy reachable, only the first toolkit (in the order they
    // were found: --cuda-root, CUDA_PATH, …) is the error: putting every
    // toolkit on the loader path would mix their cuDNN libraries.
    let mut first_unreachable: std::collections::BTreeMap<u32, String> = Default::default();
    for t in &cx.s.toolkits {
        let mains: Vec<(&CudnnFile, names::NameInfo)> = cx
            .shared()
            .filter(|(f, n)| n.is_main() && !n.dev_link && cx.s.within(&f.path, &t.root))
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
        let before = match &active {
            None => first_unreachable.get(&m).cloned(),
            Some(_) => None,
        };
        if active.is_none() && before.is_none() {
            first_unreachable.insert(m, t.root.clone());
        }
        let sev = if active.is_none() && before.is_none() {
            Severity::Error
        } else {
            Severity::Warning
        };
        let mut f = Finding::new(
            FindingId::ToolkitNotOnLoaderPath,
            sev,
            format!("{dir} holds cuDNN {m} but is not on {}", loader_var(cx)),
        )
        .seen(cx.describe(&main.path).to_string());
        f = match &active {
            Some(a) => f.seen(format!(
                "programs load {} instead",
                cx.describe(&a.hit.path)
            )),
            None => match &before {
                Some(first) => f.seen(format!(
                    "no copy is reachable; the toolkit in '{first}' (found first) is the one reported as the error: put only the toolkit your programs use on the loader path, since two cuDNN folders there mix their libraries"
                )),
                None => f.seen("no other copy is reachable"),
            },
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
                .fix("Add the folder to LD_LIBRARY_PATH (this shell, or your shell profile), or register it with the loader system-wide (the one file `/etc/ld.so.conf.d/cudnn.conf` names one toolkit: registering another replaces it, so two toolkits' cuDNN never mix).")
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

/// `path-points-at-archive-root` (`docs/breakages.md#path-at-archive-root`) and
/// `installer-subfolder-not-on-path`
/// (`docs/breakages.md#installer-subfolder-not-on-path`): a loader path entry
/// above the folder that holds the libraries; the loader never looks into
/// subfolders.
pub(super) fn path_too_high(cx: &Cx, out: &mut Vec<Finding>) {
    let entries: &[String] = if cx.w {
        &cx.s.path
    } else {
        &cx.s.ld_library_path
    };
    for e in entries {
        let holds = |f: &CudnnFile| cx.dir(&f.path);
        let direct = cx.shared().any(|(f, _)| cx.s.same_place(&holds(f), e));
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
                FindingId::InstallerSubfolderNotOnPath,
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
                    if !v.iter().any(|x| cx.s.same_place(x, &d)) {
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
            FindingId::PathPointsAtArchiveRoot,
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
        .any(|f| f.header_version.is_some() && cx.s.within(&f.path, dir))
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

/// `cudnn-only-in-site-packages` (`docs/breakages.md#cudnn-only-in-site-packages`).
pub(super) fn only_in_site_packages(cx: &Cx, out: &mut Vec<Finding>) {
    let majors = cx.majors_present();
    if majors.iter().any(|m| cx.active(*m).is_some()) {
        return;
    }
    let mut done = BTreeSet::new();
    for (f, n) in cx.shared().filter(|(f, n)| {
        n.is_main() && !n.dev_link && matches!(f.origin, InstallKind::PipWheel | InstallKind::Conda)
    }) {
        let dir = cx.dir(&f.path);
        if !done.insert(spath::key(&dir, cx.w)) {
            continue;
        }
        let v =
            cx.s.version_of(f)
                .map(|k| k.version.to_string())
                .unwrap_or_else(|| n.major.unwrap_or(0).to_string());
        // A framework of that environment loads it (its RPATH, or by path):
        // the setup works as intended; only other programs miss it.
        let owner = cx.s.frameworks.iter().find(|fw| {
            !fw.is_cudnn_wheel() && !fw.location.is_empty() && cx.s.within(&f.path, &fw.location)
        });
        let mut fd = Finding::new(
            FindingId::CudnnOnlyInSitePackages,
            if owner.is_some() {
                Severity::Info
            } else {
                Severity::Warning
            },
            format!("cuDNN {v} exists only inside a Python environment, on no loader path"),
        )
        .seen(cx.describe(&f.path))
        .seen_all(owner.map(|fw| format!("{} {} in the same environment loads it", fw.name, fw.version)))
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

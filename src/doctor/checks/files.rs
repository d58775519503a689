//! The files of each installation: complete sets, right folders, soname
//! chains, header against library, CUDA fit, architecture, deployments.

use std::collections::BTreeSet;

use super::Cx;
use crate::command::CommandLine;
use crate::doctor::finding::{AutoFix, Finding, Severity};
use crate::doctor::snapshot::{CudnnFile, FileState, ToolkitInfo, cudart_to_version};
use crate::doctor::spath;
use crate::names::{self, FileKind};
use crate::quote::{quote_arg, sh_quote};
use crate::version::{CudaVariant, Spec, Version};

pub(super) fn check(cx: &Cx, out: &mut Vec<Finding>) {
    architecture(cx, out);
    load_failures(cx, out);
    for t in &cx.s.toolkits {
        toolkit_set(cx, t, out);
        toolkit_folders(cx, t, out);
    }
    runtime_sets(cx, out);
    soname_chains(cx, out);
    header_vs_library(cx, out);
    cuda_fit(cx, out);
    deployments(cx, out);
    store_damage(cx, out);
}

/// `wrong-architecture`: a library built for another machine than this OS.
fn architecture(cx: &Cx, out: &mut Vec<Finding>) {
    let arch = &cx.s.os.arch;
    if arch.is_empty() {
        return;
    }
    let mut seen = BTreeSet::new();
    for (f, _) in cx.shared() {
        let Some(m) = &f.machine else { continue };
        if m == arch || !seen.insert(f.real_path.clone().unwrap_or_else(|| f.path.clone())) {
            continue;
        }
        // The same release for this machine, when the catalog has it.
        let (release, cmds) = cx.release_of(f);
        let mut fd = Finding::new("wrong-architecture", Severity::Error, format!("{} is built for {m}, this system is {arch}", cx.name(&f.path)))
            .seen(format!("{} ({m})", f.path))
            .why(if cx.w {
                "Windows refuses to load it: error 193 \"%1 is not a valid Win32 application\".".to_string()
            } else {
                "The loader skips or refuses it: \"wrong ELF class\" or \"cannot open shared object file: No such file or directory\".".to_string()
            })
            .fix(match (&cmds, &release) {
                (Some((id, _)), _) => format!("Install the {arch} build of this release ({id}) and remove this copy."),
                (None, Some(v)) => format!("Remove this copy. {}", super::look_for(&format!("{arch} build of cuDNN {v}"))),
                (None, None) => format!("Remove this copy and install an {arch} build (`cudnnm list --remote` shows the releases the catalog has for this machine)."),
            });
        if let Some((_, c)) = cmds {
            fd = fd.command(c[0].clone());
        }
        out.push(fd);
    }
}

/// `library-load-failed`: the library could not be loaded; the loader's message says why.
fn load_failures(cx: &Cx, out: &mut Vec<Finding>) {
    let mut seen = BTreeSet::new();
    for (f, _) in cx.shared() {
        let Some(e) = &f.load_error else { continue };
        if !seen.insert(f.real_path.clone().unwrap_or_else(|| f.path.clone())) {
            continue;
        }
        out.push(
            Finding::new("library-load-failed", Severity::Error, format!("{} is present but does not load", cx.name(&f.path)))
                .seen(f.path.clone())
                .seen(format!("loader: {e}"))
                .why("A present file is not a loadable file: programs that use it fail with the same message.")
                .fix("Install what the message names (a dependency such as zlib or cuBLAS), or replace a damaged copy (`cudnnm verify` checks cudnnm's own)."),
        );
    }
}

/// True when `dir` is the right folder of toolkit `t` for files of `kind`,
/// by the toolkit's layout (a Windows-layout toolkit is checked as Windows
/// wherever doctor runs).
fn right_folder(cx: &Cx, t: &ToolkitInfo, dir: &str, kind: FileKind) -> bool {
    let w = t.is_windows();
    let rel = match spath::relative(dir, &t.root, cx.w) {
        Some(r) => r.to_ascii_lowercase(),
        None => return false,
    };
    let in_targets = |leaf: &str| {
        let p: Vec<&str> = rel.split('/').collect();
        p.len() == 3 && p[0] == "targets" && p[2] == leaf
    };
    match (w, kind) {
        (true, FileKind::Shared) => rel == "bin",
        (true, FileKind::Header) => rel == "include",
        (true, FileKind::ImportLib) => rel == "lib/x64",
        (true, FileKind::Static) => rel == "lib/x64",
        (false, FileKind::Shared | FileKind::Static) => rel == "lib64" || in_targets("lib"),
        (false, FileKind::Header) => rel == "include" || in_targets("include"),
        (false, FileKind::ImportLib) => false,
    }
}

/// The name the loader looks up for `stem` of `major` in toolkit `t`'s layout
/// (`cudnn_ops64_9.dll` or `libcudnn_ops.so.9`).
fn layout_name(t: &ToolkitInfo, stem: &str, major: u32) -> String {
    if t.is_windows() {
        names::dll_name(stem, major)
    } else {
        names::soname(stem, major)
    }
}

/// Files of toolkit `t` (of its layout's kinds: DLLs and import libraries
/// in a Windows layout, `.so` files in a Linux one) with their name info.
fn toolkit_files<'a>(cx: &'a Cx, t: &'a ToolkitInfo) -> Vec<(&'a CudnnFile, names::NameInfo)> {
    let w = cx.w;
    let tw = t.is_windows();
    cx.s.files
        .iter()
        .filter(|f| spath::is_within(&f.path, &t.root, w))
        .filter(|f| {
            cx.s.toolkit_of(&f.path)
                .is_some_and(|o| spath::same(&o.root, &t.root, w))
        })
        .filter_map(|f| Some((f, names::classify(spath::file_name(&f.path, w))?)))
        .filter(|(_, n)| n.kind == FileKind::Header || n.windows == tw)
        .collect()
}

/// `missing-library`, `missing-header`, `missing-link-library` (issue item 5).
fn toolkit_set(cx: &Cx, t: &ToolkitInfo, out: &mut Vec<Finding>) {
    let files = toolkit_files(cx, t);
    if files.is_empty() {
        return;
    }
    // The toolkit's layout decides the file set, not the OS doctor runs on.
    let w = t.is_windows();
    let present = |kind: FileKind, name: &str| {
        files.iter().any(|(f, n)| {
            n.kind == kind
                && spath::name_eq(cx.name(&f.path), name, w)
                && right_folder(cx, t, &cx.dir(&f.path), kind)
        })
    };
    let header_v = cx.s.header_version(&t.root).map(|k| k.version.major());
    let mut majors: BTreeSet<u32> = files
        .iter()
        .filter(|(_, n)| n.kind == FileKind::Shared && !n.dev_link)
        .filter_map(|(_, n)| n.major)
        .collect();
    majors.extend(header_v);
    let release = deployed_release(cx, &t.root);
    let held = release.as_ref().and_then(|r| held_instead(cx, &t.root, r));
    let redeploy = |f: Finding| match &release {
        Some(r) if held.is_some() => f.command(redeploy_command(cx, &t.root, r)),
        Some(r) => f
            .command(redeploy_command(cx, &t.root, r))
            .auto(AutoFix::Redeploy {
                toolkit: t.root.clone(),
                release: r.clone(),
            }),
        None => f.command(format!(
            "cudnnm use SPEC --cuda-root {}",
            quote_arg(&t.root, cx.w)
        )),
    };
    // Runtime libraries.
    for &m in &majors {
        let dir = t.loader_dir();
        let missing: Vec<String> = names::required_groups(m)
            .into_iter()
            .filter(|g| {
                !g.iter()
                    .any(|st| present(FileKind::Shared, &layout_name(t, st, m)))
            })
            .map(|g| {
                g.iter()
                    .map(|st| layout_name(t, st, m))
                    .collect::<Vec<_>>()
                    .join(" or ")
            })
            .collect();
        if missing.is_empty() {
            continue;
        }
        let first = missing[0].split(" or ").next().unwrap_or_default();
        let err = if w {
            format!(
                "\"Could not load library {first}. Error code 126\" / \"Could not load dynamic library '{first}'\""
            )
        } else {
            format!("\"{first}: cannot open shared object file: No such file or directory\"")
        };
        out.push(redeploy(
            Finding::new("missing-library", Severity::Error, format!("cuDNN {m} in {} lacks {}", t.root, missing.join(", ")))
                .seen(format!("missing from {dir}: {}", missing.join(", ")))
                .why(format!("Loading cuDNN fails: {err}. cuDNN {m} loads its sub-libraries by name at run time, so every one must be there."))
                .fix("Copy the complete set from the same release (all libraries, headers and import libraries together), or let cudnnm deploy it."),
        ));
    }
    // Headers.
    let mut hdrs = vec!["cudnn.h".to_string()];
    if majors.iter().any(|&m| m >= 8) {
        hdrs.push("cudnn_version.h".into());
    }
    let missing_h: Vec<String> = hdrs
        .into_iter()
        .filter(|h| !present(FileKind::Header, h))
        .collect();
    if !missing_h.is_empty() {
        let err = if w {
            format!(
                "fatal error C1083: Cannot open include file: '{}': No such file or directory",
                missing_h[0]
            )
        } else {
            format!("fatal error: {}: No such file or directory", missing_h[0])
        };
        out.push(redeploy(
            Finding::new(
                "missing-header",
                Severity::Error,
                format!("{} lacks {}", t.include_dir(), missing_h.join(", ")),
            )
            .seen(format!(
                "missing from {}: {}",
                t.include_dir(),
                missing_h.join(", ")
            ))
            .why(format!("Compiling against cuDNN fails: \"{err}\"."))
            .fix("Copy the headers of the same release into the toolkit's include folder."),
        ));
    }
    // Link libraries.
    let link = if w { "cudnn.lib" } else { "libcudnn.so" };
    let misplaced_lib = w
        && files
            .iter()
            .any(|(f, n)| n.kind == FileKind::ImportLib && is_lib_root(cx, t, f));
    let kind = if w {
        FileKind::ImportLib
    } else {
        FileKind::Shared
    };
    if !majors.is_empty() && !present(kind, link) && !misplaced_lib {
        let err = if w {
            "LINK : fatal error LNK1181: cannot open input file 'cudnn.lib'".to_string()
        } else {
            "/usr/bin/ld: cannot find -lcudnn".to_string()
        };
        let mut f = Finding::new(
            "missing-link-library",
            Severity::Error,
            format!("{} lacks {link}", t.lib_dir()),
        )
        .seen(format!("missing from {}: {link}", t.lib_dir()))
        .why(format!("Linking against cuDNN fails: \"{err}\"."));
        let dev_target = majors
            .iter()
            .next_back()
            .map(|m| names::soname("cudnn", *m))
            .filter(|t| !w && present(FileKind::Shared, t));
        f = match dev_target {
            Some(target) => f
                .fix(format!("Create the development link {link} -> {target}."))
                .command(format!(
                    "ln -s {} {}",
                    sh_quote(&target),
                    sh_quote(&spath::join(&t.lib_dir(), link, cx.w))
                )),
            None => redeploy(
                f.fix("Copy the import/link libraries of the same release into the toolkit."),
            ),
        };
        out.push(f);
    }
}

/// True when `f` sits directly in the toolkit's `lib` (not `lib\x64`).
fn is_lib_root(cx: &Cx, t: &ToolkitInfo, f: &CudnnFile) -> bool {
    spath::relative(&cx.dir(&f.path), &t.root, cx.w).is_some_and(|r| r.eq_ignore_ascii_case("lib"))
}

/// `lib-not-in-x64` (issue item 6) and `file-in-wrong-folder` (F20).
fn toolkit_folders(cx: &Cx, t: &ToolkitInfo, out: &mut Vec<Finding>) {
    let files = toolkit_files(cx, t);
    let w = t.is_windows();
    let in_lib: Vec<&CudnnFile> = files
        .iter()
        .filter(|(f, n)| w && n.kind == FileKind::ImportLib && is_lib_root(cx, t, f))
        .map(|(f, _)| *f)
        .collect();
    if !in_lib.is_empty() {
        let x64 = t.lib_dir();
        let lib = spath::join(&t.root, "lib", t.windows_paths());
        // The command for the shell of the machine the snapshot is of.
        let mv = if cx.w {
            format!("move \"{lib}\\cudnn*.lib\" \"{x64}\\\"")
        } else {
            format!("mv {}/cudnn*.lib {}/", sh_quote(&lib), sh_quote(&x64))
        };
        out.push(
            Finding::new("lib-not-in-x64", Severity::Error, format!("cuDNN import libraries are in {lib}, not {x64}"))
                .seen(format!("in {lib}: {}", in_lib.iter().map(|f| cx.name(&f.path)).collect::<Vec<_>>().join(", ")))
                .why(format!("The `lib` folder of the archive was copied to `lib` instead of `lib\\x64`; Visual Studio and CMake search {x64}: \"LINK : fatal error LNK1181: cannot open input file 'cudnn.lib'\"."))
                .fix(format!("Move them into {x64}."))
                .command(mv),
        );
    }
    let wrong: Vec<(&CudnnFile, &'static str)> = files
        .iter()
        .filter(|(f, n)| !right_folder(cx, t, &cx.dir(&f.path), n.kind))
        .filter(|(f, n)| !(w && n.kind == FileKind::ImportLib && is_lib_root(cx, t, f)))
        .map(|(f, n)| {
            let want = match (w, n.kind) {
                (true, FileKind::Shared) => "bin",
                (true, FileKind::Header) | (false, FileKind::Header) => "include",
                (true, _) => "lib/x64",
                (false, _) => "lib64",
            };
            (*f, want)
        })
        .collect();
    if wrong.is_empty() {
        return;
    }
    let mut f = Finding::new(
        "file-in-wrong-folder",
        Severity::Error,
        format!(
            "{} cuDNN file(s) in the wrong folder of {}",
            wrong.len(),
            t.root
        ),
    );
    for (file, want) in &wrong {
        f = f.seen(format!(
            "{} belongs in {}",
            file.path,
            spath::join(&t.root, want, t.windows_paths())
        ));
    }
    out.push(
        f.why("Each kind of file has one folder the tools search: DLLs/shared libraries where the loader looks, headers where the compiler looks, import libraries where the linker looks. A file anywhere else is not found (cuDNN 8.3 changed the archive layout: `lib64` and `lib\\x64` became `lib`, cupy#6337).")
            .fix("Move each file to the folder named, or let cudnnm deploy the release (`cudnnm use`), which places every file by its kind."),
    );
}

/// `missing-library` for installations outside toolkits that hold a main
/// library: a partial copy of a set.
fn runtime_sets(cx: &Cx, out: &mut Vec<Finding>) {
    let w = cx.w;
    for root in cx.s.roots() {
        if cx.s.toolkit_of(&root).is_some() {
            continue;
        }
        let libs: Vec<(&CudnnFile, names::NameInfo)> = cx
            .shared()
            .filter(|(f, n)| spath::same(&f.root, &root, w) && !n.dev_link)
            .collect();
        let majors: BTreeSet<u32> = libs
            .iter()
            .filter(|(_, n)| n.is_main())
            .filter_map(|(_, n)| n.major)
            .collect();
        for m in majors {
            let have = |st: &str| libs.iter().any(|(_, n)| n.stem == st && n.major == Some(m));
            let missing: Vec<String> = names::required_groups(m)
                .into_iter()
                .filter(|g| !g.iter().any(|st| have(st)))
                .map(|g| {
                    g.iter()
                        .map(|st| cx.loader_name(st, m))
                        .collect::<Vec<_>>()
                        .join(" or ")
                })
                .collect();
            if missing.is_empty() {
                continue;
            }
            // Importing a partial folder gives a partial release: offer the
            // whole release from the catalog instead, when its version is known.
            let (version, cmds) = libs
                .iter()
                .filter(|(_, n)| n.is_main() && n.major == Some(m))
                .map(|(f, _)| cx.release_of(f))
                .find(|(v, _)| v.is_some())
                .unwrap_or_default();
            let fix = match (&cmds, &version) {
                (Some((id, _)), _) => format!("Copy the complete set of the same release next to it, or install the whole release ({id}) with cudnnm and activate it from there."),
                (None, Some(v)) => format!("Copy the complete set of cuDNN {v} next to it. {}", super::look_for(&format!("cuDNN {v}"))),
                (None, None) => "Copy the complete set of the same release next to it, or install a whole release with cudnnm (`cudnnm list --remote`) and activate it from there.".to_string(),
            };
            let mut fd =
                Finding::new("missing-library", Severity::Error, format!("the cuDNN {m} copy in {root} lacks {}", missing.join(", ")))
                    .seen(format!("in {root}: main library present, missing {}", missing.join(", ")))
                    .why(format!("cuDNN {m} loads its sub-libraries by name at run time; with them missing here they come from another copy or not at all (\"{}\").", if w { format!("Could not load library {}. Error code 126", missing[0].split(" or ").next().unwrap_or_default()) } else { format!("{}: cannot open shared object file", missing[0].split(" or ").next().unwrap_or_default()) }))
                    .fix(fix);
            if let Some((_, c)) = cmds {
                fd = fd.command(c[0].clone());
            }
            out.push(fd);
        }
    }
}

/// `broken-soname-chain` (F19): `libcudnn.so.8` a regular file beside its
/// real `libcudnn.so.8.x.y`, a copied development link, or a dangling link.
fn soname_chains(cx: &Cx, out: &mut Vec<Finding>) {
    if cx.w {
        return;
    }
    let libs: Vec<(&CudnnFile, names::NameInfo)> = cx.shared().collect();
    for (f, n) in &libs {
        let dir = cx.dir(&f.path);
        let name = cx.name(&f.path);
        if f.dangling {
            out.push(
                Finding::new("broken-soname-chain", Severity::Error, format!("{name} is a link to a file that does not exist"))
                    .seen(format!("{} -> {} (missing)", f.path, f.link_target.as_deref().unwrap_or("?")))
                    .why(format!("Loading by this name fails: \"{name}: cannot open shared object file: No such file or directory\"."))
                    .fix("Recreate the chain `libX.so -> libX.so.M -> libX.so.M.m.p` from the release's files (cp -P keeps links), or redeploy with cudnnm."),
            );
            continue;
        }
        if f.link_target.is_some() {
            continue;
        }
        // A regular libX.so.M next to a regular libX.so.M.m.p, or a regular libX.so next to libX.so.M.
        if n.major.is_none() && !n.dev_link {
            continue;
        }
        let candidates = libs.iter().filter(|(g, gn)| {
            gn.stem == n.stem
                && (n.dev_link || gn.major == n.major)
                && spath::same(&cx.dir(&g.path), &dir, false)
                && !spath::same(&g.path, &f.path, false)
        });
        let target = if n.dev_link {
            candidates
                .filter(|(_, gn)| !gn.dev_link && gn.full_version.is_none())
                .map(|(g, _)| *g)
                .next()
        } else if n.full_version.is_none() {
            candidates
                .filter(|(g, gn)| gn.full_version.is_some() && g.link_target.is_none())
                .map(|(g, _)| *g)
                .next()
        } else {
            None
        };
        let Some(target) = target else { continue };
        let tname = cx.name(&target.path);
        let same_bytes = f.size == target.size;
        let (sev, what) = if n.dev_link {
            (Severity::Warning, "the development link")
        } else {
            (Severity::Error, "the soname")
        };
        let mut fd = Finding::new("broken-soname-chain", sev, format!("{name} is a copy, not a link to {tname}"))
            .seen(format!("{} is a regular file ({} bytes)", f.path, f.size))
            .seen(format!("{} is a regular file ({} bytes)", target.path, target.size))
            .why(format!("{what} must be a symbolic link in the chain libX.so -> libX.so.M -> libX.so.M.m.p; as a copy, `ldconfig` warns \"{} is not a symbolic link\", the copy goes stale when the release changes, and two files answer to one name (copying without `cp -P` does this).", f.path));
        if same_bytes {
            fd = fd
                .fix(format!("Replace the copy by a link to {tname} (`cudnnm doctor --fix` does it, backing the copy up first)."))
                .command(format!("ln -sf {} {}", sh_quote(tname), sh_quote(&f.path)))
                .auto(AutoFix::RelinkSoname { dir: dir.clone(), link: name.to_string(), target: tname.to_string() });
        } else {
            fd = fd.seen("the two files differ: they come from different releases").fix("Remove the stale copy and recreate the link from the release you want (or redeploy with cudnnm).");
        }
        out.push(fd);
    }
}

/// `header-library-mismatch` (issue item 10, F24): per installation, the
/// headers' version against the main library's.
fn header_vs_library(cx: &Cx, out: &mut Vec<Finding>) {
    let w = cx.w;
    for root in cx.s.roots() {
        // Headers that disagree among themselves.
        let hdrs: Vec<(&CudnnFile, &Version)> =
            cx.s.files_in_root(&root)
                .filter_map(|f| Some((f, f.header_version.as_ref()?)))
                .collect();
        let distinct: BTreeSet<(u32, u32, u32)> = hdrs
            .iter()
            .map(|(_, v)| (v.major(), v.minor(), v.patch()))
            .collect();
        let Some(h) = cx.s.header_version(&root) else {
            continue;
        };
        let libs: Vec<(&CudnnFile, names::NameInfo)> = cx
            .shared()
            .filter(|(f, n)| spath::same(&f.root, &root, w) && n.is_main() && !n.dev_link)
            .collect();
        let mut problems: Vec<String> = Vec::new();
        if distinct.len() > 1 {
            for (f, v) in &hdrs {
                problems.push(format!("{} declares {v}", f.path));
            }
        }
        let same_major: Vec<&(&CudnnFile, names::NameInfo)> = libs
            .iter()
            .filter(|(_, n)| n.major == Some(h.version.major()))
            .collect();
        if same_major.is_empty() {
            if let Some((f, n)) = libs.first() {
                problems.push(format!(
                    "headers declare {} but the library is cuDNN {} ({})",
                    h.version,
                    n.major.map(|m| m.to_string()).unwrap_or_else(|| "?".into()),
                    f.path
                ));
            }
        } else {
            for (f, _) in same_major {
                let Some(k) = cx.s.library_version(f) else {
                    continue;
                };
                if k.version.parts().len() >= 3 && k.version.triple() != h.version.triple() {
                    problems.push(format!(
                        "{} is {} ({}), headers declare {}",
                        f.path, k.version, k.source, h.version
                    ));
                }
            }
        }
        if problems.is_empty() {
            continue;
        }
        let mut f = Finding::new(
            "header-library-mismatch",
            Severity::Error,
            format!("cuDNN headers and library disagree in {root}"),
        );
        for p in problems {
            f = f.seen(p);
        }
        let release =
            cx.s.toolkit_of(&root)
                .and_then(|t| deployed_release(cx, &t.root).map(|r| (t.root.clone(), r)));
        f = f
            .why("Programs compiled against these headers check cudnnGetVersion() at start-up and stop (\"Loaded runtime CuDNN library: X but source was compiled with: Y\"), or misbehave when they do not check; sub-library headers stop compilation outright (\"#error Version mismatch in cuDNN\"). A partial copy or a stale file leaves this state.")
            .fix("Replace headers and libraries together with one release's set.");
        if let Some((tk, r)) = release {
            f = f
                .command(redeploy_command(cx, &tk, &r))
                .auto(AutoFix::Redeploy {
                    toolkit: tk,
                    release: r,
                });
        }
        out.push(f);
    }
}

/// The release cudnnm deployed into the toolkit at `root`.
pub(super) fn deployed_release(cx: &Cx, root: &str) -> Option<String> {
    cx.s.deployments
        .iter()
        .find(|d| spath::same(&d.toolkit, root, cx.w))
        .map(|d| d.release.clone())
}

/// The cuDNN version the toolkit at `root` holds instead of `release`, the
/// release recorded there: when its own files (headers, libraries with a
/// full version) all agree on one version and it is another release's.
/// Then another cudnnm home, or the user, deployed something else there.
pub(super) fn held_instead(cx: &Cx, root: &str, release: &str) -> Option<Version> {
    let recorded = release.parse::<Spec>().ok()?.version.triple();
    let mut seen: BTreeSet<Version> = BTreeSet::new();
    seen.extend(cx.s.header_version(root).map(|k| k.version.triple()));
    for f in cx.s.files_in_root(root) {
        let is_lib = names::classify(cx.name(&f.path))
            .is_some_and(|n| n.kind == FileKind::Shared && !n.dev_link);
        if !is_lib {
            continue;
        }
        if let Some(k) =
            cx.s.library_version(f)
                .filter(|k| k.version.parts().len() >= 3)
        {
            seen.insert(k.version.triple());
        }
    }
    let mut it = seen.into_iter();
    match (it.next(), it.next()) {
        (Some(v), None) if v != recorded => Some(v),
        _ => None,
    }
}

/// The command that deploys the release recorded in `root` again, by its
/// recorded mode — what `doctor --fix` does for [`AutoFix::Redeploy`].
fn redeploy_command(cx: &Cx, root: &str, release: &str) -> String {
    match cx
        .s
        .deployments
        .iter()
        .find(|d| spath::same(&d.toolkit, root, cx.w))
    {
        Some(d) if !d.mode.is_empty() => {
            format!(
                "cudnnm use {release} --cuda-root {} --mode {}",
                quote_arg(root, cx.w),
                d.mode
            )
        }
        _ => format!("cudnnm use {release} --cuda-root {}", quote_arg(root, cx.w)),
    }
}

/// The CUDA variant a library was built for: from `cudnnGetCudartVersion()`,
/// else from the release id cudnnm deployed (`…_cuda11.2`).
fn build_variant(cx: &Cx, f: &CudnnFile) -> Option<(CudaVariant, String)> {
    let f = cx.s.resolve(f);
    if let Some(n) = f.cudart_version.filter(|n| *n > 0) {
        let c = cudart_to_version(n);
        return Some((
            CudaVariant::new(c.major(), Some(c.minor())),
            format!(
                "built with CUDA runtime {}.{} (cudnnGetCudartVersion)",
                c.major(),
                c.minor()
            ),
        ));
    }
    let t = cx.s.toolkit_of(&f.path)?;
    let r = deployed_release(cx, &t.root)?;
    let (_, c) = r.split_once("_cuda")?;
    Some((
        CudaVariant::from_name_part(c)?,
        format!("release {r} deployed by cudnnm"),
    ))
}

/// The CUDA versions a cuDNN major was published for (cudnn-facts §5.1):
/// 7.x for CUDA 8.0–10.2, 8.x for 10.1–12.x, 9.x for 11–13.
fn published_for(cudnn_major: u32, cuda: &Version) -> Option<bool> {
    let c = (cuda.major(), cuda.minor());
    Some(match cudnn_major {
        7 => ((8, 0)..=(10, 2)).contains(&c),
        8 => (10, 1) <= c && c.0 <= 12,
        9 => (11..=13).contains(&c.0),
        _ => return None,
    })
}

/// The fix for a cuDNN build that does not fit toolkit `t` of CUDA `c`: the
/// same release built for that CUDA, else the newest of its major that
/// fits, from the catalog — or what to look for when it has none.
fn fitting_build(cx: &Cx, f: &CudnnFile, t: &ToolkitInfo, c: &Version) -> (String, Vec<String>) {
    let own = cx.s.version_of(f).map(|k| k.version);
    let cuda = format!("{}.{}", c.major(), c.minor());
    let same = own.as_ref().filter(|v| v.parts().len() >= 3).and_then(|v| {
        cx.install_and_use(
            &Spec {
                version: v.clone(),
                cuda: None,
            },
            Some(c),
            Some(t),
        )
    });
    if let Some((id, cmds)) = same {
        return (
            format!(
                "Deploy the same release built for CUDA {cuda} ({id}) into {}.",
                t.root
            ),
            cmds,
        );
    }
    let major = own.as_ref().map(|v| v.major());
    let newest = major.and_then(|m| {
        cx.install_and_use(
            &Spec {
                version: Version::from_parts(&[m]),
                cuda: None,
            },
            Some(c),
            Some(t),
        )
    });
    match (newest, &own) {
        (Some((id, cmds)), Some(v)) => (
            format!(
                "The catalog has no cuDNN {v} built for CUDA {cuda}; the newest cuDNN {}.x that is: {id}. Deploy it into {}, or use this cuDNN with the toolkit it was built for.",
                v.major(),
                t.root
            ),
            cmds,
        ),
        _ => (
            format!(
                "Deploy a build made for CUDA {cuda} into {}, or use this cuDNN with the toolkit it was built for. {}",
                t.root,
                super::look_for(&match major {
                    Some(m) => format!("cuDNN {m}.x build for CUDA {cuda}"),
                    None => format!("cuDNN build for CUDA {cuda}"),
                })
            ),
            Vec::new(),
        ),
    }
}

/// Sets a fix text and its commands.
trait FixWith {
    fn fix_with(self, fix: (String, Vec<String>)) -> Self;
}

impl FixWith for Finding {
    fn fix_with(self, (text, cmds): (String, Vec<String>)) -> Finding {
        cmds.into_iter().fold(self.fix(text), Finding::command)
    }
}

/// `cudnn-cuda-mismatch` (issue item 4, F26).
fn cuda_fit(cx: &Cx, out: &mut Vec<Finding>) {
    let w = cx.w;
    let mut reported = BTreeSet::new();
    // (a) Libraries inside a toolkit.
    for (f, n) in cx.shared().filter(|(_, n)| n.is_main() && !n.dev_link) {
        let Some(t) = cx.s.toolkit_of(&f.path) else {
            continue;
        };
        let Some(c) = &t.cuda else { continue };
        let Some(m) = n.major else { continue };
        let ver =
            cx.s.version_of(f)
                .map(|k| k.version.to_string())
                .unwrap_or_else(|| m.to_string());
        let (bad, because) = match build_variant(cx, f) {
            Some((var, how)) => (
                !super::system::fits(&var, c),
                format!("{how}: a build for CUDA {var}"),
            ),
            None => match published_for(m, c) {
                Some(false) => (
                    true,
                    format!(
                        "cuDNN {m}.x was never published for CUDA {}.{}",
                        c.major(),
                        c.minor()
                    ),
                ),
                _ => (false, String::new()),
            },
        };
        if !bad || !reported.insert(t.root.clone()) {
            continue;
        }
        out.push(
            Finding::new("cudnn-cuda-mismatch", Severity::Error, format!("cuDNN {ver} in {} does not fit its CUDA {c}", t.root))
                .seen(format!("{} — {because}", f.path))
                .seen(format!("toolkit {} is CUDA {c}", t.root))
                .why("A cuDNN build runs only with the CUDA it was built for: the same major.minor before CUDA 11, the same major from 11 on (minor-version compatibility). Otherwise loading fails on missing CUDA libraries (\"cublas64_11.dll not found\", \"libcublasLt.so.12: cannot open shared object file\") or calls fail with CUDNN_STATUS_ARCH_MISMATCH / CUDNN_STATUS_NOT_SUPPORTED.")
                .fix_with(fitting_build(cx, f, t, c)),
        );
    }
    // (b) F26: the copy loaded comes from another CUDA than the toolkit in use.
    let Some(tk) = cx.toolkit_in_use() else {
        return;
    };
    let Some(c) = &tk.cuda else { return };
    for m in cx.majors_present() {
        let Some(a) = cx.active(m) else { continue };
        let Some(f) = a.file else { continue };
        if spath::is_within(&f.path, &tk.root, w) {
            continue;
        }
        let Some((var, how)) = build_variant(cx, f) else {
            continue;
        };
        if super::system::fits(&var, c) {
            continue;
        }
        out.push(
            Finding::new("cudnn-cuda-mismatch", Severity::Error, format!("the cuDNN {m} that loads is built for CUDA {var}; the toolkit in use is CUDA {c}"))
                .seen(format!("loaded: {} ({how})", cx.describe(&f.path)))
                .seen(format!("toolkit in use: {} (CUDA {c})", tk.root))
                .why("cuDNN was taken from another CUDA install than the one in use (CUDAapi.jl#85): its CUDA libraries do not match, so loading or the first call fails (\"CUDNN_STATUS_NOT_INITIALIZED\", missing libcublasLt/cublas64 of the other version).")
                .fix_with(fitting_build(cx, f, tk, c)),
        );
    }
}

/// `deployment-drift`: files cudnnm placed in a toolkit changed since.
fn deployments(cx: &Cx, out: &mut Vec<Finding>) {
    for d in &cx.s.deployments {
        let mut lines = Vec::new();
        let mut restored: Vec<String> = Vec::new();
        for p in &d.files {
            let problem = match (&p.state, &p.expected_link, p.expected_size) {
                (FileState::Missing, _, _) => Some("missing".to_string()),
                (FileState::Link { target }, Some(want), _) if target != want => {
                    Some(format!("link points at {target}, expected {want}"))
                }
                (FileState::File { .. }, Some(want), _) => {
                    Some(format!("a regular file, expected a link to {want}"))
                }
                (FileState::File { size }, None, Some(want)) if *size != want => {
                    Some(format!("{size} bytes, expected {want}"))
                }
                (FileState::Link { target }, None, _) => {
                    Some(format!("a link to {target}, expected a file"))
                }
                _ => None,
            };
            match (problem, &p.restored) {
                // The store's own file (a hard link): the store release
                // changed, which `store-release-damaged` reports.
                (Some(_), _) if p.store_file => {}
                (Some(pr), _) => lines.push(format!("{}: {pr}", p.path)),
                (None, Some(why)) => restored.push(format!("{}: {why}", p.path)),
                (None, None) => {}
            }
        }
        for x in &d.extra {
            lines.push(format!("{x}: a cuDNN file the deployment did not place"));
        }
        if lines.is_empty() && !restored.is_empty() {
            // The record holds the user's change a rollback brought back:
            // not drift, but not the release's copy either (as `current` and
            // `verify` say). No automatic fix: it would replace the change.
            let mut f = Finding::new(
                "deployment-drift",
                Severity::Info,
                format!(
                    "{} file(s) in {} are not release {}'s copy: a rollback restored your change",
                    restored.len(),
                    d.toolkit,
                    d.release
                ),
            );
            for l in &restored {
                f = f.seen(l.clone());
            }
            out.push(
                f.why("You changed these files before switching releases; the switch kept them in a backup and `cudnnm rollback` put them back. They match the deployment record, so nothing is broken, but the toolkit holds the release plus your change.")
                    .fix("To keep the change, nothing needs doing (a later `cudnnm use` backs it up first). To go back to the release's copy, deploy the release again; your changed files go into a backup that `cudnnm rollback` restores.")
                    .command(redeploy_command(cx, &d.toolkit, &d.release)),
            );
            continue;
        }
        if lines.is_empty() {
            continue;
        }
        let cmd = redeploy_command(cx, &d.toolkit, &d.release);
        if let Some(v) = held_instead(cx, &d.toolkit, &d.release) {
            // Another home (or the user) deployed another release there:
            // redeploying this home's record would undo that change.
            let mut f = Finding::new(
                "deployment-drift",
                Severity::Warning,
                format!(
                    "{} now holds cuDNN {v} (not this home's record of {})",
                    d.toolkit, d.release
                ),
            );
            for l in lines {
                f = f.seen(l);
            }
            out.push(
                f.why(format!("This home deployed {} there, but the toolkit's own files (headers, libraries) now all say cuDNN {v}: another cudnnm home, or you, deployed something else since. This home's record is out of date; the toolkit itself is consistent.", d.release))
                    .fix(format!("Nothing to do if cuDNN {v} is meant to be there. To put this home's release back, deploy it explicitly (what is there now goes into a backup that `cudnnm rollback` restores)."))
                    .command(cmd.clone())
                    .held_back(format!("'{}' now holds cuDNN {v} (not this home's record of {}); redeploying would undo that change — run `{cmd}` yourself if this home's release belongs there", d.toolkit, d.release)),
            );
            continue;
        }
        let changed = lines.len() - d.extra.len();
        let title = match (changed, d.extra.len()) {
            (_, 0) => format!(
                "{changed} of the files cudnnm deployed into {} changed",
                d.toolkit
            ),
            (0, x) => format!(
                "{x} cuDNN file(s) in {} were not placed by its deployment of {}",
                d.toolkit, d.release
            ),
            (c, x) => format!(
                "{c} of the files cudnnm deployed into {} changed, and {x} other cuDNN file(s) are there",
                d.toolkit
            ),
        };
        let mut f = Finding::new("deployment-drift", Severity::Error, title);
        for l in lines {
            f = f.seen(l);
        }
        let f = f.why(format!("The toolkit no longer holds release {} as deployed: something replaced, removed or copied over its files, so the headers, libraries and links may now come from different releases.", d.release))
            .fix("Deploy the release again from the store (what is there now is backed up first).")
            .command(cmd);
        out.push(if change_unfinished(cx, &d.toolkit) {
            // Another home's interrupted change explains the drift, and
            // `use` refuses until it is finished: no automatic redeploy.
            f.held_back(format!("'{}' has an unfinished change from another cudnnm home (toolkit-change-unfinished); finish that first", d.toolkit))
        } else {
            f.auto(AutoFix::Redeploy { toolkit: d.toolkit.clone(), release: d.release.clone() })
        });
    }
}

/// Whether another home's change to the toolkit at `root` is unfinished
/// (see `toolkit-change-unfinished`); roots compared as spelled, then resolved.
fn change_unfinished(cx: &Cx, root: &str) -> bool {
    let resolved = |p: &str| std::fs::canonicalize(p).ok();
    cx.s.toolkits.iter().any(|t| {
        t.unfinished_change.is_some()
            && (t.root == root || resolved(&t.root).is_some_and(|r| Some(r) == resolved(root)))
    })
}

/// `store-release-damaged`: a store folder whose receipt is missing or
/// unreadable — the release is invisible to `list`, `use`, `exec` and `env`,
/// and `verify` cannot check it; or a release whose files changed, edited
/// through a toolkit it is linked into (symlink or hardlink deployment).
fn store_damage(cx: &Cx, out: &mut Vec<Finding>) {
    store_changed(cx, out);
    for d in &cx.s.store_damaged {
        let name = d.release.as_deref().unwrap_or("a release");
        let mut f = Finding::new(
            "store-release-damaged",
            Severity::Error,
            format!(
                "the store holds {name} in {} without a readable receipt",
                d.dir
            ),
        )
        .seen(d.error.clone());
        let deployed: Vec<&str> = match &d.release {
            Some(id) => {
                cx.s.deployments
                    .iter()
                    .filter(|x| &x.release == id)
                    .map(|x| x.toolkit.as_str())
                    .collect()
            }
            None => Vec::new(),
        };
        for t in &deployed {
            f = f.seen(format!(
                "deployed in {t}: it cannot be verified or redeployed from the store"
            ));
        }
        f = f.why("cudnnm knows a release only through its receipt.toml (version, CUDA, every file with its size and SHA-256): without it the release is left out of `cudnnm list`, `use`, `exec` and `env`, `cudnnm verify` cannot check its files, and a toolkit it was deployed into cannot be verified or redeployed.");
        let offer = d
            .release
            .as_deref()
            .and_then(|id| id.parse::<Spec>().ok())
            .filter(|sp| sp.cuda.is_some())
            .and_then(|sp| cx.t.offer(&sp, None).filter(|o| o.version == sp.version));
        f = match offer {
            Some(o) => f
                .fix(format!("Import the release again over the damaged folder (`--force` replaces it), or delete {} if you no longer need it.", d.dir))
                .command(o.install().force().for_host(cx.w)),
            None => f.fix(format!("Import the release again from the archive or wheel it came from, with `cudnnm install --force` and that file (the catalog does not list {name} for this platform), or delete {} if you no longer need it.", d.dir)),
        };
        out.push(f);
    }
}

/// `store-release-damaged` for a store release whose files changed: a link
/// deployment shares its files with the store, so an edit made through the
/// toolkit lands in the store. Redeploying cannot repair it (it links the
/// same files), so no automatic fix: the commands switch the toolkits away,
/// import the release again from its original source, and deploy it again.
fn store_changed(cx: &Cx, out: &mut Vec<Finding>) {
    for c in &cx.s.store_changed {
        let mut f = Finding::new(
            "store-release-damaged",
            Severity::Error,
            format!(
                "the store release {} changed: {} file(s) differ from its receipt",
                c.release,
                c.files.len()
            ),
        );
        for l in &c.files {
            f = f.seen(format!("{}: {l}", c.dir));
        }
        let deployed: Vec<(String, String)> =
            cx.s.deployments
                .iter()
                .filter(|d| d.release == c.release)
                .map(|d| (d.toolkit.clone(), d.mode.clone()))
                .collect();
        for (t, m) in deployed.iter().filter(|(_, m)| m != "copy") {
            f = f.seen(format!(
                "linked from {t} ({m} deployment): the change shows there too"
            ));
        }
        let install = CommandLine::install_from(&c.reinstall, c.reinstall_is_file).force();
        let cmds = crate::verify::repair_commands(&c.release, &install, &deployed, cx.w);
        let from = if c.reinstall_is_file {
            format!("the file it came from ({})", c.reinstall)
        } else {
            format!("its original source ({})", c.reinstall)
        };
        f = f
            .why(format!("A symlink or hardlink deployment shares its files with the store: an edit made through the toolkit changes the store's copy of release {}, so every toolkit linked to it and `cudnnm exec`/`env` see the changed file, and deploying the release again links the same changed files (it is \"already active\").", c.release))
            .fix(if deployed.is_empty() {
                format!("Import the release again from {from} with `--force`.")
            } else {
                format!("Import the release again from {from} with `--force`. `install --force` is refused while the release is deployed, so first switch each toolkit away (`cudnnm rollback --cuda-root T`, or `cudnnm use OTHER --cuda-root T`), then reinstall, then deploy it again.")
            })
            .held_back(format!(
                "the store release {} itself changed; redeploying cannot repair it — import it again from {from} (see the commands)",
                c.release
            ));
        for cmd in cmds {
            f = f.command(cmd);
        }
        out.push(f);
    }
}

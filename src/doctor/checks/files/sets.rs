//! Complete sets in the right folders: each toolkit's libraries, headers
//! and import libraries where its tools look (`missing-library`,
//! `missing-header`, `missing-link-library`, `lib-not-in-x64`,
//! `file-in-wrong-folder`), and the sets of copies outside toolkits.

use std::collections::BTreeSet;

use super::deployments::{deployed_release, held_instead, redeploy_command};
use crate::doctor::FindingId;
use crate::doctor::checks::{self, Cx};
use crate::doctor::finding::{AutoFix, Finding, Severity};
use crate::doctor::snapshot::{CudnnFile, ToolkitInfo};
use crate::doctor::spath;
use crate::names::{self, FileKind};
use crate::quote::sh_quote;
use crate::version::Version;

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
        .filter(|f| cx.s.within(&f.path, &t.root))
        .filter(|f| {
            cx.s.toolkit_of(&f.path)
                .is_some_and(|o| cx.s.same_place(&o.root, &t.root))
        })
        .filter_map(|f| Some((f, names::classify(spath::file_name(&f.path, w))?)))
        .filter(|(_, n)| n.kind == FileKind::Header || n.windows == tw)
        .collect()
}

/// `missing-library`, `missing-header`, `missing-link-library`
/// (`docs/breakages.md#file-missing-from-set`).
pub(super) fn toolkit_set(cx: &Cx, t: &ToolkitInfo, out: &mut Vec<Finding>) {
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
    // A file whose name lies about its major (`library-renamed`,
    // `not-a-cudnn-library`) does not make that major present.
    let mut majors: BTreeSet<u32> = files
        .iter()
        .filter(|(_, n)| n.kind == FileKind::Shared && !n.dev_link)
        .filter(|(f, n)| n.major.is_none_or(|m| super::content_of(f, m).is_none()))
        .filter_map(|(_, n)| n.major)
        .collect();
    majors.extend(header_v);
    let release = deployed_release(cx, &t.root);
    let held = release.as_ref().and_then(|r| held_instead(cx, &t.root, r));
    // What fills the set in, for the major a finding is about (a missing
    // cuDNN 8 library is not fixed by installing cuDNN 9).
    let redeploy = |f: Finding, major: Option<u32>| match &release {
        Some(r) if held.is_some() => f.command(redeploy_command(cx, &t.root, r)),
        Some(r) => f
            .command(redeploy_command(cx, &t.root, r))
            .auto(AutoFix::Redeploy {
                toolkit: t.root.clone(),
                release: r.to_string(),
            }),
        None => match fill_in(cx, t, major.or_else(|| majors.iter().next_back().copied())) {
            Some(cmds) => cmds.into_iter().fold(f, Finding::command),
            None => f,
        },
    };
    // A real `libX.so.M.m.p` whose `libX.so.M` link is missing is one cause,
    // reported once as `soname-link-missing`: not a missing library too.
    let real_only = |st: &str, m: u32| {
        !w && files.iter().any(|(f, n)| {
            n.kind == FileKind::Shared
                && n.stem == st
                && n.major == Some(m)
                && n.full_version.is_some()
                && !f.dangling
                && right_folder(cx, t, &cx.dir(&f.path), FileKind::Shared)
        })
    };
    // Runtime libraries.
    for &m in &majors {
        let dir = t.loader_dir();
        let missing: Vec<String> = names::required_groups(m)
            .into_iter()
            .filter(|g| {
                !g.iter()
                    .any(|st| present(FileKind::Shared, &layout_name(t, st, m)) || real_only(st, m))
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
            Finding::new(FindingId::MissingLibrary, Severity::Error, format!("cuDNN {m} in {} lacks {}", t.root, missing.join(", ")))
                .seen(format!("missing from {dir}: {}", missing.join(", ")))
                .why(format!("Loading cuDNN fails: {err}. cuDNN {m} loads its sub-libraries by name at run time, so every one must be there."))
                .fix("Copy the complete set from the same release (all libraries, headers and import libraries together), or let cudnnm deploy it."),
            Some(m),
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
                FindingId::MissingHeader,
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
            header_v,
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
        // Only building needs it: programs already built load the runtime
        // library by its SONAME / DLL name, so this is a warning.
        let mut f = Finding::new(
            FindingId::MissingLinkLibrary,
            Severity::Warning,
            format!("{} lacks {link}", t.lib_dir()),
        )
        .seen(format!("missing from {}: {link}", t.lib_dir()))
        .why(format!("Building with -lcudnn (or linking cudnn.lib) fails: \"{err}\". Programs already built are not affected: they load cuDNN by its runtime name."));
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
                None,
            ),
        };
        out.push(f);
    }
}

/// The commands that put a whole release into toolkit `t` when cudnnm did
/// not deploy there: the release its own files say (headers, versioned
/// library names), `cudnnm use` when it is installed, else the catalog's
/// install command first; by major when nothing says more. `None` when
/// neither the store nor the catalog has a match (the fix then says it in words).
fn fill_in(cx: &Cx, t: &ToolkitInfo, major: Option<u32>) -> Option<Vec<String>> {
    let m = major?;
    let version =
        cx.s.files_in_root(&t.root)
            .filter_map(|f| cx.s.own_library_version(f))
            .map(|k| k.version)
            .chain(cx.s.header_version(&t.root).map(|k| k.version))
            .find(|v| v.major() == m && v.parts().len() >= 3)
            .map(|v| v.triple())
            .unwrap_or_else(|| Version::from_parts(&[m]));
    let spec = crate::version::Spec::prefix(version, None);
    let fits = |id: &crate::version::ReleaseId| {
        t.cuda
            .as_ref()
            .is_none_or(|c| id.cuda.fits(c.major(), c.minor()))
    };
    if let Some(id) = cx.newest_installed(|id| spec.matches(&id.version, &id.cuda) && fits(id)) {
        return Some(vec![
            crate::command::CommandLine::use_(id.to_string())
                .cuda_root(&t.root)
                .for_host(cx.w),
        ]);
    }
    cx.install_and_use(&spec, None, Some(t))
        .map(|(_, cmds)| cmds)
}

/// True when `f` sits directly in the toolkit's `lib` (not `lib\x64`).
fn is_lib_root(cx: &Cx, t: &ToolkitInfo, f: &CudnnFile) -> bool {
    spath::relative(&cx.dir(&f.path), &t.root, cx.w).is_some_and(|r| r.eq_ignore_ascii_case("lib"))
}

/// `lib-not-in-x64` (`docs/breakages.md#lib-not-in-x64`) and `file-in-wrong-folder`
/// (`docs/breakages.md#archive-layout-changed-8-3`).
pub(super) fn toolkit_folders(cx: &Cx, t: &ToolkitInfo, out: &mut Vec<Finding>) {
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
            Finding::new(FindingId::LibNotInX64, Severity::Error, format!("cuDNN import libraries are in {lib}, not {x64}"))
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
        FindingId::FileInWrongFolder,
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
pub(super) fn runtime_sets(cx: &Cx, out: &mut Vec<Finding>) {
    let w = cx.w;
    for root in cx.s.roots() {
        if cx.s.toolkit_of(&root).is_some() {
            continue;
        }
        let libs: Vec<(&CudnnFile, names::NameInfo)> = cx
            .shared()
            .filter(|(f, n)| cx.s.same_place(&f.root, &root) && !n.dev_link)
            .collect();
        let majors: BTreeSet<u32> = libs
            .iter()
            .filter(|(_, n)| n.is_main())
            .filter(|(f, n)| n.major.is_none_or(|m| super::content_of(f, m).is_none()))
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
                (None, Some(v)) => format!("Copy the complete set of cuDNN {v} next to it. {}", checks::look_for(&format!("cuDNN {v}"))),
                (None, None) => "Copy the complete set of the same release next to it, or install a whole release with cudnnm (`cudnnm list --remote`) and activate it from there.".to_string(),
            };
            let mut fd =
                Finding::new(FindingId::MissingLibrary, Severity::Error, format!("the cuDNN {m} copy in {root} lacks {}", missing.join(", ")))
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

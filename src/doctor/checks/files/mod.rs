//! The files of each installation: complete sets, right folders, soname
//! chains, header against library, CUDA fit, architecture, deployments.
//!
//! Here: architecture, load failures, soname chains, header against
//! library. `sets.rs`: complete sets in the right folders; `cuda_fit.rs`:
//! builds against their toolkit's CUDA; `deployments.rs`: what cudnnm
//! deployed and stored.

mod cuda_fit;
mod deployments;
pub(in crate::doctor::checks) use cuda_fit::cuda_of_library;
mod sets;

use std::collections::BTreeSet;

use self::deployments::{deployed_release, redeploy_command};
use super::Cx;
use crate::command::CommandLine;
use crate::doctor::FindingId;
use crate::doctor::finding::{AutoFix, Finding, Severity};
use crate::doctor::snapshot::{CudnnFile, InstallKind};
use crate::doctor::spath;
use crate::names;
use crate::quote::sh_quote;
use crate::version::{Spec, Version};

pub(super) fn check(cx: &Cx, out: &mut Vec<Finding>) {
    architecture(cx, out);
    lying_names(cx, out);
    access(cx, out);
    load_failures(cx, out);
    for t in &cx.s.toolkits {
        sets::toolkit_set(cx, t, out);
        sets::toolkit_folders(cx, t, out);
    }
    sets::runtime_sets(cx, out);
    soname_chains(cx, out);
    header_vs_library(cx, out);
    cuda_fit::cuda_fit(cx, out);
    deployments::deployments(cx, out);
    deployments::store_damage(cx, out);
}

/// `wrong-architecture`: libraries built for another machine than this OS;
/// one finding per folder and machine (a whole set copied from another
/// platform is one cause).
fn architecture(cx: &Cx, out: &mut Vec<Finding>) {
    let arch = &cx.s.os.arch;
    if arch.is_empty() {
        return;
    }
    let mut seen = BTreeSet::new();
    // (folder, machine) → the files, first seen first.
    let mut groups: Vec<(String, String, Vec<&CudnnFile>)> = Vec::new();
    for (f, _) in cx.shared() {
        let Some(m) = &f.machine else { continue };
        if m == arch || !seen.insert(f.real_path.clone().unwrap_or_else(|| f.path.clone())) {
            continue;
        }
        let dir = cx.dir(&f.path);
        match groups
            .iter_mut()
            .find(|(d, gm, _)| gm == m && cx.s.same_place(d, &dir))
        {
            Some((_, _, v)) => v.push(f),
            None => groups.push((dir, m.clone(), vec![f])),
        }
    }
    for (dir, m, files) in groups {
        // The same release for this machine, when the catalog has it.
        let main = files
            .iter()
            .find(|f| names::classify(cx.name(&f.path)).is_some_and(|n| n.is_main()))
            .unwrap_or(&files[0]);
        let (release, cmds) = cx.release_of(main);
        let title = match files.as_slice() {
            [one] => format!(
                "{} is built for {m}, this system is {arch}",
                cx.name(&one.path)
            ),
            many => format!(
                "{} cuDNN libraries in {dir} are built for {m}, this system is {arch}",
                many.len()
            ),
        };
        let mut fd = Finding::new(FindingId::WrongArchitecture, Severity::Error, title)
            .seen_all(files.iter().map(|f| format!("{} ({m})", f.path)))
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

/// What a shared file's content says it is, against its cuDNN name.
pub(super) enum Content {
    /// cuDNN of another major: the content's version (or major) and how it is known.
    OtherMajor(String, &'static str),
    /// Not cuDNN: what it is instead, in words.
    NotCudnn(String),
}

/// Whether `f` (named as cuDNN major `named`) holds something else: its
/// SONAME, the version it answered when loaded, or its PE file version.
pub(super) fn content_of(f: &CudnnFile, named: u32) -> Option<Content> {
    let no_symbol = f
        .load_error
        .as_deref()
        .is_some_and(|e| e.contains("has no cudnnGetVersion"));
    // An empty file (a truncated copy or download) is no library at all.
    if f.size == 0 && !f.dangling && !f.unreadable && f.link_target.is_none() {
        return Some(Content::NotCudnn(
            "it is empty (0 bytes): a truncated copy or download".into(),
        ));
    }
    if let Some(sn) = &f.soname {
        match names::classify(sn) {
            Some(n) => {
                if let Some(m) = n.major.filter(|m| *m != named) {
                    return Some(Content::OtherMajor(
                        f.library_version
                            .as_ref()
                            .filter(|v| v.major() == m)
                            .map_or_else(|| format!("{m}"), ToString::to_string),
                        "its SONAME",
                    ));
                }
            }
            None => {
                let mut what = format!("its SONAME is {sn}");
                if no_symbol {
                    what.push_str(" and it has no cudnnGetVersion");
                }
                return Some(Content::NotCudnn(what));
            }
        }
    }
    if let Some(v) = f.library_version.as_ref().filter(|v| v.major() != named) {
        return Some(Content::OtherMajor(
            v.to_string(),
            "the version it reports when loaded",
        ));
    }
    if let Some(v) = f.file_version.as_ref().filter(|v| v.major() != named) {
        return Some(Content::OtherMajor(v.to_string(), "its file version"));
    }
    if no_symbol {
        return Some(Content::NotCudnn("it has no cudnnGetVersion".into()));
    }
    None
}

/// `library-renamed` and `not-a-cudnn-library`: a name that lies. A
/// `libcudnn.so.8` that is really cuDNN 9 (renamed to satisfy a program
/// built for 8), or a link under a cuDNN name to another library.
fn lying_names(cx: &Cx, out: &mut Vec<Finding>) {
    let mut seen = BTreeSet::new();
    let mut found: Vec<Finding> = Vec::new();
    for (f, n) in cx.shared() {
        let Some(named) = n.major.filter(|_| !n.dev_link) else {
            continue;
        };
        let Some(content) = content_of(f, named) else {
            continue;
        };
        if !seen.insert(f.path.clone()) {
            continue;
        }
        let name = cx.name(&f.path);
        let mut place = f.path.clone();
        if let Some(real) = f.real_path.as_ref().filter(|r| **r != f.path) {
            place = format!("{} -> {real}", f.path);
        }
        let remove = if cx.w {
            format!("del \"{}\"", f.path)
        } else {
            format!("rm {}", sh_quote(&f.path))
        };
        found.push(match content {
            Content::OtherMajor(v, how) => Finding::new(FindingId::LibraryRenamed, Severity::Error, format!("{name} is renamed: this file is cuDNN {v}"))
                .seen(place)
                .seen(format!("named for cuDNN {named}; {how} says cuDNN {v}"))
                .why(format!("cuDNN majors are not binary compatible: a program built for cuDNN {named} that loads this file gets cuDNN {v} under the old name and fails on missing or changed symbols (\"undefined symbol\", CUDNN_STATUS_VERSION_MISMATCH), or this file looks for cuDNN {v}'s sub-libraries, which a cuDNN {named} set does not have."))
                .fix(format!("Remove the renamed file and install the cuDNN {named} release the program needs (majors live side by side), or rebuild the program for cuDNN {v}."))
                .command(remove),
            Content::NotCudnn(what) => Finding::new(FindingId::NotACudnnLibrary, Severity::Error, format!("{name} is not a cuDNN library: {what}"))
                .seen(place)
                .seen(what.clone())
                .why(format!("A file named {name} is what a program loads for cuDNN {named}; this one is another library, so the program fails at its first cuDNN call (\"undefined symbol: cudnnCreate\") or loads the wrong code."))
                .fix(format!("Remove it and put the real cuDNN {named} library there (or nothing)."))
                .command(remove),
        });
    }
    // A set renamed together (every `…64_9.dll` to `…64_8.dll`) is one
    // cause: one finding per folder and release.
    for f in found {
        let dir = f
            .seen
            .first()
            .map(|p| cx.dir(p.split(" -> ").next().unwrap_or(p)));
        let this = |g: &Finding| {
            g.id == FindingId::LibraryRenamed
                && f.id == FindingId::LibraryRenamed
                && g.title.rsplit_once("this file is ").map(|x| x.1)
                    == f.title.rsplit_once("this file is ").map(|x| x.1)
                && g.seen
                    .first()
                    .map(|p| cx.dir(p.split(" -> ").next().unwrap_or(p)))
                    .zip(dir.clone())
                    .is_some_and(|(a, b)| cx.s.same_place(&a, &b))
        };
        match out.iter_mut().find(|g| this(g)) {
            Some(g) => {
                let n = g.commands.len() + 1;
                let v = g
                    .title
                    .rsplit_once("this file is cuDNN ")
                    .map_or("", |x| x.1)
                    .to_string();
                g.title = format!(
                    "{n} files in {} are renamed: they are cuDNN {v}",
                    dir.clone().unwrap_or_default()
                );
                g.seen
                    .splice(g.commands.len()..g.commands.len(), f.seen.first().cloned());
                g.commands.extend(f.commands);
            }
            None => out.push(f),
        }
    }
}

/// `library-unreadable` and `library-on-noexec-mount`: a library the loader
/// may not open or map, whatever its content. What the loader says (ld.so:
/// "cannot open shared object file: Permission denied" / "failed to map
/// segment from shared object"; LoadLibrary: error 5) and the real fix.
/// One finding per folder of unreadable files, one per `noexec` mount.
fn access(cx: &Cx, out: &mut Vec<Finding>) {
    let mut seen = BTreeSet::new();
    // The files themselves (links to them are the same file).
    let mut unreadable: Vec<(String, Vec<String>)> = Vec::new();
    let mut noexec: Vec<(String, Vec<String>)> = Vec::new();
    for (f, _) in cx.shared() {
        if !f.unreadable && f.noexec_mount.is_none() {
            continue;
        }
        let real = f.real_path.clone().unwrap_or_else(|| f.path.clone());
        if !seen.insert(real.clone()) {
            continue;
        }
        if f.unreadable {
            let dir = cx.dir(&real);
            match unreadable
                .iter_mut()
                .find(|(d, _)| cx.s.same_place(d, &dir))
            {
                Some((_, v)) => v.push(real.clone()),
                None => unreadable.push((dir, vec![real.clone()])),
            }
        }
        if let Some(mp) = &f.noexec_mount {
            match noexec.iter_mut().find(|(m, _)| m == mp) {
                Some((_, v)) => v.push(real.clone()),
                None => noexec.push((mp.clone(), vec![real.clone()])),
            }
        }
    }
    for (dir, files) in unreadable {
        let name = spath::file_name(&files[0], cx.w).to_string();
        let title = match files.len() {
            1 => format!("{name} is present but this user may not read it"),
            n => {
                format!("{n} cuDNN libraries in {dir} are present but this user may not read them")
            }
        };
        let fd = Finding::new(FindingId::LibraryUnreadable, Severity::Error, title)
            .seen_all(files.iter().cloned())
            .seen("opening it for reading: permission denied");
        let quoted: Vec<String> = files.iter().map(|f| sh_quote(f)).collect();
        out.push(if cx.w {
            let mut fd = fd.why("LoadLibrary fails with error 5, \"Access is denied\": the file's access control list gives this user no read and execute right. Its content may be fine; reinstalling does not change the ACL of a file cudnnm did not create.")
                .fix(format!("Give users read and execute rights on {} (an administrator can), or copy cuDNN to a folder you own.", files.join(", ")));
            for f in &files {
                fd = fd.command(format!("icacls \"{f}\" /grant \"%USERNAME%:RX\""));
            }
            fd
        } else {
            fd.why(format!("The loader stops with \"{name}: cannot open shared object file: Permission denied\": the file's mode, owner or ACL (or a folder on its way without the x bit) denies this user. Its content may be fine; this is not a damaged copy to reinstall."))
                .fix("Let every user read it (its owner or root can): `chmod a+r` on the file and `a+x` on its folders; `ls -l` and `getfacl` show who may read it.")
                .command(format!("chmod a+r {}", quoted.join(" ")))
        });
    }
    for (mp, files) in noexec {
        let name = spath::file_name(&files[0], cx.w).to_string();
        let title = match files.len() {
            1 => format!("{name} is on {mp}, mounted noexec"),
            n => format!("{n} cuDNN libraries are on {mp}, mounted noexec"),
        };
        out.push(
            Finding::new(FindingId::LibraryOnNoexecMount, Severity::Error, title)
                .seen_all(files.iter().cloned())
                .seen(format!("mount options of {mp}: noexec"))
                .why(format!("The loader may not map code from a noexec file system: it stops with \"{name}: failed to map segment from shared object\" (\"Operation not permitted\"). The file itself is fine."))
                .fix(format!("Remount {mp} without noexec (and drop noexec from its line in /etc/fstab so it stays so), or keep cuDNN on another file system."))
                .command(format!("sudo mount -o remount,exec {}", sh_quote(&mp))),
        );
    }
}

/// `library-load-failed`: the library could not be loaded; the loader's message says why.
/// Not for a library the loader may not open or map ([`access`] explains those).
fn load_failures(cx: &Cx, out: &mut Vec<Finding>) {
    let mut seen = BTreeSet::new();
    for (f, _) in cx.shared() {
        let Some(e) = &f.load_error else { continue };
        // Its own access, or a dependency's that the message names, is explained by `access`.
        let blocked = cx
            .shared()
            .filter(|(g, _)| g.unreadable || g.noexec_mount.is_some())
            .any(|(g, _)| std::ptr::eq(g, f) || e.contains(cx.name(&g.path)));
        // Or a sibling in its folder that is no library at all (empty, or
        // another library under a cuDNN name): `lying_names` reports that file.
        let dir = cx.dir(&f.path);
        let broken_sibling = cx.shared().any(|(g, gn)| {
            cx.s.same_place(&cx.dir(&g.path), &dir)
                && gn
                    .major
                    .is_some_and(|m| matches!(content_of(g, m), Some(Content::NotCudnn(_))))
        });
        if blocked || broken_sibling {
            continue;
        }
        // A name that lies is explained by `lying_names`.
        let named = names::classify(cx.name(&f.path)).and_then(|n| n.major);
        if named.is_some_and(|m| content_of(f, m).is_some()) {
            continue;
        }
        if !seen.insert(f.real_path.clone().unwrap_or_else(|| f.path.clone())) {
            continue;
        }
        // One finding per folder: a set that does not load is one cause.
        let dir = cx.dir(&f.path);
        if let Some(g) = out.iter_mut().find(|g| {
            g.id == FindingId::LibraryLoadFailed
                && g.seen
                    .first()
                    .is_some_and(|p| cx.s.same_place(&cx.dir(p), &dir))
        }) {
            let n = g.seen.len() / 2 + 1;
            g.title = format!("{n} cuDNN libraries in {dir} are present but do not load");
            g.seen.push(f.path.clone());
            g.seen.push(format!("loader: {e}"));
            continue;
        }
        out.push(
            Finding::new(FindingId::LibraryLoadFailed, Severity::Error, format!("{} is present but does not load", cx.name(&f.path)))
                .seen(f.path.clone())
                .seen(format!("loader: {e}"))
                .why("A present file is not a loadable file: programs that use it fail with the same message.")
                .fix("Install what the message names (a dependency such as zlib or cuDNN's CUDA libraries), or replace a damaged copy (`cudnnm verify` checks cudnnm's own)."),
        );
    }
}

/// `broken-soname-chain` (`docs/breakages.md#soname-link-copied-as-file`):
/// `libcudnn.so.8` a regular file beside its real `libcudnn.so.8.x.y`, a copied
/// development link, or a dangling link.
fn soname_chains(cx: &Cx, out: &mut Vec<Finding>) {
    if cx.w {
        return;
    }
    let libs: Vec<(&CudnnFile, names::NameInfo)> = cx.shared().collect();
    missing_sonames(cx, &libs, out);
    for (f, n) in &libs {
        let dir = cx.dir(&f.path);
        let name = cx.name(&f.path);
        if f.dangling {
            // A link to a link that is itself dangling: one cause, reported at
            // the end of the chain.
            let target_dangles = f.link_target.as_deref().is_some_and(|t| {
                let tp = spath::join(&dir, t, false);
                cx.s.file(&tp).is_some_and(|g| g.dangling)
            });
            if target_dangles {
                continue;
            }
            let target = f.link_target.as_deref().unwrap_or("?");
            let mut finding = Finding::new(FindingId::BrokenSonameChain, Severity::Error, format!("{name} is a link to a file that does not exist"))
                .seen(format!("{} -> {target} (missing)", f.path))
                .why(format!("Loading by this name fails: \"{name}: cannot open shared object file: No such file or directory\"."));
            // A link cudnnm placed into a store release that is gone
            // (uninstalled, perhaps from the system store by an administrator).
            let gone = crate::store::release_in_store_path(&spath::join(&dir, target, false));
            finding = match gone {
                Some((store, id)) => {
                    let toolkit = cx.s.toolkits.iter().find(|t| cx.s.within(&f.path, &t.root));
                    // An installed release that fits the toolkit (else the same CUDA build).
                    let installed = cx.newest_installed(|i| match toolkit.and_then(|t| t.cuda.as_ref()) {
                        Some(c) => i.cuda.fits(c.major(), c.minor()),
                        None => i.cuda == id.cuda,
                    });
                    let cmds = match (installed, toolkit) {
                        (Some(i), Some(t)) => vec![CommandLine::use_(i.to_string()).cuda_root(&t.root).for_host(false)],
                        _ => cx
                            .install_and_use(&Spec::prefix(id.version.clone(), Some(id.cuda)), None, toolkit)
                            .map(|(_, c)| c)
                            .unwrap_or_default(),
                    };
                    cmds.into_iter().fold(
                        finding
                            .seen(format!("the link points into the cudnnm store '{store}', which no longer holds cuDNN {id} (it was uninstalled; a system store's release is removed by its administrator)"))
                            .fix(format!("Deploy a release that is installed into this toolkit, or install cuDNN {id} again and deploy it.")),
                        Finding::command,
                    )
                }
                None => finding.fix("Recreate the chain `libX.so -> libX.so.M -> libX.so.M.m.p` from the release's files (cp -P keeps links), or redeploy with cudnnm."),
            };
            out.push(finding);
            continue;
        }
        if f.link_target.is_some() {
            continue;
        }
        // A regular libX.so.M next to a regular libX.so.M.m.p, or a regular
        // libX.so next to libX.so.M.
        if n.major.is_none() && !n.dev_link {
            continue;
        }
        let candidates = libs.iter().filter(|(g, gn)| {
            gn.stem == n.stem
                && (n.dev_link || gn.major == n.major)
                && cx.s.same_place(&cx.dir(&g.path), &dir)
                && !cx.s.same_place(&g.path, &f.path)
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
        let mut fd = Finding::new(FindingId::BrokenSonameChain, sev, format!("{name} is a copy, not a link to {tname}"))
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

/// `soname-link-missing`: a real `libX.so.M.m.p` whose folder has no
/// `libX.so.M` (the name in its `DT_SONAME`, which every program and every
/// other cuDNN library asks the loader for). The fix never touches a
/// package manager's files: for a system package, `ldconfig` (which makes
/// the soname links of the trusted folders); for a cudnnm deployment, a
/// redeploy; otherwise the `ln -s` that makes the link, which `--fix` makes
/// in a folder of the user's own (a toolkit or a manual copy, not a package
/// manager's or the store) unless the toolkit is known not to be writable.
fn missing_sonames(cx: &Cx, libs: &[(&CudnnFile, names::NameInfo)], out: &mut Vec<Finding>) {
    for (f, n) in libs {
        let (Some(m), Some(_)) = (n.major, &n.full_version) else {
            continue;
        };
        if f.dangling || n.dev_link {
            continue;
        }
        let dir = cx.dir(&f.path);
        let soname = f
            .soname
            .clone()
            .filter(|s| names::classify(s).is_some_and(|sn| sn.stem == n.stem))
            .unwrap_or_else(|| names::soname(&n.stem, m));
        if cx.s.has(&dir, &soname) {
            continue;
        }
        let name = cx.name(&f.path);
        let link = spath::join(&dir, &soname, false);
        let mut fd = Finding::new(
            FindingId::SonameLinkMissing,
            Severity::Error,
            format!("{dir} has {name} but no {soname}"),
        )
        .seen(format!("{} ({} bytes; its SONAME is {soname})", f.path, f.size))
        .seen(format!("{link}: missing"))
        .why(format!("Programs and the other cuDNN libraries ask the loader for {soname}, never for {name}: dlopen(\"{soname}\") fails with \"{soname}: cannot open shared object file: No such file or directory\" although the library is there (copying a release without its links, or unpacking it with a tool that drops links, does this)."));
        let deployed =
            cx.s.deployments
                .iter()
                .find(|d| cx.s.within(&f.path, &d.toolkit));
        fd = if let Some(d) = deployed {
            fd.fix(format!(
                "Deploy {} into {} again: cudnnm puts the whole chain back.",
                d.release, d.toolkit
            ))
            .command(redeploy_command(cx, &d.toolkit, &d.release))
        } else if f.origin == InstallKind::System {
            fd.fix(format!("This folder belongs to the system's packages: do not add files by hand; `ldconfig` makes the soname links of the trusted folders (or reinstall the package that owns {name})."))
                .command("sudo ldconfig".to_string())
                .held_back("the folder belongs to the system's packages, whose links `ldconfig` makes")
        } else {
            let fd = fd
                .fix(format!(
                    "Make the link beside the file ({soname} -> {name}); `cudnnm doctor --fix` does it where this user may write, and `--undo-fix` removes it again."
                ))
                .command(format!("ln -s {} {}", sh_quote(name), sh_quote(&link)));
            // A toolkit this user may not change: the command is for
            // someone who may (checked again when the fix runs, for any folder).
            let locked =
                cx.s.toolkits
                    .iter()
                    .any(|t| t.writable == Some(false) && cx.s.within(&f.path, &t.root));
            // Only folders nobody else manages: a package manager's (conda,
            // pip) or cudnnm's store is changed through its own tool.
            let own_folder = matches!(f.origin, InstallKind::Toolkit | InstallKind::Other);
            if locked {
                fd.held_back(format!("'{dir}' is not writable by this user"))
            } else if own_folder && f.link_target.is_none() && !soname.contains('/') {
                fd.auto(AutoFix::MakeSonameLink {
                    dir: dir.clone(),
                    link: soname.clone(),
                    target: name.to_string(),
                })
            } else {
                fd
            }
        };
        out.push(fd);
    }
}

/// `header-library-mismatch` (`docs/breakages.md#header-library-mismatch`): per installation, the
/// headers' version against the main library's.
fn header_vs_library(cx: &Cx, out: &mut Vec<Finding>) {
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
        // A versioned file no loader name leads to (a leftover) is never loaded.
        let reached = |f: &CudnnFile, n: &names::NameInfo| {
            n.full_version.is_none()
                || cx.shared().any(|(g, gn)| {
                    gn.full_version.is_none()
                        && !gn.dev_link
                        && g.real_path.as_deref().is_some_and(|r| {
                            cx.s.same_place(r, f.real_path.as_deref().unwrap_or(&f.path))
                        })
                })
        };
        let libs: Vec<(&CudnnFile, names::NameInfo)> = cx
            .shared()
            .filter(|(f, n)| cx.s.same_place(&f.root, &root) && n.is_main() && !n.dev_link)
            .filter(|(f, n)| reached(f, n))
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
            FindingId::HeaderLibraryMismatch,
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
                    release: r.to_string(),
                });
        }
        out.push(f);
    }
}

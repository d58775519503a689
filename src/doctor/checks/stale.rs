//! Stale state: what still points at a release or folder that is gone.
//! `ld-cache-stale` (ld.so cache entries whose file was removed),
//! `stale-activation` (loader and compiler variables, loaded environment
//! modules and the home's `current/` links into removed folders), and
//! `lock-toolkit-mismatch` (the project's lock records a build for another
//! CUDA than the toolkit in use).

use super::Cx;
use crate::command::CommandLine;
use crate::doctor::FindingId;
use crate::doctor::finding::{Finding, Severity};
use crate::doctor::snapshot::LoadedModule;
use crate::names;
use crate::quote::sh_quote;

pub(super) fn check(cx: &Cx, out: &mut Vec<Finding>) {
    ld_cache(cx, out);
    let in_modules = modules(cx, out);
    let in_links = current_links(cx, out);
    variables(cx, &in_modules, &in_links, out);
    lock(cx, out);
}

/// `ld-cache-stale`: ld.so cache entries for cuDNN whose file is gone. ld.so
/// opens the file the cache names and, when it is missing, goes on to the
/// trusted folders (elf/dl-load.c); `ldconfig -p` keeps listing them until
/// the cache is rebuilt. One finding for every such entry.
fn ld_cache(cx: &Cx, out: &mut Vec<Finding>) {
    // The names programs and libraries ask for (not the development
    // links), the main library first.
    let mut gone: Vec<_> =
        cx.s.ld_cache
            .iter()
            .filter(|e| e.gone)
            .filter(|e| names::classify(&e.name).is_some_and(|n| !n.dev_link))
            .collect();
    gone.sort_by_key(|e| !names::classify(&e.name).is_some_and(|n| n.is_main()));
    if gone.is_empty() {
        return;
    }
    let mut f = Finding::new(
        FindingId::LdCacheStale,
        Severity::Warning,
        format!(
            "the ld.so cache lists {} cuDNN librar{} whose file is gone",
            gone.len(),
            if gone.len() == 1 { "y" } else { "ies" }
        ),
    );
    for e in &gone {
        let now = match cx.hits(&e.name).into_iter().next() {
            Some(h) => format!("the loader now takes {}", cx.describe(&h.path)),
            None => "no other copy is found".to_string(),
        };
        f = f.seen(format!("{} => {} (gone); {now}", e.name, e.path));
    }
    out.push(
        f.why("The cache (/etc/ld.so.cache) was built while those files were there; they were removed since (a package or an archive copy taken away without ldconfig). ld.so skips an entry whose file it cannot open and goes on to /lib and /usr/lib, so programs get another cuDNN or none, and `ldconfig -p` still lists the old one.")
            .fix("Rebuild the cache.")
            .command("sudo ldconfig"),
    );
}

/// True for a folder whose staleness concerns cuDNN: a cudnnm store or
/// `current/` path, a CUDA or cuDNN folder by name, or named by a cuDNN
/// variable.
fn concerns_cudnn(dir: &str, var: &str) -> bool {
    let l = dir.to_ascii_lowercase();
    var.to_ascii_uppercase().starts_with("CUDNN") || l.contains("cudnn") || l.contains("cuda")
}

/// `stale-activation` for loaded environment modules whose file or folders
/// are gone; returns the folders so reported (one cause, one finding).
fn modules(cx: &Cx, out: &mut Vec<Finding>) -> Vec<String> {
    let mut covered = Vec::new();
    let stale: Vec<(&LoadedModule, Vec<&String>)> =
        cx.s.modules
            .iter()
            .map(|m| {
                let gone: Vec<&String> = m
                    .folders
                    .iter()
                    .filter(|d| cx.s.folder_missing(d))
                    .collect();
                (m, gone)
            })
            .filter(|(m, gone)| m.file_gone || !gone.is_empty())
            .collect();
    for (m, gone) in stale {
        covered.extend(m.folders.iter().cloned());
        let mut f = Finding::new(
            FindingId::StaleActivation,
            Severity::Warning,
            format!("the loaded module {} points into a removed release", m.name),
        );
        if m.file_gone {
            f = f.seen(format!(
                "its modulefile {} is gone",
                m.file.as_deref().unwrap_or("?")
            ));
        }
        for d in gone {
            f = f.seen(format!("it set {d}, which is gone"));
        }
        out.push(
            f.why("The module was loaded before its release was removed (uninstalled, or the modulefiles regenerated): the shell still carries the folders it put on LD_LIBRARY_PATH, CPATH and CUDNN_PATH, which the loader and the compiler skip, so programs quietly take another cuDNN or none.")
                .fix("Unload it, then load a cuDNN module that is installed (`module avail cudnn`).")
                .command(format!("module unload {}", m.name)),
        );
    }
    covered
}

/// `stale-activation` for the home's `current/cuda-<variant>` links whose
/// release is gone; returns the links so reported. When the default itself
/// names a release that is not installed, `pin-not-installed` says so.
fn current_links(cx: &Cx, out: &mut Vec<Finding>) -> Vec<String> {
    let gone: Vec<_> = cx.s.current_links.iter().filter(|l| l.gone).collect();
    if gone.is_empty() {
        return Vec::new();
    }
    // The default itself names a release that is gone: `pin-not-installed`
    // reports that cause, these links with it.
    let default_gone = cx.s.pin.as_ref().is_some_and(|p| {
        p.source.starts_with("default")
            && p.spec
                .parse::<crate::version::Spec>()
                .is_ok_and(|sp| !cx.installed().any(|id| sp.matches(&id.version, &id.cuda)))
    });
    if default_gone {
        return gone.iter().map(|l| l.path.clone()).collect();
    }
    let newest = cx.newest_installed(|_| true);
    let mut f = Finding::new(
        FindingId::StaleActivation,
        Severity::Warning,
        format!(
            "{} of the home's stable links lead{} to a release that is gone",
            gone.len(),
            if gone.len() == 1 { "s" } else { "" }
        ),
    );
    for l in &gone {
        f = f.seen(format!(
            "{} -> {} (gone)",
            l.path,
            l.target.as_deref().unwrap_or("?")
        ));
    }
    f = f.why("`cudnnm default` points current/cuda-<variant> at the default release, and a loader path that names that link (the one-time setup) follows it; the release was removed since (an administrator's `uninstall --system`, or `uninstall --force`), so programs using the link find no cuDNN.");
    f = match &newest {
        Some(id) => f
            .fix(format!("Make an installed release the default again (it re-points the link): {id} is the newest installed."))
            .command(CommandLine::default_(id.to_string()).for_host(cx.w)),
        None => f
            .fix("Install a release and make it the default, or remove the link with `cudnnm default none`.")
            .command("cudnnm default none"),
    };
    out.push(f);
    gone.iter().map(|l| l.path.clone()).collect()
}

/// `stale-activation` for variable entries that point into removed
/// folders: `LD_LIBRARY_PATH` (or `PATH` on Windows), the compiler's
/// `CPATH`, `C_INCLUDE_PATH`, `CPLUS_INCLUDE_PATH`, `LIBRARY_PATH`,
/// `INCLUDE`, `LIB`, and `CUDNN_PATH`, `CUDNN_HOME`, `CUDNN_INCLUDE_DIR`,
/// `CUDNN_LIBRARY_DIR` — those that concern cuDNN and are not a stale
/// module's or link's.
fn variables(cx: &Cx, modules: &[String], links: &[String], out: &mut Vec<Finding>) {
    let mut entries: Vec<(String, String)> = Vec::new();
    let loader: (&str, &[String]) = if cx.w {
        ("PATH", &cx.s.path)
    } else {
        ("LD_LIBRARY_PATH", &cx.s.ld_library_path)
    };
    for (i, d) in loader.1.iter().enumerate() {
        entries.push((format!("{} entry {}", loader.0, i + 1), d.clone()));
    }
    let sep = if cx.w { ';' } else { ':' };
    for var in crate::doctor::probe_vars() {
        if let Some(v) = cx.s.var(var) {
            for (i, d) in v.split(sep).filter(|d| !d.is_empty()).enumerate() {
                let label = if v.contains(sep) {
                    format!("{var} entry {}", i + 1)
                } else {
                    var.to_string()
                };
                entries.push((label, d.to_string()));
            }
        }
    }
    let stale: Vec<&(String, String)> = entries
        .iter()
        .filter(|(label, d)| cx.s.folder_missing(d) && concerns_cudnn(d, label))
        .filter(|(_, d)| !modules.iter().any(|m| cx.s.same_place(m, d)))
        .filter(|(_, d)| !links.iter().any(|l| cx.s.within(d, l)))
        .collect();
    if stale.is_empty() {
        return;
    }
    let cudnnm = stale.iter().any(|(_, d)| {
        d.contains("/store/cuda-") || d.contains("/current/cuda-") || d.contains("\\store\\cuda-")
    });
    // A removed cuDNN is what programs miss; a CUDA folder that is gone
    // (an optional one such as CUPTI's, a toolkit upgraded since) is worth
    // knowing, not a warning.
    let cudnn = cudnnm
        || stale.iter().any(|(label, d)| {
            label.to_ascii_uppercase().starts_with("CUDNN")
                || d.to_ascii_lowercase().contains("cudnn")
        });
    let mut f = Finding::new(
        FindingId::StaleActivation,
        if cudnn {
            Severity::Warning
        } else {
            Severity::Info
        },
        format!(
            "{} loader or compiler path entr{} point{} into removed folders",
            stale.len(),
            if stale.len() == 1 { "y" } else { "ies" },
            if stale.len() == 1 { "s" } else { "" }
        ),
    );
    for (label, d) in &stale {
        f = f.seen(format!("{label}: {d} (gone)"));
    }
    f = f.why("The release, toolkit or environment these entries name was removed after they were set (an uninstall, a toolkit upgrade, a deleted environment). The loader and the compiler skip a missing folder, so programs quietly take whatever comes next — another cuDNN, or none — while the shell looks set up for the removed one.");
    f = if cudnnm {
        f.fix("Activate an installed release again (cudnnm replaces its own entries), and drop the others from your shell profile.")
            .command(if cx.w {
                "cudnnm env --shell powershell | Invoke-Expression".to_string()
            } else {
                "eval \"$(cudnnm env --shell bash)\"".to_string()
            })
    } else {
        let keep: Vec<&str> = loader
            .1
            .iter()
            .map(String::as_str)
            .filter(|d| !cx.s.folder_missing(d))
            .collect();
        let f =
            f.fix("Remove the entries from the shell profile or activation script that sets them.");
        if !cx.w && stale.iter().any(|(l, _)| l.starts_with("LD_LIBRARY_PATH")) {
            f.command(format!(
                "export LD_LIBRARY_PATH={}",
                sh_quote(&keep.join(":"))
            ))
        } else {
            f
        }
    };
    out.push(f);
}

/// `lock-toolkit-mismatch`: `cudnnm install` installs exactly the build the
/// lock records; one for another CUDA than the toolkit in use does not run
/// with it. Left to `pin-toolkit-mismatch` when the pin itself names that
/// build.
fn lock(cx: &Cx, out: &mut Vec<Finding>) {
    let Some(l) = &cx.s.lock else { return };
    let Some(tk) = cx.toolkit_in_use() else {
        return;
    };
    let Some(c) = &tk.cuda else { return };
    if l.release.cuda.fits(c.major(), c.minor()) {
        return;
    }
    let pin_says =
        cx.s.pin
            .as_ref()
            .and_then(|p| p.spec.parse::<crate::version::Spec>().ok())
            .and_then(|sp| sp.cuda)
            .is_some_and(|v| v == l.release.cuda);
    if pin_says {
        return;
    }
    let id = &l.release;
    let repin = format!(
        "{}.{}_cuda{}",
        id.version.major(),
        id.version.minor(),
        if c.major() >= 11 {
            c.major().to_string()
        } else {
            format!("{}.{}", c.major(), c.minor())
        }
    );
    out.push(
        Finding::new(
            FindingId::LockToolkitMismatch,
            Severity::Warning,
            format!(
                "the project's lock records {id}, a build for CUDA {}; the toolkit in use is CUDA {}.{}",
                id.cuda,
                c.major(),
                c.minor()
            ),
        )
        .seen(format!("{}: release {id}", l.path))
        .seen(format!("toolkit in use: {} (CUDA {c}, {})", tk.root, tk.found_by))
        .why(format!("A bare `cudnnm install` in this project installs exactly the locked build, and a cuDNN build runs only with the CUDA it was built for (the same major from CUDA 11 on): with the CUDA {}.{} runtime it fails to load its CUDA libraries or stops at its first call.", c.major(), c.minor()))
        .fix(format!("Lock a build for this toolkit's CUDA (pin the release with `_cuda{}` and lock again), or use a CUDA {} toolkit for this project.", c.major(), id.cuda))
        .command(format!("cudnnm pin {repin}"))
        .command("cudnnm lock"),
    );
}

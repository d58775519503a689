//! What a present library needs: `dependency-unresolved` (a DT_NEEDED or
//! PE import the loader does not find) and `zlibwapi-missing`.

use std::collections::BTreeSet;

use crate::doctor::FindingId;
use crate::doctor::checks::Cx;
use crate::doctor::finding::{Finding, Severity};
use crate::doctor::loader;
use crate::doctor::spath;
use crate::names;

/// `dependency-unresolved` (`docs/breakages.md#dependency-unresolved`): a
/// present library whose imports (`DT_NEEDED`, PE import table) do not resolve
/// in the loader's search. One finding per missing library, naming every
/// cuDNN library that needs it. A CUDA library of another major than the
/// toolkit (`cublasLt64_11.dll` beside CUDA 12) is the build mismatch's
/// news (`cudnn-cuda-mismatch` names it), not a finding of its own.
pub(super) fn dependencies(cx: &Cx, out: &mut Vec<Finding>) {
    let mut done = BTreeSet::new();
    // Missing name → (the libraries that need it, the first loader path seen).
    let mut missing: Vec<(String, Vec<String>, String)> = Vec::new();
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
        let cuda =
            cx.s.toolkit_of(&f.path)
                .or_else(|| cx.toolkit_in_use())
                .and_then(|t| t.cuda.clone());
        for d in f
            .needed
            .iter()
            .filter(|d| !loader::is_virtual(cx.s, d))
            .filter(|d| !(is_driver_library(d) && cx.s.driver.is_none()))
            .filter(|d| {
                // Another CUDA's library: the build mismatch explains it.
                super::super::files::cuda_of_library(d)
                    .zip(cuda.as_ref())
                    .is_none_or(|((ma, _), c)| ma == c.major())
            })
            .filter(|d| loader::find_for(cx.s, d, f).is_empty())
        {
            match missing
                .iter_mut()
                .find(|(n, _, _)| spath::name_eq(n, d, cx.w))
            {
                Some((_, libs, _)) => libs.push(cx.name(&f.path).to_string()),
                None => missing.push((
                    d.clone(),
                    vec![cx.name(&f.path).to_string()],
                    h.path.clone(),
                )),
            }
        }
    }
    for (dep, libs, first) in missing {
        let mut fd = Finding::new(
            FindingId::DependencyUnresolved,
            Severity::Error,
            if libs.len() == 1 {
                format!("{} is present but cannot load: {dep} is not found", libs[0])
            } else {
                format!(
                    "{} cuDNN libraries are present but cannot load: {dep} is not found",
                    libs.len()
                )
            },
        )
        .seen(first);
        fd = fd.seen(format!(
            "needed by {}: not in the loader's search folders",
            libs.join(", ")
        ));
        let hint = dependency_hint(&dep);
        out.push(
            fd.why(if cx.w {
                format!("A DLL loads only when every DLL it imports loads: \"Could not load library {}. Error code 126\" (\"The specified module could not be found\") names the cuDNN file, not the missing {dep} (whisper-ctranslate2#41).", libs[0])
            } else {
                format!("\"{}: {dep}: cannot open shared object file: No such file or directory\".", libs[0])
            })
            .fix(hint),
        );
    }
}

/// The machine type of the library at `path`: a cuDNN file's own record,
/// else the folder listing's.
fn machine_at<'a>(cx: &Cx<'a>, path: &str) -> Option<&'a str> {
    if let Some(f) = cx.s.file(path) {
        return cx.s.resolve(f).machine.as_deref();
    }
    let dir = spath::parent(path, cx.w)?;
    let name = spath::file_name(path, cx.w);
    cx.s.dirs
        .iter()
        .filter(|d| cx.s.same_place(&d.path, &dir))
        .find_map(|d| {
            d.machines
                .iter()
                .find(|(n, _)| spath::name_eq(n, name, cx.w))
                .map(|(_, m)| m.as_str())
        })
}

/// `dependency-wrong-architecture`: every library a loadable cuDNN file
/// imports, as the loader resolves it, must be built for the same machine.
/// Windows takes the first `zlibwapi.dll` it finds and fails with error 193
/// when it is 32-bit; ld.so skips a library of the wrong ELF class and goes
/// on searching, so on Linux only a search with no right copy fails.
pub(super) fn machine_types(cx: &Cx, out: &mut Vec<Finding>) {
    let mut done = BTreeSet::new();
    for (_, _, name) in cx.loader_names() {
        for h in cx.hits(&name) {
            let Some(f) = cx.s.file(&h.path) else {
                continue;
            };
            let f = cx.s.resolve(f);
            let Some(own) = f.machine.as_deref() else {
                continue;
            };
            for d in f.needed.iter().filter(|d| !loader::is_virtual(cx.s, d)) {
                let hits = loader::find_for(cx.s, d, f);
                let typed: Vec<(&loader::Hit, &str)> = hits
                    .iter()
                    .filter_map(|x| Some((x, machine_at(cx, &x.path)?)))
                    .collect();
                let bad = if cx.w {
                    // The first copy found is the one loaded.
                    hits.first()
                        .and_then(|x| typed.iter().find(|(t, _)| t.path == x.path))
                        .filter(|(_, m)| *m != own)
                } else if !typed.is_empty() && typed.iter().all(|(_, m)| *m != own) {
                    typed.first()
                } else {
                    None
                };
                let Some((hit, m)) = bad else { continue };
                if !done.insert((spath::key(&hit.path, cx.w), own.to_string())) {
                    continue;
                }
                let lib = cx.name(&f.path);
                out.push(
                    Finding::new(FindingId::DependencyWrongArchitecture, Severity::Error, format!("{d}, which {lib} needs, is built for {m}; {lib} is {own}"))
                        .seen(format!("{} ({own})", f.path))
                        .seen(format!("{d} found first at {} ({m}), via {}", hit.path, hit.via))
                        .why(if cx.w {
                            format!("Windows loads the first {d} on the search path and will not map a {m} DLL into a {own} process: loading {lib} fails with error 193, \"%1 is not a valid Win32 application\" (or 126 naming {lib}).")
                        } else {
                            format!("ld.so skips a library of the wrong ELF class and finds no {own} {d}: \"{d}: wrong ELF class\" / \"cannot open shared object file\".")
                        })
                        .fix(format!("Replace {} with the {own} build of {d}, or put a folder holding the {own} build earlier on the {}.", hit.path, if cx.w { "PATH" } else { "loader path" })),
                );
            }
        }
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

/// `zlibwapi-missing`: cuDNN 8.3–8.9 and 9.0–9.1 on Windows load
/// `zlibwapi.dll` (`docs/system.md#zlib-on-windows`,
/// `docs/breakages.md#dll-load-failed-zlibwapi`).
pub(super) fn zlib(cx: &Cx, out: &mut Vec<Finding>) {
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
            Finding::new(FindingId::ZlibwapiMissing, Severity::Error, format!("cuDNN {v} needs zlibwapi.dll, which is not on the DLL search path"))
                .seen(cx.describe(&f.path))
                .seen("zlibwapi.dll: not in the DLL's folder, System32, the Windows folder, the working folder or PATH")
                .why("cuDNN 8.3 to 9.1 on Windows load zlib's WINAPI build at run time and stop with \"Could not locate zlibwapi.dll. Please make sure it is in your library path!\" (cupy#6226, darknet#8551). From 9.2 zlib is built in.")
                .fix(format!("Download zlib123dllx64.zip (http://www.winimage.com/zLibDll/zlib123dllx64.zip, SHA-256 fd324c6923aa4f45a60413665e0b68bb34a7779d0861849e02d2711ff8efb9a4) and copy dll_x64\\zlibwapi.dll into {dir}."))
                .command(format!("copy dll_x64\\zlibwapi.dll \"{dir}\\\"")),
        );
    }
}

//! The loader's search order, as data per OS, so that `doctor` can say which
//! copy of a library a program gets and why — for the object that asks.
//!
//! - Linux (ld.so(8); glibc `elf/dl-load.c`, `_dl_map_object`): a name
//!   already loaded (by its SONAME) is not searched again. Otherwise, when
//!   the requesting object has no `DT_RUNPATH`: the `DT_RPATH` of the
//!   requesting object, then of the object that loaded it, and so on up to
//!   the program; then `LD_LIBRARY_PATH` in order; then the requesting
//!   object's own `DT_RUNPATH` (never its loaders'); then the ld.so cache
//!   (an entry whose file is gone is skipped); then the trusted folders.
//!   `$ORIGIN` is the folder of the object that carries the entry.
//! - Windows (`LoadLibrary`, SafeDllSearchMode on): the application folder,
//!   `System32`, the Windows folder, the working folder, then `PATH` in
//!   order. For a DLL's own imports the DLL's folder is searched first, as
//!   Python 3.8+ and `LOAD_WITH_ALTERED_SEARCH_PATH` do; `os.add_dll_directory`
//!   folders (`docs/system.md#library-search`) are not modelled.
//!
//! [`process`] plays a whole cuDNN load through: the main library for a
//! consumer (a program, a framework's library with its RPATH), then each
//! sub-library the main library asks for by name — cuDNN 9 asks for its own
//! release first (`libcudnn_graph.so.9.27.0`, `…so.9.27`, then `…so.9`, as
//! glibc's `LD_DEBUG=libs` trace of a real load shows), with the main
//! library's own `DT_RPATH`/`DT_RUNPATH`. 9.27's main library carries
//! `DT_RPATH=$ORIGIN` (its own folder first); 9.12's carries
//! `DT_RUNPATH=$ORIGIN`, so `LD_LIBRARY_PATH` comes before its own folder.
//!
//! API-set names (`api-ms-win-core-*`, `ext-ms-*`) are virtual and always
//! resolve; `api-ms-win-crt-*` (the Universal C Runtime) resolve on Windows 10
//! and later, or when present in a system folder (`docs/system.md#windows-runtime`).

use std::fmt;

use serde::Serialize;

use super::snapshot::{CudnnFile, Snapshot};
use super::spath;
use crate::version::Version;

/// Why the loader looks in a folder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "via", content = "index", rename_all = "kebab-case")]
pub enum Via {
    /// `DT_RPATH` of the object named (the requesting library, one that
    /// loaded it, or the program).
    Rpath(String),
    /// `LD_LIBRARY_PATH`, entry number (0-based).
    LdLibraryPath(usize),
    /// `DT_RUNPATH` of the requesting object named.
    Runpath(String),
    /// The ld.so cache (`/etc/ld.so.cache`).
    LdCache,
    /// A trusted system folder (Linux) or `System32`/Windows folder.
    SystemDir,
    /// The application's folder (Windows).
    AppDir,
    /// The requesting DLL's own folder (Windows).
    DllDir,
    /// The working folder (Windows).
    Cwd,
    /// `PATH`, entry number (0-based).
    Path(usize),
    /// Already mapped in the process under that name: the loader does not
    /// search again.
    Loaded,
}

impl fmt::Display for Via {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Via::Rpath(of) => write!(f, "RPATH of {of}"),
            Via::LdLibraryPath(i) => write!(f, "LD_LIBRARY_PATH entry {}", i + 1),
            Via::Runpath(of) => write!(f, "RUNPATH of {of}"),
            Via::LdCache => f.write_str("ld.so cache"),
            Via::SystemDir => f.write_str("system folder"),
            Via::AppDir => f.write_str("application folder"),
            Via::DllDir => f.write_str("the DLL's own folder"),
            Via::Cwd => f.write_str("working folder"),
            Via::Path(i) => write!(f, "PATH entry {}", i + 1),
            Via::Loaded => f.write_str("already loaded"),
        }
    }
}

/// The folders ld.so searches for `LD_LIBRARY_PATH` set to `raw`, in order,
/// one per entry (so entry numbers stay as written), for a program whose
/// working folder is `cwd`. As glibc's loader reads it (elf/dl-load.c,
/// `fillin_rpath`; ld.so(8)): entries are separated by `:` or `;`, an empty
/// entry (a leading, trailing or doubled separator) is the working folder,
/// and a relative entry is taken from the working folder. An unset or empty
/// variable adds nothing.
pub fn ld_library_path_dirs(raw: &str, cwd: &str) -> Vec<String> {
    if raw.is_empty() {
        return Vec::new();
    }
    raw.split([':', ';'])
        .map(|e| {
            let rel = e.trim_start_matches("./");
            if e.starts_with('/') {
                match e.trim_end_matches('/') {
                    "" => "/".to_string(),
                    t => t.to_string(),
                }
            } else if e.is_empty() || e == "." || rel.is_empty() {
                cwd.to_string()
            } else {
                format!("{}/{rel}", cwd.trim_end_matches('/'))
            }
        })
        .collect()
}

/// The 0-based numbers of the `LD_LIBRARY_PATH` entries in `raw` that name
/// the working folder or a folder relative to it (empty, `.`, `lib`).
pub fn ld_library_path_relative(raw: &str) -> Vec<usize> {
    if raw.is_empty() {
        return Vec::new();
    }
    raw.split([':', ';'])
        .enumerate()
        .filter(|(_, e)| !e.starts_with('/'))
        .map(|(i, _)| i)
        .collect()
}

/// One place the loader finds a library, in search order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Hit {
    /// The file found.
    pub path: String,
    /// Why the loader looked there.
    pub via: Via,
}

/// The folders searched for a library loaded by name by a program (no
/// requesting library), in order, with the reason.
pub fn search_dirs(s: &Snapshot) -> Vec<(String, Via)> {
    let mut v = Vec::new();
    if s.windows() {
        if let Some(a) = &s.app_dir {
            v.push((a.clone(), Via::AppDir));
        }
        for d in &s.system_dirs {
            v.push((d.clone(), Via::SystemDir));
        }
        if !s.cwd.is_empty() {
            v.push((s.cwd.clone(), Via::Cwd));
        }
        for (i, d) in s.path.iter().enumerate() {
            v.push((d.clone(), Via::Path(i)));
        }
    } else {
        for (i, d) in s.ld_library_path.iter().enumerate() {
            v.push((d.clone(), Via::LdLibraryPath(i)));
        }
        for d in &s.system_dirs {
            v.push((d.clone(), Via::SystemDir));
        }
    }
    v
}

/// True when `dir` is searched by the loader for programs (`PATH` on
/// Windows, `LD_LIBRARY_PATH`, the cache's folders and the trusted folders on
/// Linux), by any spelling of it.
pub fn is_searched(s: &Snapshot, dir: &str) -> bool {
    let w = s.windows();
    search_dirs(s).iter().any(|(d, _)| s.same_place(d, dir))
        || (!w
            && s.ld_cache
                .iter()
                .filter(|e| !e.gone)
                .any(|e| spath::parent(&e.path, w).is_some_and(|p| s.same_place(&p, dir))))
}

/// An object that asks the loader for a library: where it is and the
/// search folders it carries (ELF `DT_RPATH`, `DT_RUNPATH`).
#[derive(Clone, Copy, Debug)]
pub struct Requester<'a> {
    /// The object's path, as the loader found it (its folder is `$ORIGIN`).
    pub path: &'a str,
    /// Its `DT_RPATH` entries, as written.
    pub rpath: &'a [String],
    /// Its `DT_RUNPATH` entries, as written.
    pub runpath: &'a [String],
}

impl<'a> Requester<'a> {
    /// A cuDNN file as a requester.
    pub fn of(f: &'a CudnnFile) -> Requester<'a> {
        Requester {
            path: &f.path,
            rpath: &f.rpath,
            runpath: &f.runpath,
        }
    }
}

/// Every copy of `name` the loader would find for a program, in the order
/// it tries them; the first is the one loaded. Each file appears once.
pub fn find(s: &Snapshot, name: &str) -> Vec<Hit> {
    search(s, name, &[])
}

/// Like [`find`], for a library needed by `requester` (its RPATH/RUNPATH
/// on Linux, its own folder on Windows).
pub fn find_for(s: &Snapshot, name: &str, requester: &CudnnFile) -> Vec<Hit> {
    search(s, name, &[Requester::of(requester)])
}

/// Every copy of `name` the loader finds when `chain[0]` asks for it,
/// `chain[0]` having been loaded by `chain[1]`, and so on to the program
/// (last); an empty chain is a program that carries no search folders. In
/// the order the loader tries them; the first is the one loaded; each file
/// once, whatever the spelling of its folder.
pub fn search(s: &Snapshot, name: &str, chain: &[Requester]) -> Vec<Hit> {
    let w = s.windows();
    let origin_of = |r: &Requester| spath::parent(r.path, w).unwrap_or_default();
    let expand = |p: &str, r: &Requester| -> String {
        let o = origin_of(r);
        let p = p.replace("${ORIGIN}", &o).replace("$ORIGIN", &o);
        if w || p.starts_with('/') {
            spath::normalize(&p, w)
        } else {
            // ld.so takes a relative entry from the working folder.
            spath::normalize(&spath::join(&s.cwd, &p, false), false)
        }
    };
    let named = |r: &Requester| spath::file_name(r.path, w).to_string();
    let mut order: Vec<(String, Via)> = Vec::new();
    if w {
        if let Some(r) = chain.first() {
            order.push((origin_of(r), Via::DllDir));
        }
        order.extend(search_dirs(s));
    } else {
        if chain.first().is_none_or(|r| r.runpath.is_empty()) {
            for r in chain {
                order.extend(r.rpath.iter().map(|p| (expand(p, r), Via::Rpath(named(r)))));
            }
        }
        order.extend(
            s.ld_library_path
                .iter()
                .enumerate()
                .map(|(i, d)| (d.clone(), Via::LdLibraryPath(i))),
        );
        if let Some(r) = chain.first() {
            order.extend(
                r.runpath
                    .iter()
                    .map(|p| (expand(p, r), Via::Runpath(named(r)))),
            );
        }
    }
    let mut hits: Vec<Hit> = Vec::new();
    let push = |hits: &mut Vec<Hit>, path: String, via: Via| {
        let real = real_of(s, &path);
        if !hits
            .iter()
            .any(|h| s.same_place(&h.path, &path) || s.same_place(&real_of(s, &h.path), &real))
        {
            hits.push(Hit { path, via });
        }
    };
    for (dir, via) in order {
        if let Some(n) = s.name_in(&dir, name) {
            let n = n.to_string();
            push(&mut hits, spath::join(&dir, &n, w), via);
        }
    }
    if !w {
        // ld.so takes the cache's entry for the name (the first listed) and
        // goes on to the trusted folders when its file is gone.
        if let Some(e) = s.ld_cache.iter().find(|e| e.name == name)
            && !e.gone
        {
            push(&mut hits, e.path.clone(), Via::LdCache);
        }
        for d in &s.system_dirs {
            if let Some(n) = s.name_in(d, name) {
                let n = n.to_string();
                push(&mut hits, spath::join(d, &n, w), Via::SystemDir);
            }
        }
    }
    hits
}

fn real_of(s: &Snapshot, path: &str) -> String {
    s.file(path)
        .and_then(|f| f.real_path.clone())
        .unwrap_or_else(|| path.to_string())
}

/// One cuDNN library a process maps: the name asked for, the file the
/// loader took, why there, and who asked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mapped {
    /// The name the loader was asked for (`libcudnn_graph.so.9.27.0`).
    pub name: String,
    /// The file mapped.
    pub path: String,
    /// Why the loader took that file.
    pub via: Via,
    /// The file name of the object that asked (`libcudnn.so.9`, the
    /// program, a framework's library).
    pub by: String,
}

/// The names the main library of cuDNN `major` asks the loader for to get
/// sub-library `stem`, in order: cuDNN 9 asks for its own release first
/// (`libcudnn_graph.so.9.27.0`, `libcudnn_graph.so.9.27`, then
/// `libcudnn_graph.so.9`) when `release` (the main library's own version)
/// is known; a DLL by its one name.
pub fn sublibrary_names(stem: &str, major: u32, release: Option<&Version>, w: bool) -> Vec<String> {
    if w {
        return vec![crate::names::dll_name(stem, major)];
    }
    let base = crate::names::soname(stem, major);
    match release.filter(|v| major >= 9 && v.parts().len() >= 3 && v.major() == major) {
        Some(v) => vec![
            format!("{base}.{}.{}", v.minor(), v.patch()),
            format!("{base}.{}", v.minor()),
            base,
        ],
        None => vec![base],
    }
}

/// The cuDNN libraries of `major` a process maps when `chain[0]` (see
/// [`search`]) asks the loader for the main library by name: the main
/// library, then [`sublibraries`]. Empty when no main library is found.
pub fn process(s: &Snapshot, major: u32, chain: &[Requester]) -> Vec<Mapped> {
    let w = s.windows();
    let name = if w {
        crate::names::dll_name("cudnn", major)
    } else {
        crate::names::soname("cudnn", major)
    };
    let Some(main) = search(s, &name, chain).into_iter().next() else {
        return Vec::new();
    };
    let by = chain
        .first()
        .map(|r| spath::file_name(r.path, w).to_string())
        .unwrap_or_else(|| "the program".into());
    let mut out = vec![Mapped {
        name,
        path: main.path.clone(),
        via: main.via,
        by,
    }];
    out.extend(sublibraries(s, major, &main.path, chain));
    out
}

/// The sub-libraries of cuDNN `major` the main library at `main` maps,
/// loaded on behalf of `chain` (the main library's own loaders; empty for
/// a program): each asked for by the names of [`sublibrary_names`], a name
/// already mapped reused, else the first copy the loader finds for a
/// request from the main library (its RPATH, then its loaders', unless it
/// has a RUNPATH). Sub-libraries found nowhere are left out.
pub fn sublibraries(s: &Snapshot, major: u32, main: &str, chain: &[Requester]) -> Vec<Mapped> {
    let w = s.windows();
    let file = s.file(main).map(|f| s.resolve(f));
    let none: &[String] = &[];
    let me = Requester {
        path: main,
        rpath: file.map_or(none, |f| f.rpath.as_slice()),
        runpath: file.map_or(none, |f| f.runpath.as_slice()),
    };
    let mut full: Vec<Requester> = vec![me];
    full.extend_from_slice(chain);
    let release = s
        .file(main)
        .and_then(|f| s.own_library_version(f))
        .map(|k| k.version);
    let by = spath::file_name(main, w).to_string();
    let mut out: Vec<Mapped> = Vec::new();
    // cuDNN 9's main library loads its graph library first (it answers
    // cudnnGetVersion()); the others as they are needed.
    let mut stems: Vec<&str> = crate::names::sublib_stems(major).to_vec();
    stems.sort_by_key(|st| *st != "cudnn_graph");
    // A release never asks for a sub-library it predates (9.20 has no
    // `cudnn_engines_tensor_ir`).
    stems.retain(|st| {
        release
            .as_ref()
            .is_none_or(|v| v.major() != major || crate::names::ships(st, v))
    });
    for stem in stems {
        for name in sublibrary_names(stem, major, release.as_ref(), w) {
            let hit = search(s, &name, &full).into_iter().next();
            if let Some(h) = hit {
                out.push(Mapped {
                    name,
                    path: h.path,
                    via: h.via,
                    by: by.clone(),
                });
                break;
            }
        }
    }
    out
}

/// Whether a needed library name resolves without a file on the search
/// path: Windows API sets (`api-ms-win-core-*`, `ext-ms-*`) and the system's
/// known DLLs ([`KNOWN_DLLS`]) always; the UCRT's `api-ms-win-crt-*` on
/// Windows 10 and later. Linux: never.
pub fn is_virtual(s: &Snapshot, name: &str) -> bool {
    if !s.windows() {
        return false;
    }
    let l = name.to_ascii_lowercase();
    if l.starts_with("api-ms-win-crt-") {
        return windows_major(s).is_some_and(|m| m >= 10);
    }
    l.starts_with("api-ms-win-") || l.starts_with("ext-ms-") || KNOWN_DLLS.contains(&l.as_str())
}

/// Windows' known DLLs (`ntdll.dll` and the `KnownDLLs` registry list of
/// Windows 10 and 11): the loader maps them from System32 before any search
/// (<https://learn.microsoft.com/en-us/windows/win32/dlls/dynamic-link-library-search-order>),
/// so they are never missing, even from a snapshot without a System32 listing.
pub const KNOWN_DLLS: &[&str] = &[
    "ntdll.dll",
    "kernel32.dll",
    "kernelbase.dll",
    "advapi32.dll",
    "clbcatq.dll",
    "combase.dll",
    "comdlg32.dll",
    "coml2.dll",
    "difxapi.dll",
    "gdi32.dll",
    "gdiplus.dll",
    "imagehlp.dll",
    "imm32.dll",
    "msctf.dll",
    "msvcrt.dll",
    "normaliz.dll",
    "nsi.dll",
    "ole32.dll",
    "oleaut32.dll",
    "psapi.dll",
    "rpcrt4.dll",
    "sechost.dll",
    "setupapi.dll",
    "shcore.dll",
    "shell32.dll",
    "shlwapi.dll",
    "user32.dll",
    "wldap32.dll",
    "ws2_32.dll",
];

/// The Windows major version (`10` of `10.0.19045`; `6` for Windows 7/8.x).
pub fn windows_major(s: &Snapshot) -> Option<u32> {
    s.os.version.as_deref()?.split('.').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::super::snapshot::{DirListing, LdCacheEntry, OsInfo};
    use super::*;

    #[test]
    fn empty_and_relative_ld_library_path_entries_are_the_working_folder() {
        let d = |raw: &str| ld_library_path_dirs(raw, "/home/me/proj");
        // What `export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/x` leaves when it was unset.
        assert_eq!(d(":/x"), ["/home/me/proj", "/x"]);
        assert_eq!(d("/x:"), ["/x", "/home/me/proj"]);
        assert_eq!(d("/x::/y"), ["/x", "/home/me/proj", "/y"]);
        // glibc also splits on ';'; `.` and relative names are taken from the working folder.
        assert_eq!(
            d("/x;lib:./b:."),
            [
                "/x",
                "/home/me/proj/lib",
                "/home/me/proj/b",
                "/home/me/proj"
            ]
        );
        assert_eq!(d("/x/"), ["/x"]);
        assert!(d("").is_empty());
        assert_eq!(ld_library_path_relative("/x::/y:lib"), [1, 3]);
        assert!(ld_library_path_relative("/x:/y").is_empty());
    }

    fn linux() -> Snapshot {
        Snapshot {
            os: OsInfo {
                family: "linux".into(),
                arch: "x86_64".into(),
                bits: 64,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn linux_order_is_ld_library_path_then_cache_then_system() {
        let mut s = linux();
        s.ld_library_path = vec!["/old".into(), "/new".into()];
        s.system_dirs = vec!["/usr/lib/x86_64-linux-gnu".into()];
        s.ld_cache = vec![LdCacheEntry {
            name: "libcudnn.so.8".into(),
            path: "/opt/c/libcudnn.so.8".into(),
            gone: false,
        }];
        for d in ["/old", "/new", "/usr/lib/x86_64-linux-gnu"] {
            s.dirs.push(DirListing {
                path: d.into(),
                names: vec!["libcudnn.so.8".into()],
                ..Default::default()
            });
        }
        let hits = find(&s, "libcudnn.so.8");
        let paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
        assert_eq!(
            paths,
            vec![
                "/old/libcudnn.so.8",
                "/new/libcudnn.so.8",
                "/opt/c/libcudnn.so.8",
                "/usr/lib/x86_64-linux-gnu/libcudnn.so.8"
            ]
        );
        assert_eq!(hits[0].via, Via::LdLibraryPath(0));
        assert_eq!(hits[2].via, Via::LdCache);
        assert!(find(&s, "libcudnn.so.9").is_empty());
    }

    #[test]
    fn rpath_origin_and_runpath() {
        let mut s = linux();
        s.ld_library_path = vec!["/ld".into()];
        s.dirs.push(DirListing {
            path: "/w/lib".into(),
            names: vec!["libz.so.1".into()],
            ..Default::default()
        });
        s.dirs.push(DirListing {
            path: "/ld".into(),
            names: vec!["libz.so.1".into()],
            ..Default::default()
        });
        let mut r = CudnnFile {
            path: "/w/lib/libcudnn_graph.so.9".into(),
            rpath: vec!["$ORIGIN".into()],
            ..Default::default()
        };
        assert_eq!(find_for(&s, "libz.so.1", &r)[0].path, "/w/lib/libz.so.1");
        r.runpath = std::mem::take(&mut r.rpath);
        let h = find_for(&s, "libz.so.1", &r);
        assert_eq!(
            h[0].path, "/ld/libz.so.1",
            "RUNPATH comes after LD_LIBRARY_PATH"
        );
        assert_eq!(h[1].via, Via::Runpath("libcudnn_graph.so.9".into()));
    }

    #[test]
    fn windows_order_and_api_sets() {
        let mut s = Snapshot {
            os: OsInfo {
                family: "windows".into(),
                version: Some("6.1.7601".into()),
                arch: "x86_64".into(),
                bits: 64,
                ..Default::default()
            },
            cwd: r"C:\work".into(),
            system_dirs: vec![r"C:\Windows\System32".into(), r"C:\Windows".into()],
            path: vec![r"C:\a".into(), r"C:\b".into()],
            ..Default::default()
        };
        s.dirs.push(DirListing {
            path: r"C:\b".into(),
            names: vec!["CUDNN64_7.DLL".into()],
            ..Default::default()
        });
        s.dirs.push(DirListing {
            path: r"c:\a\".into(),
            names: vec!["cudnn64_7.dll".into()],
            ..Default::default()
        });
        let h = find(&s, "cudnn64_7.dll");
        assert_eq!(h.len(), 2);
        assert_eq!(h[0].path, r"C:\a\cudnn64_7.dll");
        assert_eq!(h[1].path, r"C:\b\CUDNN64_7.DLL");
        assert!(is_virtual(&s, "api-ms-win-core-synch-l1-2-0.dll"));
        assert!(is_virtual(&s, "KERNEL32.dll"));
        assert!(!is_virtual(&s, "zlibwapi.dll"));
        assert!(
            !is_virtual(&s, "api-ms-win-crt-runtime-l1-1-0.dll"),
            "Windows 7"
        );
        s.os.version = Some("10.0.19045".into());
        assert!(is_virtual(&s, "API-MS-WIN-CRT-RUNTIME-L1-1-0.dll"));
    }
}

//! The loader's search order, as data per OS, so that `doctor` can say which
//! copy of a library a program gets and why.
//!
//! - Linux (`ld.so(8)`): the requesting object's `DT_RPATH` (when it has no
//!   `DT_RUNPATH`), `LD_LIBRARY_PATH` in order, its `DT_RUNPATH`, the ld.so
//!   cache, then the trusted folders. The executable's own RPATH is unknown
//!   to `doctor` and left out.
//! - Windows (`LoadLibrary`, SafeDllSearchMode on): the application folder,
//!   `System32`, the Windows folder, the working folder, then `PATH` in
//!   order. For a DLL's own imports the DLL's folder is searched first, as
//!   Python 3.8+ and `LOAD_WITH_ALTERED_SEARCH_PATH` do; `os.add_dll_directory`
//!   folders (`docs/system.md#library-search`) are not modelled.
//!
//! API-set names (`api-ms-win-core-*`, `ext-ms-*`) are virtual and always
//! resolve; `api-ms-win-crt-*` (the Universal C Runtime) resolve on Windows 10
//! and later, or when present in a system folder (`docs/system.md#windows-runtime`).

use std::fmt;

use serde::Serialize;

use super::snapshot::{CudnnFile, Snapshot};
use super::spath;

/// Why the loader looks in a folder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "via", content = "index", rename_all = "kebab-case")]
pub enum Via {
    /// `DT_RPATH` of the requesting library.
    Rpath,
    /// `LD_LIBRARY_PATH`, entry number (0-based).
    LdLibraryPath(usize),
    /// `DT_RUNPATH` of the requesting library.
    Runpath,
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
}

impl fmt::Display for Via {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Via::Rpath => f.write_str("RPATH of the library"),
            Via::LdLibraryPath(i) => write!(f, "LD_LIBRARY_PATH entry {}", i + 1),
            Via::Runpath => f.write_str("RUNPATH of the library"),
            Via::LdCache => f.write_str("ld.so cache"),
            Via::SystemDir => f.write_str("system folder"),
            Via::AppDir => f.write_str("application folder"),
            Via::DllDir => f.write_str("the DLL's own folder"),
            Via::Cwd => f.write_str("working folder"),
            Via::Path(i) => write!(f, "PATH entry {}", i + 1),
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
/// Windows, `LD_LIBRARY_PATH`, the cache's folders and the trusted folders on Linux).
pub fn is_searched(s: &Snapshot, dir: &str) -> bool {
    let w = s.windows();
    search_dirs(s).iter().any(|(d, _)| spath::same(d, dir, w))
        || (!w
            && s.ld_cache
                .iter()
                .any(|e| spath::parent(&e.path, w).is_some_and(|p| spath::same(&p, dir, w))))
}

/// Every copy of `name` the loader would find for a program, in the order
/// it tries them; the first is the one loaded. Each file appears once.
pub fn find(s: &Snapshot, name: &str) -> Vec<Hit> {
    find_from(s, name, None)
}

/// Like [`find`], for a library needed by `requester` (its RPATH/RUNPATH
/// on Linux, its own folder on Windows).
pub fn find_for(s: &Snapshot, name: &str, requester: &CudnnFile) -> Vec<Hit> {
    find_from(s, name, Some(requester))
}

fn find_from(s: &Snapshot, name: &str, requester: Option<&CudnnFile>) -> Vec<Hit> {
    let w = s.windows();
    let mut order: Vec<(String, Via)> = Vec::new();
    let origin = requester.and_then(|r| spath::parent(&r.path, w));
    let expand = |p: &str| -> String {
        match &origin {
            Some(o) => p.replace("${ORIGIN}", o).replace("$ORIGIN", o),
            None => p.to_string(),
        }
    };
    if w {
        if let Some(o) = &origin {
            order.push((o.clone(), Via::DllDir));
        }
        order.extend(search_dirs(s));
    } else {
        let r = requester;
        if let Some(r) = r.filter(|r| r.runpath.is_empty()) {
            order.extend(r.rpath.iter().map(|p| (expand(p), Via::Rpath)));
        }
        order.extend(
            s.ld_library_path
                .iter()
                .enumerate()
                .map(|(i, d)| (d.clone(), Via::LdLibraryPath(i))),
        );
        if let Some(r) = r {
            order.extend(r.runpath.iter().map(|p| (expand(p), Via::Runpath)));
        }
    }
    let mut hits: Vec<Hit> = Vec::new();
    let push = |hits: &mut Vec<Hit>, path: String, via: Via| {
        let real = real_of(s, &path);
        if !hits
            .iter()
            .any(|h| spath::same(&h.path, &path, w) || spath::same(&real_of(s, &h.path), &real, w))
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
        for e in s.ld_cache.iter().filter(|e| e.name == name) {
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

/// Whether a needed library name resolves without a file: Windows API sets
/// (`api-ms-win-core-*`, `ext-ms-*`) always; the UCRT's `api-ms-win-crt-*`
/// on Windows 10 and later. Linux: never.
pub fn is_virtual(s: &Snapshot, name: &str) -> bool {
    if !s.windows() {
        return false;
    }
    let l = name.to_ascii_lowercase();
    if l.starts_with("api-ms-win-crt-") {
        return windows_major(s).is_some_and(|m| m >= 10);
    }
    l.starts_with("api-ms-win-") || l.starts_with("ext-ms-")
}

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
        assert_eq!(h[1].via, Via::Runpath);
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
        assert!(
            !is_virtual(&s, "api-ms-win-crt-runtime-l1-1-0.dll"),
            "Windows 7"
        );
        s.os.version = Some("10.0.19045".into());
        assert!(is_virtual(&s, "API-MS-WIN-CRT-RUNTIME-L1-1-0.dll"));
    }
}

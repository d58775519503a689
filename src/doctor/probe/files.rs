//! The files probe: every cuDNN file in the folders listed (links, size,
//! header version, ELF/PE details, where it came from), and the folder
//! listings kept in the snapshot.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use super::folders::Scanner;
use super::s;
use crate::archive::header;
use crate::doctor::binfmt;
use crate::doctor::snapshot::{
    CudnnFile, DirListing, InstallKind, LdCacheEntry, Snapshot, ToolkitInfo, install_root,
};
use crate::env::Env;
use crate::home::Home;
use crate::names::{self, FileKind};

/// Names kept in folder listings besides cuDNN files and needed libraries.
const WANTED: [&str; 9] = [
    names::VC_RUNTIME_DLLS[0],
    names::VC_RUNTIME_DLLS[1],
    names::VC_RUNTIME_DLLS[2],
    names::VC_RUNTIME_DLLS[3],
    names::UCRT_DLL,
    "ucrtbase.dll",
    names::ZLIBWAPI_DLL,
    "libz.so.1",
    "zlib1.dll",
];

/// Fills [`Snapshot::files`]: every cuDNN file in the folders `scan` listed.
pub(crate) fn probe(snap: &mut Snapshot, env: &Env, home: &Home, scan: &Scanner) {
    let windows = env.is_windows();
    let ctx = InstallKinds::new(env, home, &snap.toolkits);
    let mut bin_cache: HashMap<String, binfmt::BinInfo> = HashMap::new();
    // Linux lists its mounts here; elsewhere there is no such file and no noexec.
    let mounts = fs::read_to_string("/proc/self/mountinfo")
        .map(|t| noexec_mounts(&t))
        .unwrap_or_default();
    for (dir, entries) in &scan.listed {
        for name in entries {
            if names::classify(name).is_none() {
                continue;
            }
            let path = dir.join(name);
            if let Some(mut f) = read_file(&path, &ctx, &mut bin_cache, windows) {
                if f.kind == Some(FileKind::Shared) && !f.dangling {
                    f.unreadable = matches!(fs::File::open(&path), Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied);
                    let real = f.real_path.clone().unwrap_or_else(|| f.path.clone());
                    f.noexec_mount = noexec_mount_of(&mounts, &real);
                }
                snap.files.push(f);
            }
        }
    }
    sibling_symbols(&mut snap.files, &bin_cache, windows);
}

/// Sets [`CudnnFile::symbols_missing`]: per folder, the cuDNN symbols each
/// library needs that no other cuDNN library there defines. cuDNN 9's
/// engine libraries need hundreds of the graph library's C++ symbols, which
/// change between releases: an engine library beside another release's
/// graph library needs symbols that are not there ("undefined symbol").
fn sibling_symbols(
    files: &mut [CudnnFile],
    bins: &HashMap<String, binfmt::BinInfo>,
    windows: bool,
) {
    let key = |f: &CudnnFile| f.real_path.clone().unwrap_or_else(|| f.path.clone());
    let dir_of = |f: &CudnnFile| crate::doctor::spath::parent(&f.path, windows).unwrap_or_default();
    let name_of = |f: &CudnnFile| crate::doctor::spath::file_name(&f.path, windows).to_string();
    let libs: Vec<&CudnnFile> = files
        .iter()
        .filter(|f| f.kind == Some(FileKind::Shared) && !f.dangling)
        .collect();
    let mut results: Vec<(usize, Vec<String>)> = Vec::new();
    for f in files.iter() {
        let mut missing: Vec<&String> = Vec::new();
        if let Some(b) = bins.get(&key(f)).filter(|b| {
            f.kind == Some(FileKind::Shared) && !f.dangling && !b.cudnn_needed.is_empty()
        }) {
            // The cuDNN libraries of its own folder that it links against.
            let dir = dir_of(f);
            let providers: Vec<&binfmt::BinInfo> = libs
                .iter()
                .filter(|g| dir_of(g) == dir && f.needed.iter().any(|n| *n == name_of(g)))
                .filter_map(|g| bins.get(&key(g)))
                .collect();
            if !providers.is_empty() {
                let defined: BTreeSet<&str> = providers
                    .iter()
                    .flat_map(|p| p.cudnn_defined.iter().map(String::as_str))
                    .collect();
                missing = b
                    .cudnn_needed
                    .iter()
                    .filter(|s| !defined.contains(s.as_str()))
                    .collect();
            }
        }
        // The shortest names read best as examples.
        missing.sort_by_key(|s| (s.len(), s.as_str()));
        results.push((
            missing.len(),
            missing.iter().take(3).map(|s| s.to_string()).collect(),
        ));
    }
    for (f, (n, ex)) in files.iter_mut().zip(results) {
        f.symbols_missing = n;
        f.symbols_missing_examples = ex;
    }
}

/// The mount points mounted `noexec`, from the text of
/// `/proc/self/mountinfo` (proc(5): field 5 is the mount point, with space,
/// tab, newline and backslash written as octal escapes; field 6 the
/// per-mount options). Each entry: (mount point, noexec).
pub(crate) fn noexec_mounts(mountinfo: &str) -> Vec<(String, bool)> {
    let unescape = |f: &str| {
        let b = f.as_bytes();
        let mut out: Vec<u8> = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            let octal = b[i] == b'\\'
                && i + 3 < b.len()
                && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c));
            match octal
                .then(|| u8::from_str_radix(&f[i + 1..i + 4], 8).ok())
                .flatten()
            {
                Some(n) => {
                    out.push(n);
                    i += 4;
                }
                None => {
                    out.push(b[i]);
                    i += 1;
                }
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    };
    mountinfo
        .lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split(' ').collect();
            let mp = cols.get(4)?;
            let opts = cols.get(5)?;
            Some((unescape(mp), opts.split(',').any(|o| o == "noexec")))
        })
        .collect()
}

/// The mount point of the file system holding `path` when it is `noexec`:
/// the longest mount point that is `path` or one of its folders (the last
/// mounted wins a tie, as the kernel stacks mounts).
pub(crate) fn noexec_mount_of(mounts: &[(String, bool)], path: &str) -> Option<String> {
    let under = |mp: &str| {
        mp == "/" || path == mp || path.strip_prefix(mp).is_some_and(|r| r.starts_with('/'))
    };
    let mut best: Option<&(String, bool)> = None;
    for m in mounts.iter().filter(|m| under(&m.0)) {
        if best.is_none_or(|b| m.0.len() >= b.0.len()) {
            best = Some(m);
        }
    }
    best.filter(|m| m.1).map(|m| m.0.clone())
}

/// Fills [`Snapshot::dirs`] and [`Snapshot::ld_cache`] with the names that
/// matter: cuDNN files, runtimes, and everything a cuDNN file needs.
pub(crate) fn listings(snap: &mut Snapshot, scan: &Scanner, cache: Vec<LdCacheEntry>) {
    let mut keep: BTreeSet<String> = WANTED.iter().map(|n| n.to_ascii_lowercase()).collect();
    for f in &snap.files {
        keep.extend(f.needed.iter().map(|n| n.to_ascii_lowercase()));
    }
    for (dir, entries) in &scan.listed {
        let names: Vec<String> = entries
            .iter()
            .filter(|n| names::is_cudnn_name(n) || keep.contains(&n.to_ascii_lowercase()))
            .cloned()
            .collect();
        // Dependencies (zlibwapi.dll, cublas64_12.dll, libz.so.1): their machine type.
        let machines = names
            .iter()
            .filter(|n| !names::is_cudnn_name(n))
            .filter_map(|n| {
                let p = dir.join(n);
                p.is_file()
                    .then(|| binfmt::read(&p).machine)
                    .flatten()
                    .map(|m| (n.clone(), m))
            })
            .collect();
        snap.dirs.push(DirListing {
            path: s(dir),
            names,
            machines,
        });
    }
    snap.ld_cache = cache
        .into_iter()
        .filter(|e| names::is_cudnn_name(&e.name) || keep.contains(&e.name.to_ascii_lowercase()))
        .collect();
}

/// What decides the kind of installation a file belongs to.
struct InstallKinds {
    toolkits: Vec<String>,
    /// The toolkit roots resolved (`/usr/local/cuda` → `/usr/local/cuda-12.4`),
    /// so a file reached by another spelling is still the toolkit's.
    resolved: Vec<(PathBuf, String)>,
    home: PathBuf,
    system: Vec<PathBuf>,
}

impl InstallKinds {
    fn new(env: &Env, home: &Home, toolkits: &[ToolkitInfo]) -> InstallKinds {
        let mut system: Vec<PathBuf> = Vec::new();
        if env.is_windows() {
            system.push(PathBuf::from(
                env.var("SystemRoot")
                    .unwrap_or_else(|| r"C:\Windows".into()),
            ));
        } else {
            for d in ["/usr/lib", "/lib", "/usr/lib64", "/lib64", "/usr/include"] {
                system.push(PathBuf::from(d));
            }
        }
        InstallKinds {
            resolved: toolkits
                .iter()
                .filter_map(|t| {
                    Some((crate::fsops::canonical(Path::new(&t.root))?, t.root.clone()))
                })
                .collect(),
            toolkits: toolkits.iter().map(|t| t.root.clone()).collect(),
            home: home.root().to_path_buf(),
            system,
        }
    }

    fn of(&self, path: &Path) -> (InstallKind, Option<String>) {
        if let Some(t) = self
            .toolkits
            .iter()
            .filter(|t| path.starts_with(t))
            .max_by_key(|t| t.len())
        {
            return (InstallKind::Toolkit, Some(t.clone()));
        }
        if let Some(real) = path.parent().and_then(crate::fsops::canonical)
            && let Some((_, t)) = self
                .resolved
                .iter()
                .filter(|(r, _)| real.starts_with(r))
                .max_by_key(|(r, _)| r.as_os_str().len())
        {
            return (InstallKind::Toolkit, Some(t.clone()));
        }
        if path.starts_with(self.home.join("store")) || path.starts_with(self.home.join("current"))
        {
            return (InstallKind::CudnnmStore, None);
        }
        let comps: Vec<String> = path
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if let Some(i) = comps
            .iter()
            .position(|c| c == "site-packages" || c == "dist-packages")
        {
            let pkg = comps[i + 1..comps.len().saturating_sub(1)].join("/");
            return (InstallKind::PipWheel, Some(pkg));
        }
        for anc in path.ancestors().skip(1).take(5) {
            if anc.join("conda-meta").is_dir() {
                return (InstallKind::Conda, Some(s(anc)));
            }
        }
        let lower = s(path).to_ascii_lowercase().replace('\\', "/");
        if lower.contains("/nvidia/cudnn/v") {
            return (InstallKind::NvidiaInstaller, None);
        }
        if self.system.iter().any(|d| path.starts_with(d)) {
            return (InstallKind::System, None);
        }
        (InstallKind::Other, None)
    }
}

/// One cuDNN file: links, size, header version, binary details.
fn read_file(
    path: &Path,
    o: &InstallKinds,
    bins: &mut HashMap<String, binfmt::BinInfo>,
    windows: bool,
) -> Option<CudnnFile> {
    let lmeta = fs::symlink_metadata(path).ok()?;
    if lmeta.is_dir() {
        return None;
    }
    let name = path.file_name()?.to_string_lossy().into_owned();
    let n = names::classify(&name)?;
    let link_target = lmeta
        .file_type()
        .is_symlink()
        .then(|| fs::read_link(path).ok().map(|t| s(&t)))
        .flatten();
    let meta = fs::metadata(path);
    let dangling = meta.is_err() && link_target.is_some();
    if meta.as_ref().is_ok_and(|m| m.is_dir()) {
        return None;
    }
    let real_path = crate::fsops::canonical(path).map(|p| s(&p));
    let (origin, origin_detail) = o.of(path);
    let mut f = CudnnFile {
        path: s(path),
        root: install_root(&s(path), windows),
        origin,
        origin_detail,
        kind: Some(n.kind),
        size: meta.as_ref().map(|m| m.len()).unwrap_or(0),
        real_path: real_path.clone(),
        link_target,
        dangling,
        ..Default::default()
    };
    if n.kind == FileKind::Header {
        if names::is_version_header(&name) {
            f.header_version = header::read_version(path);
        }
        return Some(f);
    }
    if n.kind == FileKind::Shared && !dangling {
        let key = real_path.unwrap_or_else(|| s(path));
        let info = bins
            .entry(key.clone())
            .or_insert_with(|| binfmt::read(Path::new(&key)));
        f.machine = info.machine.clone();
        f.soname = info.soname.clone();
        f.needed = info.needed.clone();
        f.rpath = info.rpath.clone();
        f.runpath = info.runpath.clone();
        f.file_version = info.file_version.clone();
        f.embedded_version = info.embedded_version.clone();
    }
    Some(f)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;

    #[test]
    fn noexec_mounts_are_read_from_mountinfo() {
        let info = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n\
                    30 22 0:25 / /mnt/usb\\040stick rw,nosuid,nodev,noexec,relatime - vfat /dev/sdb1 rw\n\
                    31 30 0:26 / /mnt/usb\\040stick/ok rw,relatime - tmpfs tmpfs rw\n";
        let m = noexec_mounts(info);
        assert_eq!(m.len(), 3);
        assert_eq!(m[1], ("/mnt/usb stick".to_string(), true));
        assert_eq!(
            noexec_mount_of(&m, "/mnt/usb stick/cuda/lib64/libcudnn.so.9").as_deref(),
            Some("/mnt/usb stick")
        );
        // A mount below it without noexec wins; so does the root for other paths.
        assert_eq!(noexec_mount_of(&m, "/mnt/usb stick/ok/libcudnn.so.9"), None);
        assert_eq!(noexec_mount_of(&m, "/mnt/usb sticky/libcudnn.so.9"), None);
        assert_eq!(noexec_mount_of(&m, "/usr/lib/libcudnn.so.9"), None);
    }

    #[test]
    fn origins_by_where_a_file_is() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path().join("home"));
        let tk = d.path().join("cuda-12.4");
        let toolkits = [ToolkitInfo {
            root: s(&tk),
            ..Default::default()
        }];
        let env = Env::from_vars(Vec::<(String, String)>::new(), "/", false);
        let o = InstallKinds::new(&env, &home, &toolkits);
        let of = |p: &Path| o.of(p);
        assert_eq!(
            of(&tk.join("lib64/libcudnn.so.9")),
            (InstallKind::Toolkit, Some(s(&tk)))
        );
        assert_eq!(
            of(&d.path().join("home/store/cuda-12/9.1.0/lib/libcudnn.so.9")).0,
            InstallKind::CudnnmStore
        );
        assert_eq!(
            of(&d
                .path()
                .join("venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9")),
            (InstallKind::PipWheel, Some("nvidia/cudnn/lib".into()))
        );
        let conda = d.path().join("conda");
        fs::create_dir_all(conda.join("conda-meta")).unwrap();
        assert_eq!(
            of(&conda.join("lib/libcudnn.so.9")),
            (InstallKind::Conda, Some(s(&conda)))
        );
        assert_eq!(
            of(Path::new("/x/NVIDIA/CUDNN/v9.7/bin/12.8/cudnn64_9.dll")).0,
            InstallKind::NvidiaInstaller
        );
        assert_eq!(
            of(Path::new("/usr/lib/x86_64-linux-gnu/libcudnn.so.8")).0,
            InstallKind::System
        );
        assert_eq!(
            of(&d.path().join("unzipped/bin/x.dll")).0,
            InstallKind::Other
        );
    }
}

//! The environment probe: OS and architecture, the variables that matter,
//! `PATH` / `LD_LIBRARY_PATH` in order, the loader's fixed folders and the
//! registry `PATH` values.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::s;
use crate::doctor::binfmt;
use crate::doctor::snapshot::{LoadedModule, OsInfo, RegistryPaths, Snapshot};
use crate::env::{self, Env};

/// Fills the OS, variables, path lists, system folders and registry `PATH`.
pub(crate) fn probe(snap: &mut Snapshot, env: &Env) {
    let windows = env.is_windows();
    snap.os = os_info(env);
    for (k, v) in env.vars() {
        let k = k.to_string_lossy();
        if keep_var(&k) {
            snap.env
                .insert(k.into_owned(), v.to_string_lossy().into_owned());
        }
    }
    snap.path = env.path_list(env::PATH).iter().map(|p| s(p)).collect();
    if !windows && let Some(raw) = env.var_os(env::LD_LIBRARY_PATH) {
        let raw = raw.to_string_lossy().into_owned();
        snap.ld_library_path = crate::doctor::loader::ld_library_path_dirs(&raw, &s(env.cwd()));
        snap.ld_library_path_raw = Some(raw);
    }
    snap.system_dirs = system_dirs(env).iter().map(|p| s(p)).collect();
    snap.modules = loaded_modules(env);
    if let Some((user, machine)) = crate::platform::registry_paths() {
        snap.registry = Some(RegistryPaths { user, machine });
    }
}

/// The variables recorded in the snapshot (besides `PATH`/`LD_LIBRARY_PATH`, kept as lists).
fn keep_var(name: &str) -> bool {
    let u = name.to_ascii_uppercase();
    u.starts_with("CUDA_PATH")
        || u.starts_with("CUDNN")
        || matches!(
            u.as_str(),
            "CUDA_HOME"
                | "CUDA_ROOT"
                | "CONDA_PREFIX"
                | "CONDA_DEFAULT_ENV"
                | "VIRTUAL_ENV"
                | "SYSTEMROOT"
                | "WINDIR"
                | "PROCESSOR_ARCHITECTURE"
                | "PROCESSOR_ARCHITEW6432"
                | "PYTHONPATH"
                | "CUDA_VISIBLE_DEVICES"
                | "CUDA_DEVICE_ORDER"
                | "LD_PRELOAD"
                | "CPATH"
                | "C_INCLUDE_PATH"
                | "CPLUS_INCLUDE_PATH"
                | "LIBRARY_PATH"
                | "INCLUDE"
                | "LIB"
                | "LOADEDMODULES"
                | "_LMFILES_"
        )
}

/// A modulefile larger than this is not read (cudnnm's are a few hundred bytes).
const MODULEFILE_MAX: u64 = 64 << 10;

/// The environment modules loaded in this shell whose name mentions cuDNN
/// (`LOADEDMODULES`, with their files from `_LMFILES_`, in the same order;
/// Lmod and Environment Modules set both), each with the folders its file
/// puts on path variables.
fn loaded_modules(env: &Env) -> Vec<LoadedModule> {
    let (Some(names), files) = (env.var("LOADEDMODULES"), env.var("_LMFILES_")) else {
        return Vec::new();
    };
    let files: Vec<String> = files
        .map(|f| f.split(':').map(str::to_owned).collect())
        .unwrap_or_default();
    names
        .split(':')
        .enumerate()
        .filter(|(_, n)| n.to_ascii_lowercase().contains("cudnn"))
        .map(|(i, name)| {
            let file = files.get(i).filter(|f| !f.is_empty()).cloned();
            // `_LMFILES_` is the shell's to set: a FIFO or a device there
            // is not read (nor waited on), only a regular file of its size.
            let text = file.as_deref().and_then(|f| {
                crate::fsops::read_bounded_text(Path::new(f), MODULEFILE_MAX, "a modulefile").ok()
            });
            LoadedModule {
                name: name.to_string(),
                file_gone: file.as_deref().is_some_and(|f| !Path::new(f).exists()),
                file,
                folders: text.as_deref().map(modulefile_folders).unwrap_or_default(),
            }
        })
        .collect()
}

/// The absolute folders a modulefile sets: Tcl `prepend-path VAR DIR`,
/// `append-path VAR DIR`, `setenv VAR DIR`; Lua `prepend_path("VAR", "DIR")`,
/// `append_path(…)`, `setenv(…)`. Values built from variables are skipped.
pub(crate) fn modulefile_folders(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        let args: Vec<String> = if let Some(rest) = ["prepend-path", "append-path", "setenv"]
            .iter()
            .find_map(|k| l.strip_prefix(k).filter(|r| r.starts_with([' ', '\t'])))
        {
            rest.split_whitespace()
                .map(|a| a.trim_matches(['"', '{', '}']).to_string())
                .collect()
        } else if let Some(rest) = ["prepend_path(", "append_path(", "setenv("]
            .iter()
            .find_map(|k| l.strip_prefix(k))
        {
            rest.trim_end_matches(')')
                .split(',')
                .map(|a| a.trim().trim_matches(['"', '\'']).to_string())
                .collect()
        } else {
            continue;
        };
        if let Some(v) = args
            .get(1)
            .filter(|v| v.starts_with('/') && !v.contains('$'))
            && !out.contains(v)
        {
            out.push(v.clone());
        }
    }
    out
}

/// The GNU multiarch triplet of this host (`x86_64-linux-gnu`).
pub(crate) fn triplet() -> Option<&'static str> {
    match std::env::consts::ARCH {
        "x86_64" => Some("x86_64-linux-gnu"),
        "aarch64" => Some("aarch64-linux-gnu"),
        "powerpc64" => Some("powerpc64le-linux-gnu"),
        _ => None,
    }
}

/// The loader's fixed folders: Linux trusted folders; Windows `System32`
/// and the Windows folder.
fn system_dirs(env: &Env) -> Vec<PathBuf> {
    if env.is_windows() {
        let root = env
            .var("SystemRoot")
            .or_else(|| env.var("windir"))
            .unwrap_or_else(|| r"C:\Windows".into());
        let root = PathBuf::from(root);
        return vec![root.join("System32"), root];
    }
    // The dynamic loader says which folders it was built to search (glibc
    // 2.33 and later: `ld.so --help`, "Shared library search path").
    if let Some(v) = LOADERS
        .iter()
        .find(|p| Path::new(p).exists())
        .and_then(|p| crate::child::Running::spawn(Command::new(p).arg("--help")))
        .and_then(|c| c.finish().ok())
        .map(|out| loader_system_dirs(&out))
        .filter(|v| !v.is_empty())
    {
        return v;
    }
    let mut v = Vec::new();
    if let Some(t) = triplet() {
        v.push(Path::new("/lib").join(t));
        v.push(Path::new("/usr/lib").join(t));
    }
    for d in ["/lib64", "/usr/lib64", "/lib", "/usr/lib"] {
        v.push(PathBuf::from(d));
    }
    v.retain(|d| d.is_dir());
    v
}

/// Where glibc's dynamic loader is, per architecture (x86_64, aarch64, ppc64le).
const LOADERS: [&str; 3] = [
    "/lib64/ld-linux-x86-64.so.2",
    "/lib/ld-linux-aarch64.so.1",
    "/lib64/ld64.so.2",
];

/// The trusted folders in `ld.so --help` output, in order: the lines
/// `  /lib/x86_64-linux-gnu (system search path)`.
fn loader_system_dirs(help: &str) -> Vec<PathBuf> {
    help.lines()
        .filter_map(|l| l.trim().strip_suffix("(system search path)"))
        .map(|d| PathBuf::from(d.trim()))
        .collect()
}

fn os_info(env: &Env) -> OsInfo {
    if env.is_windows() {
        let pa = env
            .var("PROCESSOR_ARCHITEW6432")
            .or_else(|| env.var("PROCESSOR_ARCHITECTURE"))
            .unwrap_or_default();
        let arch = windows_arch(&pa).unwrap_or_else(binfmt::host_machine);
        let (name, version) = match crate::platform::windows_version() {
            Some((n, v)) => (n, Some(v)),
            None => (None, None),
        };
        return OsInfo {
            family: "windows".into(),
            name,
            version,
            arch: arch.into(),
            bits: bits_of(arch),
        };
    }
    let name = fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| os_release_name(&t));
    let version = fs::read_to_string("/proc/sys/kernel/osrelease")
        .ok()
        .map(|v| v.trim().to_string());
    let arch = binfmt::host_machine();
    OsInfo {
        family: std::env::consts::OS.to_string(),
        name,
        version,
        arch: arch.into(),
        bits: bits_of(arch),
    }
}

/// The OS architecture a Windows `PROCESSOR_ARCHITECTURE` value names
/// (`AMD64` → `x86_64`), any case.
fn windows_arch(value: &str) -> Option<&'static str> {
    match value.to_ascii_uppercase().as_str() {
        "AMD64" => Some("x86_64"),
        "ARM64" => Some("aarch64"),
        "X86" => Some("x86"),
        _ => None,
    }
}

/// `PRETTY_NAME` of `/etc/os-release` (`PRETTY_NAME="Ubuntu 22.04.4 LTS"`).
fn os_release_name(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
}

fn bits_of(arch: &str) -> u32 {
    match arch {
        "x86_64" | "aarch64" | "ppc64le" | "ppc64" => 64,
        _ => 32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_names_and_architectures() {
        assert_eq!(
            os_release_name("NAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\nID=ubuntu\n")
                .as_deref(),
            Some("Ubuntu 22.04.4 LTS")
        );
        assert_eq!(os_release_name("ID=alpine\n"), None);
        assert_eq!(windows_arch("AMD64"), Some("x86_64"));
        assert_eq!(windows_arch("arm64"), Some("aarch64"));
        assert_eq!(windows_arch("x86"), Some("x86"));
        assert_eq!(windows_arch("IA64"), None);
        assert_eq!(bits_of("x86"), 32);
        assert_eq!(bits_of("aarch64"), 64);
    }

    #[cfg(unix)]
    #[test]
    fn a_loaded_modulefile_is_read_only_when_it_is_a_regular_file() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("9.27.lua");
        #[allow(clippy::disallowed_methods)] // the test's own fixture
        std::fs::write(
            &real,
            "prepend_path(\"LD_LIBRARY_PATH\", \"/s/9.27/lib\")\n",
        )
        .unwrap();
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let env = Env::from_vars(
            [
                ("LOADEDMODULES", "cudnn/9.27:cudnn/fifo".to_string()),
                (
                    "_LMFILES_",
                    format!("{}:{}", real.display(), fifo.display()),
                ),
            ],
            d.path(),
            false,
        );
        // Opening the FIFO would wait for a writer that never comes.
        let t = std::time::Instant::now();
        let loaded = loaded_modules(&env);
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
        assert_eq!(loaded.len(), 2);
        assert_eq!(loaded[0].folders, ["/s/9.27/lib"]);
        assert_eq!(loaded[1].file.as_deref(), fifo.to_str());
        assert!(loaded[1].folders.is_empty() && !loaded[1].file_gone);
    }

    #[test]
    fn modulefiles_name_the_folders_they_set() {
        let tcl = "#%Module1.0\nprepend-path LD_LIBRARY_PATH /opt/cudnn/9.27/lib\nsetenv CUDNN_PATH {/opt/cudnn/9.27}\nprepend-path PATH $root/bin\n";
        assert_eq!(
            modulefile_folders(tcl),
            ["/opt/cudnn/9.27/lib", "/opt/cudnn/9.27"]
        );
        let lua =
            "prepend_path(\"CPATH\", \"/s/9.27/include\")\nsetenv(\"CUDNN_PATH\", \"/s/9.27\")\n";
        assert_eq!(modulefile_folders(lua), ["/s/9.27/include", "/s/9.27"]);
    }

    #[test]
    fn the_trusted_folders_are_read_from_the_loader() {
        // glibc 2.36's `ld.so --help` (Debian 12), with LD_LIBRARY_PATH set.
        let help = "Shared library search path:\n  /opt/x (LD_LIBRARY_PATH)\n  (libraries located via /etc/ld.so.cache)\n  /lib/x86_64-linux-gnu (system search path)\n  /usr/lib/x86_64-linux-gnu (system search path)\n  /lib (system search path)\n  /usr/lib (system search path)\n\nSubdirectories of glibc-hwcaps directories, in priority order:\n  x86-64-v3 (supported, searched)\n";
        assert_eq!(
            loader_system_dirs(help),
            [
                "/lib/x86_64-linux-gnu",
                "/usr/lib/x86_64-linux-gnu",
                "/lib",
                "/usr/lib"
            ]
            .map(PathBuf::from)
        );
    }

    #[test]
    fn a_windows_environment_is_described_as_windows() {
        let env = Env::from_vars(
            [
                ("PROCESSOR_ARCHITECTURE", "x86"),
                ("SystemRoot", r"D:\Win"),
                ("Path", r"C:\a;C:\b"),
                ("CUDA_PATH", r"C:\cuda"),
                ("HOME", r"C:\Users\u"),
            ],
            r"C:\work",
            true,
        );
        let mut snap = Snapshot::default();
        probe(&mut snap, &env);
        assert_eq!(snap.os.family, "windows");
        assert_eq!((snap.os.arch.as_str(), snap.os.bits), ("x86", 32));
        assert_eq!(snap.path, vec![r"C:\a", r"C:\b"]);
        assert!(snap.ld_library_path.is_empty());
        assert_eq!(
            snap.system_dirs,
            vec![s(&Path::new(r"D:\Win").join("System32")), r"D:\Win".into()]
        );
        let kept: Vec<&str> = snap.env.keys().map(String::as_str).collect();
        assert_eq!(
            kept,
            vec!["CUDA_PATH", "PROCESSOR_ARCHITECTURE", "SystemRoot"]
        );
    }
}

//! Doctor's model of the loader against the loader itself: each test builds
//! a real layout (the real cuDNN wheels, links, loader variables), asks
//! `doctor` which cuDNN a program gets, then loads cuDNN for real — python3's
//! `ctypes.CDLL`, in the same environment — and compares doctor's answer
//! with the files the process mapped (`/proc/self/maps`) and the version the
//! library reported. Where they disagree the test fails, whatever doctor's
//! own model says.

// Real Linux libraries, links and /proc.
#![cfg(target_os = "linux")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Run, Sandbox, skip};
use crate::doctor::toolkit;

/// The Python interpreter itself (not a shim such as pyenv's, which needs
/// the user's own HOME), once per test binary.
pub(crate) fn python() -> Option<PathBuf> {
    static PY: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    PY.get_or_init(|| {
        let out = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .ok()?;
        let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        p.is_file().then_some(p)
    })
    .clone()
    .or_else(|| {
        skip::skip(
            "python3 is not installed (apt-get install python3): the real load is python3's ctypes",
        );
        None
    })
}

/// What a real process got: the version `cudnnGetVersion()` answered, the
/// cuDNN files it had mapped (resolved paths, as `/proc/self/maps` shows
/// them), or the loader's error.
#[derive(Debug)]
pub(crate) struct RealLoad {
    pub version: Option<u64>,
    pub mapped: Vec<PathBuf>,
    pub error: Option<String>,
}

/// The script a real load runs: load `argv[1]` (a name or a path), ask its
/// version, print what was mapped.
pub(crate) const LOAD_SCRIPT: &str = r#"
import ctypes, json, sys
v = err = None
try:
    v = ctypes.CDLL(sys.argv[1]).cudnnGetVersion()
except (OSError, AttributeError) as e:
    err = str(e)
m = []
for line in open('/proc/self/maps'):
    p = line.split(None, 5)
    if len(p) == 6 and '/libcudnn' in p[5] and p[5].strip() not in m:
        m.append(p[5].strip())
print(json.dumps({"version": v, "mapped": m, "error": err}))
"#;

impl RealLoad {
    /// The main library mapped (`libcudnn.so.*`), resolved.
    pub fn main(&self) -> Option<&Path> {
        self.mapped
            .iter()
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("libcudnn.so"))
            })
            .map(PathBuf::as_path)
    }

    /// The mapped file whose name starts with `lib<stem>.so` (`cudnn_graph`).
    pub fn sub(&self, stem: &str) -> Option<&Path> {
        let prefix = format!("lib{stem}.so");
        self.mapped
            .iter()
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
            })
            .map(PathBuf::as_path)
    }
}

/// Loads `what` with python3's ctypes in the sandbox's environment.
pub(crate) fn ctypes_load(sb: &Sandbox, what: &str) -> Option<RealLoad> {
    let py = python()?;
    let out = sb
        .wrapped(py.to_str().unwrap())
        .args(["-c", LOAD_SCRIPT, what])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    Some(RealLoad {
        version: j["version"].as_u64(),
        mapped: j["mapped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| PathBuf::from(p.as_str().unwrap()))
            .collect(),
        error: j["error"].as_str().map(str::to_owned),
    })
}

/// `path` with its links resolved, as `/proc/PID/maps` names a mapped file.
pub(crate) fn real(path: impl AsRef<Path>) -> PathBuf {
    fs::canonicalize(path.as_ref()).unwrap_or_else(|e| panic!("{}: {e}", path.as_ref().display()))
}

/// The copy of cuDNN 9 doctor says the loader takes (its summary), resolved.
pub(crate) fn doctor_active(r: &Run) -> Option<PathBuf> {
    let a = r.json()["summary"]["active_cudnn"]
        .as_array()?
        .iter()
        .find(|a| a["major"] == 9)?
        .clone();
    Some(real(a["path"].as_str()?))
}

/// cuDNN's version number for `x.y.z` (`9.27.0` → 92700).
pub(crate) fn number(v: &str) -> u64 {
    let p: Vec<u64> = v.split('.').map(|x| x.parse().unwrap()).collect();
    p[0] * 10000 + p[1] * 100 + p[2]
}

/// The reported false alarm: NVIDIA's post-install line
/// `LD_LIBRARY_PATH=/usr/local/cuda-12.4/lib64` with the usual
/// `/usr/local/cuda -> cuda-12.4` link through which the toolkit is found
/// (`CUDA_HOME`, nvcc on PATH). One folder, two spellings: doctor said "none
/// reachable by the loader" and exited 7 while `dlopen` loaded it.
#[test]
fn the_cuda_link_and_the_versioned_folder_on_ld_library_path_are_one_folder() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, true);
    let link = sb.root().join("cuda");
    std::os::unix::fs::symlink("cuda-12.4", &link).unwrap();
    sb.set_env("CUDA_HOME", &link);
    // nvcc on PATH through the link, as the install guide's PATH line puts it.
    fs::create_dir_all(tk.join("bin")).unwrap();
    let nvcc = tk.join("bin/nvcc");
    fs::write(
        &nvcc,
        "#!/bin/sh\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n",
    )
    .unwrap();
    fs::set_permissions(&nvcc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        link.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    sb.set_env("PATH", path);

    let r = sb.run(["doctor", "--json"]).ok();
    let Some(load) = ctypes_load(&sb, "libcudnn.so.9") else {
        return;
    };
    assert_eq!(load.version, Some(92700), "{load:?}");
    assert_eq!(
        doctor_active(&r).as_deref(),
        load.main(),
        "doctor's loaded copy is the one dlopen mapped\n{}",
        r.describe()
    );
    assert_eq!(r.json()["summary"]["active_cudnn"][0]["version"], "9.27.0");
    for f in r.json()["findings"].as_array().unwrap() {
        assert_eq!(f["severity"], "info", "{}", r.describe());
    }
}

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

use crate::common::{Run, Sandbox, real_wheel, skip};
use crate::doctor::{ids, toolkit, toolkit_with};

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

/// The script a real load runs: load `argv[1]` (a name or a path), call
/// `argv[2]` (`cudnnGetVersion`, or a stand-in framework library's function
/// that calls it), print what was mapped.
pub(crate) const LOAD_SCRIPT: &str = r#"
import ctypes, json, sys
v = err = None
try:
    v = getattr(ctypes.CDLL(sys.argv[1]), sys.argv[2])()
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

/// Loads `what` with python3's ctypes in the sandbox's environment and asks
/// cuDNN its version.
pub(crate) fn ctypes_load(sb: &Sandbox, what: &str) -> Option<RealLoad> {
    ctypes_call(sb, what, "cudnnGetVersion")
}

/// Loads `what` with python3's ctypes in the sandbox's environment and
/// calls its function `call` (which answers cuDNN's version).
pub(crate) fn ctypes_call(sb: &Sandbox, what: &str, call: &str) -> Option<RealLoad> {
    let py = python()?;
    let out = sb
        .wrapped(py.to_str().unwrap())
        .args(["-c", LOAD_SCRIPT, what, call])
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
    assert_eq!(
        (load.version, &load.error),
        (Some(92700), &None),
        "{load:?}"
    );
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

/// A virtual environment `venv/` in the sandbox (`VIRTUAL_ENV` set) with
/// the real `nvidia-cudnn-jit-cu12` wheel of `version` unpacked into its
/// `site-packages` as pip does; the `site-packages` folder.
pub(crate) fn venv_with_wheel(sb: &mut Sandbox, version: &str) -> Option<PathBuf> {
    let py = python()?;
    let venv = sb.root().join("venv");
    let site = venv.join("lib/python3.11/site-packages");
    fs::create_dir_all(&site).unwrap();
    let whl = real_wheel(&format!("nvidia_cudnn_jit_cu12-{version}"));
    let out = Command::new(py)
        .args(["-m", "zipfile", "-e"])
        .arg(&whl)
        .arg(&site)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    sb.set_env("VIRTUAL_ENV", &venv);
    Some(site)
}

/// The wheel's library folder in `site`.
pub(crate) fn wheel_lib(site: &Path) -> PathBuf {
    site.join("nvidia/cudnn_jit/lib")
}

/// A stand-in for PyTorch's `libtorch_cuda.so`, built by `cc` in `site`
/// (with a `torch` dist-info requiring the wheel): it needs
/// `libcudnn.so.9` (`DT_NEEDED`), carries `DT_RPATH`
/// `$ORIGIN/../../nvidia/cudnn_jit/lib` into the wheel as PyTorch's wheels
/// do, and exports `torch_cudnn_version()`, which calls `cudnnGetVersion()`.
pub(crate) fn stand_in_torch(site: &Path, wheel_version: &str) -> Option<PathBuf> {
    let cc = skip::need_program("cc", "gcc")?;
    let lib = site.join("torch/lib");
    fs::create_dir_all(&lib).unwrap();
    let src = lib.join("torch_cuda.c");
    fs::write(
        &src,
        "#include <stddef.h>\nsize_t cudnnGetVersion(void);\nsize_t torch_cudnn_version(void) { return cudnnGetVersion(); }\n",
    )
    .unwrap();
    let so = lib.join("libtorch_cuda.so");
    let out = Command::new(cc)
        .args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&src)
        .arg(format!("-L{}", wheel_lib(site).display()))
        .arg("-l:libcudnn.so.9")
        .arg("-Wl,--disable-new-dtags")
        .arg("-Wl,-rpath,$ORIGIN/../../nvidia/cudnn_jit/lib")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let info = site.join("torch-2.9.0.dist-info");
    fs::create_dir_all(&info).unwrap();
    fs::write(
        info.join("METADATA"),
        format!("Metadata-Version: 2.1\nName: torch\nVersion: 2.9.0\nRequires-Dist: nvidia-cudnn-jit-cu12=={wheel_version}; platform_system == \"Linux\"\n"),
    )
    .unwrap();
    Some(so)
}

/// The file a `sub-libraries-mixed` finding says `name` comes from.
fn said_to_come_from(r: &Run, name: &str) -> Option<PathBuf> {
    let prefix = format!("{name} comes from ");
    r.json()["findings"]
        .as_array()?
        .iter()
        .filter(|f| f["id"] == "sub-libraries-mixed")
        .flat_map(|f| f["seen"].as_array().cloned().unwrap_or_default())
        .find_map(|l| {
            let l = l.as_str()?.strip_prefix(&prefix)?;
            Some(real(l.split(" — ").next()?))
        })
}

/// cuDNN 9.12's main library carries `DT_RUNPATH=$ORIGIN`: `LD_LIBRARY_PATH`
/// is searched before its own folder, so a program that loads it by path
/// (as a framework does) gets another copy's graph library when one is on
/// `LD_LIBRARY_PATH`. 9.27's carries `DT_RPATH=$ORIGIN`: its own folder
/// first. Doctor's account of both is what a real load maps.
#[test]
fn runpath_comes_after_ld_library_path_and_rpath_before_it() {
    for (own, other) in [("9.12.0.46", "9.27.0.42"), ("9.27.0.42", "9.12.0.46")] {
        let mut sb = Sandbox::new();
        let Some(site) = venv_with_wheel(&mut sb, own) else {
            return;
        };
        let tk = toolkit_with(&mut sb, false, other, "cuda-12.4");
        let main = wheel_lib(&site).join("libcudnn.so.9");
        let r = sb
            .run(["doctor", "--json", "--cuda-root", tk.to_str().unwrap()])
            .ok();
        let load = ctypes_load(&sb, main.to_str().unwrap()).unwrap();
        assert_eq!(load.main(), Some(real(&main).as_path()), "{load:?}");
        let graph = load.sub("cudnn_graph").unwrap().to_path_buf();
        let predicted = said_to_come_from(&r, "libcudnn_graph.so.9");
        if own == "9.12.0.46" {
            // The real load takes the toolkit's graph library, and so must doctor.
            assert_eq!(
                graph,
                real(tk.join("lib64/libcudnn_graph.so.9")),
                "{load:?}"
            );
            assert_eq!(predicted.as_ref(), Some(&graph), "{}", r.describe());
            assert_eq!(
                load.version,
                Some(number("9.27.0")),
                "answered by the other graph library"
            );
        } else {
            assert_eq!(graph, real(wheel_lib(&site).join("libcudnn_graph.so.9")));
            assert_eq!(predicted, None, "{}", r.describe());
            assert_eq!(load.version, Some(number("9.27.0")));
        }
    }
}

/// PyTorch's `libtorch_cuda.so` finds `libcudnn.so.9` through its
/// `DT_RPATH` into its own wheel, before `LD_LIBRARY_PATH`; the main
/// library then asks for its sub-libraries with its own search folders.
/// What doctor says the framework's process maps is what it maps: with
/// 9.27 in the wheel, every file from the wheel (no finding, whatever
/// `LD_LIBRARY_PATH` holds); with 9.12 in the wheel, the graph library from
/// the toolkit on `LD_LIBRARY_PATH` (an error naming both).
#[test]
fn a_framework_library_with_an_rpath_into_its_wheel_maps_what_doctor_says() {
    for (wheel, toolkit_release) in [("9.27.0.42", "9.12.0.46"), ("9.12.0.46", "9.27.0.42")] {
        let mut sb = Sandbox::new();
        let Some(site) = venv_with_wheel(&mut sb, wheel) else {
            return;
        };
        let Some(torch) = stand_in_torch(&site, wheel) else {
            return;
        };
        let tk = toolkit_with(&mut sb, false, toolkit_release, "cuda-12.4");
        let r = sb.run(["doctor", "--json", "--cuda-root", tk.to_str().unwrap()]);
        let load = ctypes_call(&sb, torch.to_str().unwrap(), "torch_cudnn_version").unwrap();
        let loads = r.json()["summary"]["framework_loads"].clone();
        let said = |name: &str| -> Option<PathBuf> {
            loads[0]["files"]
                .as_array()?
                .iter()
                .find(|f| f["name"].as_str().is_some_and(|n| n.starts_with(name)))
                .map(|f| real(f["path"].as_str().unwrap()))
        };
        assert_eq!(loads[0]["framework"], "torch 2.9.0", "{}", r.describe());
        assert_eq!(
            said("libcudnn.so").as_deref(),
            load.main(),
            "{}\n{load:?}",
            r.describe()
        );
        assert_eq!(
            said("libcudnn_graph.so").as_deref(),
            load.sub("cudnn_graph"),
            "{}\n{load:?}",
            r.describe()
        );
        assert_eq!(
            load.main(),
            Some(real(wheel_lib(&site).join("libcudnn.so.9")).as_path())
        );
        let mixed: Vec<serde_json::Value> = r.json()["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["id"] == "sub-libraries-mixed")
            .cloned()
            .collect();
        if wheel == "9.27.0.42" {
            assert_eq!(
                load.sub("cudnn_graph"),
                Some(real(wheel_lib(&site).join("libcudnn_graph.so.9")).as_path())
            );
            assert!(mixed.is_empty(), "{}", r.describe());
            assert!(
                !ids(&r).contains(&"framework-cudnn-mismatch".to_string()),
                "{}",
                r.describe()
            );
            assert_eq!(load.version, Some(number("9.27.0")));
        } else {
            assert_eq!(
                load.sub("cudnn_graph"),
                Some(real(tk.join("lib64/libcudnn_graph.so.9")).as_path())
            );
            assert_eq!(mixed.len(), 1, "{}", r.describe());
            assert_eq!(mixed[0]["severity"], "error", "{}", r.describe());
            assert!(
                mixed[0]["seen"]
                    .to_string()
                    .contains("torch 2.9.0 loads this copy"),
                "{}",
                r.describe()
            );
            assert_eq!(r.code(), 7);
            assert_eq!(
                load.version,
                Some(number("9.27.0")),
                "the toolkit's graph library answers"
            );
        }
    }
}

/// A layout with the link and the versioned folder (the reported false
/// alarm), as [`the_cuda_link_and_the_versioned_folder_on_ld_library_path_are_one_folder`]
/// builds it, without nvcc: the toolkit folder.
fn linked_toolkit(sb: &mut Sandbox) -> PathBuf {
    let tk = toolkit(sb, true);
    let link = sb.root().join("cuda");
    std::os::unix::fs::symlink("cuda-12.4", &link).unwrap();
    sb.set_env("CUDA_HOME", &link);
    tk
}

/// The `summary.process.mapped` rows of a `doctor --json -- CMD` run.
fn mapped_rows(r: &Run) -> Vec<serde_json::Value> {
    r.json()["summary"]["process"]["mapped"]
        .as_array()
        .unwrap_or_else(|| panic!("no process in the summary: {}", r.describe()))
        .clone()
}

/// The issue's own example: `doctor -- python3 -c 'import ctypes;
/// ctypes.CDLL("libcudnn.so.9")'` names every cuDNN file the process
/// mapped and its version, and each is what doctor predicted. The files are
/// the ones an independent load in the same environment maps.
#[test]
fn doctor_run_names_the_files_and_versions_the_program_mapped() {
    let mut sb = Sandbox::new();
    let tk = linked_toolkit(&mut sb);
    let Some(py) = python() else { return };
    let code = "import ctypes; ctypes.CDLL('libcudnn.so.9').cudnnGetVersion()";
    let r = sb
        .run([
            "doctor".as_ref(),
            "--json".as_ref(),
            "--".as_ref(),
            py.as_os_str(),
            "-c".as_ref(),
            code.as_ref(),
        ])
        .ok();
    let rows = mapped_rows(&r);
    assert_eq!(
        r.json()["summary"]["process"]["state"],
        "exit 0",
        "{}",
        r.describe()
    );
    let load = ctypes_load(&sb, "libcudnn.so.9").unwrap();
    let got: Vec<PathBuf> = rows
        .iter()
        .map(|m| PathBuf::from(m["path"].as_str().unwrap()))
        .collect();
    let mut want = load.mapped.clone();
    want.sort_by_key(|p| !p.to_string_lossy().contains("/libcudnn.so"));
    assert_eq!(got, want, "{}", r.describe());
    assert_eq!(got[0], real(tk.join("lib64/libcudnn.so.9.27.0")));
    assert_eq!(rows[0]["version"], "9.27.0", "{}", r.describe());
    assert!(rows.iter().all(|m| m["agrees"] == true), "{}", r.describe());
    assert!(!ids(&r).contains(&"loaded-not-as-predicted".to_string()));
    // The text names the file and its version.
    let t = sb
        .run([
            "doctor".as_ref(),
            "--".as_ref(),
            py.as_os_str(),
            "-c".as_ref(),
            code.as_ref(),
        ])
        .ok();
    assert!(
        t.stdout().contains(&format!(
            "  mapped     {} — cuDNN 9.27.0; as predicted",
            real(tk.join("lib64/libcudnn.so.9.27.0")).display()
        )),
        "{}",
        t.describe()
    );
}

/// A program that takes cuDNN another way than the loader's search for its
/// name (here `LD_PRELOAD`, set by the program's own wrapper where doctor
/// cannot see it): what it mapped disagrees with the prediction, and the
/// files of two releases it mapped are reported as seen.
#[test]
fn a_program_that_loads_another_copy_than_predicted_is_a_finding() {
    let mut sb = Sandbox::new();
    let Some(site) = venv_with_wheel(&mut sb, "9.12.0.46") else {
        return;
    };
    let tk = toolkit_with(&mut sb, false, "9.27.0.42", "cuda-12.4");
    let Some(py) = python() else { return };
    let other = wheel_lib(&site).join("libcudnn.so.9");
    let preload = format!("LD_PRELOAD={}", other.display());
    let code = "import ctypes; ctypes.CDLL('libcudnn.so.9').cudnnGetVersion()";
    let r = sb.run([
        "doctor".as_ref(),
        "--json".as_ref(),
        "--cuda-root".as_ref(),
        tk.as_os_str(),
        "--".as_ref(),
        "env".as_ref(),
        preload.as_ref(),
        py.as_os_str(),
        "-c".as_ref(),
        code.as_ref(),
    ]);
    let rows = mapped_rows(&r);
    // The real process: 9.12's main library (preloaded), the toolkit's
    // 9.27 graph library (LD_LIBRARY_PATH before its RUNPATH).
    assert_eq!(
        rows[0]["path"],
        real(&other).to_str().unwrap(),
        "{}",
        r.describe()
    );
    assert_eq!(rows[0]["agrees"], false, "{}", r.describe());
    assert_eq!(
        rows[0]["predicted"],
        tk.join("lib64/libcudnn.so.9").to_str().unwrap(),
        "{}",
        r.describe()
    );
    let graph = rows
        .iter()
        .find(|m| m["path"].as_str().unwrap().contains("libcudnn_graph"))
        .unwrap();
    assert_eq!(
        graph["path"],
        real(tk.join("lib64/libcudnn_graph.so.9")).to_str().unwrap()
    );
    let f = r.finding("loaded-not-as-predicted");
    assert_eq!(f["severity"], "warning");
    // One cause, one finding: the 9.12 main library with the toolkit's
    // graph library, an error since this program mapped it.
    let mixed: Vec<serde_json::Value> = r.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "sub-libraries-mixed")
        .cloned()
        .collect();
    assert_eq!(mixed.len(), 1, "{}", r.describe());
    assert_eq!(mixed[0]["severity"], "error", "{}", r.describe());
    assert!(
        mixed[0]["seen"].to_string().contains("mapped this copy"),
        "{}",
        r.describe()
    );
    assert_eq!(r.code(), 7);
}

/// `doctor --pid PID`: the files a running process maps now, read from it,
/// with the process's own environment (its `LD_LIBRARY_PATH` is not
/// doctor's).
#[test]
fn doctor_pid_reads_a_running_process() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    let Some(py) = python() else { return };
    let code = "import ctypes, sys; ctypes.CDLL('libcudnn.so.9').cudnnGetVersion(); print('ready', flush=True); sys.stdin.read()";
    let mut child = sb
        .wrapped(py.to_str().unwrap())
        .args(["-c", code])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "ready");
    let pid = child.id().to_string();
    let maps = fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    // doctor runs without LD_LIBRARY_PATH: it judges with the process's.
    sb.env.retain(|(k, _)| k != "LD_LIBRARY_PATH");
    let r = sb.run(["doctor", "--json", "--pid", &pid]);
    drop(child.stdin.take());
    let _ = child.wait();
    let rows = mapped_rows(&r);
    for m in &rows {
        let p = m["path"].as_str().unwrap();
        assert!(maps.contains(p), "{p} is not in the process's maps");
        assert_eq!(m["agrees"], true, "{}", r.describe());
    }
    assert_eq!(
        rows[0]["path"],
        real(tk.join("lib64/libcudnn.so.9")).to_str().unwrap()
    );
    assert_eq!(rows[0]["version"], "9.27.0");
    assert_eq!(r.json()["summary"]["process"]["state"], "running");
    assert_eq!(
        r.json()["summary"]["active_cudnn"][0]["via"],
        "LD_LIBRARY_PATH entry 1",
        "the process's environment, not doctor's: {}",
        r.describe()
    );
}

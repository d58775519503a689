//! `cudnnm frameworks` and `--for python` through the real binary, on Python
//! environments made by test code from the real `METADATA` headers of
//! framework wheels (`tests/fixtures/frameworks/`, sources in its
//! SOURCES.md). An environment is a venv folder (`pyvenv.cfg`,
//! `lib/python3.12/site-packages/*.dist-info`) whose interpreter does not
//! exist, so cudnnm reads it from its layout with this machine's markers.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use common::Sandbox;
use serde_json::Value;

fn fixture(name: &str) -> String {
    fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/frameworks")
            .join(format!("{name}.METADATA")),
    )
    .unwrap()
}

/// A venv below the sandbox holding the real fixtures `real` and minimal
/// distributions `plain` (name, version); returns its folder.
fn venv(sb: &Sandbox, name: &str, real: &[&str], plain: &[(&str, &str)]) -> PathBuf {
    let prefix = sb.root().join(name);
    let site = if cfg!(windows) {
        prefix.join("Lib").join("site-packages")
    } else {
        prefix.join("lib/python3.12/site-packages")
    };
    fs::create_dir_all(&site).unwrap();
    fs::write(
        prefix.join("pyvenv.cfg"),
        "home = /nowhere\nversion_info = 3.12.3\n",
    )
    .unwrap();
    for r in real {
        let d = site.join(format!("{r}.dist-info"));
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join("METADATA"), fixture(r)).unwrap();
    }
    for (n, v) in plain {
        let d = site.join(format!("{}-{v}.dist-info", n.replace('-', "_")));
        fs::create_dir_all(&d).unwrap();
        fs::write(
            d.join("METADATA"),
            format!("Metadata-Version: 2.1\nName: {n}\nVersion: {v}\n"),
        )
        .unwrap();
    }
    prefix
}

/// A user catalog listing the CUDA 13 cuDNN wheels (the embedded catalog of
/// this branch has none yet), as `manifest refresh` would write them.
fn cu13_catalog(sb: &Sandbox) {
    fs::create_dir_all(sb.home()).unwrap();
    fs::write(
        sb.home().join("catalog.toml"),
        r#"schema = 1

[[wheel]]
package = "nvidia-cudnn-cu13"
cuda = "13"
source = "https://pypi.org/simple/nvidia-cudnn-cu13/ (test fixture: a subset of the versions)"
versions = ["9.12.0.46", "9.20.0.48", "9.24.0.43", "9.25.0.15", "9.26.0.51", "9.26.1.1", "9.28.1.4"]
"#,
    )
    .unwrap();
}

/// The companions `pip install tensorflow[and-cuda]==2.21.0` installs (names
/// and lowest versions from its metadata), so that its extra is in use.
const TF_AND_CUDA: &[(&str, &str)] = &[
    ("nvidia-cublas-cu12", "12.5.3.2"),
    ("nvidia-cuda-cupti-cu12", "12.5.82"),
    ("nvidia-cuda-nvcc-cu12", "12.5.82"),
    ("nvidia-cuda-nvrtc-cu12", "12.5.82"),
    ("nvidia-cuda-runtime-cu12", "12.5.82"),
    ("nvidia-cufft-cu12", "11.2.3.61"),
    ("nvidia-curand-cu12", "10.3.6.82"),
    ("nvidia-cusolver-cu12", "11.6.3.83"),
    ("nvidia-cusparse-cu12", "12.5.1.3"),
    ("nvidia-nccl-cu12", "2.27.7"),
    ("nvidia-nvjitlink-cu12", "12.5.82"),
];

fn needs_of(json: &Value, framework: &str) -> Vec<String> {
    json["frameworks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == framework)
        .unwrap_or_else(|| panic!("{framework} not listed: {json:#}"))["needs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["specifiers"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn frameworks_json_lists_each_framework_with_its_range() {
    let sb = Sandbox::new();
    cu13_catalog(&sb);
    let env = venv(
        &sb,
        "venv",
        &[
            "torch-2.15.0",
            "tensorflow-2.21.0",
            "jax-0.12.0.1",
            "jaxlib-0.12.0.1",
            "jax_cuda13_plugin-0.12.0.1",
            "onnxruntime_gpu-1.31.1",
            "nvidia_cudnn_cu13-9.26.0.51",
        ],
        &[("jax-cuda13-pjrt", "0.12.0.1")],
    );
    let run = sb.run([
        "frameworks".as_ref(),
        "--json".as_ref(),
        "--python".as_ref(),
        env.as_os_str(),
    ]);
    let json = run.ok().json();
    assert_eq!(json["python"]["found_by"], "layout");
    // Linux: torch's exact pin; Windows: no nvidia requirement applies (platform_system).
    if cfg!(windows) {
        assert!(
            needs_of(&json, "torch")
                .iter()
                .all(|s| !s.starts_with("=="))
        );
    } else {
        assert_eq!(needs_of(&json, "torch"), ["==9.26.0.51"]);
        assert_eq!(needs_of(&json, "jax-cuda13-plugin"), [">=9.12.0.46, <10.0"]);
    }
    // TensorFlow without [and-cuda]: the catalog's build row (cuDNN 9.3, CUDA 12.5); native
    // Windows GPU builds end at 2.10, so on Windows it has none.
    if cfg!(windows) {
        assert!(needs_of(&json, "tensorflow").is_empty());
    } else {
        assert_eq!(needs_of(&json, "tensorflow"), [">=9.3, <10"]);
        let tf = &json["frameworks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == "tensorflow")
            .unwrap()["needs"][0];
        assert_eq!(tf["from"]["kind"], "build_row");
        assert_eq!(tf["cuda"], "12");
    }
    // onnxruntime-gpu[cudnn] is in use (nvidia-cudnn-cu13 is installed).
    assert_eq!(needs_of(&json, "onnxruntime-gpu"), ["~=9.0"]);
    // The cuDNN wheel itself is not a framework.
    assert!(
        json["frameworks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["name"] != "nvidia-cudnn-cu13")
    );
}

#[test]
fn pin_for_python_with_torch_and_onnxruntime_picks_9_26_0_51_for_cuda_13() {
    if cfg!(windows) {
        return; // torch's nvidia-cudnn-cu13 requirement is for Linux (platform_system).
    }
    let sb = Sandbox::new();
    cu13_catalog(&sb);
    let env = venv(
        &sb,
        "venv",
        &[
            "torch-2.15.0",
            "onnxruntime_gpu-1.31.1",
            "nvidia_cudnn_cu13-9.26.0.51",
        ],
        &[],
    );
    let json = sb
        .run([
            "frameworks".as_ref(),
            "--json".as_ref(),
            "--python".as_ref(),
            env.as_os_str(),
        ])
        .ok()
        .json();
    assert_eq!(json["choice"]["outcome"], "release", "{json:#}");
    assert_eq!(json["choice"]["release"], "9.26.0.51_cuda13");
    let torch = json["frameworks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "torch")
        .unwrap();
    assert_eq!(torch["loads"]["kind"], "wheel");
    assert_eq!(torch["wheels"][0]["satisfies"], true);
    sb.run(["frameworks".as_ref(), "--python".as_ref(), env.as_os_str()])
        .ok()
        .stdout_has(&[
            "torch 2.15.0",
            "requires   nvidia-cudnn-cu13==9.26.0.51 ; platform_system == 'Linux'",
            "onnxruntime-gpu 1.31.1",
            "requires   nvidia-cudnn-cu13~=9.0 ; extra == 'cudnn'",
            "cuDNN 9.26.0.51_cuda13 satisfies every framework here",
        ]);
    // `pin --for python` writes that release (not installed yet: --force).
    sb.run([
        "pin".as_ref(),
        "--for".as_ref(),
        "python".as_ref(),
        "--python".as_ref(),
        env.as_os_str(),
        "--force".as_ref(),
    ])
    .ok()
    .stderr_has(&["cuDNN 9.26.0.51_cuda13: the newest release satisfying onnxruntime-gpu 1.31.1, torch 2.15.0"]);
    let pin = fs::read_to_string(sb.work().join(".cudnn-version")).unwrap();
    assert_eq!(pin.trim(), "9.26.0.51_cuda13");
    // `install --for torch` names the wheel the catalog has it as (pip is offline here: it fails
    // after saying what it installs).
    sb.run([
        "install".as_ref(),
        "--for".as_ref(),
        "torch".as_ref(),
        "--python".as_ref(),
        env.as_os_str(),
    ])
    .stderr_has(&["cuDNN 9.26.0.51_cuda13: the newest release satisfying torch 2.15.0"]);
}

#[test]
fn torch_and_a_cuda_12_framework_are_a_conflict_naming_both_requirements() {
    let sb = Sandbox::new();
    cu13_catalog(&sb);
    let env = venv(
        &sb,
        "venv",
        &[
            "torch-2.15.0",
            "tensorflow-2.21.0",
            "nvidia_cudnn_cu12-9.10.2.21",
        ],
        TF_AND_CUDA,
    );
    if cfg!(windows) {
        return;
    }
    let json = sb
        .run([
            "frameworks".as_ref(),
            "--json".as_ref(),
            "--python".as_ref(),
            env.as_os_str(),
        ])
        .ok()
        .json();
    let c = &json["choice"];
    assert_eq!(c["outcome"], "conflict", "{json:#}");
    assert_eq!(
        c["first"]["requirement"],
        "nvidia-cudnn-cu12>=9.3.0.75,<10.0 ; extra == 'and-cuda'"
    );
    assert_eq!(c["first"]["framework"], "tensorflow");
    assert_eq!(
        c["second"]["requirement"],
        "nvidia-cudnn-cu13==9.26.0.51 ; platform_system == 'Linux'"
    );
    let kinds: Vec<&str> = c["resolutions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"separate_environments"), "{kinds:?}");
    sb.run(["frameworks".as_ref(), "--python".as_ref(), env.as_os_str()])
        .ok()
        .stdout_has(&[
            "no cuDNN satisfies both:",
            "tensorflow 2.21.0 requires nvidia-cudnn-cu12>=9.3.0.75,<10.0 ; extra == 'and-cuda'",
            "torch 2.15.0 requires nvidia-cudnn-cu13==9.26.0.51 ; platform_system == 'Linux'",
            "tensorflow and torch in separate environments",
        ]);
    // `--for python` refuses, naming both requirements.
    sb.run([
        "pin".as_ref(),
        "--for".as_ref(),
        "python".as_ref(),
        "--python".as_ref(),
        env.as_os_str(),
    ])
    .code_is(8)
    .stderr_has(&[
        "error: no cuDNN release can be chosen for tensorflow 2.21.0, torch 2.15.0",
        "tensorflow 2.21.0 requires nvidia-cudnn-cu12>=9.3.0.75,<10.0 ; extra == 'and-cuda'",
        "torch 2.15.0 requires nvidia-cudnn-cu13==9.26.0.51 ; platform_system == 'Linux'",
        "help:",
    ]);
    assert!(!sb.work().join(".cudnn-version").exists());
}

#[test]
fn an_advisory_release_is_never_chosen_and_is_warned_about_in_use() {
    let sb = Sandbox::new();
    // A made-up application that caps cuDNN below 9.10.1: the newest release in its range
    // is 9.10.0.56, which the ABI-break advisory covers.
    let env = venv(&sb, "venv", &[], &[("nvidia-cudnn-cu12", "9.10.0.56")]);
    let app = env
        .join(if cfg!(windows) {
            "Lib/site-packages"
        } else {
            "lib/python3.12/site-packages"
        })
        .join("legacy_app-1.0.dist-info");
    fs::create_dir_all(&app).unwrap();
    fs::write(
        app.join("METADATA"),
        "Metadata-Version: 2.1\nName: legacy-app\nVersion: 1.0\nRequires-Dist: nvidia-cudnn-cu12<9.10.1,>=9.8\n",
    )
    .unwrap();
    let run = sb.run([
        "frameworks".as_ref(),
        "--json".as_ref(),
        "--python".as_ref(),
        env.as_os_str(),
    ]);
    let json = run.ok().json();
    assert_eq!(json["choice"]["outcome"], "release", "{json:#}");
    assert_eq!(json["choice"]["release"], "9.9.0.52_cuda12");
    let passed = &json["choice"]["passed_over"][0];
    assert_eq!(passed["release"], "9.10.0.56_cuda12");
    assert_eq!(passed["why"]["id"], "cudnn-9.10.0-abi");
    assert_eq!(json["advised"][0]["wheel"], "nvidia-cudnn-cu12");
    assert_eq!(json["advised"][0]["id"], "cudnn-9.10.0-abi");
    sb.run(["frameworks".as_ref(), "--python".as_ref(), env.as_os_str()])
        .ok()
        .stderr_has(&[
            "the nvidia-cudnn-cu12 wheel installed here (9.10.0.56_cuda12) is covered by advisory cudnn-9.10.0-abi",
        ])
        .stdout_has(&["passed over 9.10.0.56_cuda12 (advisory cudnn-9.10.0-abi"]);
}

#[test]
fn a_folder_that_is_no_environment_is_a_clear_error() {
    let sb = Sandbox::new();
    let nowhere = sb.root().join("empty");
    fs::create_dir_all(&nowhere).unwrap();
    sb.run([
        "frameworks".as_ref(),
        "--python".as_ref(),
        nowhere.as_os_str(),
    ])
    .code_is(3)
    .stderr_has(&["could not read the Python environment of", "help:"]);
}

#[test]
fn a_real_interpreter_is_asked_for_its_site_packages() {
    if cfg!(windows) {
        return;
    }
    let Ok(python) = which_python() else { return };
    let sb = Sandbox::new();
    let venv = sb.root().join("real-venv");
    let made = std::process::Command::new(&python)
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status();
    if !made.is_ok_and(|s| s.success()) {
        return;
    }
    let json = sb
        .run([
            "frameworks".as_ref(),
            "--json".as_ref(),
            "--python".as_ref(),
            venv.join("bin/python").as_os_str(),
        ])
        .ok()
        .json();
    assert_eq!(json["python"]["found_by"], "interpreter");
    let site = json["python"]["site_packages"][0].as_str().unwrap();
    assert!(
        site.starts_with(venv.to_str().unwrap()) && site.ends_with("site-packages"),
        "{site}"
    );
    assert_eq!(json["choice"]["outcome"], "no_needs");
}

fn which_python() -> Result<PathBuf, ()> {
    std::env::split_paths(&std::env::var_os("PATH").ok_or(())?)
        .map(|d| d.join("python3"))
        .find(|p| p.is_file())
        .ok_or(())
}

#[test]
fn installing_an_advised_release_warns_with_the_advisory_and_its_source() {
    let sb = Sandbox::new();
    let archive = |v: &str| {
        if cfg!(windows) {
            common::fixtures::redist_windows(v, "12")
        } else {
            common::fixtures::redist_linux(v, "12")
        }
    };
    let dir = archive("9.10.0.56").write_dir(sb.root());
    sb.run(["install".as_ref(), dir.as_os_str()])
        .ok()
        .stderr_has(&[
            "cuDNN 9.10.0.56_cuda12 is covered by advisory cudnn-9.10.0-abi",
            "release-notes.html#cudnn-9-10-1",
        ]);
    // A release no advisory covers installs without that warning.
    let dir = archive("9.10.2.21").write_dir(sb.root());
    let run = sb.run(["install".as_ref(), dir.as_os_str()]).ok();
    assert!(!run.stderr().contains("advisory"), "{}", run.describe());
}

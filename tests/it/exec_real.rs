//! `exec` on real input: the two real cuDNN 9 builds (nvidia-cudnn-jit-cu12
//! wheels 9.12.0.46 and 9.27.0.42) installed with `cudnnm install`, then a
//! Python process loads `libcudnn.so.9` *by soname* through ctypes, so only
//! the `LD_LIBRARY_PATH` that cudnnm set can find it, and prints
//! `cudnnGetVersion()`. No GPU is needed to load the library and ask its version.

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use crate::common;

use std::fs;

use common::Sandbox;

const PROBE: &str = "import ctypes\n\
lib = ctypes.CDLL('libcudnn.so.9')\n\
lib.cudnnGetVersion.restype = ctypes.c_size_t\n\
print(lib.cudnnGetVersion())\n";

#[test]
fn exec_loads_the_flagged_or_pinned_real_release_by_soname() {
    if common::skip::need_program("python3", "python3").is_none() {
        return;
    }
    let sb = Sandbox::new();
    for w in [
        "nvidia_cudnn_jit_cu12-9.12.0.46",
        "nvidia_cudnn_jit_cu12-9.27.0.42",
    ] {
        sb.run([
            std::ffi::OsString::from("install"),
            common::real_wheel(w).into_os_string(),
        ])
        .ok();
    }
    // Without cudnnm the loader cannot find the library at all.
    let direct = std::process::Command::new("python3")
        .args(["-c", PROBE])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .unwrap();
    assert!(
        !direct.status.success(),
        "libcudnn.so.9 must not be loadable without cudnnm"
    );

    let r = sb
        .run(["exec", "--version", "9.12", "--", "python3", "-c", PROBE])
        .ok();
    assert_eq!(r.stdout(), "91200\n", "{}", r.describe());

    fs::write(sb.work().join(".cudnn-version"), "9.27.0.42\n").unwrap();
    let r = sb.run(["exec", "--", "python3", "-c", PROBE]).ok();
    assert_eq!(r.stdout(), "92700\n", "{}", r.describe());

    // The flag still wins over the pin.
    let r = sb
        .run([
            "exec",
            "--version",
            "9.12.0.46",
            "--",
            "python3",
            "-c",
            PROBE,
        ])
        .ok();
    assert_eq!(r.stdout(), "91200\n", "{}", r.describe());
}

//! The main job on real input: two real cuDNN builds (the cached
//! `nvidia-cudnn-jit-cu12` 9.12.0.46 and 9.27.0.42 wheels) imported with
//! `cudnnm install`, switched in a sandbox CUDA 12 toolkit with `use` and
//! `rollback`; after each step the toolkit's `lib64/libcudnn.so.9` is loaded
//! in a fresh process and asked `cudnnGetVersion()`.

// These tests build toolkits with Unix links and run as processes on Linux;
// the Windows layout is exercised here as data (see deploy_support).
#![cfg(unix)]

use crate::common;
use crate::deploy_support;

use std::path::Path;
use std::process::Command;

use common::{Sandbox, real_wheel};
use deploy_support::*;

/// `cudnnGetVersion()` of the library at `lib`, loaded by a fresh python3
/// process (a library, once loaded, cannot be swapped within one process).
fn loaded_version(lib: &Path) -> u64 {
    let out = Command::new("python3")
        .args([
            "-c",
            "import ctypes,sys; l=ctypes.CDLL(sys.argv[1]); l.cudnnGetVersion.restype=ctypes.c_size_t; print(l.cudnnGetVersion())",
        ])
        .arg(lib)
        .output()
        .expect("python3 runs (CI installs it; see .ci/run)");
    assert!(
        out.status.success(),
        "loading {} failed: {}",
        lib.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[test]
fn real_wheels_switch_and_roll_back_as_the_loaded_library_reports() {
    if common::skip::need_program("python3", "python3").is_none() {
        return;
    }
    let sb = Sandbox::new();
    let tk = linux_toolkit(&sb.root().join("CUDA 12.4 (sandbox)"), "12.4.1");
    let t = tk.display().to_string();
    for w in [
        "nvidia_cudnn_jit_cu12-9.12.0.46",
        "nvidia_cudnn_jit_cu12-9.27.0.42",
    ] {
        sb.run(["install".as_ref(), real_wheel(w).as_os_str()]).ok();
    }
    let lib = tk.join("lib64/libcudnn.so.9");
    sb.run(["use", "9.12.0.46", "--cuda-root", &t])
        .ok()
        .stderr_has(&["(none) → 9.12.0.46", "(symlink, backup 1)"]);
    assert_eq!(loaded_version(&lib), 91200);
    sb.run(["use", "9.27.0.42", "--cuda-root", &t])
        .ok()
        .stderr_has(&["9.12.0.46 → 9.27.0.42", "(symlink, backup 2)"]);
    assert_eq!(loaded_version(&lib), 92700);
    sb.run(["rollback", "--cuda-root", &t])
        .ok()
        .stderr_has(&["9.27.0.42 → 9.12.0.46"]);
    assert_eq!(loaded_version(&lib), 91200);
    // The other modes, with the same real libraries.
    sb.run(["use", "9.27", "--cuda-root", &t, "--mode", "copy"])
        .ok()
        .stderr_has(&["→ 9.27.0.42", "(copy,"]);
    assert!(
        !std::fs::symlink_metadata(&lib)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(loaded_version(&lib), 92700);
    sb.run(["use", "9.12", "--cuda-root", &t, "--mode", "hardlink"])
        .ok()
        .stderr_has(&["(hardlink,"]);
    assert_eq!(loaded_version(&lib), 91200);
    sb.run(["rollback", "--cuda-root", &t])
        .ok()
        .stderr_has(&["9.12.0.46 → 9.27.0.42"]);
    assert_eq!(
        loaded_version(&lib),
        92700,
        "the copy-mode 9.27 files restored from the backup load"
    );
    // The development link the importer adds stays a link in the toolkit.
    assert_eq!(
        std::fs::read_link(tk.join("lib64/libcudnn.so")).unwrap(),
        Path::new("libcudnn.so.9")
    );
    // A deployed release is not uninstalled without --force.
    sb.run(["uninstall", "9.27.0.42"]).code_is(8);
}

//! `doctor -- CMD` on Windows (the wine suite, `scripts/test-windows.sh`):
//! the program runs as doctor's debuggee, and every DLL the loader reports
//! is what it mapped. The program is cudnnm's own library probe loading a
//! real PE DLL (the stand-in the wine setup builds) under a cuDNN name.

#![cfg(windows)]

use std::fs;

use crate::common::{Sandbox, bin};

#[test]
fn doctor_run_lists_the_cudnn_dll_the_program_loaded() {
    let pe = std::env::var_os("CUDNNM_TEST_PE_DLL")
        .expect("CUDNNM_TEST_PE_DLL unset: run the Windows tests with scripts/test-windows.sh");
    let sb = Sandbox::new();
    let dir = sb.root().join("cudnn").join("bin");
    fs::create_dir_all(&dir).unwrap();
    let dll = dir.join("cudnn64_9.dll");
    fs::copy(&pe, &dll).unwrap();
    let r = sb.run([
        std::ffi::OsStr::new("doctor"),
        "--json".as_ref(),
        "--".as_ref(),
        bin().as_os_str(),
        "probe-library".as_ref(),
        dll.as_os_str(),
    ]);
    let p = &r.json()["summary"]["process"];
    assert_eq!(p["state"], "exit 0", "{}", r.describe());
    let mapped: Vec<String> = p["mapped"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", r.describe()))
        .iter()
        .map(|m| m["path"].as_str().unwrap().to_ascii_lowercase())
        .collect();
    let want = dll.to_string_lossy().to_ascii_lowercase();
    assert!(
        mapped
            .iter()
            .any(|m| m.ends_with(r"cudnn\bin\cudnn64_9.dll") && want.ends_with(&m[m.len() - 20..])),
        "{mapped:?} / {want}\n{}",
        r.describe()
    );
}

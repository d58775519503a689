//! Real cuDNN wheels unpacked once per test process, shared by the doctor
//! and verify tests.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::common::real_wheel;

/// The files of a real wheel, extracted once per test process (tests run
/// in parallel: one extraction at a time): `include/`, and with `libs` also
/// `lib/` (the `.so.9` files).
pub fn wheel_files(version: &str, libs: bool) -> PathBuf {
    static CACHE: OnceLock<tempfile::TempDir> = OnceLock::new();
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let root = CACHE.get_or_init(|| {
        tempfile::Builder::new()
            .prefix("cudnnm-doctor-wheels-")
            .tempdir()
            .unwrap()
    });
    let dest = root.path().join(format!("{version}-{libs}"));
    if dest.join("done").exists() {
        return dest;
    }
    let whl = real_wheel(&format!("nvidia_cudnn_jit_cu12-{version}"));
    let mut z = zip::ZipArchive::new(fs::File::open(&whl).unwrap()).unwrap();
    for i in 0..z.len() {
        let mut e = z.by_index(i).unwrap();
        let name = e.name().unwrap().to_string();
        let sub = if let Some(n) = name.strip_prefix("nvidia/cudnn_jit/lib/").filter(|_| libs) {
            Path::new("lib").join(n)
        } else if let Some(n) = name.strip_prefix("nvidia/cudnn_jit/include/") {
            Path::new("include").join(n)
        } else {
            continue;
        };
        if sub.extension().is_some_and(|x| x == "py") || name.ends_with('/') {
            continue;
        }
        let out = dest.join(sub);
        fs::create_dir_all(out.parent().unwrap()).unwrap();
        let mut f = fs::File::create(&out).unwrap();
        std::io::copy(&mut e, &mut f).unwrap();
    }
    fs::write(dest.join("done"), b"").unwrap();
    dest
}

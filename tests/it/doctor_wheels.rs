//! Real cuDNN wheels unpacked once per build, shared by the doctor
//! and verify tests.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::real_wheel;

/// The files of a real wheel, extracted once per build into the tests'
/// shared folder (see `common::shared_once`): `include/`, and with `libs`
/// also `lib/` (the `.so.9` files).
pub fn wheel_files(version: &str, libs: bool) -> PathBuf {
    crate::common::shared_once(&format!("doctor-wheel-{version}-{libs}"), |tmp| {
        extract(version, libs, &tmp.join("files"))
    })
}

fn extract(version: &str, libs: bool, dest: &Path) -> PathBuf {
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
        // Read-only like store files: tests hard-link these, and a write
        // through a link must fail, not change the copy every later run shares.
        let mut perm = f.metadata().unwrap().permissions();
        perm.set_readonly(true);
        fs::set_permissions(&out, perm).unwrap();
    }
    dest.to_path_buf()
}

//! The consumers probe (Linux): each framework's own libraries that load
//! cuDNN — those that need a cuDNN library (`DT_NEEDED`) or whose search
//! folders (`DT_RPATH`/`DT_RUNPATH`) lead into a cuDNN wheel — with what
//! the loader reads from them. Their search folders are listed too, so the
//! loader's walk for them can be played through.

use std::fs;
use std::path::{Path, PathBuf};

use super::folders::Scanner;
use super::s;
use crate::doctor::binfmt;
use crate::doctor::snapshot::{Consumer, Framework};
use crate::names;

/// At most this many files are read per package folder.
const FILES_PER_DIR: usize = 400;

/// The framework libraries in the frameworks' package folders that load
/// cuDNN; the folders their `$ORIGIN`-relative and absolute search entries
/// name are added to `scan`.
pub(crate) fn probe(frameworks: &[Framework], scan: &mut Scanner) -> Vec<Consumer> {
    let mut out: Vec<Consumer> = Vec::new();
    for fw in frameworks.iter().filter(|f| !f.is_cudnn_wheel()) {
        let site = Path::new(&fw.location);
        for dir in package_dirs(site, &fw.name) {
            for path in shared_objects(&dir) {
                let info = binfmt::read_dynamic(&path);
                let needed: Vec<String> = info
                    .needed
                    .iter()
                    .filter(|n| names::is_cudnn_name(n))
                    .cloned()
                    .collect();
                let leads_to_cudnn = info
                    .rpath
                    .iter()
                    .chain(&info.runpath)
                    .any(|p| p.contains("cudnn"));
                if needed.is_empty() && !leads_to_cudnn {
                    continue;
                }
                for p in info.rpath.iter().chain(&info.runpath) {
                    let d = p
                        .replace("${ORIGIN}", &s(&dir))
                        .replace("$ORIGIN", &s(&dir));
                    if d.starts_with('/') {
                        scan.add(Path::new(&d));
                    }
                }
                out.push(Consumer {
                    framework: fw.name.clone(),
                    version: fw.version.clone(),
                    path: s(&path),
                    needed,
                    rpath: info.rpath,
                    runpath: info.runpath,
                });
            }
        }
    }
    out
}

/// Where a framework keeps the libraries that load CUDA and cuDNN, by its
/// distribution name.
fn package_dirs(site: &Path, dist: &str) -> Vec<PathBuf> {
    let rel: &[&str] = match dist {
        "torch" => &["torch/lib"],
        d if d.starts_with("tensorflow") => &["tensorflow", "tensorflow/python"],
        d if d.starts_with("jax") => &["jaxlib", "jaxlib/cuda", "jax_plugins"],
        "onnxruntime-gpu" => &["onnxruntime/capi"],
        "paddlepaddle-gpu" => &["paddle/libs", "paddle/base"],
        d if d.starts_with("cupy") => &["cupy_backends/cuda/libs", "cupy/cuda"],
        "ctranslate2" => &["ctranslate2", "ctranslate2.libs"],
        _ => &[],
    };
    let mut dirs: Vec<PathBuf> = rel.iter().map(|r| site.join(r)).collect();
    // jax's CUDA plugins live one level down (`jax_plugins/xla_cuda12`).
    if dist.starts_with("jax") {
        dirs.extend(
            super::subdirs(&site.join("jax_plugins"))
                .into_iter()
                .map(|(d, _)| d),
        );
    }
    dirs
}

/// The shared objects directly in `dir` (`lib*.so*`, Python extensions),
/// links included, at most [`FILES_PER_DIR`], sorted.
fn shared_objects(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            (n.ends_with(".so") || n.contains(".so.")) && !names::is_cudnn_name(&n)
        })
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .take(FILES_PER_DIR)
        .collect();
    v.sort();
    v
}

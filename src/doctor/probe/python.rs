//! The Python probe: the `site-packages` folders in sight, and the
//! frameworks and cuDNN wheels installed there (from their `*.dist-info`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::{s, subdirs};
use crate::doctor::snapshot::Framework;
use crate::env::{self, Env};

/// The `site-packages` folders of the Python environments in sight:
/// `VIRTUAL_ENV`, `CONDA_PREFIX`, every Python on `PATH`, the user site.
pub(crate) fn site_packages(env: &Env) -> Vec<PathBuf> {
    let windows = env.is_windows();
    let mut prefixes: Vec<PathBuf> = Vec::new();
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(v) = env.var(var) {
            prefixes.push(PathBuf::from(v));
        }
    }
    let mut sites: Vec<PathBuf> = Vec::new();
    for d in env.path_list(env::PATH) {
        let has_py = if windows {
            d.join("python.exe").is_file()
        } else {
            d.join("python3").exists() || d.join("python").exists()
        };
        if !has_py {
            continue;
        }
        let prefix = if windows {
            if d.file_name()
                .is_some_and(|n| n.eq_ignore_ascii_case("Scripts"))
            {
                d.parent().map(Path::to_path_buf)
            } else {
                Some(d.clone())
            }
        } else {
            d.parent().map(Path::to_path_buf)
        };
        prefixes.extend(prefix);
    }
    if windows {
        if let Some(a) = env.var("APPDATA") {
            for (d, name) in subdirs(&Path::new(&a).join("Python")) {
                if name.starts_with("Python3") {
                    sites.push(d.join("site-packages"));
                }
            }
        }
    } else if let Some(h) = env.var("HOME") {
        prefixes.push(Path::new(&h).join(".local"));
    }
    for p in prefixes {
        if windows {
            sites.push(p.join("Lib").join("site-packages"));
            continue;
        }
        for lib in ["lib", "lib64"] {
            for (d, name) in subdirs(&p.join(lib)) {
                if name.starts_with("python3") {
                    sites.push(d.join("site-packages"));
                    sites.push(d.join("dist-packages"));
                }
            }
        }
        sites.push(p.join("lib/python3/dist-packages"));
    }
    let mut seen = BTreeSet::new();
    sites.retain(|s| s.is_dir() && seen.insert(fs::canonicalize(s).unwrap_or_else(|_| s.clone())));
    sites
}

/// Whether a distribution matters to cuDNN.
fn interesting(name: &str) -> bool {
    name.starts_with("tensorflow")
        || name == "torch"
        || name.starts_with("nvidia-cudnn")
        || name.starts_with("jax")
        || name == "paddlepaddle-gpu"
        || name == "onnxruntime-gpu"
        || name.starts_with("cupy-cuda")
        || name == "ctranslate2"
}

/// Frameworks and cuDNN wheels in the `site-packages` folders, from their
/// `*.dist-info` (name, version, an exact `nvidia-cudnn-*==` requirement
/// that applies on Windows when `windows` is set, else on Linux).
pub(crate) fn frameworks(sites: &[PathBuf], windows: bool) -> Vec<Framework> {
    let mut out = Vec::new();
    for site in sites {
        let Ok(rd) = fs::read_dir(site) else { continue };
        let mut infos: Vec<(String, String, PathBuf)> = Vec::new();
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            let Some(base) = n.strip_suffix(".dist-info") else {
                continue;
            };
            let Some((name, version)) = base.split_once('-') else {
                continue;
            };
            let name = name.to_ascii_lowercase().replace(['_', '.'], "-");
            if interesting(&name) {
                infos.push((name, version.to_string(), e.path()));
            }
        }
        infos.sort();
        let installed: BTreeMap<String, String> = infos
            .iter()
            .map(|(n, v, _)| (n.clone(), v.clone()))
            .collect();
        for (name, version, dir) in infos {
            let requirement = if name.starts_with("nvidia-cudnn") {
                None
            } else {
                read_metadata(&dir.join("METADATA"))
                    .and_then(|text| cudnn_requirement(&text, &installed, windows))
            };
            out.push(Framework {
                name,
                version,
                location: s(site),
                cudnn_requirement: requirement,
            });
        }
    }
    out
}

/// The first 2 MiB of a `METADATA` file (its headers come first).
fn read_metadata(path: &Path) -> Option<String> {
    let f = fs::File::open(path).ok()?;
    let mut text = String::new();
    f.take(2 << 20).read_to_string(&mut text).ok()?;
    Some(text)
}

/// `Requires-Dist: nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux"`
/// → `nvidia-cudnn-cu12==9.1.0.70`, from the headers of a `METADATA` text.
/// A requirement behind an extra (`extra == "and-cuda"`) counts only when
/// that wheel is `installed`; one for a `platform_system` counts only on
/// that system (Windows when `windows` is set, else Linux).
fn cudnn_requirement(
    metadata: &str,
    installed: &BTreeMap<String, String>,
    windows: bool,
) -> Option<String> {
    for line in metadata.lines() {
        if line.is_empty() {
            break;
        }
        let Some(req) = line.strip_prefix("Requires-Dist:") else {
            continue;
        };
        let (spec, marker) = match req.split_once(';') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (req.trim(), ""),
        };
        let spec = spec.replace(' ', "");
        let Some((pkg, ver)) = spec.split_once("==") else {
            continue;
        };
        let pkg = crate::version::python_name(pkg, '-');
        if !pkg.starts_with("nvidia-cudnn") {
            continue;
        }
        if marker.contains("extra") && !installed.contains_key(&pkg) {
            continue;
        }
        if marker.contains("platform_system")
            && !marker.contains(if windows { "Windows" } else { "Linux" })
        {
            continue;
        }
        return Some(format!("{pkg}=={ver}"));
    }
    None
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;

    #[test]
    fn requirement_markers() {
        let torch = "Name: torch\nRequires-Dist: filelock\nRequires-Dist: nvidia-cudnn-cu12 ==9.1.0.70; platform_system == \"Linux\" and platform_machine == \"x86_64\"\n\nbody Requires-Dist: nvidia-cudnn-cu12==1\n";
        let none = BTreeMap::new();
        assert_eq!(
            cudnn_requirement(torch, &none, false).as_deref(),
            Some("nvidia-cudnn-cu12==9.1.0.70")
        );
        assert_eq!(cudnn_requirement(torch, &none, true), None);
        let tf =
            "Name: tensorflow\nRequires-Dist: nvidia-cudnn-cu12==8.9.4.25; extra == \"and-cuda\"\n";
        assert_eq!(cudnn_requirement(tf, &none, false), None);
        let mut with = BTreeMap::new();
        with.insert("nvidia-cudnn-cu12".to_string(), "8.9.4.25".to_string());
        assert_eq!(
            cudnn_requirement(tf, &with, false).unwrap(),
            "nvidia-cudnn-cu12==8.9.4.25"
        );
    }

    #[test]
    fn frameworks_are_read_from_their_dist_info() {
        let d = tempfile::tempdir().unwrap();
        let site = d.path().join("site-packages");
        for (info, metadata) in [
            (
                "torch-2.4.1+cu121.dist-info",
                "Name: torch\nRequires-Dist: nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\"\n",
            ),
            (
                "nvidia_cudnn_cu12-9.1.0.70.dist-info",
                "Name: nvidia-cudnn-cu12\n",
            ),
            ("requests-2.32.0.dist-info", "Name: requests\n"),
        ] {
            fs::create_dir_all(site.join(info)).unwrap();
            fs::write(site.join(info).join("METADATA"), metadata).unwrap();
        }
        let found = frameworks(std::slice::from_ref(&site), false);
        let rows: Vec<(&str, &str, Option<&str>)> = found
            .iter()
            .map(|f| {
                (
                    f.name.as_str(),
                    f.version.as_str(),
                    f.cudnn_requirement.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                ("nvidia-cudnn-cu12", "9.1.0.70", None),
                ("torch", "2.4.1+cu121", Some("nvidia-cudnn-cu12==9.1.0.70"))
            ]
        );
        assert!(found.iter().all(|f| f.location == s(&site)));
    }
}

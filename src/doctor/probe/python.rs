//! The Python probe: the `site-packages` folders in sight, and the
//! frameworks and cuDNN wheels installed there (from their `*.dist-info`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
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
/// `*.dist-info` (name, version, and the `nvidia-cudnn-*` requirement that
/// applies here — PEP 508 markers evaluated for Windows when `windows` is
/// set, else Linux, with the extras in use; [`crate::python`]).
pub(crate) fn frameworks(sites: &[PathBuf], windows: bool) -> Vec<Framework> {
    let mut out = Vec::new();
    for site in sites {
        let Ok(rd) = fs::read_dir(site) else { continue };
        let mut infos: Vec<(String, String)> = Vec::new();
        for e in rd.flatten().take(crate::python::MAX_ENTRIES) {
            let n = e.file_name().to_string_lossy().into_owned();
            let Some(base) = n.strip_suffix(".dist-info") else {
                continue;
            };
            let Some((name, version)) = base.split_once('-') else {
                continue;
            };
            let name = name.to_ascii_lowercase().replace(['_', '.'], "-");
            if interesting(&name) {
                infos.push((name, version.to_string()));
            }
        }
        if infos.is_empty() {
            continue;
        }
        infos.sort();
        let requirements = cudnn_requirements(site, windows);
        for (name, version) in infos {
            let requirement = requirements.get(&name).cloned();
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

/// For each distribution in `site`, the first `nvidia-cudnn-*` requirement
/// that applies here, as `NAME SPECIFIERS` (`nvidia-cudnn-cu12>=9.3.0.75,<10.0`).
fn cudnn_requirements(site: &Path, windows: bool) -> BTreeMap<String, String> {
    // The Python version from `lib/python3.12/site-packages`; `3` when the folder does not say.
    let short = site
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("python"))
        .filter(|v| v.split('.').count() == 2 && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .unwrap_or("3")
        .to_string();
    let full = if short.contains('.') {
        format!("{short}.0")
    } else {
        short.clone()
    };
    let Some(markers) = crate::python::locate::machine_markers(windows, &full, &short) else {
        return BTreeMap::new();
    };
    let env = crate::python::Environment::read(crate::python::Located {
        site_packages: vec![site.to_path_buf()],
        markers,
        found_by: crate::python::FoundBy::Layout(site.to_path_buf()),
    });
    let extras = env.extras_in_use();
    let mut out = BTreeMap::new();
    for d in &env.distributions {
        if d.name.as_ref().starts_with("nvidia-cudnn") {
            continue;
        }
        let found = env.requirements_here(d, &extras).into_iter().find_map(|r| {
            if !r.name.as_ref().starts_with("nvidia-cudnn") {
                return None;
            }
            match &r.version_or_url {
                Some(pep508_rs::VersionOrUrl::VersionSpecifier(v)) => {
                    Some(format!("{}{v}", r.name))
                }
                None => Some(r.name.to_string()),
                Some(pep508_rs::VersionOrUrl::Url(_)) => None,
            }
        });
        if let Some(f) = found {
            out.insert(d.name.to_string(), f);
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;

    #[test]
    fn requirement_markers_ranges_and_extras() {
        let d = tempfile::tempdir().unwrap();
        let site = d.path().join("lib/python3.12/site-packages");
        for (info, metadata) in [
            (
                "torch-2.4.1.dist-info",
                "Name: torch\nVersion: 2.4.1\nRequires-Dist: filelock\nRequires-Dist: nvidia-cudnn-cu12 ==9.1.0.70; platform_system == \"Linux\" and platform_machine == \"x86_64\"\n\nbody Requires-Dist: nvidia-cudnn-cu12==1\n",
            ),
            (
                "tensorflow-2.21.0.dist-info",
                "Name: tensorflow\nVersion: 2.21.0\nProvides-Extra: and-cuda\nRequires-Dist: nvidia-cudnn-cu12<10.0,>=9.3.0.75; extra == \"and-cuda\"\n",
            ),
            (
                "jax_cuda13_plugin-0.12.0.1.dist-info",
                "Name: jax-cuda13-plugin\nVersion: 0.12.0.1\nProvides-Extra: with-cuda\nRequires-Dist: nvidia-cudnn-cu13<10.0,>=9.12.0.46; sys_platform == \"linux\" and extra == \"with-cuda\"\n",
            ),
            (
                "nvidia_cudnn_cu12-9.10.2.21.dist-info",
                "Name: nvidia-cudnn-cu12\nVersion: 9.10.2.21\n",
            ),
        ] {
            fs::create_dir_all(site.join(info)).unwrap();
            fs::write(site.join(info).join("METADATA"), metadata).unwrap();
        }
        let linux = cudnn_requirements(&site, false);
        assert_eq!(linux["torch"], "nvidia-cudnn-cu12==9.1.0.70");
        // tensorflow[and-cuda]: all it adds (the cuDNN wheel) is installed.
        assert_eq!(linux["tensorflow"], "nvidia-cudnn-cu12>=9.3.0.75, <10.0");
        // The plugin's with-cuda adds nvidia-cudnn-cu13, which is not installed.
        assert!(!linux.contains_key("jax-cuda13-plugin"));
        let windows = cudnn_requirements(&site, true);
        assert!(!windows.contains_key("torch"));
        assert_eq!(windows["tensorflow"], "nvidia-cudnn-cu12>=9.3.0.75, <10.0");
    }

    #[test]
    fn frameworks_are_read_from_their_dist_info() {
        let d = tempfile::tempdir().unwrap();
        let site = d.path().join("site-packages");
        for (info, metadata) in [
            (
                "torch-2.4.1+cu121.dist-info",
                "Name: torch\nVersion: 2.4.1+cu121\nRequires-Dist: nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\"\n",
            ),
            (
                "nvidia_cudnn_cu12-9.1.0.70.dist-info",
                "Name: nvidia-cudnn-cu12\nVersion: 9.1.0.70\n",
            ),
            (
                "requests-2.32.0.dist-info",
                "Name: requests\nVersion: 2.32.0\n",
            ),
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

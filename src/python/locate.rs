//! Which Python environment is meant, where its `site-packages` are, and the
//! PEP 508 marker values of its interpreter. The interpreter is asked when it
//! runs (it is the user's own program, like `pip`); a venv or conda folder
//! whose interpreter does not run here is read from its layout, with the
//! marker values of this machine.

use std::path::{Path, PathBuf};
use std::process::Command;

use pep508_rs::{MarkerEnvironment, MarkerEnvironmentBuilder};
use serde::Deserialize;

use crate::env::Env;
use crate::error::{Error, Kind, Result};

/// How the environment was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FoundBy {
    /// Its interpreter answered (`sysconfig`, `platform`).
    Interpreter(PathBuf),
    /// Read from the folder layout of this environment prefix (`pyvenv.cfg`,
    /// `lib/pythonX.Y/site-packages`, `Lib\site-packages`).
    Layout(PathBuf),
}

/// A Python environment located: its package folders and marker values.
#[derive(Clone, Debug)]
pub struct Located {
    /// `site-packages` folders, in the interpreter's order, that exist.
    pub site_packages: Vec<PathBuf>,
    /// The PEP 508 environment markers of its interpreter.
    pub markers: MarkerEnvironment,
    /// How it was found.
    pub found_by: FoundBy,
}

/// What the interpreter prints (the PEP 508 reference implementation of the
/// marker values, and its package folders).
const SCRIPT: &str = r#"import json, os, platform, site, sys, sysconfig
def fv(i):
    v = "%d.%d.%d" % (i.major, i.minor, i.micro)
    return v if i.releaselevel == "final" else v + i.releaselevel[0] + str(i.serial)
p = sysconfig.get_paths()
paths = [p["purelib"], p["platlib"]]
if site.ENABLE_USER_SITE:
    paths.append(site.getusersitepackages())
print(json.dumps({"markers": {
 "implementation_name": sys.implementation.name,
 "implementation_version": fv(sys.implementation.version),
 "os_name": os.name, "platform_machine": platform.machine(),
 "platform_python_implementation": platform.python_implementation(),
 "platform_release": platform.release(), "platform_system": platform.system(),
 "platform_version": platform.version(), "python_full_version": platform.python_version(),
 "python_version": ".".join(platform.python_version_tuple()[:2]),
 "sys_platform": sys.platform}, "paths": paths}))
"#;

#[derive(Deserialize)]
struct Answer {
    markers: Markers,
    paths: Vec<PathBuf>,
}

#[derive(Deserialize)]
struct Markers {
    implementation_name: String,
    implementation_version: String,
    os_name: String,
    platform_machine: String,
    platform_python_implementation: String,
    platform_release: String,
    platform_system: String,
    platform_version: String,
    python_full_version: String,
    python_version: String,
    sys_platform: String,
}

/// Finds the environment `python` names (an interpreter, or an environment
/// folder), or without it the active one: `VIRTUAL_ENV`, `CONDA_PREFIX`,
/// else the `python3` / `python` on `PATH`.
///
/// # Errors
/// [`Kind::NotFound`] when no environment is found there (the message says
/// where cudnnm looked, the hint how to name one).
pub fn locate(env: &Env, python: Option<&Path>) -> Result<Located> {
    let windows = env.is_windows();
    if let Some(p) = python {
        let p = if p.is_relative() {
            env.cwd().join(p)
        } else {
            p.to_path_buf()
        };
        if p.is_dir() {
            return from_prefix(env, &p).ok_or_else(|| not_an_environment(&p));
        }
        if let Some(l) = ask(&p) {
            return Ok(l);
        }
        return prefix_of(&p, windows)
            .and_then(|prefix| from_prefix(env, &prefix))
            .ok_or_else(|| not_an_environment(&p));
    }
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(v) = env.var(var).filter(|v| !v.is_empty()) {
            let prefix = PathBuf::from(v);
            if let Some(l) = from_prefix(env, &prefix) {
                return Ok(l);
            }
        }
    }
    let names: &[&str] = if windows {
        &["python.exe"]
    } else {
        &["python3", "python"]
    };
    for dir in env.path_list(crate::env::PATH) {
        for n in names {
            let candidate = dir.join(n);
            if candidate.is_file()
                && let Some(l) = ask(&candidate)
            {
                return Ok(l);
            }
        }
    }
    Err(Error::new(
        Kind::NotFound,
        "no Python environment found: VIRTUAL_ENV and CONDA_PREFIX are not set and no Python on PATH answered",
    )
    .hint("name one with `--python PATH` (its interpreter, or the environment's folder)"))
}

fn not_an_environment(p: &Path) -> Error {
    Error::new(
        Kind::NotFound,
        format!("could not read the Python environment of '{}'", p.display()),
    )
    .cause("it did not run as a Python interpreter, and no site-packages folder is where a venv or conda environment keeps it")
    .hint("pass the environment's interpreter (`.venv/bin/python`, `.venv\\Scripts\\python.exe`) or its folder")
}

/// Runs `python` with [`SCRIPT`]; `None` when it does not answer.
fn ask(python: &Path) -> Option<Located> {
    let out = crate::child::Running::spawn(Command::new(python).args(["-c", SCRIPT]))?
        .finish()
        .ok()?;
    let a: Answer = serde_json::from_str(out.trim()).ok()?;
    let m = &a.markers;
    let markers = MarkerEnvironment::try_from(MarkerEnvironmentBuilder {
        implementation_name: &m.implementation_name,
        implementation_version: &m.implementation_version,
        os_name: &m.os_name,
        platform_machine: &m.platform_machine,
        platform_python_implementation: &m.platform_python_implementation,
        platform_release: &m.platform_release,
        platform_system: &m.platform_system,
        platform_version: &m.platform_version,
        python_full_version: &m.python_full_version,
        python_version: &m.python_version,
        sys_platform: &m.sys_platform,
    })
    .ok()?;
    let mut site_packages: Vec<PathBuf> = Vec::new();
    for p in a.paths {
        if p.is_dir() && !site_packages.contains(&p) {
            site_packages.push(p);
        }
    }
    Some(Located {
        site_packages,
        markers,
        found_by: FoundBy::Interpreter(python.to_path_buf()),
    })
}

/// The environment folder of an interpreter path: `PREFIX/bin/python3`,
/// `PREFIX\Scripts\python.exe` (venv), `PREFIX\python.exe` (conda on Windows).
fn prefix_of(python: &Path, windows: bool) -> Option<PathBuf> {
    let dir = python.parent()?;
    let name = dir.file_name()?.to_string_lossy().to_ascii_lowercase();
    if name == "bin" || (windows && name == "scripts") {
        return dir.parent().map(Path::to_path_buf);
    }
    windows.then(|| dir.to_path_buf())
}

/// An environment read from the layout below `prefix`, with this machine's
/// marker values and the Python version its folders or `pyvenv.cfg` name.
fn from_prefix(env: &Env, prefix: &Path) -> Option<Located> {
    let windows = env.is_windows();
    let mut found: Vec<(PathBuf, String)> = Vec::new();
    let cfg = pyvenv_version(prefix);
    if windows {
        let site = prefix.join("Lib").join("site-packages");
        if site.is_dir() {
            found.push((site, String::new()));
        }
    } else {
        for lib in ["lib", "lib64"] {
            let Ok(rd) = std::fs::read_dir(prefix.join(lib)) else {
                continue;
            };
            for e in rd.flatten().take(256) {
                let n = e.file_name().to_string_lossy().into_owned();
                let Some(v) = n.strip_prefix("python") else {
                    continue;
                };
                let site = e.path().join("site-packages");
                if v.split('.').count() == 2
                    && v.chars().all(|c| c.is_ascii_digit() || c == '.')
                    && site.is_dir()
                    && !found.iter().any(|(s, _)| s == &site)
                {
                    found.push((site, v.to_string()));
                }
            }
        }
    }
    found.sort();
    let (_, mut short) = found.first()?.clone();
    if short.is_empty() && cfg.is_none() {
        // A conda environment on Windows has no pyvenv.cfg: its `python3XY.dll` names the version.
        short = windows_dll_version(prefix)?;
    }
    let full = cfg
        .filter(|c| c.starts_with(&short) || short.is_empty())
        .unwrap_or_else(|| format!("{short}.0"));
    let short = if short.is_empty() {
        full.split('.').take(2).collect::<Vec<_>>().join(".")
    } else {
        short
    };
    let markers = machine_markers(windows, &full, &short)?;
    Some(Located {
        site_packages: found.into_iter().map(|(s, _)| s).collect(),
        markers,
        found_by: FoundBy::Layout(prefix.to_path_buf()),
    })
}

/// `3.12` from a `python312.dll` in `prefix`.
fn windows_dll_version(prefix: &Path) -> Option<String> {
    std::fs::read_dir(prefix)
        .ok()?
        .flatten()
        .take(1024)
        .find_map(|e| {
            let n = e.file_name().to_string_lossy().to_ascii_lowercase();
            let digits = n.strip_prefix("python3")?.strip_suffix(".dll")?;
            (!digits.is_empty() && digits.len() <= 3 && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| format!("3.{digits}"))
        })
}

/// The PEP 508 marker values of a CPython `full` (`3.12.3`, `short` `3.12`)
/// on this machine's architecture, for Windows or Linux: what an environment
/// read from its layout, whose interpreter is not asked, is evaluated with.
pub fn machine_markers(windows: bool, full: &str, short: &str) -> Option<MarkerEnvironment> {
    let machine = match (std::env::consts::ARCH, windows) {
        ("x86_64", true) => "AMD64",
        ("aarch64", true) => "ARM64",
        (a, _) => a,
    };
    MarkerEnvironment::try_from(MarkerEnvironmentBuilder {
        implementation_name: "cpython",
        implementation_version: full,
        os_name: if windows { "nt" } else { "posix" },
        platform_machine: machine,
        platform_python_implementation: "CPython",
        platform_release: "",
        platform_system: if windows { "Windows" } else { "Linux" },
        platform_version: "",
        python_full_version: full,
        python_version: short,
        sys_platform: if windows { "win32" } else { "linux" },
    })
    .ok()
}

/// The Python version `prefix/pyvenv.cfg` records (`version_info = 3.12.3`
/// from Python 3.11's venv, `version = 3.12.3` before), bounded.
fn pyvenv_version(prefix: &Path) -> Option<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(prefix.join("pyvenv.cfg"))
        .ok()?
        .take(64 * 1024)
        .read_to_string(&mut text)
        .ok()?;
    text.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        let v = v.trim();
        (matches!(k.trim(), "version_info" | "version")
            && !v.is_empty()
            && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '.'))
        .then(|| v.to_string())
    })
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;

    fn env(windows: bool, cwd: &Path) -> Env {
        Env::from_vars([("PATH", "")], cwd.to_path_buf(), windows)
    }

    #[test]
    fn a_venv_is_read_from_its_layout_when_its_python_does_not_run() {
        let d = tempfile::tempdir().unwrap();
        let site = d.path().join("lib/python3.12/site-packages");
        std::fs::create_dir_all(&site).unwrap();
        std::fs::create_dir_all(d.path().join("bin")).unwrap();
        std::fs::write(
            d.path().join("pyvenv.cfg"),
            "home = /x\nversion_info = 3.12.3\n",
        )
        .unwrap();
        let l = locate(&env(false, d.path()), Some(&d.path().join("bin/python"))).unwrap();
        assert_eq!(l.site_packages, vec![site]);
        assert_eq!(l.found_by, FoundBy::Layout(d.path().to_path_buf()));
        assert_eq!(l.markers.python_full_version().to_string(), "3.12.3");
        assert_eq!(l.markers.sys_platform(), "linux");
    }

    #[test]
    fn a_windows_venv_layout() {
        let d = tempfile::tempdir().unwrap();
        let site = d.path().join("Lib").join("site-packages");
        std::fs::create_dir_all(&site).unwrap();
        std::fs::write(d.path().join("pyvenv.cfg"), "version = 3.11.9\n").unwrap();
        let l = locate(&env(true, d.path()), Some(d.path())).unwrap();
        assert_eq!(l.site_packages, vec![site]);
        assert_eq!(l.markers.platform_system(), "Windows");
        assert_eq!(l.markers.python_version().to_string(), "3.11");
    }

    #[test]
    fn a_folder_without_site_packages_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let e = locate(&env(false, d.path()), Some(d.path())).unwrap_err();
        assert!(
            e.to_string()
                .contains("could not read the Python environment"),
            "{e}"
        );
    }
}

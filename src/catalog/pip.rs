//! Fetching a cuDNN wheel with the user's own pip (their index, proxy and
//! certificates apply): `python -m pip download --no-deps
//! --only-binary=:all:`, which keeps pip from building (and running) a
//! source package. Used by `install pip:REQ` and by `lock` for releases the
//! catalog knows only from PyPI.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::env::{self, Env};
use crate::error::{Error, IoResultExt, Kind, Result};

/// The Python that runs pip: `CUDNNM_PYTHON`, else `python3` (`python` on Windows).
pub fn python(env: &Env) -> String {
    env.var(env::CUDNNM_PYTHON).unwrap_or_else(|| {
        if crate::platform::HOST_WINDOWS {
            "python".into()
        } else {
            "python3".into()
        }
    })
}

/// Checks that `requirement` names one package (no pip options).
///
/// # Errors
/// [`Kind::Usage`] for an empty requirement or one starting with `-`.
pub fn check_requirement(requirement: &str) -> Result<()> {
    if requirement.is_empty() || requirement.starts_with('-') {
        return Err(Error::new(Kind::Usage, format!("'pip:{requirement}' does not name a package"))
            .hint("give one requirement, e.g. `cudnnm install pip:nvidia-cudnn-cu12==9.1.0.70` (pip options are not passed through)"));
    }
    Ok(())
}

/// Downloads the one wheel `requirement` names into `dest` with `python`'s
/// pip and returns its path. pip's messages go to stderr (captured when
/// `quiet`, so stdout stays clean for `--json`).
///
/// # Errors
/// No Python or no pip ([`Kind::NotFound`]), pip failing ([`Kind::Network`],
/// with pip's last lines), or not exactly one wheel fetched ([`Kind::Integrity`]).
pub fn download(python: &str, requirement: &str, dest: &Path, quiet: bool) -> Result<PathBuf> {
    check_requirement(requirement)?;
    let mut cmd = Command::new(python);
    cmd.args([
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--dest",
    ])
    .arg(dest)
    .arg(requirement)
    .stdin(Stdio::null());
    if quiet {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    } else {
        // pip's progress goes to our stderr so stdout stays clean for --json.
        cmd.stdout(Stdio::from(std::io::stderr()))
            .stderr(Stdio::inherit());
    }
    let out = cmd.output().map_err(|e| {
        Error::new(Kind::NotFound, format!("could not run '{python}' to fetch {requirement}"))
            .cause(e)
            .hint("install Python 3 with pip (Debian/Ubuntu: `apt install python3-pip`), or set CUDNNM_PYTHON to your Python")
    })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("No module named pip") {
            return Err(Error::new(Kind::NotFound, format!("'{python}' has no pip module"))
                .hint("install pip (`python3 -m ensurepip --upgrade`, or `apt install python3-pip`), or set CUDNNM_PYTHON to a Python that has it"));
        }
        let tail: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = tail[tail.len().saturating_sub(3)..].join(" / ");
        let mut e = Error::new(
            Kind::Network,
            format!("pip could not download '{requirement}' ({})", out.status),
        );
        if !tail.is_empty() {
            e = e.cause(tail);
        } else if !quiet {
            e = e.cause("pip's messages are above");
        }
        return Err(e.hint(
            "check the requirement (e.g. nvidia-cudnn-cu12==9.1.0.70, nvidia-cudnn-jit-cu12==9.27.0.42) and your pip index or proxy settings",
        ));
    }
    find_wheel(dest, requirement)
}

fn find_wheel(dir: &Path, requirement: &str) -> Result<PathBuf> {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_path("list", dir)?
        .flatten()
        .map(|e| e.path())
        .collect();
    let wheels: Vec<&PathBuf> = files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    match wheels.as_slice() {
        [one] => Ok((*one).clone()),
        _ => Err(Error::new(
            Kind::Integrity,
            format!(
                "pip fetched {} wheel files for '{requirement}', expected one",
                wheels.len()
            ),
        )
        .hint("name one package version, e.g. pip:nvidia-cudnn-cu12==9.1.0.70")),
    }
}

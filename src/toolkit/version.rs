//! A toolkit's CUDA version, from the files that record it, and the cuDNN
//! version its headers declare.

use std::path::Path;
use std::process::Command;

use super::{Layout, detect_layout};
use crate::error::{Error, Kind, Result};
use crate::version::Version;

/// Reads the CUDA version of the toolkit at `root`: `version.json` (11+),
/// `version.txt` (10.x and before), `CUDA_VERSION` in `include/cuda.h`, and
/// as a last resort `bin/nvcc --version`.
///
/// # Errors
/// [`Kind::NotFound`] when none of those gives a version (the causes name
/// what was tried and any file that could not be parsed).
pub fn read_cuda_version(root: &Path) -> Result<Version> {
    read_cuda_version_for(root, detect_layout(root, crate::platform::HOST_WINDOWS))
}

pub(super) fn read_cuda_version_for(root: &Path, layout: Layout) -> Result<Version> {
    let mut causes = Vec::new();
    let json = root.join("version.json");
    if let Ok(text) = std::fs::read_to_string(&json) {
        match serde_json::from_str::<serde_json::Value>(&text) {
            Err(e) => causes.push(format!("'{}' is not valid JSON ({e})", json.display())),
            Ok(_) => match parse_version_json(&text) {
                Some(v) => return Ok(v),
                None => causes.push(format!("'{}' has no readable cuda.version", json.display())),
            },
        }
    }
    let txt = root.join("version.txt");
    if let Ok(text) = std::fs::read_to_string(&txt) {
        match parse_version_txt(&text) {
            Some(v) => return Ok(v),
            None => causes.push(format!(
                "'{}' has no 'CUDA Version X.Y' line",
                txt.display()
            )),
        }
    }
    let cuda_h = root.join("include").join("cuda.h");
    if let Ok(text) = std::fs::read_to_string(&cuda_h) {
        match parse_cuda_h(&text) {
            Some(v) => return Ok(v),
            None => causes.push(format!(
                "'{}' has no '#define CUDA_VERSION'",
                cuda_h.display()
            )),
        }
    }
    let nvcc = root.join("bin").join(match layout {
        Layout::Windows => "nvcc.exe",
        Layout::Linux => "nvcc",
    });
    if nvcc.is_file() {
        match Command::new(&nvcc).arg("--version").output() {
            Ok(out) => match parse_nvcc_output(&String::from_utf8_lossy(&out.stdout)) {
                Some(v) => return Ok(v),
                None => causes.push(format!(
                    "'{} --version' printed no 'release X.Y'",
                    nvcc.display()
                )),
            },
            Err(e) => causes.push(format!("could not run '{}': {e}", nvcc.display())),
        }
    }
    let mut err = Error::new(
        Kind::NotFound,
        format!("could not read the CUDA version of '{}'", root.display()),
    )
    .hint("a CUDA toolkit root holds version.json (CUDA 11+), version.txt (CUDA 10 and before) or include/cuda.h; pass the toolkit root itself, e.g. --cuda-root /usr/local/cuda-12.4");
    if causes.is_empty() {
        err = err.cause("it has no version.json, version.txt, include/cuda.h or bin/nvcc");
    }
    for c in causes {
        err = err.cause(c);
    }
    Err(err)
}

/// `version.json` (CUDA 11.1+): `{"cuda": {"name": "CUDA SDK", "version": "11.5.2"}, …}`.
/// Runfile installs may carry a date as the patch (`"11.8.20220929"`); such a
/// patch is dropped, keeping `11.8`.
pub fn parse_version_json(text: &str) -> Option<Version> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let s = v.get("cuda")?.get("version")?.as_str()?;
    parse_toolkit_version(s)
}

/// `version.txt` (CUDA ≤ 11.0): a line `CUDA Version 10.1.243`.
pub fn parse_version_txt(text: &str) -> Option<Version> {
    text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("CUDA Version")?;
        parse_toolkit_version(rest.trim())
    })
}

/// `include/cuda.h`: `#define CUDA_VERSION 11020` (major × 1000 + minor × 10).
pub fn parse_cuda_h(text: &str) -> Option<Version> {
    text.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        if w.next()? != "#define" || w.next()? != "CUDA_VERSION" {
            return None;
        }
        let n: u32 = w.next()?.parse().ok()?;
        if n < 1000 {
            return None;
        }
        Some(Version::from_parts(&[n / 1000, (n % 1000) / 10]))
    })
}

/// `nvcc --version`: `Cuda compilation tools, release 11.2, V11.2.152` →
/// `11.2.152` (the `V…` part when present, else the release).
pub fn parse_nvcc_output(text: &str) -> Option<Version> {
    let line = text.lines().find(|l| l.contains("release "))?;
    if let Some(i) = line.rfind(", V")
        && let Some(v) = parse_toolkit_version(line[i + 3..].trim())
    {
        return Some(v);
    }
    let rest = &line[line.find("release ")? + 8..];
    parse_toolkit_version(rest.split(',').next()?.trim())
}

/// `12.4.1` → `12.4.1`; `11.8.20220929` → `11.8`; needs at least major.minor.
fn parse_toolkit_version(s: &str) -> Option<Version> {
    let nums: Vec<u32> = s
        .split('.')
        .map(|p| p.trim().parse::<u32>().ok())
        .collect::<Option<Vec<_>>>()?;
    match nums.as_slice() {
        [ma, mi] => Some(Version::from_parts(&[*ma, *mi])),
        [ma, mi, pa, ..] if *pa < 10_000 => Some(Version::from_parts(&[*ma, *mi, *pa])),
        [ma, mi, ..] => Some(Version::from_parts(&[*ma, *mi])),
        _ => None,
    }
}

/// The cuDNN version declared by the headers in `include`: `CUDNN_MAJOR`,
/// `CUDNN_MINOR`, `CUDNN_PATCHLEVEL` from `cudnn_version.h` (cuDNN 8+), else
/// `cudnn.h` (cuDNN 7 and before) —
/// `docs/breakages.md#version-macros-moved-8-0`. See [`crate::archive::header`].
pub fn header_cudnn_version(include: &Path) -> Option<Version> {
    crate::archive::header::version_in(include)
}

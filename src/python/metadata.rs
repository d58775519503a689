//! One installed distribution's core metadata (`*.dist-info/METADATA`,
//! https://packaging.python.org/en/latest/specifications/core-metadata/):
//! its name, version, `Requires-Dist` and `Provides-Extra` headers, parsed
//! with a PEP 508 / PEP 440 implementation. An environment's files are
//! hostile input: reads are bounded, a header holding a control character is
//! dropped (never echoed), and only what parses is kept.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use pep440_rs::Version;
use pep508_rs::{ExtraName, PackageName, Requirement};

/// The most of a `METADATA` file read: the headers come first, the long
/// description (often the project's whole README) after the first blank line.
pub const MAX_METADATA_BYTES: u64 = 1 << 20;

/// The most headers of one file kept (torch 2.15 has 110, mostly `License-File`).
pub const MAX_HEADERS: usize = 4096;

/// An installed distribution, from its `.dist-info` folder.
#[derive(Clone, Debug)]
pub struct Distribution {
    /// The normalized name (`nvidia-cudnn-cu13`, PEP 503).
    pub name: PackageName,
    /// The version it declares.
    pub version: Version,
    /// Its `Requires-Dist` headers that parse as PEP 508, in order.
    pub requires: Vec<Requirement>,
    /// Its `Provides-Extra` names.
    pub extras: Vec<ExtraName>,
    /// How many `Requires-Dist` headers did not parse (never shown: hostile text).
    pub unparsed: usize,
    /// The `.dist-info` folder.
    pub dist_info: PathBuf,
}

/// Why a `.dist-info` folder gave no distribution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unreadable {
    /// No regular `METADATA` file in it, or it could not be read.
    NoMetadata,
    /// No `Name:` or `Version:` header, or one that is not a valid name / PEP 440 version.
    BadHeaders,
}

/// Reads `dist_info/METADATA` (bounded to [`MAX_METADATA_BYTES`]).
///
/// # Errors
/// [`Unreadable`] when there is no such regular file or its headers do not
/// name a distribution.
pub fn read(dist_info: &Path) -> Result<Distribution, Unreadable> {
    let path = dist_info.join("METADATA");
    // A link, a FIFO or a device is not metadata (a FIFO would block the read).
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.is_file() => {}
        _ => return Err(Unreadable::NoMetadata),
    }
    // The headers only: stop at the first blank line (the description can be a whole README).
    let file = std::fs::File::open(&path).map_err(|_| Unreadable::NoMetadata)?;
    let mut reader = std::io::BufReader::new(file.take(MAX_METADATA_BYTES));
    let mut bytes = Vec::new();
    loop {
        let start = bytes.len();
        match reader.read_until(b'\n', &mut bytes) {
            Ok(0) => break,
            Ok(_) if bytes[start..].iter().all(u8::is_ascii_whitespace) => break,
            Ok(_) => {}
            Err(_) => return Err(Unreadable::NoMetadata),
        }
    }
    let mut d = parse(&String::from_utf8_lossy(&bytes)).ok_or(Unreadable::BadHeaders)?;
    d.dist_info = dist_info.to_path_buf();
    Ok(d)
}

/// The distribution the headers of a `METADATA` text describe; `None`
/// without a valid `Name` and `Version`. Headers end at the first blank
/// line; a line starting with white space continues the previous header
/// (RFC 822 folding).
pub fn parse(text: &str) -> Option<Distribution> {
    let mut headers: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            break;
        }
        if line.starts_with([' ', '\t']) {
            if let Some((_, v)) = headers.last_mut() {
                v.push(' ');
                v.push_str(line.trim());
            }
            continue;
        }
        if headers.len() >= MAX_HEADERS {
            break;
        }
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let clean = |v: &str| !v.chars().any(|c| c.is_control() && c != '\t');
    let get = |key: &str| {
        headers
            .iter()
            .find(|(k, v)| k == key && clean(v))
            .map(|(_, v)| v.as_str())
    };
    let name: PackageName = get("name")?.parse().ok()?;
    let version: Version = get("version")?.parse().ok()?;
    let mut requires = Vec::new();
    let mut unparsed = 0;
    let mut extras = Vec::new();
    for (k, v) in &headers {
        match k.as_str() {
            "requires-dist" => match v.parse::<Requirement>() {
                Ok(r) if clean(v) => requires.push(r),
                _ => unparsed += 1,
            },
            "provides-extra" => {
                if let Ok(e) = v.parse::<ExtraName>() {
                    extras.push(e);
                }
            }
            _ => {}
        }
    }
    Some(Distribution {
        name,
        version,
        requires,
        extras,
        unparsed,
        dist_info: PathBuf::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_end_at_the_first_blank_line_and_fold() {
        let text = "Metadata-Version: 2.4\nName: Nvidia_CUDNN_cu13\nVersion: 9.26.0.51\nRequires-Dist: nvidia-cublas\nRequires-Dist: nvidia-cudnn-cu13<10.0,\n  >=9.12.0.46; sys_platform == \"linux\"\nRequires-Dist: not a requirement (\nProvides-Extra: with-cuda\n\nRequires-Dist: body-text==1\n";
        let d = parse(text).unwrap();
        assert_eq!(d.name.as_ref(), "nvidia-cudnn-cu13");
        assert_eq!(d.version.to_string(), "9.26.0.51");
        let reqs: Vec<String> = d.requires.iter().map(ToString::to_string).collect();
        assert_eq!(
            reqs,
            [
                "nvidia-cublas",
                "nvidia-cudnn-cu13>=9.12.0.46,<10.0 ; sys_platform == 'linux'"
            ]
        );
        assert_eq!(d.unparsed, 1);
        assert_eq!(d.extras[0].as_ref(), "with-cuda");
    }

    #[test]
    fn no_name_or_a_control_character_is_no_distribution() {
        assert!(parse("Version: 1.0\n").is_none());
        assert!(parse("Name: torch\nVersion: one\n").is_none());
        assert!(parse("Name: to\u{1b}[2Jrch\nVersion: 1.0\n").is_none());
        let d =
            parse("Name: x\nVersion: 1\nRequires-Dist: a\u{1b}]0;t\u{7}; extra == 'b'\n").unwrap();
        assert!(d.requires.is_empty());
        assert_eq!(d.unparsed, 1);
    }
}

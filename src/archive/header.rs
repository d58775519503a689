//! Reading the cuDNN version from header text.
//!
//! The macros `CUDNN_MAJOR`, `CUDNN_MINOR`, `CUDNN_PATCHLEVEL` live in
//! `cudnn_version.h` from cuDNN 8 on (also `cudnn_version_v8.h`/`_v9.h`) and
//! at the top of `cudnn.h` before (`docs/releases.md#version-headers`,
//! `docs/breakages.md#version-macros-moved-8-0`). Some 7.x headers put several
//! spaces between name and value, so parsing
//! is whitespace-tolerant.

use std::io::Read;
use std::path::Path;

use crate::version::Version;

/// Reads at most this many bytes of a header: the macros sit near the top.
const MAX_HEADER_BYTES: u64 = 256 * 1024;

/// Header names to try for the version, best first, for a release of `major`
/// (unknown: try all). `cudnn.h` is last because from 8 on it only includes
/// `cudnn_version.h`.
pub const VERSION_HEADERS: [&str; 4] = [
    "cudnn_version.h",
    "cudnn_version_v9.h",
    "cudnn_version_v8.h",
    "cudnn.h",
];

/// The `major.minor.patch` defined in header `text`, if it defines all three.
pub fn parse_version(text: &str) -> Option<Version> {
    let mut major = None;
    let mut minor = None;
    let mut patch = None;
    for line in text.lines() {
        let l = line.trim_start();
        let Some(rest) = l.strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("define") else {
            continue;
        };
        let mut it = rest.split_whitespace();
        let (Some(name), Some(value)) = (it.next(), it.next()) else {
            continue;
        };
        let Ok(n) = value.parse::<u32>() else {
            continue;
        };
        match name {
            "CUDNN_MAJOR" => major = major.or(Some(n)),
            "CUDNN_MINOR" => minor = minor.or(Some(n)),
            "CUDNN_PATCHLEVEL" => patch = patch.or(Some(n)),
            _ => {}
        }
    }
    Some(Version::from_parts(&[major?, minor?, patch?]))
}

/// The version declared by the header file at `path` (links followed).
/// `None` when the file is unreadable or lacks any of the three macros.
pub fn read_version(path: &Path) -> Option<Version> {
    let f = std::fs::File::open(path).ok()?;
    let mut buf = Vec::new();
    f.take(MAX_HEADER_BYTES).read_to_end(&mut buf).ok()?;
    parse_version(&String::from_utf8_lossy(&buf))
}

/// The version declared by the headers in folder `include` (a toolkit's or
/// a release's), trying [`VERSION_HEADERS`] in order.
pub fn version_in(include: &Path) -> Option<Version> {
    VERSION_HEADERS
        .iter()
        .find_map(|n| read_version(&include.join(n)))
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;

    #[test]
    fn reads_cudnn8_and_9_version_headers() {
        let t = "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n#define CUDNN_PATCHLEVEL 2\n\n#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n";
        assert_eq!(parse_version(t).unwrap().to_string(), "8.9.2");
        let t = "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 27\n#define CUDNN_PATCHLEVEL 0\n";
        assert_eq!(parse_version(t).unwrap().to_string(), "9.27.0");
    }

    #[test]
    fn tolerates_7x_spacing_and_crlf() {
        let t = "#if !defined(CUDNN_H_)\r\n#define CUDNN_MAJOR      7\r\n#define CUDNN_MINOR      1\r\n#  define CUDNN_PATCHLEVEL 3\r\n#define CUDNN_VERSION    (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\r\n";
        assert_eq!(parse_version(t).unwrap().to_string(), "7.1.3");
    }

    #[test]
    fn incomplete_or_indirect_headers_give_none() {
        assert_eq!(parse_version("#include \"cudnn_version.h\"\n"), None);
        assert_eq!(
            parse_version(
                "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR x\n#define CUDNN_PATCHLEVEL 0\n"
            ),
            None
        );
        assert_eq!(parse_version("\u{0}\u{1}garbage"), None);
    }

    #[test]
    fn reads_the_first_header_that_declares_a_version() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(version_in(d.path()), None);
        // cuDNN 8+: cudnn.h only includes cudnn_version.h.
        std::fs::write(d.path().join("cudnn.h"), "#include \"cudnn_version.h\"\n").unwrap();
        assert_eq!(version_in(d.path()), None);
        std::fs::write(
            d.path().join("cudnn_version.h"),
            "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n",
        )
        .unwrap();
        assert_eq!(version_in(d.path()).unwrap().to_string(), "8.1.0");
        assert_eq!(read_version(&d.path().join("missing.h")), None);
    }
}

//! The cuDNN version a header declares: `#define CUDNN_MAJOR 8`,
//! `CUDNN_MINOR`, `CUDNN_PATCHLEVEL` (cudnn-facts §3.2). The macros live in
//! `cudnn_version.h` from cuDNN 8 on (also `cudnn_version_v8.h` in distro
//! packages) and in `cudnn.h` before (F22, cudnn-facts §3.1); some 7.x headers
//! put several spaces between name and value, so parsing is
//! whitespace-tolerant.

use std::io::Read;
use std::path::Path;

use crate::version::Version;

/// Reads at most this many bytes of a header: the macros sit near the top.
const MAX_HEADER_BYTES: u64 = 256 * 1024;

/// The version declared by header text, `None` when it lacks the macros
/// (a cuDNN 8+ `cudnn.h` that only includes `cudnn_version.h`).
pub fn parse_version(text: &str) -> Option<Version> {
    let (mut ma, mut mi, mut pa) = (None, None, None);
    for line in text.lines() {
        let t = line.trim_start();
        let Some(rest) = t.strip_prefix('#') else {
            continue;
        };
        let rest = rest.trim_start();
        let Some(rest) = rest.strip_prefix("define") else {
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
            "CUDNN_MAJOR" => ma = ma.or(Some(n)),
            "CUDNN_MINOR" => mi = mi.or(Some(n)),
            "CUDNN_PATCHLEVEL" => pa = pa.or(Some(n)),
            _ => {}
        }
    }
    Some(Version::from_parts(&[ma?, mi?, pa.unwrap_or(0)]))
}

/// Reads the version declared by the header at `path` (following links).
/// `None` when the file is unreadable or has no version macros.
pub fn read_version(path: &Path) -> Option<Version> {
    let f = std::fs::File::open(path).ok()?;
    let mut buf = Vec::new();
    f.take(MAX_HEADER_BYTES).read_to_end(&mut buf).ok()?;
    parse_version(&String::from_utf8_lossy(&buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_8_and_9_and_spaced_7_headers() {
        let h9 = "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 27\n#define CUDNN_PATCHLEVEL 0\n\n#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n";
        assert_eq!(parse_version(h9).unwrap().to_string(), "9.27.0");
        let h7 = "#if !defined(CUDNN_H_)\n#define CUDNN_MAJOR      7\n#define CUDNN_MINOR      1\n#define CUDNN_PATCHLEVEL 3\n";
        assert_eq!(parse_version(h7).unwrap().to_string(), "7.1.3");
        assert!(parse_version("#include \"cudnn_version.h\"\n").is_none());
        assert!(parse_version("#define CUDNN_MAJOR x\n").is_none());
        assert!(parse_version("\u{0}\u{1}garbage").is_none());
    }

    #[test]
    fn unreadable_file_is_none() {
        assert!(read_version(Path::new("/nonexistent/cudnn_version.h")).is_none());
    }
}

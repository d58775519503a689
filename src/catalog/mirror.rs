//! Where catalog URLs point: NVIDIA's base URL or a mirror of its tree
//! (`--mirror`, `CUDNNM_MIRROR`, `mirror` in `config.toml`), given as a URL
//! or a folder.

use std::path::Path;

use crate::env::Env;
use crate::error::{Error, Kind, Result};
use crate::home::Home;

/// True for `http://`, `https://` and `file://` URLs.
pub(crate) fn is_absolute_url(s: &str) -> bool {
    let l = s.get(..8).unwrap_or(s).to_ascii_lowercase();
    l.starts_with("http://") || l.starts_with("https://") || l.starts_with("file://")
}

/// A base URL with exactly one trailing `/`.
pub(crate) fn normalize_base(s: &str) -> String {
    format!("{}/", s.trim().trim_end_matches('/'))
}

/// The mirror in effect: the request's, else `CUDNNM_MIRROR`, else `config.toml`.
///
/// # Errors
/// When `config.toml` exists but cannot be parsed.
pub fn effective_mirror(flag: Option<&str>, env: &Env, home: &Home) -> Result<Option<String>> {
    let raw = match flag.filter(|m| !m.trim().is_empty()) {
        Some(m) => Some(m.trim().to_string()),
        None => match env.var(crate::env::CUDNNM_MIRROR) {
            Some(m) => Some(m),
            None => home.config()?.mirror.filter(|m| !m.trim().is_empty()),
        },
    };
    raw.map(|m| mirror_url(&m, env)).transpose()
}

/// A mirror as a base URL ending in `/`: `http(s)://` and `file://` URLs as
/// given, a folder (relative to the working folder) as a `file://` URL.
///
/// # Errors
/// [`Kind::Usage`] for another URL scheme or a path that cannot be a URL.
pub fn mirror_url(m: &str, env: &Env) -> Result<String> {
    let m = m.trim();
    if is_absolute_url(m) {
        return Ok(normalize_base(m));
    }
    let bad = || {
        Error::new(Kind::Usage, format!("mirror '{m}' is neither an http(s):// or file:// URL nor a folder"))
            .hint("write it as https://host/path/ (a copy of https://developer.download.nvidia.com/compute/) or as a folder path")
    };
    if m.contains("://") {
        return Err(bad());
    }
    let p = Path::new(m);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        env.cwd().join(p)
    };
    url::Url::from_directory_path(&abs)
        .map(|u| u.to_string())
        .map_err(|_| bad())
}

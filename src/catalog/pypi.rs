//! A cuDNN package's file list as a Python package index publishes it,
//! read by `cudnnm manifest refresh` and by the maintainer's catalog
//! generator (docs/releases.md#pip-wheels).
//!
//! The answer is the PEP 691 JSON form of the simple API
//! (`GET https://pypi.org/simple/nvidia-cudnn-cu13/` with `Accept:
//! application/vnd.pypi.simple.v1+json`): every file's name, URL, SHA-256,
//! size (PEP 700, API 1.1) and yanked state (PEP 592: `false`, `true`, or
//! the reason). PyPI's own JSON API (`/pypi/NAME/json`: `info.name` and
//! `releases`, a saved copy an offline lab may hold) is read too.
//!
//! An index answer is hostile input: it is refused as a whole, naming the
//! index, when it is not such JSON (an HTML page, a login form), names
//! another package, or holds a file without a SHA-256, with a size that
//! cannot be a cuDNN wheel, with a URL that is not HTTPS (plain HTTP only
//! to this machine, a loopback test or a local mirror), or whose name has a
//! path separator. Nothing of a refused answer is used.

use serde_json::{Map, Value};

use crate::error::{Error, Kind, Result};
use crate::hash::Sha256Hex;
use crate::version::{Package, Platform};

/// The media type of PEP 691's JSON answer, sent as `Accept`.
pub const ACCEPT: &str = "application/vnd.pypi.simple.v1+json";

/// PyPI's simple API: `<this>/<package>/` lists a package's files.
pub const PYPI_SIMPLE: &str = "https://pypi.org/simple/";

/// The largest file size believed for a cuDNN wheel: 16 GiB. The largest
/// published is 0.86 GB (`nvidia-cudnn-cu12` 9.x, PyPI 2026-12); a size
/// beyond this is an index that is wrong or hostile.
pub const MAX_WHEEL_BYTES: u64 = 16 << 30;

/// At most this many files in one package's answer (the largest, `nvidia-cudnn-cu12`,
/// lists 171 in 2026-12).
pub const MAX_FILES: usize = 10_000;

/// A yank reason is kept to this many characters.
const MAX_REASON: usize = 200;

/// One file the index lists, as it lists it (validated, not yet read as a wheel).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexFile {
    /// The file name (`nvidia_cudnn_cu13-9.28.1.4-py3-none-manylinux_2_27_x86_64.whl`).
    pub filename: String,
    /// Its absolute URL.
    pub url: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its SHA-256.
    pub sha256: Sha256Hex,
    /// `Some(reason)` when yanked (empty when the index gives none).
    pub yanked: Option<String>,
}

/// A package's answer: which package, where it was read, its files.
#[derive(Clone, Debug)]
pub struct PackageIndex {
    /// The package the answer is for.
    pub package: Package,
    /// Where it was read (the URL or file).
    pub from: String,
    /// Every file, in the index's order.
    pub files: Vec<IndexFile>,
}

/// The error for an answer that is not one: names the index, says why.
fn refused(from: &str, why: impl Into<String>) -> Error {
    Error::new(
        Kind::Integrity,
        format!("the package index answer '{from}' was refused"),
    )
    .cause(why.into())
    .hint("the index must answer PEP 691 JSON (Accept: application/vnd.pypi.simple.v1+json), as https://pypi.org/simple/nvidia-cudnn-cu13/ does; check --from, the index URL and any proxy in between; nothing was changed")
}

/// Reads one package's answer (see the module documentation). `from` is
/// where it was read: an `http(s)://` URL resolves relative file URLs;
/// `expect`, when given, is the package asked for.
///
/// # Errors
/// [`Kind::Integrity`] naming `from` for anything that is not such an answer.
pub fn parse(text: &str, from: &str, expect: Option<Package>) -> Result<PackageIndex> {
    let head = text.trim_start();
    if head.starts_with('<') {
        return Err(refused(
            from,
            "it is HTML, not JSON (an index that ignores the JSON Accept header, or a login or error page)",
        ));
    }
    let root: Value =
        serde_json::from_str(text).map_err(|e| refused(from, format!("it is not JSON: {e}")))?;
    let root = root
        .as_object()
        .ok_or_else(|| refused(from, "its top level is not a JSON object"))?;
    let (name, files) = if root.contains_key("files") {
        pep691(root, from)?
    } else if root.contains_key("releases") {
        warehouse(root, from)?
    } else {
        return Err(refused(
            from,
            "it has neither `files` (PEP 691) nor `releases` (PyPI's JSON API)",
        ));
    };
    let package: Package = name.parse().map_err(|_| {
        refused(
            from,
            format!(
                "it lists the files of '{}', not a cuDNN package",
                clip(&name)
            ),
        )
    })?;
    if let Some(want) = expect
        && want != package
    {
        return Err(refused(
            from,
            format!("it lists the files of {package}, not of {want}"),
        ));
    }
    if files.len() > MAX_FILES {
        return Err(refused(
            from,
            format!("it lists {} files, more than {MAX_FILES}", files.len()),
        ));
    }
    Ok(PackageIndex {
        package,
        from: from.to_string(),
        files,
    })
}

/// PEP 691: `name`, `files[]` with `filename`, `url`, `hashes`, `size`, `yanked`.
fn pep691(root: &Map<String, Value>, from: &str) -> Result<(String, Vec<IndexFile>)> {
    let name = root
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| refused(from, "it has no project `name`"))?
        .to_string();
    let list = root
        .get("files")
        .and_then(Value::as_array)
        .ok_or_else(|| refused(from, "`files` is not a list"))?;
    let mut files = Vec::with_capacity(list.len().min(MAX_FILES));
    for f in list.iter().take(MAX_FILES + 1) {
        let o = f
            .as_object()
            .ok_or_else(|| refused(from, "a `files` entry is not an object"))?;
        let filename = string(o, "filename", from)?;
        let sha = o
            .get("hashes")
            .and_then(Value::as_object)
            .and_then(|h| h.get("sha256"))
            .and_then(Value::as_str);
        let yanked = match o.get("yanked") {
            None | Some(Value::Bool(false)) | Some(Value::Null) => None,
            Some(Value::Bool(true)) => Some(String::new()),
            Some(Value::String(r)) => Some(r.clone()),
            Some(_) => {
                return Err(refused(
                    from,
                    format!(
                        "`yanked` of {} is neither a boolean nor a reason",
                        clip(&filename)
                    ),
                ));
            }
        };
        files.push(file(
            from,
            filename,
            string(o, "url", from)?,
            o.get("size"),
            sha,
            yanked,
        )?);
    }
    Ok((name, files))
}

/// PyPI's JSON API: `info.name`, `releases{version: [file]}` with
/// `filename`, `url`, `size`, `digests.sha256`, `yanked`, `yanked_reason`.
fn warehouse(root: &Map<String, Value>, from: &str) -> Result<(String, Vec<IndexFile>)> {
    let name = root
        .get("info")
        .and_then(|i| i.get("name"))
        .and_then(Value::as_str)
        .ok_or_else(|| refused(from, "it has no `info.name`"))?
        .to_string();
    let releases = root
        .get("releases")
        .and_then(Value::as_object)
        .ok_or_else(|| refused(from, "`releases` is not an object"))?;
    let mut files = Vec::new();
    for list in releases.values() {
        let list = list
            .as_array()
            .ok_or_else(|| refused(from, "a `releases` entry is not a list"))?;
        for f in list {
            if files.len() > MAX_FILES {
                break;
            }
            let o = f
                .as_object()
                .ok_or_else(|| refused(from, "a release file is not an object"))?;
            let filename = string(o, "filename", from)?;
            let sha = o
                .get("digests")
                .and_then(Value::as_object)
                .and_then(|h| h.get("sha256"))
                .and_then(Value::as_str);
            let yanked = match o.get("yanked") {
                Some(Value::Bool(true)) => Some(
                    o.get("yanked_reason")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                ),
                _ => None,
            };
            files.push(file(
                from,
                filename,
                string(o, "url", from)?,
                o.get("size"),
                sha,
                yanked,
            )?);
        }
    }
    Ok((name, files))
}

fn string(o: &Map<String, Value>, key: &str, from: &str) -> Result<String> {
    o.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| refused(from, format!("a file entry has no `{key}`")))
}

/// Checks one file's fields (module documentation) and resolves its URL.
fn file(
    from: &str,
    filename: String,
    url: String,
    size: Option<&Value>,
    sha: Option<&str>,
    yanked: Option<String>,
) -> Result<IndexFile> {
    if filename.is_empty()
        || filename.len() > 255
        || filename.contains(['/', '\\', '\0', ':'])
        || filename.starts_with('.')
        || filename.chars().any(char::is_control)
    {
        return Err(refused(
            from,
            format!(
                "the file name '{}' is not a plain file name",
                clip(&filename)
            ),
        ));
    }
    let what = clip(&filename);
    let sha = sha.ok_or_else(|| refused(from, format!("{what} has no SHA-256")))?;
    let sha256 = Sha256Hex::parse(sha)
        .map_err(|_| refused(from, format!("the SHA-256 of {what} is not 64 hex digits")))?;
    let size = match size {
        Some(Value::Number(n)) => n.as_u64(),
        _ => None,
    }
    .ok_or_else(|| refused(from, format!("{what} has no size in bytes")))?;
    if size == 0 || size > MAX_WHEEL_BYTES {
        return Err(refused(
            from,
            format!(
                "{what} has an absurd size ({size} bytes; a cuDNN wheel is 1 byte to {MAX_WHEEL_BYTES})"
            ),
        ));
    }
    let url = resolve(from, &url)
        .ok_or_else(|| refused(from, format!("the URL of {what} is not a URL")))?;
    if !url_allowed(&url) {
        return Err(refused(
            from,
            format!("the URL of {what} is not HTTPS ({})", clip(&url)),
        ));
    }
    if !url
        .split(['?', '#'])
        .next()
        .unwrap_or("")
        .ends_with(&format!("/{filename}"))
    {
        return Err(refused(
            from,
            format!(
                "the URL of {what} does not end in its file name ({})",
                clip(&url)
            ),
        ));
    }
    let yanked = yanked.map(|r| {
        r.chars()
            .filter(|c| !c.is_control())
            .take(MAX_REASON)
            .collect::<String>()
            .trim()
            .to_string()
    });
    Ok(IndexFile {
        filename,
        url,
        size,
        sha256,
        yanked,
    })
}

/// `url` as written when absolute, else joined to `from` when that is a URL.
fn resolve(from: &str, url: &str) -> Option<String> {
    if let Ok(u) = reqwest::Url::parse(url) {
        return Some(u.to_string());
    }
    let base = reqwest::Url::parse(from).ok()?;
    base.join(url).ok().map(|u| u.to_string())
}

/// HTTPS anywhere; plain HTTP only to this machine (a loopback index in a
/// test, a local mirror).
pub fn url_allowed(url: &str) -> bool {
    let Ok(u) = reqwest::Url::parse(url) else {
        return false;
    };
    match u.scheme() {
        "https" => u.host_str().is_some(),
        "http" => {
            let h = u.host_str().unwrap_or_default();
            let h = h.trim_start_matches('[').trim_end_matches(']');
            h == "localhost"
                || h.parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        _ => false,
    }
}

/// A hostile string as a message shows it: its first 80 characters, no
/// control characters.
fn clip(s: &str) -> String {
    let t: String = s.chars().filter(|c| !c.is_control()).take(80).collect();
    if s.chars().count() > 80 {
        format!("{t}…")
    } else {
        t
    }
}

/// What a wheel's file name says (PEP 427:
/// `{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WheelName {
    /// The distribution, normalized (`nvidia-cudnn-cu13`).
    pub project: String,
    /// The version as written (`9.0.0.312.post1`).
    pub version: String,
    /// The platform tag (`manylinux_2_27_x86_64`).
    pub platform_tag: String,
}

impl WheelName {
    /// Reads a wheel file name; `None` for anything else (an sdist).
    pub fn parse(filename: &str) -> Option<WheelName> {
        let stem = filename.strip_suffix(".whl")?;
        let parts: Vec<&str> = stem.split('-').collect();
        let (name, version, plat) = match parts.as_slice() {
            [n, v, _py, _abi, p] | [n, v, _, _py, _abi, p] => (*n, *v, *p),
            _ => return None,
        };
        Some(WheelName {
            project: crate::version::python_name(name, '-'),
            version: version.to_string(),
            platform_tag: plat.to_string(),
        })
    }
}

/// The platform a wheel's tag serves (see [`Platform::from_wheel_tag`]).
pub fn platform_of(name: &WheelName) -> Option<Platform> {
    Platform::from_wheel_tag(&name.platform_tag)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "759b6a4919951ed8ec603dec97b96f6a6396c8269b95b3d345526e2471fb433d";

    fn answer(file: &str) -> String {
        format!(
            r#"{{"meta": {{"api-version": "1.1"}}, "name": "nvidia-cudnn-cu13", "versions": ["9.28.1.4"], "files": [{file}]}}"#
        )
    }

    fn good() -> String {
        format!(
            r#"{{"filename": "nvidia_cudnn_cu13-9.28.1.4-py3-none-manylinux_2_27_aarch64.whl", "url": "https://files.pythonhosted.org/packages/08/b2/e5/nvidia_cudnn_cu13-9.28.1.4-py3-none-manylinux_2_27_aarch64.whl", "hashes": {{"sha256": "{SHA}"}}, "size": 597008823, "yanked": false}}"#
        )
    }

    #[test]
    fn a_pep691_answer_gives_every_file_with_its_identity() {
        let idx = parse(
            &answer(&good()),
            "https://pypi.org/simple/nvidia-cudnn-cu13/",
            None,
        )
        .unwrap();
        assert_eq!(idx.package.to_string(), "nvidia-cudnn-cu13");
        let f = &idx.files[0];
        assert_eq!(
            (f.size, f.sha256.as_str(), f.yanked.as_deref()),
            (597008823, SHA, None)
        );
        let y = good().replace("\"yanked\": false", "\"yanked\": \"broken build\"");
        let idx = parse(&answer(&y), "x", None).unwrap();
        assert_eq!(idx.files[0].yanked.as_deref(), Some("broken build"));
        let y = good().replace("\"yanked\": false", "\"yanked\": true");
        assert_eq!(
            parse(&answer(&y), "x", None).unwrap().files[0]
                .yanked
                .as_deref(),
            Some("")
        );
    }

    #[test]
    fn hostile_answers_are_refused_naming_the_index() {
        let from = "https://mirror.example/simple/nvidia-cudnn-cu13/";
        let cases: Vec<(String, &str)> = vec![
            (
                "<!DOCTYPE html><html>Links for nvidia-cudnn-cu13</html>".into(),
                "it is HTML",
            ),
            ("{\"files\": [".into(), "not JSON"),
            (
                answer(&good().replace(
                    &format!(r#""hashes": {{"sha256": "{SHA}"}}"#),
                    r#""hashes": {}"#,
                )),
                "has no SHA-256",
            ),
            (
                answer(&good().replace("https://files", "http://files")),
                "is not HTTPS",
            ),
            (
                answer(&good().replace("https://files", "ftp://files")),
                "is not HTTPS",
            ),
            (
                answer(&good().replace(
                    "\"filename\": \"nvidia_cudnn_cu13-",
                    "\"filename\": \"../nvidia_cudnn_cu13-",
                )),
                "not a plain file name",
            ),
            (
                answer(&good().replace(
                    "\"filename\": \"nvidia_cudnn_cu13-",
                    "\"filename\": \"a\\\\nvidia_cudnn_cu13-",
                )),
                "not a plain file name",
            ),
            (
                answer(&good().replace("597008823", "99999999999999")),
                "absurd size",
            ),
            (answer(&good().replace("597008823", "0")), "absurd size"),
            (answer(&good().replace("597008823", "-5")), "has no size"),
            (
                answer(&good()).replace("nvidia-cudnn-cu13\", \"versions", "torch\", \"versions"),
                "not a cuDNN package",
            ),
        ];
        for (text, why) in cases {
            let e = parse(&text, from, None).unwrap_err();
            assert_eq!(e.kind(), Kind::Integrity);
            assert!(e.message().contains(from), "{e:?}");
            assert!(e.causes().iter().any(|c| c.contains(why)), "{why}: {e:?}");
        }
        let e = parse(
            &answer(&good()),
            from,
            Some("nvidia-cudnn-cu12".parse().unwrap()),
        )
        .unwrap_err();
        assert!(e.causes()[0].contains("not of nvidia-cudnn-cu12"), "{e:?}");
    }

    #[test]
    fn plain_http_only_to_this_machine() {
        assert!(url_allowed("https://files.pythonhosted.org/packages/x.whl"));
        assert!(url_allowed("http://127.0.0.1:8080/x.whl"));
        assert!(url_allowed("http://localhost/x.whl"));
        assert!(url_allowed("http://[::1]:9/x.whl"));
        assert!(!url_allowed("http://files.pythonhosted.org/x.whl"));
        assert!(!url_allowed("file:///etc/passwd"));
    }

    #[test]
    fn pypis_own_json_api_is_read_too_and_relative_urls_resolve() {
        let text = format!(
            r#"{{"info": {{"name": "nvidia-cudnn-cu12"}}, "releases": {{"9.25.0.15": [{{"filename": "nvidia_cudnn_cu12-9.25.0.15-py3-none-win_amd64.whl", "url": "../../packages/aa/nvidia_cudnn_cu12-9.25.0.15-py3-none-win_amd64.whl", "size": 5, "digests": {{"sha256": "{SHA}"}}, "yanked": true, "yanked_reason": null}}]}}}}"#
        );
        let idx = parse(&text, "https://pypi.org/pypi/nvidia-cudnn-cu12/json", None).unwrap();
        assert_eq!(
            idx.files[0].url,
            "https://pypi.org/packages/aa/nvidia_cudnn_cu12-9.25.0.15-py3-none-win_amd64.whl"
        );
        assert_eq!(idx.files[0].yanked.as_deref(), Some(""));
    }

    #[test]
    fn wheel_names_and_versions() {
        let n = WheelName::parse(
            "nvidia_cudnn_cu12-9.0.0.312.post1-py3-none-manylinux2014_aarch64.whl",
        )
        .unwrap();
        assert_eq!(n.project, "nvidia-cudnn-cu12");
        assert_eq!(platform_of(&n), Some(Platform::LinuxSbsa));
        let release_of = crate::version::release_of;
        assert_eq!(release_of(&n.version), Some("9.0.0.312".parse().unwrap()));
        assert_eq!(release_of("9.28.1.4"), Some("9.28.1.4".parse().unwrap()));
        for pre in [
            "0.0.0a0",
            "0.0.1.dev5",
            "9.26.0.33.dev63203437",
            "9.1rc1",
            "9.1.0.post",
            "1.0",
        ] {
            assert_eq!(release_of(pre), None, "{pre}");
        }
        assert!(WheelName::parse("nvidia_cudnn_cu13-0.0.0a0.tar.gz").is_none());
        let any = WheelName::parse("nvidia_cudnn_cu13-0.0.0a0-py2.py3-none-any.whl").unwrap();
        assert_eq!(platform_of(&any), None);
    }
}

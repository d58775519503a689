//! The package index cuDNN wheels come from, read without pip: a project's
//! file list from the simple API — PEP 691 JSON
//! (<https://peps.python.org/pep-0691/>), or the PEP 503 HTML page with
//! `#sha256=` fragments that older mirrors serve
//! (<https://peps.python.org/pep-0503/>) — and the wheel of one version for
//! one platform picked from it, with the SHA-256 and size the index
//! publishes. Which index: [`setting`]. The wheel itself is fetched by
//! [`super::download`] like any archive, checked against that hash.
//!
//! The page is hostile input: at most [`MAX_PAGE`] bytes and
//! [`MAX_FILES`] files; only file names shaped like a wheel of the project
//! asked for are kept; nothing of the page is ever echoed, only the
//! index's URL (without credentials) and file names of that shape.

use reqwest::Url;
use serde::Deserialize;

use crate::env::Env;
use crate::error::{Error, Kind, Result};
use crate::hash::Sha256Hex;
use crate::version::{Platform, Version};

pub mod setting;

pub use setting::{Index, IndexFrom, Setting};

/// The largest project page read, in bytes (PyPI's JSON page of
/// `nvidia-cudnn-cu12`, about 150 files, is well under 200 KiB).
pub const MAX_PAGE: u64 = 16 << 20;

/// The most files one project page may list.
pub const MAX_FILES: usize = 100_000;

/// PEP 691's content negotiation: JSON first, HTML if that is all there is.
const ACCEPT: &str = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01";

/// One wheel the index lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexFile {
    /// Its file name (`nvidia_cudnn_cu12-9.12.0.46-py3-none-manylinux_2_27_x86_64.whl`).
    pub filename: String,
    /// Its absolute URL, without the `#sha256=` fragment.
    pub url: String,
    /// The SHA-256 the index publishes, when it does.
    pub sha256: Option<Sha256Hex>,
    /// Its size in bytes, when the index says (PEP 700).
    pub size: Option<u64>,
    /// Whether the index marks it yanked (PEP 592).
    pub yanked: bool,
    /// The version its name carries.
    pub version: Version,
    /// The platform its tags name; `None` for another one.
    pub platform: Option<Platform>,
}

/// A project's page on an index.
#[derive(Clone, Debug)]
pub struct Listing {
    /// The index.
    pub index: Index,
    /// The project, as asked (`nvidia-cudnn-cu12`).
    pub project: String,
    /// Its wheels.
    pub files: Vec<IndexFile>,
}

/// Reads `project`'s page from `index`.
///
/// # Errors
/// [`Kind::NotFound`] when the index has no such project (404); [`Kind::Integrity`]
/// for a page that is neither PEP 691 JSON nor a PEP 503 link list, is too
/// large, or came over a redirect off HTTPS; [`Kind::Network`] for the rest.
/// Every message names the index.
pub fn read(env: &Env, index: &Index, project: &str) -> Result<Listing> {
    let url = index.project_url(project);
    let shown = setting::without_credentials(&url);
    let page = super::download::fetch_page(env, &url, index.trust(), ACCEPT, MAX_PAGE).map_err(|e| {
        let e = e.context(format!("could not read the package index {} for {project}", index.shown()));
        if e.kind() == Kind::NotFound {
            e.hint(format!(
                "the index ({}) has no project '{project}' at {shown}; check --index-url, CUDNNM_INDEX_URL, `index_url` in config.toml or pip's index-url",
                index.from
            ))
        } else {
            e.hint(format!(
                "check the network or proxy (HTTPS_PROXY) and the index ({}); or download the wheel yourself and run `cudnnm install PATH`",
                index.from
            ))
        }
    })?;
    let base = Url::parse(&page.url).map_err(|_| bad_page(index, project, "its URL"))?;
    let files =
        parse(&page.body, page.content_type.as_deref(), &base, project).ok_or_else(|| {
            bad_page(
                index,
                project,
                "neither PEP 691 JSON nor a PEP 503 link list",
            )
        })?;
    Ok(Listing {
        index: index.clone(),
        project: project.to_string(),
        files: files
            .into_iter()
            .map(|f| IndexFile {
                url: with_index_credentials(&f.url, &index.url),
                ..f
            })
            .collect(),
    })
}

/// `file` with the index's `user:password@` when it is on the index's own
/// scheme, host and port and names none itself — as pip sends an index's
/// credentials to its files there (a private index's absolute file links);
/// never to another host.
fn with_index_credentials(file: &str, index: &str) -> String {
    let (Ok(mut f), Ok(i)) = (Url::parse(file), Url::parse(index)) else {
        return file.to_string();
    };
    let same = f.scheme() == i.scheme()
        && f.host_str() == i.host_str()
        && f.port_or_known_default() == i.port_or_known_default();
    if !same || i.username().is_empty() || !f.username().is_empty() {
        return file.to_string();
    }
    if f.set_username(i.username()).is_err() || f.set_password(i.password()).is_err() {
        return file.to_string();
    }
    f.to_string()
}

fn bad_page(index: &Index, project: &str, what: &str) -> Error {
    Error::new(
        Kind::Integrity,
        format!(
            "the package index {} answered for {project} with a page that is {what}",
            index.shown()
        ),
    )
    .hint(format!(
        "an index must serve the simple API (PEP 691 JSON or PEP 503 HTML); check the index ({}): a login or error page means the URL or credentials are wrong",
        index.from
    ))
}

/// The wheels on a page: JSON when it says or looks so, else HTML; `None`
/// when neither form parses (or the page lists more than [`MAX_FILES`]).
fn parse(
    body: &[u8],
    content_type: Option<&str>,
    base: &Url,
    project: &str,
) -> Option<Vec<IndexFile>> {
    let json_first = content_type.is_some_and(|t| t.contains("json"))
        || body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let raw = if json_first {
        parse_json(body).or_else(|| parse_html(body))
    } else {
        parse_html(body).or_else(|| parse_json(body))
    }?;
    if raw.len() > MAX_FILES {
        return None;
    }
    Some(
        raw.into_iter()
            .filter_map(|r| r.resolve(base, project))
            .collect(),
    )
}

/// A file entry as the page gives it, before it is checked.
#[derive(Debug, Default)]
struct RawFile {
    filename: String,
    href: String,
    sha256: Option<String>,
    size: Option<u64>,
    yanked: bool,
}

impl RawFile {
    /// The file, when its name is a wheel of `project` with a version and
    /// its URL resolves to `http(s)://`.
    fn resolve(self, base: &Url, project: &str) -> Option<IndexFile> {
        let (version, platform) = wheel_name(&self.filename, project)?;
        let mut url = base.join(&self.href).ok()?;
        let fragment_sha = url
            .fragment()
            .and_then(|f| f.strip_prefix("sha256="))
            .map(str::to_string);
        url.set_fragment(None);
        if !matches!(url.scheme(), "http" | "https") {
            return None;
        }
        let sha256 = self
            .sha256
            .or(fragment_sha)
            .and_then(|h| Sha256Hex::parse(&h.to_ascii_lowercase()).ok());
        Some(IndexFile {
            filename: self.filename,
            url: url.to_string(),
            sha256,
            size: self.size,
            yanked: self.yanked,
            version,
            platform,
        })
    }
}

/// PEP 691: `{"meta": {"api-version": "1.x"}, "files": [{"filename", "url",
/// "hashes": {"sha256"}, "size", "yanked"}]}`.
fn parse_json(body: &[u8]) -> Option<Vec<RawFile>> {
    #[derive(Deserialize)]
    struct Page {
        meta: Meta,
        files: Vec<File>,
    }
    #[derive(Deserialize)]
    struct Meta {
        #[serde(rename = "api-version")]
        api_version: String,
    }
    #[derive(Deserialize)]
    struct File {
        filename: String,
        url: String,
        #[serde(default)]
        hashes: std::collections::BTreeMap<String, String>,
        #[serde(default)]
        size: Option<u64>,
        #[serde(default)]
        yanked: Option<serde_json::Value>,
    }
    let page: Page = serde_json::from_slice(body).ok()?;
    // Major version 1 only (PEP 691: a client refuses a major it does not know).
    if page.meta.api_version.split('.').next() != Some("1") {
        return None;
    }
    Some(
        page.files
            .into_iter()
            .map(|f| RawFile {
                sha256: f.hashes.get("sha256").cloned(),
                yanked: match &f.yanked {
                    Some(serde_json::Value::Bool(b)) => *b,
                    Some(serde_json::Value::String(_)) => true,
                    _ => false,
                },
                filename: f.filename,
                href: f.url,
                size: f.size,
            })
            .collect(),
    )
}

/// PEP 503: every `<a href="…#sha256=…">NAME</a>` of an HTML page, with
/// `data-yanked`; `None` when the page is not HTML or has no link (a login
/// or error page).
fn parse_html(body: &[u8]) -> Option<Vec<RawFile>> {
    let text = std::str::from_utf8(body).ok()?;
    let lower = text.to_ascii_lowercase();
    if !(lower.contains("<html") || lower.contains("<!doctype") || lower.contains("<a ")) {
        return None;
    }
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = lower[at..].find("<a") {
        let start = at + i + 2;
        at = start;
        // `<a` followed by whitespace starts an anchor (`<abbr>` does not).
        if !lower[start..].starts_with(|c: char| c.is_ascii_whitespace()) {
            continue;
        }
        let Some(close) = tag_end(&text[start..]) else {
            break;
        };
        let attrs = attributes(&text[start..start + close]);
        let after = start + close + 1;
        let end = lower[after..]
            .find("</a")
            .map_or(lower.len(), |e| after + e);
        at = end;
        let Some(href) = attrs.iter().find(|(k, _)| k == "href").map(|(_, v)| v) else {
            continue;
        };
        let name = unescape(text[after..end].trim());
        let filename = if name.is_empty() {
            href.split('#').next()?.rsplit('/').next()?.to_string()
        } else {
            name
        };
        out.push(RawFile {
            filename,
            href: href.clone(),
            sha256: None,
            size: None,
            yanked: attrs.iter().any(|(k, _)| k == "data-yanked"),
        });
    }
    (!out.is_empty()).then_some(out)
}

/// The index of the `>` that ends a tag's attributes in `s`, outside quotes.
fn tag_end(s: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return Some(i),
            _ => {}
        }
    }
    None
}

/// A tag's attributes, names in lower case, values unescaped.
fn attributes(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b'/') {
            i += 1;
        }
        let name_start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'=' && b[i] != b'/' {
            i += 1;
        }
        if name_start == i {
            i += 1;
            continue;
        }
        let name = s[name_start..i].to_ascii_lowercase();
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value = String::new();
        if i < b.len() && b[i] == b'=' {
            i += 1;
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            if i < b.len() && (b[i] == b'"' || b[i] == b'\'') {
                let q = b[i];
                let v0 = i + 1;
                i = v0;
                while i < b.len() && b[i] != q {
                    i += 1;
                }
                value = unescape(&s[v0..i.min(b.len())]);
                i += 1;
            } else {
                let v0 = i;
                while i < b.len() && !b[i].is_ascii_whitespace() {
                    i += 1;
                }
                value = unescape(&s[v0..i]);
            }
        }
        out.push((name, value));
    }
    out
}

/// The few character references a link list uses.
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
}

/// The version and platform of `filename` when it is a wheel of `project`:
/// `{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl` (PEP 427),
/// the name normalized as PEP 503 does, of characters a file name on
/// every platform may hold; the platform as [`Platform::from_wheel_tag`]
/// reads the tags (the one [`super::pypi`] and the catalog use).
pub fn wheel_name(filename: &str, project: &str) -> Option<(Version, Option<Platform>)> {
    if filename.len() > 255
        || !filename
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+'))
    {
        return None;
    }
    let stem = filename.strip_suffix(".whl")?;
    let parts: Vec<&str> = stem.split('-').collect();
    if !(5..=6).contains(&parts.len())
        || crate::version::python_name(parts[0], '-') != crate::version::python_name(project, '-')
    {
        return None;
    }
    // A post-release (`9.0.0.312.post1`, NVIDIA's aarch64 rebuilds) carries
    // its release; a pre-release or development version is none.
    let version = crate::version::release_of(parts[1])?;
    Some((version, Platform::from_wheel_tag(parts[parts.len() - 1])))
}

impl Listing {
    /// The platforms `version` has a wheel for, in [`Platform::ALL`]'s order.
    pub fn platforms(&self, version: &Version) -> Vec<Platform> {
        Platform::ALL
            .into_iter()
            .filter(|p| {
                self.files
                    .iter()
                    .any(|f| &f.version == version && f.platform == Some(*p))
            })
            .collect()
    }

    /// The wheel of `version` for `platform`, with a published SHA-256:
    /// not yanked, unless every one is and `exact` (the user named the
    /// version exactly, which PEP 592 lets select a yanked file, as the
    /// catalog's releases follow too); the caller says so when the file it
    /// gets is yanked. Of several (manylinux2014 and manylinux_2_27
    /// builds), the last by name.
    ///
    /// # Errors
    /// [`Kind::NotFound`] when the index has no wheel of `version` for
    /// `platform`; [`Kind::Integrity`] when every one is yanked (and not
    /// `exact`) or the one picked has no SHA-256. Each names the index and
    /// the file.
    pub fn wheel(&self, version: &Version, platform: Platform, exact: bool) -> Result<&IndexFile> {
        let of: Vec<&IndexFile> = self.files_of(version, platform).collect();
        let at = format!("the package index {}", self.index.shown());
        if of.is_empty() {
            let have = self.platforms(version);
            return Err(Error::new(
                Kind::NotFound,
                format!(
                    "{at} has no wheel of {}=={version} for {platform}",
                    self.project
                ),
            )
            .cause(if have.is_empty() {
                format!("it lists no wheel of {version}")
            } else {
                format!(
                    "it has {version} for {}",
                    have.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(", ")
                )
            })
            .hint("pick another version (`cudnnm list --remote`) or platform (--platform), or check the index (--index-url)"));
        }
        let live: Vec<&&IndexFile> = of.iter().filter(|f| !f.yanked).collect();
        let pool = if live.is_empty() && exact {
            of.iter().collect()
        } else {
            live
        };
        let Some(last) = pool.iter().max_by(|a, b| a.filename.cmp(&b.filename)) else {
            return Err(Error::new(
                Kind::Integrity,
                format!(
                    "{at} marks every wheel of {}=={version} for {platform} as yanked ({})",
                    self.project, of[0].filename
                ),
            )
            .hint(format!("a yanked file is one its publisher withdrew: `cudnnm manifest refresh` tells the catalog (a prefix then passes it over), or pick another version (`cudnnm list --remote`), or name {version} exactly to take it anyway")));
        };
        if last.sha256.is_none() {
            return Err(Error::new(
                Kind::Integrity,
                format!(
                    "{at} publishes no SHA-256 for {}; refusing to fetch a wheel nothing can check",
                    last.filename
                ),
            )
            .hint(format!("use an index that publishes hashes (PEP 691 `hashes`, or PEP 503 `#sha256=` links), or fetch it with your pip: `cudnnm install pip:{}=={version}`", self.project)));
        }
        Ok(last)
    }

    /// Whether the index has wheels of `version` for `platform` and marks
    /// every one yanked (PEP 592).
    pub fn all_yanked(&self, version: &Version, platform: Platform) -> bool {
        let mut of = self.files_of(version, platform).peekable();
        of.peek().is_some() && of.all(|f| f.yanked)
    }

    /// The files of `version` for `platform`.
    fn files_of(&self, version: &Version, platform: Platform) -> impl Iterator<Item = &IndexFile> {
        self.files
            .iter()
            .filter(move |f| &f.version == version && f.platform == Some(platform))
    }

    /// The file named `filename`, when the index still lists it with `sha256`.
    pub fn serves(&self, filename: &str, sha256: &Sha256Hex) -> Option<&IndexFile> {
        self.files
            .iter()
            .find(|f| f.filename == filename && f.sha256.as_ref() == Some(sha256))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_index_credentials_go_to_its_own_host_only() {
        let i = "https://u:p@idx.example/simple/";
        assert_eq!(
            super::with_index_credentials("https://idx.example/files/a.whl", i),
            "https://u:p@idx.example/files/a.whl"
        );
        for other in [
            "https://cdn.example/files/a.whl",
            "http://idx.example/files/a.whl",
            "https://idx.example:8443/files/a.whl",
        ] {
            assert_eq!(super::with_index_credentials(other, i), other);
        }
        assert_eq!(
            super::with_index_credentials("https://v:q@idx.example/a.whl", i),
            "https://v:q@idx.example/a.whl"
        );
    }

    use super::*;

    const P: &str = "nvidia-cudnn-cu12";

    fn base() -> Url {
        Url::parse("https://idx.example/simple/nvidia-cudnn-cu12/").unwrap()
    }

    fn sha(c: char) -> String {
        c.to_string().repeat(64)
    }

    #[test]
    fn pep_691_json_lists_wheels_with_hashes_sizes_and_yanks() {
        let body = format!(
            r#"{{"meta":{{"api-version":"1.1"}},"name":"nvidia-cudnn-cu12","files":[
            {{"filename":"nvidia_cudnn_cu12-9.12.0.46-py3-none-manylinux_2_27_x86_64.whl","url":"../../files/a.whl","hashes":{{"sha256":"{}"}},"size":12}},
            {{"filename":"nvidia_cudnn_cu12-9.12.0.46-py3-none-manylinux_2_27_aarch64.whl","url":"https://cdn.example/b.whl","hashes":{{}},"yanked":"broken"}},
            {{"filename":"nvidia_cudnn_cu12-9.12.0.46-py3-none-win_amd64.whl","url":"c.whl","hashes":{{"sha256":"{}"}}}},
            {{"filename":"other-1.0-py3-none-any.whl","url":"d.whl","hashes":{{}}}},
            {{"filename":"nvidia_cudnn_cu12-9.12.0.46.tar.gz","url":"e","hashes":{{}}}}]}}"#,
            sha('a'),
            sha('C')
        );
        let files = parse(
            body.as_bytes(),
            Some("application/vnd.pypi.simple.v1+json"),
            &base(),
            P,
        )
        .unwrap();
        assert_eq!(files.len(), 3);
        assert_eq!(files[0].url, "https://idx.example/files/a.whl");
        assert_eq!(files[0].size, Some(12));
        assert_eq!(files[0].platform, Some(Platform::LinuxX86_64));
        assert!(files[1].yanked && files[1].sha256.is_none());
        assert_eq!(files[1].platform, Some(Platform::LinuxSbsa));
        assert_eq!(files[2].sha256.as_ref().unwrap().as_str(), sha('c'));
        assert_eq!(
            files[2].url,
            "https://idx.example/simple/nvidia-cudnn-cu12/c.whl"
        );
        // A major version this client does not know is not read as JSON.
        let v2 = body.replace("\"1.1\"", "\"2.0\"");
        assert!(parse(v2.as_bytes(), Some("application/json"), &base(), P).is_none());
    }

    #[test]
    fn pep_503_html_lists_wheels_with_sha256_fragments() {
        let html = format!(
            "<!DOCTYPE html><html><body><h1>Links</h1>\n\
             <a href=\"/files/x.whl#sha256={}\" data-requires-python=\"&gt;=3\">nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl</a><br/>\n\
             <A HREF='y.whl' data-yanked>nvidia_cudnn_cu12-9.1.0.70-py3-none-win_amd64.whl</A>\n\
             <abbr>x</abbr><a href=\"z.whl#md5=00\">nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_aarch64.whl</a>\n\
             <a href=\"javascript:x\">nvidia_cudnn_cu12-9.1.0.70-py3-none-any.whl</a></body></html>",
            sha('b')
        );
        // HTML where JSON was asked: read as the PEP 503 page it is.
        let files = parse(html.as_bytes(), Some("text/html"), &base(), P).unwrap();
        assert_eq!(files.len(), 3);
        assert_eq!(files[0].url, "https://idx.example/files/x.whl");
        assert_eq!(files[0].sha256.as_ref().unwrap().as_str(), sha('b'));
        assert!(files[1].yanked);
        assert!(files[2].sha256.is_none());
        // A login page is neither form.
        assert!(
            parse(
                b"<html><body>Please log in</body></html>",
                Some("text/html"),
                &base(),
                P
            )
            .is_none()
        );
        assert!(parse(b"\x00\x01garbage", None, &base(), P).is_none());
    }

    #[test]
    fn only_wheel_names_of_the_project_count() {
        let ok = |f: &str| wheel_name(f, P);
        assert_eq!(
            ok("nvidia_cudnn_cu12-9.12.0.46-py3-none-manylinux_2_27_x86_64.manylinux2014_x86_64.whl").unwrap().1,
            Some(Platform::LinuxX86_64)
        );
        assert!(ok("nvidia_cudnn_cu12-9.12.0.46-1-py3-none-win_amd64.whl").is_some());
        assert!(ok("nvidia_cudnn_cu11-9.12.0.46-py3-none-win_amd64.whl").is_none());
        assert!(ok("../nvidia_cudnn_cu12-9.12.0.46-py3-none-win_amd64.whl").is_none());
        assert!(ok("nvidia_cudnn_cu12-9.12.0.46-py3-none-win_amd64.whl\u{1b}[2J").is_none());
        assert_eq!(
            ok("nvidia_cudnn_cu12-9.1.0.70-py3-none-macosx_11_0_arm64.whl")
                .unwrap()
                .1,
            None
        );
    }
}

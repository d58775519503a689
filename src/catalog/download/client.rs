//! The HTTP client every download uses (reqwest's blocking client over
//! rustls with ring and the platform's certificate verifier, timeouts,
//! proxies from the environment snapshot), the redirects it follows — here,
//! hop by hop, so that none leaves HTTPS — and the reader of small index
//! files (`redistrib_*.json`, directory listings, `SHA256SUMS`).
//!
//! Which URLs may be plain `http://` or `file://` is the caller's to say
//! ([`Trust`]): only one the user named (a flag, an environment variable,
//! `config.toml`, the user catalog). A URL from a project file, the
//! embedded catalog or a default is HTTPS only, and so is every redirect
//! from an HTTPS URL (README, "Security").

use std::io::Read;
use std::path::PathBuf;
use std::sync::Once;

use reqwest::blocking::Client as Http;
use reqwest::{StatusCode, header};

use super::failure::{Failure, classify};
use super::transfer::is_file_url;
use super::{
    BACKOFF, CONNECT_TIMEOUT, MAX_INDEX_BYTES, MAX_REDIRECTS, READ_TIMEOUT, RETRIES, SMALL_DEADLINE,
};
use crate::env::{self, Env};
use crate::error::{Error, Kind, Result, error_chain};

static CRYPTO: Once = Once::new();

/// Whether a URL may leave HTTPS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trust {
    /// The user named it (a flag, an environment variable, `config.toml`,
    /// the user catalog): `http://` and `file://` are accepted, for lab and
    /// loopback mirrors; the catalog's hashes still protect the bytes.
    Named,
    /// It came from a project file, the embedded catalog or a default:
    /// `https://` only.
    HttpsOnly,
}

/// Refuses `url` when `trust` does not allow its scheme.
///
/// # Errors
/// [`Kind::Integrity`] for an `http://` or `file://` URL that must be HTTPS,
/// [`Kind::Usage`] for another scheme.
pub fn check_scheme(url: &str, trust: Trust) -> Result<()> {
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    match (scheme.as_deref(), trust) {
        (Some("https"), _) | (Some("http" | "file"), Trust::Named) => Ok(()),
        (Some("http" | "file"), Trust::HttpsOnly) => Err(Error::new(
            Kind::Integrity,
            format!("refused to fetch '{url}': only https:// is accepted from where this URL came"),
        )
        .cause("a URL from a project file, the embedded catalog or a default must use HTTPS, so that nobody on the way can change the bytes")
        .hint("name a mirror yourself (`--mirror URL`, CUDNNM_MIRROR or `mirror` in config.toml) to use an http:// or file:// copy")),
        _ => Err(Error::new(Kind::Usage, format!("'{url}' is not an http(s):// or file:// URL"))
            .hint("check the URL")),
    }
}

/// The HTTP client: reqwest's, redirects turned off (each hop is judged
/// and followed by [`Client::get`]). Cheap to clone.
#[derive(Clone)]
pub struct Client {
    http: Http,
}

/// A response to a GET, after the redirects.
pub(super) struct Reply {
    /// Its status.
    pub status: StatusCode,
    /// The URL that answered (the last hop).
    pub url: String,
    /// The response, read as the body.
    pub body: reqwest::blocking::Response,
}

impl Reply {
    /// A header's value as text.
    pub fn header(&self, name: header::HeaderName) -> Option<&str> {
        self.body.headers().get(name).and_then(|v| v.to_str().ok())
    }

    /// The body's length, when the server declared one.
    pub fn content_length(&self) -> Option<u64> {
        self.body.content_length()
    }
}

/// The HTTP client: rustls with ring, timeouts, proxies from `env`.
///
/// # Errors
/// [`Kind::Usage`] when a proxy variable holds something that is not a URL.
pub fn client(env: &Env) -> Result<Client> {
    CRYPTO.call_once(|| {
        // Another part of the process may have installed one already; either is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    let mut b = Http::builder()
        .user_agent(concat!("cudnnm/", env!("CARGO_PKG_VERSION")))
        // Followed here, hop by hop ([`Client::get`]).
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(READ_TIMEOUT)
        .no_proxy();
    let var = |name: &str| {
        env.var(name)
            .or_else(|| env.var(&name.to_ascii_lowercase()))
    };
    let no_proxy = var(env::NO_PROXY).and_then(|s| reqwest::NoProxy::from_string(&s));
    let bad_proxy = |name: &str, v: &str, e: reqwest::Error| {
        Error::new(Kind::Usage, format!("{name}='{v}' is not a proxy URL"))
            .cause(error_chain(&e))
            .hint(format!(
                "set {name} to a URL such as http://proxy.example:3128, or unset it"
            ))
    };
    for name in [env::HTTPS_PROXY, env::HTTP_PROXY, env::ALL_PROXY] {
        if let Some(v) = var(name) {
            let made = match name {
                env::HTTPS_PROXY => reqwest::Proxy::https(v.as_str()),
                env::HTTP_PROXY => reqwest::Proxy::http(v.as_str()),
                _ => reqwest::Proxy::all(v.as_str()),
            };
            let p = made.map_err(|e| bad_proxy(name, &v, e))?;
            b = b.proxy(p.no_proxy(no_proxy.clone()));
        }
    }
    let http = b.build().map_err(|e| {
        Error::new(Kind::Network, "could not set up the HTTPS client").cause(error_chain(&e))
    })?;
    Ok(Client { http })
}

impl Client {
    /// GETs `url` (from byte `from` on, when not 0), following up to
    /// [`MAX_REDIRECTS`] redirects: none to a scheme `trust` refuses, none
    /// from HTTPS to anything else. `name` is what is fetched, for messages.
    pub(super) fn get(
        &self,
        url: &str,
        trust: Trust,
        from: u64,
        name: &str,
    ) -> std::result::Result<Reply, Failure> {
        self.get_accepting(url, trust, from, name, None)
    }

    /// [`Client::get`] asking for the media type `accept` (`Accept:`), as a
    /// PEP 691 package index needs to answer JSON.
    pub(super) fn get_accepting(
        &self,
        url: &str,
        trust: Trust,
        from: u64,
        name: &str,
        accept: Option<&str>,
    ) -> std::result::Result<Reply, Failure> {
        check_scheme(url, trust).map_err(Failure::Fatal)?;
        let mut at = url::Url::parse(url).map_err(|e| {
            Failure::Fatal(
                Error::new(Kind::Usage, format!("'{url}' is not a valid download URL"))
                    .cause(e.to_string())
                    .hint("check --mirror, CUDNNM_MIRROR, `mirror` in config.toml and the proxy variables"),
            )
        })?;
        for _ in 0..=MAX_REDIRECTS {
            let mut rb = self.http.get(at.as_str());
            if from > 0 {
                rb = rb.header(header::RANGE, format!("bytes={from}-"));
            }
            if let Some(a) = accept {
                rb = rb.header(header::ACCEPT, a);
            }
            let resp = rb.send().map_err(|e| classify(e, url, name))?;
            let status = resp.status();
            let location = resp
                .headers()
                .get(header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            match location {
                Some(loc) if status.is_redirection() && status != StatusCode::NOT_MODIFIED => {
                    let next = at.join(&loc).map_err(|e| {
                        Failure::Fatal(
                            Error::new(
                                Kind::Network,
                                format!("{at} redirected to '{loc}', which is not a URL"),
                            )
                            .cause(e.to_string()),
                        )
                    })?;
                    redirect_allowed(&at, &next, trust).map_err(Failure::Fatal)?;
                    at = next;
                }
                _ => {
                    return Ok(Reply {
                        status,
                        url: at.to_string(),
                        body: resp,
                    });
                }
            }
        }
        Err(Failure::Fatal(
            Error::new(
                Kind::Network,
                format!(
                    "too many redirects while downloading {name} from {url} (more than {MAX_REDIRECTS}: a redirect loop)"
                ),
            )
            .hint(format!(
                "check the mirror or proxy settings; or {}",
                super::failure::manual_hint(name)
            )),
        ))
    }
}

/// Whether a redirect from `at` to `next` may be followed: never from
/// HTTPS to anything else, whoever named the first URL; to `http://` only
/// where `trust` allows it; never to `file://` or another scheme.
fn redirect_allowed(at: &url::Url, next: &url::Url, trust: Trust) -> Result<()> {
    match (at.scheme(), next.scheme()) {
        ("https", "https") => Ok(()),
        ("https", _) => Err(Error::new(
            Kind::Integrity,
            format!("refused the redirect from {at} to {next}: it leaves HTTPS"),
        )
        .cause("a redirect may never go from https:// to another scheme, whoever named the first URL")
        .hint("ask the server's owner to redirect to an https:// URL, or point cudnnm at the final location yourself")),
        (_, "http" | "https") => check_scheme(next.as_str(), trust),
        _ => Err(Error::new(
            Kind::Integrity,
            format!("refused the redirect from {at} to {next}"),
        )
        .hint("a server may redirect only to an http(s):// URL")),
    }
}

/// The file a `file://` URL names.
///
/// # Errors
/// [`Kind::Usage`] for a URL that names no local path.
pub fn file_url_path(url: &str) -> Result<PathBuf> {
    url::Url::parse(url)
        .ok()
        .and_then(|u| u.to_file_path().ok())
        .ok_or_else(|| Error::new(Kind::Usage, format!("'{url}' is not a usable file URL")))
}

/// Reads a small file (a `redistrib_*.json`, a directory listing) from an
/// `http(s)://` or `file://` URL, with the same retries and error messages as
/// archive downloads; `trust` says whether it may leave HTTPS.
///
/// # Errors
/// [`Kind::Network`] for HTTP and connection failures, [`Kind::Integrity`]
/// for a body over 32 MiB or a scheme `trust` refuses, I/O errors for
/// `file://` URLs (and a `file://` URL that names no regular file).
pub fn fetch_bytes(env: &Env, url: &str, trust: Trust) -> Result<Vec<u8>> {
    fetch_bytes_up_to(env, url, trust, MAX_INDEX_BYTES, "an index file")
}

/// [`fetch_bytes`] for a body of at most `max` bytes, `what` naming what it
/// should be in the error for a larger one (`a cudnnm release archive`).
///
/// # Errors
/// As [`fetch_bytes`], [`Kind::Integrity`] past `max` bytes.
pub fn fetch_bytes_up_to(
    env: &Env,
    url: &str,
    trust: Trust,
    max: u64,
    what: &str,
) -> Result<Vec<u8>> {
    fetch_small(env, url, trust, max, what, None)
}

/// [`fetch_bytes`] asking for the media type `accept` (`Accept:`), as a
/// PEP 691 package index needs to answer JSON.
///
/// # Errors
/// As [`fetch_bytes`].
pub fn fetch_bytes_accepting(env: &Env, url: &str, trust: Trust, accept: &str) -> Result<Vec<u8>> {
    fetch_small(
        env,
        url,
        trust,
        MAX_INDEX_BYTES,
        "an index file",
        Some(accept),
    )
}

fn fetch_small(
    env: &Env,
    url: &str,
    trust: Trust,
    max: u64,
    what: &str,
    accept: Option<&str>,
) -> Result<Vec<u8>> {
    check_scheme(url, trust)?;
    if is_file_url(url) {
        let path = file_url_path(url)?;
        return crate::fsops::read_bounded(&path, max, what);
    }
    let client = client(env)?;
    let mut failures = 0u32;
    loop {
        match get_small(&client, url, trust, max, what, accept) {
            Ok(bytes) => return Ok(bytes),
            Err(Failure::Transient(_)) if failures < RETRIES => {
                failures += 1;
                std::thread::sleep(BACKOFF * 2u32.pow(failures - 1));
            }
            Err(Failure::Transient(e) | Failure::NotThere(e) | Failure::Fatal(e)) => {
                let e = if e.message().contains(url) {
                    e
                } else {
                    e.context(format!("could not read {url}"))
                };
                if e.hint_text().is_some() {
                    return Err(e);
                }
                return Err(e.hint(
                    "check the URL and the network or proxy (HTTPS_PROXY); use `--mirror URL`, or pass a downloaded redistrib_*.json with --from FILE",
                ));
            }
        }
    }
}

/// A page a package index answered ([`fetch_page`]).
#[derive(Debug)]
pub struct Page {
    /// Its body, at most the bytes asked for.
    pub body: Vec<u8>,
    /// Its `Content-Type`, lower case, when the server sent one.
    pub content_type: Option<String>,
    /// The URL that answered, after redirects (relative links resolve against it).
    pub url: String,
}

/// GETs a package index page (`accept` as its `Accept` header) of at most
/// `max` bytes, retrying transient failures as [`fetch_bytes`] does, with
/// redirects judged hop by hop as every download's ([`Client::get`]): none
/// off HTTPS — the index's hashes are only as good as the connection that
/// brought them — and none to plain HTTP unless `trust` allows it.
///
/// # Errors
/// [`Kind::NotFound`] for a 404 or 410 (the index has no such page),
/// [`Kind::Network`] for other HTTP and connection failures,
/// [`Kind::Integrity`] for a body over `max` bytes, a URL `trust` refuses
/// or a redirect off HTTPS.
pub fn fetch_page(env: &Env, url: &str, trust: Trust, accept: &str, max: u64) -> Result<Page> {
    let client = client(env)?;
    let mut failures = 0u32;
    loop {
        match get_page(&client, url, trust, accept, max) {
            Ok(page) => return Ok(page),
            Err(Failure::Transient(_)) if failures < RETRIES => {
                failures += 1;
                std::thread::sleep(BACKOFF * 2u32.pow(failures - 1));
            }
            Err(Failure::Transient(e) | Failure::NotThere(e) | Failure::Fatal(e)) => {
                return Err(e);
            }
        }
    }
}

fn get_page(
    client: &Client,
    url: &str,
    trust: Trust,
    accept: &str,
    max: u64,
) -> std::result::Result<Page, Failure> {
    let name = url.trim_end_matches('/').rsplit('/').next().unwrap_or(url);
    let resp = client.get_accepting(url, trust, 0, name, Some(accept))?;
    let s = resp.status;
    if s == StatusCode::TOO_MANY_REQUESTS || s.is_server_error() {
        return Err(Failure::Transient(Error::new(
            Kind::Network,
            format!("could not read {url}: HTTP {s}"),
        )));
    }
    if s == StatusCode::NOT_FOUND || s == StatusCode::GONE {
        return Err(Failure::NotThere(Error::new(
            Kind::NotFound,
            format!("{url} answered HTTP {s}"),
        )));
    }
    if !s.is_success() {
        return Err(Failure::Fatal(Error::new(
            Kind::Network,
            format!("could not read {url}: HTTP {s}"),
        )));
    }
    let content_type = resp
        .header(header::CONTENT_TYPE)
        .map(str::to_ascii_lowercase);
    let too_big = || {
        Failure::Fatal(Error::new(
            Kind::Integrity,
            format!("{url} is larger than {max} bytes; not a package index page"),
        ))
    };
    if resp.content_length().is_some_and(|n| n > max) {
        return Err(too_big());
    }
    let at = resp.url.clone();
    let body = read_small_body(resp.body, max, url, SMALL_DEADLINE)?;
    if body.len() as u64 > max {
        return Err(too_big());
    }
    Ok(Page {
        body,
        content_type,
        url: at,
    })
}

fn get_small(
    client: &Client,
    url: &str,
    trust: Trust,
    max: u64,
    what: &str,
    accept: Option<&str>,
) -> std::result::Result<Vec<u8>, Failure> {
    let name = url.trim_end_matches('/').rsplit('/').next().unwrap_or(url);
    let resp = client.get_accepting(url, trust, 0, name, accept)?;
    let s = resp.status;
    if s == StatusCode::TOO_MANY_REQUESTS || s.is_server_error() {
        return Err(Failure::Transient(Error::new(
            Kind::Network,
            format!("could not read {url}: HTTP {s}"),
        )));
    }
    if !s.is_success() {
        return Err(Failure::Fatal(Error::new(
            Kind::Network,
            format!("could not read {url}: HTTP {s}"),
        )));
    }
    let too_big = || {
        Failure::Fatal(Error::new(
            Kind::Integrity,
            format!("{url} is larger than {max} bytes; not {what}"),
        ))
    };
    if resp.content_length().is_some_and(|n| n > max) {
        return Err(too_big());
    }
    let out = read_small_body(resp.body, max, url, SMALL_DEADLINE)?;
    if out.len() as u64 > max {
        return Err(too_big());
    }
    Ok(out)
}

/// At most `max + 1` bytes of a small answer's body, read within
/// `deadline` ([`SMALL_DEADLINE`]): past it, a fatal (not retried) failure
/// naming `url`.
fn read_small_body(
    body: impl Read,
    max: u64,
    url: &str,
    deadline: std::time::Duration,
) -> std::result::Result<Vec<u8>, Failure> {
    let until = std::time::Instant::now() + deadline;
    let mut reader = body.take(max + 1);
    let mut out = Vec::new();
    let mut buf = [0u8; 64 << 10];
    loop {
        if std::time::Instant::now() > until {
            return Err(Failure::Fatal(
                Error::new(
                    Kind::Network,
                    format!(
                        "{url} sent {} bytes in {} s and had not finished; stopped",
                        out.len(),
                        deadline.as_secs_f32()
                    ),
                )
                .hint("the server is far too slow for a page this small: check it, or the proxy (HTTPS_PROXY), and try again"),
            ));
        }
        match reader.read(&mut buf) {
            Ok(0) => return Ok(out),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Failure::connection_lost(url, &e)),
        }
    }
}

#[cfg(test)]
mod tests {
    /// A server trickling a byte every 10 ms is stopped at the deadline,
    /// however long the page would go on.
    #[test]
    fn a_trickling_small_answer_is_stopped_at_its_deadline() {
        struct Trickle;
        impl std::io::Read for Trickle {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                std::thread::sleep(std::time::Duration::from_millis(10));
                buf[0] = b'{';
                Ok(1)
            }
        }
        let t = std::time::Instant::now();
        let r = super::read_small_body(
            Trickle,
            1 << 20,
            "http://127.0.0.1:1/simple/x/",
            std::time::Duration::from_millis(200),
        );
        let Err(super::Failure::Fatal(e)) = r else {
            panic!("not stopped")
        };
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
        assert!(
            e.message()
                .starts_with("http://127.0.0.1:1/simple/x/ sent "),
            "{e}"
        );
        // A body that ends in time is read whole.
        let whole = super::read_small_body(&b"{}"[..], 10, "u", std::time::Duration::from_secs(5));
        assert!(matches!(whole, Ok(b) if b == b"{}"));
    }

    use super::*;

    #[test]
    fn proxies_come_from_the_env_snapshot() {
        let env = Env::from_vars(
            [
                ("https_proxy", "http://127.0.0.1:3128"),
                ("NO_PROXY", "localhost"),
            ],
            "/",
            false,
        );
        assert!(client(&env).is_ok());
        let env = Env::from_vars([("HTTP_PROXY", "::not a url::")], "/", false);
        let e = client(&env).err().unwrap();
        assert_eq!(e.kind(), Kind::Usage);
        assert!(e.message().contains("HTTP_PROXY"), "{e}");
    }

    #[test]
    fn redirects_never_leave_https() {
        let u = |s: &str| url::Url::parse(s).unwrap();
        let ok = |a: &str, b: &str, t: Trust| redirect_allowed(&u(a), &u(b), t).is_ok();
        assert!(ok("https://a/x", "https://b/y", Trust::HttpsOnly));
        assert!(!ok("https://a/x", "http://a/x", Trust::Named));
        assert!(!ok("https://a/x", "file:///etc/passwd", Trust::Named));
        assert!(ok("http://lab/x", "http://lab2/x", Trust::Named));
        assert!(ok("http://lab/x", "https://cdn/x", Trust::Named));
        assert!(!ok("http://lab/x", "file:///etc/passwd", Trust::Named));
        let e = redirect_allowed(&u("https://a/x"), &u("http://a/x"), Trust::Named).unwrap_err();
        assert_eq!(e.kind(), Kind::Integrity);
        assert!(e.message().contains("it leaves HTTPS"), "{e}");
    }

    #[test]
    fn schemes_follow_trust() {
        assert!(check_scheme("https://a/b", Trust::HttpsOnly).is_ok());
        assert!(check_scheme("HTTPS://a/b", Trust::HttpsOnly).is_ok());
        assert!(check_scheme("http://127.0.0.1/b", Trust::Named).is_ok());
        assert!(check_scheme("file:///srv/mirror/b", Trust::Named).is_ok());
        for u in ["http://127.0.0.1/b", "file:///dev/zero"] {
            let e = check_scheme(u, Trust::HttpsOnly).unwrap_err();
            assert_eq!(e.kind(), Kind::Integrity, "{u}");
            assert!(e.message().contains("only https://"), "{e}");
        }
        assert_eq!(
            check_scheme("ftp://a/b", Trust::Named).unwrap_err().kind(),
            Kind::Usage
        );
    }
}

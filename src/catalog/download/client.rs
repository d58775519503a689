//! The HTTP client every download uses (rustls with ring, limited
//! redirects, timeouts, proxies from the environment snapshot) and the
//! reader of small index files (`redistrib_*.json`, directory listings).

use std::io::Read;
use std::sync::Once;

use reqwest::StatusCode;
use reqwest::blocking::Client;

use super::failure::{Failure, classify};
use super::transfer::is_file_url;
use super::{BACKOFF, CONNECT_TIMEOUT, MAX_INDEX_BYTES, MAX_REDIRECTS, READ_TIMEOUT, RETRIES};
use crate::env::{self, Env};
use crate::error::{Error, IoResultExt, Kind, Result, error_chain};

static CRYPTO: Once = Once::new();

/// The HTTP client: rustls with ring, redirects limited, proxies from `env`.
///
/// # Errors
/// [`Kind::Usage`] when a proxy variable holds something that is not a URL.
pub fn client(env: &Env) -> Result<Client> {
    CRYPTO.call_once(|| {
        // Another part of the process may have installed one already; either is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    let mut b = Client::builder()
        .user_agent(concat!("cudnnm/", env!("CARGO_PKG_VERSION")))
        // A redirect off HTTPS is not followed (`left_https` words the refusal).
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            let from_https = attempt
                .previous()
                .last()
                .is_some_and(|u| u.scheme() == "https");
            if from_https && attempt.url().scheme() != "https" {
                attempt.stop()
            } else if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error("too many redirects")
            } else {
                attempt.follow()
            }
        }))
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
    b.build().map_err(|e| {
        Error::new(Kind::Network, "could not set up the HTTPS client").cause(error_chain(&e))
    })
}

/// Reads a small file (a `redistrib_*.json`, a directory listing) from an
/// `http(s)://` or `file://` URL, with the same retries and error messages as
/// archive downloads.
///
/// # Errors
/// [`Kind::Network`] for HTTP and connection failures, [`Kind::Integrity`]
/// for a body over 32 MiB, I/O errors for `file://` URLs.
pub fn fetch_bytes(env: &Env, url: &str) -> Result<Vec<u8>> {
    fetch_bytes_up_to(env, url, MAX_INDEX_BYTES, "an index file")
}

/// [`fetch_bytes`] for a body of at most `max` bytes, `what` naming what it
/// should be in the error for a larger one (`a cudnnm release archive`).
///
/// # Errors
/// As [`fetch_bytes`], [`Kind::Integrity`] past `max` bytes.
pub fn fetch_bytes_up_to(env: &Env, url: &str, max: u64, what: &str) -> Result<Vec<u8>> {
    if is_file_url(url) {
        let path = reqwest::Url::parse(url)
            .ok()
            .and_then(|u| u.to_file_path().ok())
            .ok_or_else(|| Error::new(Kind::Usage, format!("'{url}' is not a usable file URL")))?;
        return std::fs::read(&path).with_path("read", &path);
    }
    let client = client(env)?;
    let mut failures = 0u32;
    loop {
        match get_small(&client, url, max, what) {
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
                return Err(e.hint(
                    "check the URL and the network or proxy (HTTPS_PROXY); use `--mirror URL`, or pass a downloaded redistrib_*.json with --from FILE",
                ));
            }
        }
    }
}

/// Where a GET of `start` (an `https://` URL) was sent off HTTPS: the
/// plain URL it landed on, or the one the redirect it stopped at names
/// (the client follows no redirect off HTTPS). `None` when it stayed on HTTPS.
pub(super) fn left_https(start: &str, resp: &reqwest::blocking::Response) -> Option<String> {
    if !start.to_ascii_lowercase().starts_with("https://") {
        return None;
    }
    if resp.url().scheme() != "https" {
        return Some(resp.url().to_string());
    }
    if !resp.status().is_redirection() {
        return None;
    }
    let to = resp
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|l| resp.url().join(l).ok())?;
    (to.scheme() != "https").then(|| to.to_string())
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
/// `max` bytes, retrying transient failures as [`fetch_bytes`] does. A
/// redirect from `https://` to anything else is refused: the index's
/// hashes are only as good as the connection that brought them.
///
/// # Errors
/// [`Kind::NotFound`] for a 404 or 410 (the index has no such page),
/// [`Kind::Network`] for other HTTP and connection failures,
/// [`Kind::Integrity`] for a body over `max` bytes or a redirect off HTTPS.
pub fn fetch_page(env: &Env, url: &str, accept: &str, max: u64) -> Result<Page> {
    let client = client(env)?;
    let mut failures = 0u32;
    loop {
        match get_page(&client, url, accept, max) {
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
    accept: &str,
    max: u64,
) -> std::result::Result<Page, Failure> {
    let name = url.trim_end_matches('/').rsplit('/').next().unwrap_or(url);
    let resp = client
        .get(url)
        .header(reqwest::header::ACCEPT, accept)
        .send()
        .map_err(|e| classify(e, url, name))?;
    let s = resp.status();
    let at = resp.url().to_string();
    if let Some(to) = left_https(url, &resp) {
        return Err(Failure::Fatal(
            Error::new(
                Kind::Integrity,
                format!("refused the index page {url}: it redirected to {to}, off HTTPS"),
            )
            .hint("point --index-url (or CUDNNM_INDEX_URL, `index_url` in config.toml) at the index's https:// address"),
        ));
    }
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
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
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
    let mut body = Vec::new();
    resp.take(max + 1).read_to_end(&mut body).map_err(|e| {
        Failure::Transient(
            Error::new(
                Kind::Network,
                format!("connection lost while reading {url}"),
            )
            .cause(error_chain(&e)),
        )
    })?;
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
    max: u64,
    what: &str,
) -> std::result::Result<Vec<u8>, Failure> {
    let name = url.trim_end_matches('/').rsplit('/').next().unwrap_or(url);
    let resp = client.get(url).send().map_err(|e| classify(e, url, name))?;
    let s = resp.status();
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
    let mut out = Vec::new();
    resp.take(max + 1).read_to_end(&mut out).map_err(|e| {
        Failure::Transient(
            Error::new(
                Kind::Network,
                format!("connection lost while reading {url}"),
            )
            .cause(error_chain(&e)),
        )
    })?;
    if out.len() as u64 > max {
        return Err(Failure::Fatal(Error::new(
            Kind::Integrity,
            format!("{url} is larger than {max} bytes; not {what}"),
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
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
        let e = client(&env).unwrap_err();
        assert_eq!(e.kind(), Kind::Usage);
        assert!(e.message().contains("HTTP_PROXY"), "{e}");
    }
}

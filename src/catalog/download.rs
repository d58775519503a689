//! Downloads into the archive cache `$CUDNNM_HOME/downloads/` (after rustup
//! and uv):
//!
//! - a finished archive is named by its SHA-256 (`downloads/<sha256>`), with a
//!   sidecar `downloads/<sha256>.toml` recording its file name, URL and
//!   release, so a second install of the same archive never downloads;
//! - bytes arrive in `downloads/.partial-<key>` (key: the expected SHA-256, or
//!   the release for an archive without one) and are hashed as they stream;
//!   `downloads/.lock-<key>` admits one process per archive, so two installs of
//!   the same release never write one partial file;
//!   an interrupted transfer resumes from the partial file's length with
//!   `Range: bytes=N-` (a `206` must start at N; a `200` means the server
//!   ignored the range and the file starts over);
//! - transient failures (connection refused or cut, timeouts, 408/429/5xx) are
//!   retried with exponential backoff; attempts that made progress do not
//!   count against the limit;
//! - a file whose hash matches nothing accepted is deleted, never cached;
//!   an HTML page (a login or error page) is refused before a byte is kept;
//! - 404/410 (and 401/403) move on to the archive's next URL; the last one
//!   fails with the URL, the file name to fetch by hand, and `cudnnm install PATH`.
//!
//! HTTPS goes through reqwest with rustls (ring provider) and the platform's
//! certificate verifier. Proxies come from `HTTPS_PROXY`, `HTTP_PROXY`,
//! `ALL_PROXY` and `NO_PROXY` (or their lower-case forms) in the [`Env`]
//! snapshot. `file://` URLs (a mirror folder) are copied with the same
//! hashing, resuming and caching.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::blocking::Client;
use reqwest::header;
use serde::{Deserialize, Serialize};

use crate::env::{self, Env};
use crate::error::{Error, IoResultExt, Kind, Result, error_chain};
use crate::fsops;
use crate::hash::{self, Hasher, Sha256Hex};
use crate::home::Home;
use crate::progress::Progress;
use crate::version::{CudaVariant, Platform, Version};

/// Consecutive failed attempts without progress before giving up (after the first).
const RETRIES: u32 = 3;
/// Attempts of one URL in total, progress or not.
const MAX_ATTEMPTS: u32 = 30;
/// First backoff; doubles per consecutive failure.
const BACKOFF: Duration = Duration::from_millis(200);
/// Redirects followed before a chain counts as a loop.
const MAX_REDIRECTS: usize = 10;
/// Connect timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest wait for the next bytes of a response.
const READ_TIMEOUT: Duration = Duration::from_secs(60);
/// Largest index file `fetch_bytes` accepts.
const MAX_INDEX_BYTES: u64 = 32 << 20;

/// The release an archive belongs to, recorded in its cache sidecar.
#[derive(Clone, Copy, Debug)]
pub struct Identity<'a> {
    /// Release version.
    pub version: &'a Version,
    /// CUDA variant.
    pub cuda: &'a CudaVariant,
    /// Platform.
    pub platform: Platform,
}

/// One archive to fetch.
#[derive(Clone, Copy, Debug)]
pub struct Job<'a> {
    /// URLs holding the same bytes, tried in order (`https://`, `http://`, `file://`).
    pub urls: &'a [String],
    /// The archive's file name.
    pub name: &'a str,
    /// Expected size in bytes, when published (for the progress bar).
    pub size: Option<u64>,
    /// Accepted SHA-256 values; empty for an unverified download.
    pub expect: &'a [Sha256Hex],
    /// Which release it is.
    pub identity: Identity<'a>,
}

/// A verified archive in the cache.
#[derive(Clone, Debug)]
pub struct Downloaded {
    /// `downloads/<sha256>`.
    pub path: PathBuf,
    /// Its SHA-256.
    pub sha256: Sha256Hex,
    /// Where it came from.
    pub url: String,
    /// True when it was already in the cache.
    pub cached: bool,
}

/// `downloads/<sha256>.toml`: what a cached archive is.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CacheRecord {
    /// The archive's file name.
    pub name: String,
    /// Its SHA-256 (also the cache file's name).
    pub sha256: Sha256Hex,
    /// Size in bytes.
    pub size: u64,
    /// The URL it was downloaded from.
    pub url: String,
    /// Release version.
    pub version: Version,
    /// CUDA variant.
    pub cuda: CudaVariant,
    /// Platform.
    pub platform: Platform,
    /// Whether it matched a published or user-given SHA-256 (false: `--allow-unverified`).
    pub verified: bool,
    /// When it was downloaded, RFC 3339 UTC.
    pub fetched_at: String,
}

/// Fetches `job` into the cache, or finds it there.
///
/// # Errors
/// [`Kind::Integrity`] on a hash mismatch (the file is deleted);
/// [`Kind::Network`] for HTTP errors, HTML instead of an archive, redirect
/// loops, and connections that fail after the retries (a partial file is kept
/// for the next attempt to resume); I/O errors in the cache folder.
pub fn download(home: &Home, env: &Env, job: &Job, progress: &dyn Progress) -> Result<Downloaded> {
    let dir = home.downloads_dir();
    fsops::create_dir_all(&dir)?;
    if let Some(hit) = cached(&dir, job)? {
        return Ok(hit);
    }
    let key = match job.expect.first() {
        Some(h) => h.as_str().to_string(),
        None => hash::sha256_bytes(
            format!(
                "{}|{}|{}|{}",
                job.name, job.identity.version, job.identity.cuda, job.identity.platform
            )
            .as_bytes(),
        )
        .as_str()[..24]
            .to_string(),
    };
    let partial_path = dir.join(format!(".partial-{key}"));
    // One process per archive: another cudnnm fetching the same file is waited for,
    // and what it finished is then found in the cache.
    let lock_path = dir.join(format!(".lock-{key}"));
    let (lock, _) = fsops::open_append(&lock_path)?;
    lock.lock().with_path("lock", &lock_path)?;
    let _lock = ArchiveLock {
        _file: lock,
        path: lock_path,
        partial: partial_path.clone(),
    };
    if let Some(hit) = cached(&dir, job)? {
        return Ok(hit);
    }
    let client = if job.urls.iter().any(|u| !is_file_url(u)) {
        Some(client(env)?)
    } else {
        None
    };
    let mut fresh_retry = false;
    loop {
        let mut partial = Partial::open(&partial_path)?;
        let resumed_from = partial.len;
        let url = match transfer_any(client.as_ref(), job, &mut partial, progress) {
            Ok(url) => url,
            Err(e) => {
                if partial.len == 0 {
                    // Nothing to resume: leave no empty file behind.
                    drop(partial);
                    fsops::remove_file(&partial_path)?;
                }
                return Err(e);
            }
        };
        let (len, got) = partial.finish();
        if !job.expect.is_empty() && !job.expect.contains(&got) {
            fsops::remove_file(&partial_path)?;
            if resumed_from > 0 && !fresh_retry {
                // The partial file from an earlier run may have been damaged: start over once.
                fresh_retry = true;
                continue;
            }
            let expected: Vec<&str> = job.expect.iter().map(Sha256Hex::as_str).collect();
            return Err(Error::new(
                Kind::Integrity,
                format!(
                    "{} from {url} does not match its published SHA-256; the download was discarded",
                    job.name
                ),
            )
            .cause(format!("expected {}", expected.join(" or ")))
            .cause(format!("got      {got} ({len} bytes)"))
            .hint("the server or mirror holds other bytes than the catalog's sources published; if NVIDIA re-uploaded the file, `cudnnm manifest refresh` reads its current hash, or check the file yourself and pass `--sha256 HEX`"));
        }
        let final_path = dir.join(got.as_str());
        if final_path.exists() {
            fsops::remove_file(&partial_path)?;
        } else {
            fsops::rename(&partial_path, &final_path)?;
        }
        let record = CacheRecord {
            name: job.name.to_string(),
            sha256: got.clone(),
            size: len,
            url: url.clone(),
            version: job.identity.version.clone(),
            cuda: *job.identity.cuda,
            platform: job.identity.platform,
            verified: !job.expect.is_empty(),
            fetched_at: crate::store::now_rfc3339(),
        };
        let text = toml::to_string_pretty(&record).unwrap_or_default();
        fsops::write_atomic(&sidecar(&dir, &got), text.as_bytes())?;
        return Ok(Downloaded {
            path: final_path,
            sha256: got,
            url,
            cached: false,
        });
    }
}

/// The held `.lock-<key>` of one archive. On release the lock file is
/// removed unless a partial download remains to be resumed, so the cache
/// folder holds only archives, their sidecars and resumable partial files.
struct ArchiveLock {
    _file: File,
    path: PathBuf,
    partial: PathBuf,
}

impl Drop for ArchiveLock {
    fn drop(&mut self) {
        if !self.partial.exists() {
            let _ = fsops::remove_file(&self.path);
        }
    }
}

fn sidecar(dir: &Path, sha: &Sha256Hex) -> PathBuf {
    dir.join(format!("{}.toml", sha.as_str()))
}

/// A cached archive that still hashes to an accepted value. A damaged cache
/// file is removed so the download below replaces it.
fn cached(dir: &Path, job: &Job) -> Result<Option<Downloaded>> {
    let candidates: Vec<Sha256Hex> = if job.expect.is_empty() {
        // Unverified: the sidecar of an earlier download of this very release and file.
        records(dir)
            .into_iter()
            .filter(|r| {
                r.name == job.name
                    && &r.version == job.identity.version
                    && &r.cuda == job.identity.cuda
                    && r.platform == job.identity.platform
            })
            .map(|r| r.sha256)
            .collect()
    } else {
        job.expect.to_vec()
    };
    for h in candidates {
        let path = dir.join(h.as_str());
        if !path.is_file() {
            continue;
        }
        let (_, got) = hash::sha256_file(&path)?;
        if got == h {
            let url = read_record(&sidecar(dir, &h))
                .map(|r| r.url)
                .unwrap_or_else(|| job.urls.first().cloned().unwrap_or_default());
            return Ok(Some(Downloaded {
                path,
                sha256: h,
                url,
                cached: true,
            }));
        }
        fsops::remove_file(&path)?;
        fsops::remove_file(&sidecar(dir, &h))?;
    }
    Ok(None)
}

fn read_record(path: &Path) -> Option<CacheRecord> {
    toml::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Every readable sidecar in the cache.
pub fn records(dir: &Path) -> Vec<CacheRecord> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".toml"))
        .filter_map(|e| read_record(&e.path()))
        .collect()
}

/// The growing download: its file, length and the hash of every byte in it.
struct Partial {
    path: PathBuf,
    file: File,
    len: u64,
    hasher: Hasher,
}

impl Partial {
    /// Opens (or creates) the partial file, hashing what an earlier run left.
    fn open(path: &Path) -> Result<Partial> {
        let (file, len) = fsops::open_append(path)?;
        let mut hasher = Hasher::new();
        if len > 0 {
            let mut r = File::open(path).with_path("read", path)?;
            let mut buf = vec![0u8; 1 << 20];
            let mut seen = 0u64;
            while seen < len {
                let n = r.read(&mut buf).with_path("read", path)?;
                if n == 0 {
                    break;
                }
                let n = n.min((len - seen) as usize);
                hasher.update(&buf[..n]);
                seen += n as u64;
            }
        }
        Ok(Partial {
            path: path.to_path_buf(),
            file,
            len,
            hasher,
        })
    }

    fn reset(&mut self) -> Result<()> {
        fsops::truncate(&self.file, &self.path)?;
        self.len = 0;
        self.hasher = Hasher::new();
        Ok(())
    }

    fn append(&mut self, buf: &[u8]) -> Result<()> {
        self.file.write_all(buf).with_path("write", &self.path)?;
        self.hasher.update(buf);
        self.len += buf.len() as u64;
        Ok(())
    }

    fn finish(self) -> (u64, Sha256Hex) {
        let _ = self.file.sync_all();
        (self.len, self.hasher.finish())
    }
}

/// Why one attempt failed.
enum Failure {
    /// Worth another attempt (connection refused or cut, timeout, 5xx).
    Transient(Error),
    /// This URL does not have the file (404/410, 401/403); try the next one.
    NotThere(Error),
    /// Give up.
    Fatal(Error),
}

/// Tries each URL in turn; returns the one that delivered.
fn transfer_any(
    client: Option<&Client>,
    job: &Job,
    partial: &mut Partial,
    progress: &dyn Progress,
) -> Result<String> {
    let mut missing: Vec<Error> = Vec::new();
    for url in job.urls {
        let r = if is_file_url(url) {
            copy_file_url(url, job, partial, progress)
        } else {
            let client = client.expect("an HTTP client exists when a URL needs one");
            transfer_http(client, url, job, partial, progress)
        };
        progress.finish();
        match r {
            Ok(()) => return Ok(url.clone()),
            Err(Failure::NotThere(e)) => missing.push(e),
            Err(Failure::Transient(e) | Failure::Fatal(e)) => return Err(e),
        }
    }
    let mut errors = missing.into_iter();
    let first = errors.next().unwrap_or_else(|| {
        Error::new(
            Kind::Network,
            format!("no URL to download {} from", job.name),
        )
    });
    Err(errors.fold(first, |acc, e| acc.cause(e.message())))
}

/// Downloads `url` into `partial` with retries and resume.
fn transfer_http(
    client: &Client,
    url: &str,
    job: &Job,
    partial: &mut Partial,
    progress: &dyn Progress,
) -> std::result::Result<(), Failure> {
    let mut failures = 0u32;
    let mut attempts = 0u32;
    let mut started = false;
    loop {
        attempts += 1;
        let before = partial.len;
        match attempt(client, url, job, partial, progress, &mut started) {
            Ok(()) => return Ok(()),
            Err(Failure::Transient(e)) => {
                if partial.len > before {
                    failures = 0;
                } else {
                    failures += 1;
                }
                if failures > RETRIES || attempts >= MAX_ATTEMPTS {
                    return Err(Failure::Fatal(gave_up(e, url, job, partial)));
                }
                let wait = BACKOFF * 2u32.saturating_pow(failures.saturating_sub(1));
                std::thread::sleep(wait);
            }
            Err(other) => return Err(other),
        }
    }
}

/// The error after the last retry: interrupted (a partial file is kept) or unreachable.
fn gave_up(e: Error, url: &str, job: &Job, partial: &Partial) -> Error {
    if partial.len > 0 {
        let of = job.size.map(|s| format!(" of {s}")).unwrap_or_default();
        Error::new(
            Kind::Network,
            format!(
                "the download of {} from {url} was interrupted after {}{of} bytes",
                job.name, partial.len
            ),
        )
        .cause(e.message())
        .hint(format!(
            "run the same command again to resume from '{}'",
            partial.path.display()
        ))
    } else {
        let host = reqwest::Url::parse(url)
            .ok()
            .and_then(|u| {
                u.host_str().map(|h| {
                    format!(
                        "{h}{}",
                        u.port().map(|p| format!(":{p}")).unwrap_or_default()
                    )
                })
            })
            .unwrap_or_else(|| url.to_string());
        Error::new(
            Kind::Network,
            format!("could not download {} from {host}", job.name),
        )
        .cause(format!("{url}: {e}"))
        .hint(if url.starts_with(super::NVIDIA_BASE_URL) {
            format!(
                "without network access, point cudnnm at a copy of NVIDIA's files with `--mirror URL`, `CUDNNM_MIRROR` or `mirror` in config.toml, or copy {} here and run `cudnnm install PATH`; behind a proxy, set HTTPS_PROXY",
                job.name
            )
        } else {
            // A mirror (or a PyPI-style host) was asked: it is the one unreachable.
            format!(
                "check that {host} is up and that the mirror URL is right (`--mirror`, `CUDNNM_MIRROR` or `mirror` in config.toml), or copy {} here and run `cudnnm install PATH`; behind a proxy, set HTTPS_PROXY",
                job.name
            )
        })
    }
}

/// One GET, streamed into `partial`.
fn attempt(
    client: &Client,
    url: &str,
    job: &Job,
    partial: &mut Partial,
    progress: &dyn Progress,
    started: &mut bool,
) -> std::result::Result<(), Failure> {
    let mut rb = client.get(url);
    let offset = partial.len;
    if offset > 0 {
        rb = rb.header(header::RANGE, format!("bytes={offset}-"));
    }
    let resp = rb.send().map_err(|e| classify(e, url, job.name))?;
    let status = resp.status();
    let final_url = resp.url().to_string();
    match status {
        StatusCode::PARTIAL_CONTENT => {
            let start = resp
                .headers()
                .get(header::CONTENT_RANGE)
                .and_then(|v| v.to_str().ok())
                .and_then(content_range_start);
            if start != Some(offset) {
                partial.reset().map_err(Failure::Fatal)?;
                return Err(Failure::Transient(Error::new(
                    Kind::Network,
                    format!(
                        "{url} answered a range request with another range ({start:?}); starting over"
                    ),
                )));
            }
        }
        StatusCode::OK => {
            if offset > 0 {
                // The server ignored the range: the body is the whole file.
                partial.reset().map_err(Failure::Fatal)?;
            }
        }
        StatusCode::RANGE_NOT_SATISFIABLE if offset > 0 => {
            // The partial file already holds the whole file (or more); the hash decides.
            return Ok(());
        }
        StatusCode::NOT_FOUND | StatusCode::GONE => {
            return Err(Failure::NotThere(missing_error(status, url, job)));
        }
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
            return Err(Failure::NotThere(missing_error(status, url, job)));
        }
        s if s == StatusCode::REQUEST_TIMEOUT
            || s == StatusCode::TOO_MANY_REQUESTS
            || s.is_server_error() =>
        {
            return Err(Failure::Transient(Error::new(
                Kind::Network,
                format!("HTTP {s} from {url}"),
            )));
        }
        s => {
            return Err(Failure::Fatal(
                Error::new(
                    Kind::Network,
                    format!("could not download {}: HTTP {s} from {url}", job.name),
                )
                .hint(manual_hint(job.name)),
            ));
        }
    }
    let is_html = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.to_ascii_lowercase().contains("text/html"));
    if is_html {
        return Err(Failure::Fatal(html_error(url, &final_url, job)));
    }
    let total = resp.content_length().map(|n| n + partial.len).or(job.size);
    if !*started {
        progress.start(&format!("downloading {}", job.name), total);
        progress.advance(partial.len);
        *started = true;
    }
    stream(resp, url, &final_url, job, partial, progress)
}

/// Copies a response body into `partial`, refusing an HTML page at the start.
fn stream(
    mut body: impl Read,
    url: &str,
    final_url: &str,
    job: &Job,
    partial: &mut Partial,
    progress: &dyn Progress,
) -> std::result::Result<(), Failure> {
    let mut buf = vec![0u8; 256 << 10];
    let mut first = partial.len == 0;
    loop {
        let n = match body.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(Failure::Transient(
                    Error::new(
                        Kind::Network,
                        format!("connection lost while reading {url}"),
                    )
                    .cause(error_chain(&e)),
                ));
            }
        };
        if first {
            first = false;
            if looks_like_html(&buf[..n]) {
                return Err(Failure::Fatal(html_error(url, final_url, job)));
            }
        }
        partial.append(&buf[..n]).map_err(Failure::Fatal)?;
        progress.advance(n as u64);
    }
}

/// A `file://` URL (a mirror folder): copy from the partial file's length on.
fn copy_file_url(
    url: &str,
    job: &Job,
    partial: &mut Partial,
    progress: &dyn Progress,
) -> std::result::Result<(), Failure> {
    let path = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.to_file_path().ok())
        .ok_or_else(|| {
            Failure::Fatal(Error::new(
                Kind::Usage,
                format!("'{url}' is not a usable file URL"),
            ))
        })?;
    let mut f = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Failure::NotThere(
                Error::new(
                    Kind::Network,
                    format!("could not find {} in the mirror folder: '{}' does not exist", job.name, path.display()),
                )
                .hint(format!(
                    "copy NVIDIA's file to that path (the mirror keeps NVIDIA's folder layout), or run `cudnnm install PATH` on {} directly",
                    job.name
                )),
            ));
        }
        Err(e) => return Err(Failure::Fatal(Error::io("open", &path, e))),
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if partial.len > len {
        partial.reset().map_err(Failure::Fatal)?;
    }
    f.seek(SeekFrom::Start(partial.len))
        .with_path("read", &path)
        .map_err(Failure::Fatal)?;
    progress.start(&format!("copying {}", job.name), Some(len));
    progress.advance(partial.len);
    stream(f, url, url, job, partial, progress).map_err(|e| match e {
        Failure::Transient(e) => Failure::Fatal(e),
        other => other,
    })
}

fn is_file_url(u: &str) -> bool {
    u.get(..7)
        .is_some_and(|p| p.eq_ignore_ascii_case("file://"))
}

/// `bytes 100-199/200` → 100.
fn content_range_start(v: &str) -> Option<u64> {
    let rest = v.trim().strip_prefix("bytes")?.trim_start();
    rest.split('-').next()?.trim().parse().ok()
}

/// True when the bytes open an HTML document (a login or error page).
fn looks_like_html(b: &[u8]) -> bool {
    let head: Vec<u8> = b
        .iter()
        .skip_while(|c| c.is_ascii_whitespace() || **c == 0xEF || **c == 0xBB || **c == 0xBF)
        .take(15)
        .map(u8::to_ascii_lowercase)
        .collect();
    head.starts_with(b"<!doctype html") || head.starts_with(b"<html") || head.starts_with(b"<head")
}

fn manual_hint(name: &str) -> String {
    format!(
        "older cuDNN archives may need an NVIDIA developer login: sign in at https://developer.nvidia.com, download {name} by hand, then import it with `cudnnm install /path/to/{name}`"
    )
}

fn missing_error(status: StatusCode, url: &str, job: &Job) -> Error {
    let mut e = Error::new(
        Kind::Network,
        format!("could not download {}: HTTP {status} from {url}", job.name),
    );
    if !url.starts_with(super::NVIDIA_BASE_URL) {
        e = e.cause(format!(
            "a mirror must hold NVIDIA's files under their paths below {}",
            super::NVIDIA_BASE_URL
        ));
    }
    e.hint(manual_hint(job.name))
}

fn html_error(url: &str, final_url: &str, job: &Job) -> Error {
    let via = if final_url != url {
        format!(" (redirected to {final_url})")
    } else {
        String::new()
    };
    Error::new(
        Kind::Network,
        format!(
            "{url}{via} sent an HTML page instead of the archive {}; nothing was kept",
            job.name
        ),
    )
    .cause("a login or error page, not a cuDNN archive")
    .hint(manual_hint(job.name))
}

/// Whether `e` failed because rustls rejected the server's certificate
/// (unknown issuer, expired, wrong name). By its text: the TLS layer hands
/// rustls's error up as an `io::Error` holding only its message, so no
/// typed error is left to look at; "invalid peer certificate" is how
/// rustls's `Error::InvalidCertificate` displays itself.
fn untrusted_certificate(e: &reqwest::Error) -> bool {
    error_chain(e).contains("invalid peer certificate")
}

/// Sorts a reqwest error into retry or give-up, with a one-line message.
fn classify(e: reqwest::Error, url: &str, name: &str) -> Failure {
    if e.is_redirect() {
        return Failure::Fatal(
            Error::new(
                Kind::Network,
                format!(
                    "too many redirects while downloading {name} from {url} (more than {MAX_REDIRECTS}: a redirect loop)"
                ),
            )
            .cause(error_chain(&e))
            .hint(format!(
                "check the mirror or proxy settings; or {}",
                manual_hint(name)
            )),
        );
    }
    if e.is_builder() {
        return Failure::Fatal(
            Error::new(Kind::Usage, format!("'{url}' is not a valid download URL"))
                .cause(error_chain(&e))
                .hint("check --mirror, CUDNNM_MIRROR, `mirror` in config.toml and the proxy variables"),
        );
    }
    if untrusted_certificate(&e) {
        // Not transient: the same certificate comes back on every attempt.
        let host = reqwest::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_else(|| url.to_string());
        let chain = error_chain(&e);
        let trust = if cfg!(windows) {
            "import that CA's certificate into Windows' Trusted Root Certification Authorities store".to_string()
        } else {
            // Read as rustls-native-certs reads it: from the process.
            match std::env::var_os("SSL_CERT_FILE") {
                Some(f) => format!(
                    "check that SSL_CERT_FILE ('{}', set now) holds that CA's certificate (PEM)",
                    Path::new(&f).display()
                ),
                None => "point SSL_CERT_FILE at that CA's certificate (a PEM file)".to_string(),
            }
        };
        let hint = if chain.contains("CaUsedAsEndEntity") {
            format!(
                "the server presents a CA certificate as its own (a self-signed one with CA:TRUE, which `openssl req -x509` makes by default), which is refused even when trusted: give the server a certificate signed by a CA, or one made with `-addext basicConstraints=CA:FALSE`, then {trust}"
            )
        } else {
            format!(
                "if a company proxy or your mirror signs HTTPS with its own CA, {trust} and run the command again; otherwise {}",
                manual_hint(name)
            )
        };
        return Failure::Fatal(
            Error::new(
                Kind::Network,
                format!("could not download {name}: the TLS certificate of {host} is not trusted"),
            )
            .cause(format!("{url}: {chain}"))
            .hint(hint),
        );
    }
    let what = if e.is_connect() {
        "could not connect"
    } else if e.is_timeout() {
        "timed out"
    } else {
        "request failed"
    };
    // reqwest's own line repeats the URL; its sources say what happened.
    let detail = match std::error::Error::source(&e) {
        Some(s) => error_chain(s),
        None => error_chain(&e),
    };
    Failure::Transient(Error::new(Kind::Network, format!("{what}: {detail}")))
}

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
        .redirect(reqwest::redirect::Policy::limited(MAX_REDIRECTS))
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
        match get_small(&client, url) {
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

fn get_small(client: &Client, url: &str) -> std::result::Result<Vec<u8>, Failure> {
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
    resp.take(MAX_INDEX_BYTES + 1)
        .read_to_end(&mut out)
        .map_err(|e| {
            Failure::Transient(
                Error::new(
                    Kind::Network,
                    format!("connection lost while reading {url}"),
                )
                .cause(error_chain(&e)),
            )
        })?;
    if out.len() as u64 > MAX_INDEX_BYTES {
        return Err(Failure::Fatal(Error::new(
            Kind::Integrity,
            format!("{url} is larger than {MAX_INDEX_BYTES} bytes; not an index file"),
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_ranges_and_html_sniffing() {
        assert_eq!(content_range_start("bytes 100-199/200"), Some(100));
        assert_eq!(content_range_start("bytes 0-0/*"), Some(0));
        assert_eq!(content_range_start("items 1-2/3"), None);
        assert!(looks_like_html(b"\n  <!DOCTYPE html><html>"));
        assert!(looks_like_html(b"\xEF\xBB\xBF<HTML lang=en>"));
        assert!(!looks_like_html(b"\xFD7zXZ\x00\x00"));
        assert!(!looks_like_html(b"PK\x03\x04"));
    }

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

    #[test]
    fn partial_files_resume_with_the_hash_of_what_they_hold() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(".partial-x");
        let mut part = Partial::open(&p).unwrap();
        part.append(b"hello ").unwrap();
        drop(part);
        let mut part = Partial::open(&p).unwrap();
        assert_eq!(part.len, 6);
        part.append(b"world").unwrap();
        let (n, h) = part.finish();
        assert_eq!(n, 11);
        assert_eq!(h, hash::sha256_bytes(b"hello world"));
        let mut part = Partial::open(&p).unwrap();
        part.reset().unwrap();
        part.append(b"abc").unwrap();
        assert_eq!(part.finish().1, hash::sha256_bytes(b"abc"));
        assert_eq!(std::fs::read(&p).unwrap(), b"abc");
    }
}

//! Moving the bytes of one archive into its partial file: each URL in turn,
//! HTTP with retries, backoff and `Range` resumes, or a copy from a
//! `file://` mirror; an HTML page is refused before a byte is kept, and a
//! body longer than the archive's declared size ([`Job::limit`]) is cut off
//! and removed.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use reqwest::{StatusCode, header};

use super::client::{Client, check_scheme, file_url_path};
use super::failure::{Failure, gave_up, html_error, manual_hint, missing_error};
use super::pump::{self, Next, Pump};
use super::{BACKOFF, Job, MAX_ATTEMPTS, RETRIES, Tap};
use crate::error::{Error, IoResultExt, Kind, Result};
use crate::fsops;
use crate::hash::{Hasher, Sha256Hex};
use crate::progress::Progress;

/// The growing download: its file, length and the hash of every byte in
/// it, and the [`Tap`] told about each change.
pub(super) struct Partial<'t> {
    pub(super) path: PathBuf,
    file: File,
    pub(super) len: u64,
    hasher: Hasher,
    /// The archive's file name, for the tap.
    name: String,
    tap: &'t dyn Tap,
}

impl<'t> Partial<'t> {
    /// Opens (or creates) the partial file, hashing what an earlier run left.
    pub(super) fn open(path: &Path, name: &str, tap: &'t dyn Tap) -> Result<Partial<'t>> {
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
        tap.opened(path, name, len);
        Ok(Partial {
            path: path.to_path_buf(),
            file,
            len,
            hasher,
            name: name.to_string(),
            tap,
        })
    }

    pub(super) fn reset(&mut self) -> Result<()> {
        self.tap.discard();
        fsops::truncate(&self.file, &self.path)?;
        self.len = 0;
        self.hasher = Hasher::new();
        self.tap.opened(&self.path, &self.name, 0);
        Ok(())
    }

    pub(super) fn append(&mut self, buf: &[u8]) -> Result<()> {
        self.file.write_all(buf).with_path("write", &self.path)?;
        self.hasher.update(buf);
        self.len += buf.len() as u64;
        self.tap.grew(self.len);
        Ok(())
    }

    pub(super) fn finish(self) -> (u64, Sha256Hex) {
        let _ = self.file.sync_all();
        (self.len, self.hasher.finish())
    }
}

/// Tries each URL in turn; returns the one that delivered.
pub(super) fn transfer_any(
    client: Option<&Client>,
    job: &Job,
    partial: &mut Partial,
    progress: &dyn Progress,
) -> Result<String> {
    let mut missing: Vec<Error> = Vec::new();
    for loc in job.urls {
        let url = &loc.url;
        check_scheme(url, loc.trust)?;
        let r = if is_file_url(url) {
            copy_file_url(url, job, partial, progress)
        } else {
            let client = client.expect("an HTTP client exists when a URL needs one");
            transfer_http(client, loc, job, partial, progress)
        };
        progress.finish();
        match r {
            Ok(()) => return Ok(url.clone()),
            Err(Failure::NotThere(e)) => missing.push(e),
            Err(Failure::Transient(e) | Failure::Fatal(e)) => return Err(e),
        }
    }
    // Not found (exit 3) only when every URL was a local folder lacking
    // the file; a server's refusal stays a download failure.
    let kind = if !missing.is_empty() && missing.iter().all(|e| e.kind() == Kind::NotFound) {
        Kind::NotFound
    } else {
        Kind::Network
    };
    let mut errors = missing.into_iter();
    let first = errors.next().unwrap_or_else(|| {
        Error::new(
            Kind::Network,
            format!("no URL to download {} from", job.name),
        )
    });
    Err(errors
        .fold(first, |acc, e| acc.cause(e.message()))
        .with_kind(kind))
}

/// Downloads `url` into `partial` with retries and resume.
fn transfer_http(
    client: &Client,
    loc: &super::Location,
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
        let url = loc.url.as_str();
        match attempt(client, loc, job, partial, progress, &mut started) {
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
                let until = std::time::Instant::now() + wait;
                while let Some(left) = until.checked_duration_since(std::time::Instant::now())
                    && !left.is_zero()
                {
                    stop_if_interrupted(partial)?;
                    std::thread::sleep(left.min(pump::POLL));
                }
                stop_if_interrupted(partial)?;
            }
            Err(other) => return Err(other),
        }
    }
}

/// One GET, streamed into `partial`.
fn attempt(
    client: &Client,
    loc: &super::Location,
    job: &Job,
    partial: &mut Partial,
    progress: &dyn Progress,
    started: &mut bool,
) -> std::result::Result<(), Failure> {
    let url = loc.url.as_str();
    let offset = partial.len;
    // Connecting and waiting for the response's head happen on a thread of
    // their own: a stalled server does not hold a signal off until the timeout.
    let (c, u, trust, name) = (
        client.clone(),
        url.to_string(),
        loc.trust,
        job.name.to_string(),
    );
    let resp = pump::until(
        move || c.get(&u, trust, offset, &name),
        crate::interrupt::requested,
    )
    .ok_or_else(|| interrupted(partial))??;
    let status = resp.status;
    let final_url = resp.url.clone();
    match status {
        StatusCode::PARTIAL_CONTENT => {
            let start = resp
                .header(header::CONTENT_RANGE)
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
        .header(header::CONTENT_TYPE)
        .is_some_and(|t| t.to_ascii_lowercase().contains("text/html"));
    if is_html {
        return Err(Failure::Fatal(html_error(url, &final_url, job)));
    }
    let announced = resp.content_length().map(|n| n + partial.len);
    if let Some(n) = announced.filter(|n| *n > job.limit()) {
        // Refused before a byte of it is kept.
        return Err(oversize(partial, url, job, n));
    }
    let total = announced.or(job.size);
    if !*started {
        progress.start(&format!("downloading {}", job.name), total);
        progress.advance(partial.len);
        *started = true;
    }
    stream(resp.body, url, &final_url, job, partial, progress)
}

/// Copies a response body into `partial`, refusing an HTML page at the
/// start. The body is read on a thread of its own ([`Pump`]), so that a
/// signal is noticed while the server sends nothing.
fn stream(
    body: impl Read + Send + 'static,
    url: &str,
    final_url: &str,
    job: &Job,
    partial: &mut Partial,
    progress: &dyn Progress,
) -> std::result::Result<(), Failure> {
    let pump = Pump::start(body);
    let mut first = partial.len == 0;
    loop {
        let buf = match pump.next() {
            Ok(Next::End) => return Ok(()),
            Ok(Next::Bytes(b)) => b,
            Ok(Next::Idle) => {
                stop_if_interrupted(partial)?;
                continue;
            }
            Err(e) => return Err(Failure::connection_lost(url, &e)),
        };
        if first {
            first = false;
            if looks_like_html(&buf) {
                return Err(Failure::Fatal(html_error(url, final_url, job)));
            }
        }
        let after = partial.len + buf.len() as u64;
        if after > job.limit() {
            return Err(oversize(partial, url, job, after));
        }
        partial.append(&buf).map_err(Failure::Fatal)?;
        progress.advance(buf.len() as u64);
        pump.recycle(buf);
        stop_if_interrupted(partial)?;
    }
}

/// The failure of a body longer than the archive may be ([`Job::limit`],
/// `seen` bytes so far or announced): the partial file is emptied (the
/// caller removes an empty one), since its bytes are not the archive's.
fn oversize(partial: &mut Partial, url: &str, job: &Job, seen: u64) -> Failure {
    let why = match job.size {
        Some(n) => format!("the {n} bytes its catalog entry or lock declares"),
        None => format!(
            "{} bytes, the most cudnnm downloads for an archive of undeclared size",
            super::MAX_UNDECLARED_BYTES
        ),
    };
    if let Err(e) = partial.reset() {
        return Failure::Fatal(e);
    }
    Failure::Fatal(
        Error::new(
            Kind::Integrity,
            format!(
                "{url} sent more than {why} for {} ({seen} bytes); the download was stopped and removed",
                job.name
            ),
        )
        .hint("the server or mirror does not hold that archive; check the URL, the mirror (`--mirror`, CUDNNM_MIRROR), or the lock that names it"),
    )
}

/// Fails once a signal asked the process to stop (only a download whose
/// bytes an import reads along installs the handler that sets the flag; a
/// plain download ends with the process). What arrived stays for resuming.
fn stop_if_interrupted(partial: &Partial) -> std::result::Result<(), Failure> {
    if crate::interrupt::requested() {
        return Err(interrupted(partial));
    }
    Ok(())
}

/// The failure of a transfer a signal stopped: what arrived stays in
/// `partial` for resuming.
fn interrupted(partial: &Partial) -> Failure {
    let hint = if partial.len == 0 {
        "the store is as it was; run the command again to install".to_string()
    } else {
        format!(
            "the store is as it was; the {} bytes downloaded stay in '{}', and the same command resumes from there",
            partial.len,
            partial.path.display()
        )
    };
    Failure::Fatal(Error::new(Kind::Interrupted, "interrupted; nothing was installed").hint(hint))
}

/// A `file://` URL (a mirror folder): copy from the partial file's length on.
/// Only a regular file is read (never a device such as `/dev/zero`).
fn copy_file_url(
    url: &str,
    job: &Job,
    partial: &mut Partial,
    progress: &dyn Progress,
) -> std::result::Result<(), Failure> {
    let path = file_url_path(url).map_err(Failure::Fatal)?;
    let mut f = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // A local folder answered: the file is not there (not found,
            // exit 3), which no network problem explains.
            return Err(Failure::NotThere(
                Error::new(
                    Kind::NotFound,
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
    let meta = f
        .metadata()
        .with_path("read", &path)
        .map_err(Failure::Fatal)?;
    if !meta.is_file() {
        return Err(Failure::Fatal(
            Error::new(
                Kind::Integrity,
                format!(
                    "could not copy {} from '{}': it is not a regular file",
                    job.name,
                    path.display()
                ),
            )
            .hint("a mirror folder holds NVIDIA's archives as files; check the mirror"),
        ));
    }
    let len = meta.len();
    if len > job.limit() {
        return Err(oversize(partial, url, job, len));
    }
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

pub(super) fn is_file_url(u: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash;

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
    fn partial_files_resume_with_the_hash_of_what_they_hold() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(".partial-x");
        let mut part = Partial::open(&p, "x.zip", &super::super::NoTap).unwrap();
        part.append(b"hello ").unwrap();
        drop(part);
        let mut part = Partial::open(&p, "x.zip", &super::super::NoTap).unwrap();
        assert_eq!(part.len, 6);
        part.append(b"world").unwrap();
        let (n, h) = part.finish();
        assert_eq!(n, 11);
        assert_eq!(h, hash::sha256_bytes(b"hello world"));
        let mut part = Partial::open(&p, "x.zip", &super::super::NoTap).unwrap();
        part.reset().unwrap();
        part.append(b"abc").unwrap();
        assert_eq!(part.finish().1, hash::sha256_bytes(b"abc"));
        assert_eq!(std::fs::read(&p).unwrap(), b"abc");
    }
}

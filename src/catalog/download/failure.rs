//! Why a transfer failed, sorted into retry, next URL or give up, and the
//! words the user reads: the URL, the file to fetch by hand, the mirror or
//! proxy or certificate to check.

use std::path::Path;

use reqwest::StatusCode;

use super::Job;
use super::transfer::Partial;
use crate::catalog::NVIDIA_BASE_URL;
use crate::error::{Error, Kind, error_chain};

/// Why one attempt failed.
pub(super) enum Failure {
    /// Worth another attempt (connection refused or cut, timeout, 5xx).
    Transient(Error),
    /// This URL does not have the file (404/410, 401/403); try the next one.
    NotThere(Error),
    /// Give up.
    Fatal(Error),
}

impl Failure {
    /// The connection broke while `url`'s body was read: worth another attempt.
    pub(super) fn connection_lost(url: &str, e: &dyn std::error::Error) -> Failure {
        Failure::Transient(
            Error::new(
                Kind::Network,
                format!("connection lost while reading {url}"),
            )
            .cause(error_chain(e)),
        )
    }
}

/// The error after the last retry: interrupted (a partial file is kept) or unreachable.
pub(super) fn gave_up(e: Error, url: &str, job: &Job, partial: &Partial) -> Error {
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
        let host = url::Url::parse(url)
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
        .hint(if url.starts_with(NVIDIA_BASE_URL) {
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

pub(super) fn manual_hint(name: &str) -> String {
    format!(
        "older cuDNN archives may need an NVIDIA developer login: sign in at https://developer.nvidia.com, download {name} by hand, then import it with `cudnnm install /path/to/{name}`"
    )
}

pub(super) fn missing_error(status: StatusCode, url: &str, job: &Job) -> Error {
    let mut e = Error::new(
        Kind::Network,
        format!("could not download {}: HTTP {status} from {url}", job.name),
    );
    if !url.starts_with(NVIDIA_BASE_URL) {
        e = e.cause(format!(
            "a mirror must hold NVIDIA's files under their paths below {}",
            NVIDIA_BASE_URL
        ));
    }
    e.hint(manual_hint(job.name))
}

pub(super) fn html_error(url: &str, final_url: &str, job: &Job) -> Error {
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
pub(super) fn classify(e: reqwest::Error, url: &str, name: &str) -> Failure {
    if e.is_builder() {
        return Failure::Fatal(
            Error::new(Kind::Usage, format!("'{url}' is not a valid download URL"))
                .cause(error_chain(&e))
                .hint("check --mirror, CUDNNM_MIRROR, `mirror` in config.toml and the proxy variables"),
        );
    }
    if untrusted_certificate(&e) {
        // Not transient: the same certificate comes back on every attempt.
        let host = url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_else(|| url.to_string());
        let chain = error_chain(&e);
        let trust = if crate::platform::HOST_WINDOWS {
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

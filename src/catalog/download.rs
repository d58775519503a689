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
//!   fails with the URL, the file name to fetch by hand, and `cudnnm install PATH`;
//! - the size an archive's catalog entry or lock declares is a limit: a body
//!   that goes past it (or past [`MAX_UNDECLARED_BYTES`] when none is
//!   declared) is stopped at once and its partial file removed (exit 4);
//! - a URL the user did not name is fetched over HTTPS only, and no redirect
//!   leaves HTTPS ([`Trust`]).
//!
//! HTTP goes through reqwest's blocking client with rustls (ring provider)
//! and the platform's certificate verifier. Proxies come from `HTTPS_PROXY`, `HTTP_PROXY`,
//! `ALL_PROXY` and `NO_PROXY` (or their lower-case forms) in the [`Env`]
//! snapshot. `file://` URLs (a mirror folder) are copied with the same
//! hashing, resuming and caching.
//!
//! By concern: this module keeps the cache (names, sidecars, locks, the
//! resume key); `transfer` moves the bytes (HTTP with retries and ranges,
//! `file://` copies) and tells a [`Tap`] about them; `pump` reads a body on
//! a thread of its own; `failure` sorts errors and words their messages;
//! `client` builds the HTTP client and reads small index files.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::env::Env;
use crate::error::{Error, IoResultExt, Kind, Result};
use crate::fsops;
use crate::hash::{self, Sha256Hex};
use crate::home::Home;
use crate::progress::Progress;
use crate::version::{CudaVariant, Flavour, Platform, Version};

pub mod cache;
mod client;
mod failure;
mod pump;
mod transfer;

pub use client::{
    Client, Page, Trust, check_scheme, client, fetch_bytes, fetch_bytes_accepting,
    fetch_bytes_up_to, fetch_page,
};
use transfer::{Partial, is_file_url, transfer_any};

/// Watches an archive's bytes land in its partial file
/// (`downloads/.partial-<key>`), so that another thread can read them as
/// they arrive (an import that unpacks while downloading). Called on the
/// downloading thread, in this order: [`Tap::opened`], then
/// [`Tap::grew`] after every write; [`Tap::discard`] before the file is
/// truncated or removed (a server that ignores `Range`, a resumed file
/// that did not verify), after which [`Tap::opened`] comes again. The file
/// is never written by anyone else meanwhile (its `.lock-<key>` is held).
pub trait Tap {
    /// The partial file at `path`, the download of the archive `name`
    /// (`cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz`), is open and
    /// holds `len` bytes: those an earlier, interrupted run left (0 for a
    /// new download), to be read first.
    fn opened(&self, path: &Path, name: &str, len: u64);
    /// The file now holds `len` bytes.
    fn grew(&self, len: u64);
    /// The file is about to be truncated or removed: stop reading it.
    /// Returns once the reader has closed it (Windows removes no open file).
    fn discard(&self);
}

/// A [`Tap`] that watches nothing: a plain download.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTap;

impl Tap for NoTap {
    fn opened(&self, _: &Path, _: &str, _: u64) {}
    fn grew(&self, _: u64) {}
    fn discard(&self) {}
}

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
/// Longest a small answer (an index page or file, at most
/// [`MAX_INDEX_BYTES`]) may take in all: a server trickling a byte now and
/// then never trips [`READ_TIMEOUT`], and would hold a command forever.
const SMALL_DEADLINE: Duration = Duration::from_secs(120);
/// Largest index file `fetch_bytes` accepts (and `manifest refresh --from`
/// reads from a local file).
pub const MAX_INDEX_BYTES: u64 = 32 << 20;
/// The most bytes downloaded for an archive whose size nothing declares
/// (4 GiB; NVIDIA's largest cuDNN archive is about 1.1 GB).
pub const MAX_UNDECLARED_BYTES: u64 = 4 << 30;

/// One URL of an archive and whether it may leave HTTPS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// `https://…`, or `http://…` / `file://…` where [`Trust::Named`].
    pub url: String,
    /// Who named it.
    pub trust: Trust,
}

impl Location {
    /// `url`, HTTPS only unless `named` by the user.
    pub fn new(url: impl Into<String>, named: bool) -> Location {
        Location {
            url: url.into(),
            trust: if named {
                Trust::Named
            } else {
                Trust::HttpsOnly
            },
        }
    }
}

/// The release an archive belongs to, recorded in its cache sidecar.
#[derive(Clone, Copy, Debug)]
pub struct Identity<'a> {
    /// Release version.
    pub version: &'a Version,
    /// CUDA variant.
    pub cuda: &'a CudaVariant,
    /// Platform.
    pub platform: Platform,
    /// Which build (full or JIT).
    pub flavour: Flavour,
}

/// One archive to fetch.
#[derive(Clone, Copy, Debug)]
pub struct Job<'a> {
    /// URLs holding the same bytes, tried in order (`https://`, and where
    /// the user named them `http://`, `file://`).
    pub urls: &'a [Location],
    /// The archive's file name.
    pub name: &'a str,
    /// Its size in bytes, when published: the progress bar's total, and
    /// the most bytes the download accepts ([`Job::limit`]).
    pub size: Option<u64>,
    /// Accepted SHA-256 values; empty for an unverified download.
    pub expect: &'a [Sha256Hex],
    /// Which release it is.
    pub identity: Identity<'a>,
}

impl Job<'_> {
    /// The most bytes the download may be: the declared size, else
    /// [`MAX_UNDECLARED_BYTES`].
    pub fn limit(&self) -> u64 {
        self.size.unwrap_or(MAX_UNDECLARED_BYTES)
    }
}

/// A verified archive in the cache, held for its import.
#[derive(Debug)]
pub struct Downloaded {
    /// `downloads/<sha256>`.
    pub path: PathBuf,
    /// Its SHA-256.
    pub sha256: Sha256Hex,
    /// Where it came from.
    pub url: String,
    /// True when it was already in the cache.
    pub cached: bool,
    /// The archive's lock, held until this is dropped: `cache clean` leaves
    /// the archive alone meanwhile. Keep it until the import has read it.
    pub hold: ArchiveHold,
}

/// An archive in the cache that a process is about to import: a shared
/// lock on `downloads/.use-<sha256>` while this lives (several installs may
/// hold one archive), which [`cache::clean`] respects: it removes an
/// archive only with that lock taken exclusively, and skips (and names) one
/// that is held.
#[derive(Debug)]
pub struct ArchiveHold {
    file: File,
    path: PathBuf,
}

impl ArchiveHold {
    /// Holds the archive `dir/<sha>`; `None` when it is gone once the lock
    /// is held (`cache clean` removed it meanwhile).
    fn take(dir: &Path, sha: &Sha256Hex) -> Result<Option<ArchiveHold>> {
        let path = use_path(dir, sha);
        loop {
            let (file, _) = fsops::open_append(&path)?;
            file.lock_shared().with_path("lock", &path)?;
            // `cache clean` (or the last holder) removed the file as it let go.
            if !still_named(&path, &file) {
                continue;
            }
            return Ok(dir
                .join(sha.as_str())
                .is_file()
                .then_some(ArchiveHold { file, path }));
        }
    }
}

impl Drop for ArchiveHold {
    /// The last holder removes the lock file (taking the lock exclusively
    /// first, so nobody holds it then), and the cache folder keeps only
    /// archives, sidecars and partial downloads. Its own shared lock goes
    /// first: Windows does not turn a shared lock into an exclusive one.
    fn drop(&mut self) {
        let _ = self.file.unlock();
        if self.file.try_lock().is_ok() && still_named(&self.path, &self.file) {
            let _ = fsops::remove_file(&self.path);
        }
    }
}

/// `downloads/.use-<sha256>`: held shared by the installs about to import
/// that archive ([`ArchiveHold`]).
fn use_path(dir: &Path, sha: &Sha256Hex) -> PathBuf {
    dir.join(format!(".use-{}", sha.as_str()))
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
    /// Which build; absent for the full build (and in sidecars written
    /// before flavours, which then read as full).
    #[serde(default, skip_serializing_if = "Flavour::is_full")]
    pub flavour: Flavour,
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
    download_tapped(home, env, job, progress, &NoTap)
}

/// [`download`], telling `tap` about every byte written to the partial file
/// (nothing for an archive found in the cache). With `tap` reading along,
/// a Ctrl-C or SIGTERM that [`crate::interrupt`] caught stops the transfer
/// ([`Kind::Interrupted`], the partial file kept for resuming).
///
/// # Errors
/// As [`download`].
pub fn download_tapped(
    home: &Home,
    env: &Env,
    job: &Job,
    progress: &dyn Progress,
    tap: &dyn Tap,
) -> Result<Downloaded> {
    let dir = home.downloads_dir();
    fsops::create_dir_all(&dir)?;
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
    let _lock = ArchiveLock::take(&dir, &key)?;
    // A hit is held before the download lock is let go, so `cache clean`
    // cannot remove it between the two.
    if let Some(hit) = cached(&dir, job)?
        && let Some(held) = hit.held(&dir)?
    {
        return Ok(held);
    }
    let client = if job.urls.iter().any(|u| !is_file_url(&u.url)) {
        Some(client(env)?)
    } else {
        None
    };
    let mut fresh_retry = false;
    loop {
        let mut partial = Partial::open(&partial_path, job.name, tap)?;
        let resumed_from = partial.len;
        let url = match transfer_any(client.as_ref(), job, &mut partial, progress) {
            Ok(url) => url,
            Err(e) => {
                if partial.len == 0 {
                    // Nothing to resume: leave no empty file behind.
                    drop(partial);
                    tap.discard();
                    fsops::remove_file(&partial_path)?;
                }
                return Err(e);
            }
        };
        let (len, got) = partial.finish();
        if !job.expect.is_empty() && !job.expect.contains(&got) {
            tap.discard();
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
            // Never a credential on disk (an index or mirror URL may hold one).
            url: crate::error::without_userinfo(&url),
            version: job.identity.version.clone(),
            cuda: *job.identity.cuda,
            platform: job.identity.platform,
            flavour: job.identity.flavour,
            verified: !job.expect.is_empty(),
            fetched_at: crate::store::now_rfc3339(),
        };
        let text = toml::to_string_pretty(&record).unwrap_or_default();
        fsops::write_atomic(&sidecar(&dir, &got), text.as_bytes())?;
        let found = Found {
            path: final_path,
            sha256: got,
            url,
            cached: false,
        };
        match found.held(&dir)? {
            Some(held) => return Ok(held),
            // `cache clean` removed it as it was renamed into place: again.
            None => continue,
        }
    }
}

/// Keeps `file`, fetched outside the downloader (the wheel `pip download`
/// wrote for `cudnnm lock`), in the cache as a download is kept: moved to
/// `downloads/<sha256>` with a sidecar naming it `name`, from `url`
/// (`pip:nvidia-cudnn-cu12==9.10.2.21`), for `identity`. So `cache` and
/// `du` count it, `cache clean` removes it, and a later install finds it
/// ([`find_kept`]) instead of fetching it again. Returns its path, SHA-256
/// and size.
///
/// # Errors
/// When the file cannot be read or moved, or the cache written.
pub fn keep(
    home: &Home,
    file: &Path,
    name: &str,
    url: &str,
    identity: Identity,
) -> Result<(PathBuf, Sha256Hex, u64)> {
    let dir = home.downloads_dir();
    fsops::create_dir_all(&dir)?;
    let (size, sha) = hash::sha256_file(file)?;
    // The archive's download lock: no other process writes this name meanwhile.
    let _lock = ArchiveLock::take(&dir, sha.as_str())?;
    let path = dir.join(sha.as_str());
    fsops::move_file(file, &path, Some(&sha))?;
    let record = CacheRecord {
        name: name.to_string(),
        sha256: sha.clone(),
        size,
        url: crate::error::without_userinfo(url),
        version: identity.version.clone(),
        cuda: *identity.cuda,
        platform: identity.platform,
        flavour: identity.flavour,
        // pip checked it against its index; no SHA-256 cudnnm knew beforehand.
        verified: false,
        fetched_at: crate::store::now_rfc3339(),
    };
    let text = toml::to_string_pretty(&record).unwrap_or_default();
    fsops::write_atomic(&sidecar(&dir, &sha), text.as_bytes())?;
    Ok((path, sha, size))
}

/// A file [`keep`] put in the cache, still holding its bytes (a damaged one
/// is removed), held for its import, with its sidecar: with `sha256`, the
/// file of that SHA-256 (what a lock records), whatever URL it came from;
/// else the newest one fetched from `url` for `platform`. `None` when the
/// cache has none.
///
/// # Errors
/// When the cache cannot be read or a damaged file removed.
pub fn find_kept(
    home: &Home,
    url: &str,
    platform: Platform,
    sha256: Option<&Sha256Hex>,
) -> Result<Option<(Downloaded, CacheRecord)>> {
    let dir = home.downloads_dir();
    let mut candidates: Vec<CacheRecord> = match sha256 {
        Some(h) => read_record(&sidecar(&dir, h)).into_iter().collect(),
        None => records(&dir)
            .into_iter()
            .filter(|r| r.url == url && r.platform == platform)
            .collect(),
    };
    candidates.sort_by(|a, b| b.fetched_at.cmp(&a.fetched_at));
    for rec in candidates {
        let path = dir.join(rec.sha256.as_str());
        if !path.is_file() {
            continue;
        }
        let _lock = ArchiveLock::take(&dir, rec.sha256.as_str())?;
        let (_, got) = hash::sha256_file(&path)?;
        if got != rec.sha256 {
            fsops::remove_file(&path)?;
            fsops::remove_file(&sidecar(&dir, &rec.sha256))?;
            continue;
        }
        let found = Found {
            path,
            sha256: got,
            url: rec.url.clone(),
            cached: true,
        };
        if let Some(held) = found.held(&dir)? {
            return Ok(Some((held, rec)));
        }
    }
    Ok(None)
}

/// An archive found in the cache or just downloaded, before it is held.
struct Found {
    path: PathBuf,
    sha256: Sha256Hex,
    url: String,
    cached: bool,
}

impl Found {
    /// The archive held for its import ([`ArchiveHold`]); `None` when
    /// `cache clean` removed it before it could be held.
    fn held(self, dir: &Path) -> Result<Option<Downloaded>> {
        Ok(
            ArchiveHold::take(dir, &self.sha256)?.map(|hold| Downloaded {
                path: self.path,
                sha256: self.sha256,
                url: self.url,
                cached: self.cached,
                hold,
            }),
        )
    }
}

/// `downloads/.lock-<key>`.
fn lock_path(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!(".lock-{key}"))
}

/// The held `.lock-<key>` of one archive. On release the lock file is
/// removed unless a partial download remains to be resumed, so the cache
/// folder holds only archives, their sidecars and resumable partial files.
#[derive(Debug)]
struct ArchiveLock {
    _file: File,
    path: PathBuf,
    partial: PathBuf,
}

impl ArchiveLock {
    /// Takes `downloads/.lock-<key>`, waiting while another process holds
    /// it. The holder before may remove the file as it lets go (or `cache
    /// clean` removes it): a lock on a file the name no longer holds locks
    /// nothing another process sees, so the file the name holds now is
    /// locked instead.
    fn take(dir: &Path, key: &str) -> Result<ArchiveLock> {
        let path = lock_path(dir, key);
        loop {
            let (file, _) = fsops::open_append(&path)?;
            file.lock().with_path("lock", &path)?;
            if still_named(&path, &file) {
                return Ok(ArchiveLock {
                    _file: file,
                    partial: dir.join(format!(".partial-{key}")),
                    path,
                });
            }
        }
    }
}

/// Whether `path` names the open file `file` now: false when the name is
/// gone or holds another file; true when the platform cannot tell.
fn still_named(path: &Path, file: &File) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    match (
        crate::platform::file_identity(path, &meta),
        crate::platform::handle_identity(file),
    ) {
        (Some(a), Some(b)) => (a.volume, a.index) == (b.volume, b.index),
        _ => true,
    }
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
fn cached(dir: &Path, job: &Job) -> Result<Option<Found>> {
    let candidates: Vec<Sha256Hex> = if job.expect.is_empty() {
        // Unverified: the sidecar of an earlier download of this very release and file.
        records(dir)
            .into_iter()
            .filter(|r| {
                r.name == job.name
                    && &r.version == job.identity.version
                    && &r.cuda == job.identity.cuda
                    && r.platform == job.identity.platform
                    && r.flavour == job.identity.flavour
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
                .unwrap_or_else(|| job.urls.first().map(|l| l.url.clone()).unwrap_or_default());
            return Ok(Some(Found {
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

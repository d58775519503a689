//! `cudnnm self update`: replaces the running binary with the newest release
//! from the release downloads (after rustup's and uv's self-update).
//!
//! A release folder (the GitHub "latest release" download URL, a lab mirror,
//! or a local folder) holds the artifacts of one version and a `SHA256SUMS`
//! file in the `sha256sum` format. The newest version is the one that
//! `SHA256SUMS` names for this machine's target
//! (`cudnnm-VERSION-TARGET.tar.gz`, or `.zip` on Windows), so one small
//! download answers both "which version" and "which hash". `install.sh` and
//! `install.ps1` read the same file.
//!
//! The old binary stays until the new one has matched its SHA-256 and run
//! (`--version` must print the version `SHA256SUMS` named); only then is it
//! swapped in, in one rename (on Windows the running `.exe` is renamed aside
//! first). Builds for a package manager turn this off (cargo feature
//! `self-update`); see [`disabled_hint`].

use std::io::Read;
use std::path::{Path, PathBuf};

pub use crate::catalog::download::Trust;
use crate::env::Env;
use crate::error::{Error, Kind, Result};
use crate::hash::Sha256Hex;

/// Where releases are downloaded from unless [`BASE_VAR`] says otherwise:
/// the newest GitHub release's assets. This is the one place the code names
/// the project's release URL; a fork's release build sets its own at build
/// time with `CUDNNM_RELEASE_BASE` (scripts/dist.sh does, from `DIST_REPO`).
pub const DEFAULT_BASE: &str = match option_env!("CUDNNM_RELEASE_BASE") {
    Some(base) => base,
    None => "https://github.com/cudnnm/cudnnm/releases/latest/download",
};

/// The environment variable naming another release folder (URL, `file://`
/// URL, or a local folder); `install.sh` and `install.ps1` read it too.
pub const BASE_VAR: &str = crate::env::CUDNNM_INSTALL_BASE;

/// The file in a release folder listing every artifact's SHA-256.
pub const SUMS_FILE: &str = "SHA256SUMS";

/// True when this build can replace itself (cargo feature `self-update`).
pub const ENABLED: bool = cfg!(feature = "self-update");

/// What to run instead of `self update` in a build without it: set at build
/// time with `CUDNNM_UPDATE_HINT`; by default it names pip, pipx and uv (the
/// wheels are the package-manager build most users have).
pub fn disabled_hint() -> &'static str {
    option_env!("CUDNNM_UPDATE_HINT").unwrap_or(
        "update cudnnm with the package manager that installed it: \
         pip install -U cudnnm (pipx upgrade cudnnm, uv tool upgrade cudnnm), \
         or your distribution's package manager",
    )
}

/// One artifact named in `SHA256SUMS`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Artifact {
    /// Its file name (`cudnnm-0.2.0-x86_64-unknown-linux-gnu.tar.gz`).
    pub name: String,
    /// The cudnnm version in the name (`0.2.0`).
    pub version: String,
    /// Its published SHA-256.
    pub sha256: Sha256Hex,
}

/// The archive holding the binary for `target` in release `version`.
pub fn artifact_name(version: &str, target: &str) -> String {
    format!("cudnnm-{version}-{target}.{}", archive_ext(target))
}

fn archive_ext(target: &str) -> &'static str {
    if target.contains("windows") {
        "zip"
    } else {
        "tar.gz"
    }
}

/// The binary's file name inside the archive for `target`.
pub fn binary_name(target: &str) -> &'static str {
    if target.contains("windows") {
        "cudnnm.exe"
    } else {
        "cudnnm"
    }
}

/// The `(sha256, file name)` lines of a `SHA256SUMS` file (`HEX  NAME`, or
/// `HEX *NAME` in binary mode); lines that are not such pairs are skipped.
pub fn parse_sums(text: &str) -> Vec<(Sha256Hex, String)> {
    text.lines()
        .filter_map(|line| {
            let (hex, rest) = line.trim_end().split_once(' ')?;
            let name = rest.trim_start_matches([' ', '*']);
            let hash = Sha256Hex::parse(hex).ok()?;
            (!name.is_empty()).then(|| (hash, name.to_string()))
        })
        .collect()
}

/// The artifact for `target` in `SHA256SUMS` (the newest version when the
/// file names several).
pub fn find_artifact(sums: &[(Sha256Hex, String)], target: &str) -> Option<Artifact> {
    let suffix = format!("-{target}.{}", archive_ext(target));
    sums.iter()
        .filter_map(|(hash, name)| {
            let version = name.strip_prefix("cudnnm-")?.strip_suffix(&suffix)?;
            version_key(version).map(|_| Artifact {
                name: name.clone(),
                version: version.to_string(),
                sha256: hash.clone(),
            })
        })
        .max_by(|a, b| version_key(&a.version).cmp(&version_key(&b.version)))
}

/// `1.2.3` as numbers for ordering; `None` for anything else.
fn version_key(v: &str) -> Option<Vec<u64>> {
    v.split('.').map(|p| p.parse().ok()).collect()
}

/// True when `candidate` is a newer version than `current`.
pub fn is_newer(candidate: &str, current: &str) -> bool {
    match (version_key(candidate), version_key(current)) {
        (Some(a), Some(b)) => a > b,
        _ => false,
    }
}

/// The release folder `self update` reads, and how far its URLs are
/// trusted: `named` (`--base`), else [`BASE_VAR`], which the user chose and
/// may be `http://` or a folder ([`Trust::Named`]); else [`DEFAULT_BASE`],
/// HTTPS only, redirects included ([`Trust::HttpsOnly`]).
pub fn base(env: &Env, named: Option<String>) -> (String, Trust) {
    match named.or_else(|| env.var(BASE_VAR)) {
        Some(b) => (b, Trust::Named),
        None => (DEFAULT_BASE.to_string(), Trust::HttpsOnly),
    }
}

/// Whether `base` is a plain `http://` URL: its `SHA256SUMS` comes over the
/// same unauthenticated channel as the archive, so nothing vouches for the
/// binary (`self update` warns).
pub fn unauthenticated(base: &str) -> bool {
    base.get(..7)
        .is_some_and(|p| p.eq_ignore_ascii_case("http://"))
}

/// `base` joined with a file name: a URL gets `/NAME`, a local folder becomes
/// a `file://` URL.
pub fn url_in(base: &str, name: &str) -> Result<String> {
    if base.contains("://") {
        return Ok(format!("{}/{name}", base.trim_end_matches('/')));
    }
    let path = std::path::absolute(Path::new(base)).unwrap_or_else(|_| PathBuf::from(base));
    let url = url::Url::from_file_path(path.join(name)).map_err(|()| {
        Error::new(
            Kind::Usage,
            format!("'{base}' is neither a URL nor a folder"),
        )
        .hint(format!(
            "set {BASE_VAR} to an https:// URL or a folder holding {SUMS_FILE}"
        ))
    })?;
    Ok(url.to_string())
}

/// The newest release at `base` for `target`, read from its `SHA256SUMS`.
///
/// # Errors
/// [`Kind::Network`] when the file cannot be fetched; [`Kind::NotFound`]
/// when it names no artifact for `target`.
pub fn newest(env: &Env, base: &str, trust: Trust, target: &str) -> Result<Artifact> {
    let url = url_in(base, SUMS_FILE)?;
    let bytes = crate::catalog::download::fetch_bytes(env, &url, trust)
        .map_err(|e| fetch_hint(e.context(format!("could not read the release list '{url}'"))))?;
    let text = String::from_utf8_lossy(&bytes);
    find_artifact(&parse_sums(&text), target).ok_or_else(|| {
        Error::new(
            Kind::NotFound,
            format!("'{url}' names no cudnnm release for {target}"),
        )
        .hint(format!("point {BASE_VAR} at a release folder that has one"))
    })
}

/// The hint for a release folder that could not be read: `self update`'s
/// own way to name another one (`--base`, [`BASE_VAR`]), not the catalog's
/// `--mirror`/`--from`.
fn fetch_hint(e: Error) -> Error {
    e.hint(format!(
        "check the network or proxy (HTTPS_PROXY), or point `cudnnm self update --base URL|FOLDER` (or {BASE_VAR}) at a release folder holding {SUMS_FILE} and the archives"
    ))
}

/// Largest release archive `self update` reads into memory (a release is
/// about 4 MB; a debug build's, in the tests, a few tens of MB).
const MAX_ARCHIVE_BYTES: u64 = 256 << 20;

/// Downloads `artifact` from `base` and checks it against its SHA-256.
///
/// # Errors
/// [`Kind::Network`] when it cannot be fetched; [`Kind::Integrity`] when its
/// SHA-256 differs from the one published.
pub fn download(env: &Env, base: &str, trust: Trust, artifact: &Artifact) -> Result<Vec<u8>> {
    let url = url_in(base, &artifact.name)?;
    // A release archive is a few MB; the bound only keeps memory in check.
    let bytes = crate::catalog::download::fetch_bytes_up_to(
        env,
        &url,
        trust,
        MAX_ARCHIVE_BYTES,
        "a cudnnm release archive",
    )
    .map_err(fetch_hint)?;
    let got = crate::hash::sha256_bytes(&bytes);
    if got != artifact.sha256 {
        return Err(Error::new(
            Kind::Integrity,
            format!("'{url}' does not match its SHA256SUMS line"),
        )
        .cause(format!(
            "expected SHA-256 {}, got {}",
            artifact.sha256.as_str(),
            got.as_str()
        ))
        .hint("nothing was changed; try again later, or report the release folder to its owner"));
    }
    Ok(bytes)
}

/// The binary inside a release archive for `target` (`.tar.gz` or `.zip`),
/// found by file name anywhere in it.
///
/// # Errors
/// [`Kind::Integrity`] for an unreadable archive or one without the binary.
pub fn extract_binary(archive: &[u8], target: &str) -> Result<Vec<u8>> {
    let want = binary_name(target);
    let bad = |e: &dyn std::fmt::Display| {
        Error::new(
            Kind::Integrity,
            "the downloaded cudnnm archive is unreadable",
        )
        .cause(e)
    };
    let is_it = |p: &Path| p.file_name().is_some_and(|n| n == want);
    if archive_ext(target) == "zip" {
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(archive)).map_err(|e| bad(&e))?;
        for i in 0..zip.len() {
            let mut f = zip.by_index(i).map_err(|e| bad(&e))?;
            if f.is_file() && f.enclosed_name().is_some_and(|p| is_it(&p)) {
                let mut out = Vec::new();
                f.read_to_end(&mut out).map_err(|e| bad(&e))?;
                return Ok(out);
            }
        }
    } else {
        let gz = flate2::read::GzDecoder::new(archive);
        let mut tar = tar::Archive::new(gz);
        for entry in tar.entries().map_err(|e| bad(&e))? {
            let mut entry = entry.map_err(|e| bad(&e))?;
            let path = entry.path().map_err(|e| bad(&e))?.into_owned();
            if entry.header().entry_type().is_file() && is_it(&path) {
                let mut out = Vec::new();
                entry.read_to_end(&mut out).map_err(|e| bad(&e))?;
                return Ok(out);
            }
        }
    }
    Err(Error::new(
        Kind::Integrity,
        format!("the downloaded cudnnm archive holds no {want}"),
    ))
}

/// What `self update` did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Outcome {
    /// The version that was running.
    pub from: String,
    /// The newest version at the release folder.
    pub to: String,
    /// The binary replaced (or that would have been).
    pub path: PathBuf,
    /// False when `to` is not newer than `from`: nothing changed.
    pub updated: bool,
}

/// Replaces the binary at `exe` (the running program) with the newest
/// release at `base` when it is newer than `current`.
///
/// # Errors
/// [`Kind::Usage`] on a machine with no published release;
/// see [`newest`] and [`download`]; [`Kind::Integrity`] when the new binary
/// does not run or reports another version; I/O errors writing beside `exe`.
/// On every error the old binary is left as it was.
#[cfg(feature = "self-update")]
pub fn update(env: &Env, base: &str, trust: Trust, exe: &Path, current: &str) -> Result<Outcome> {
    let target = crate::platform::release_target().ok_or_else(|| {
        Error::new(
            Kind::Usage,
            "no cudnnm release is published for this machine",
        )
        .hint("build it from source: cargo install --path .")
    })?;
    // What killed runs left: the staged binaries of processes that are gone.
    sweep_staged(exe, std::time::SystemTime::now());
    let artifact = newest(env, base, trust, target)?;
    let mut outcome = Outcome {
        from: current.to_string(),
        to: artifact.version.clone(),
        path: exe.to_path_buf(),
        updated: false,
    };
    if !is_newer(&artifact.version, current) {
        return Ok(outcome);
    }
    let archive = download(env, base, trust, &artifact)?;
    let binary = extract_binary(&archive, target)?;
    let staged = crate::fsops::sibling(exe, STAGED_TAG);
    let result = stage_and_swap(&staged, &binary, &artifact.version);
    if staged.exists() {
        let _ = crate::fsops::remove_file(&staged);
    }
    result?;
    outcome.updated = true;
    Ok(outcome)
}

/// The tag of a staged binary's name beside the running one
/// (`.update-<pid>-cudnnm`, [`crate::fsops::sibling`]).
const STAGED_TAG: &str = "update";

/// Removes the binaries earlier `self update` runs staged beside `exe` and
/// a kill left there: files named `.update-<pid>-<exe's name>` (another
/// process's pid) that changed before `started` and whose process is gone
/// (where the system cannot tell, the removal of one still running fails
/// and it stays). Returns how many were removed. Best effort.
pub fn sweep_staged(exe: &Path, started: std::time::SystemTime) -> usize {
    let (Some(name), Ok(dir)) = (
        exe.file_name().and_then(|n| n.to_str()),
        crate::fsops::at::open_dir(crate::fsops::parent_of(exe)),
    ) else {
        return 0;
    };
    let head = format!(".{STAGED_TAG}-");
    let mut removed = 0;
    for (entry, kind) in dir.entries().unwrap_or_default() {
        let n = entry.to_string_lossy();
        let Some(pid) = n
            .strip_prefix(head.as_str())
            .and_then(|r| r.strip_suffix(name))
            .and_then(|r| r.strip_suffix('-'))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let old = std::fs::symlink_metadata(dir.path().join(&entry))
            .and_then(|m| m.modified())
            .is_ok_and(|t| t < started);
        let gone = crate::platform::process_gone(pid) || crate::platform::HOST_WINDOWS;
        if kind == crate::fsops::at::EntryKind::File
            && pid != std::process::id()
            && old
            && gone
            && crate::fsops::at::remove_in(&dir, &entry).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

#[cfg(feature = "self-update")]
fn stage_and_swap(staged: &Path, binary: &[u8], version: &str) -> Result<()> {
    crate::fsops::write_new_synced(staged, binary)?;
    crate::platform::make_executable(staged)
        .map_err(|e| Error::io("make executable", staged, e))?;
    check_runs(staged, version)?;
    crate::platform::replace_running_exe(staged)
        .map_err(|e| Error::io("replace the running cudnnm with", staged, e))
}

/// Runs `exe --version` and expects `cudnnm VERSION`.
#[cfg(feature = "self-update")]
fn check_runs(exe: &Path, version: &str) -> Result<()> {
    let out = std::process::Command::new(exe)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output();
    let said = match &out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Ok(o) => format!("exit status {}", o.status),
        Err(e) => e.to_string(),
    };
    let want = format!("cudnnm {version}");
    if said == want {
        return Ok(());
    }
    Err(Error::new(
        Kind::Integrity,
        format!("the downloaded cudnnm {version} does not run here; the old binary is kept"),
    )
    .cause(format!("`--version` gave '{said}', expected '{want}'"))
    .hint("report this at the project's issue tracker"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    #[test]
    fn sums_name_the_artifact_for_each_target() {
        let text = format!(
            "{A}  cudnnm-0.2.0-x86_64-unknown-linux-gnu.tar.gz\n\
             {B} *cudnnm-0.2.0-x86_64-pc-windows-gnu.zip\n\
             {A}  cudnnm-0.2.0-py3-none-manylinux_2_17_x86_64.whl\n\
             not a line\n"
        );
        let sums = parse_sums(&text);
        assert_eq!(sums.len(), 3);
        let linux = find_artifact(&sums, "x86_64-unknown-linux-gnu").unwrap();
        assert_eq!(linux.name, "cudnnm-0.2.0-x86_64-unknown-linux-gnu.tar.gz");
        assert_eq!(linux.version, "0.2.0");
        assert_eq!(linux.sha256.as_str(), A);
        let win = find_artifact(&sums, "x86_64-pc-windows-gnu").unwrap();
        assert_eq!(win.sha256.as_str(), B);
        assert_eq!(find_artifact(&sums, "aarch64-unknown-linux-gnu"), None);
    }

    #[test]
    fn the_newest_of_several_versions_wins() {
        let text = format!(
            "{A}  cudnnm-0.10.0-x86_64-unknown-linux-gnu.tar.gz\n\
             {B}  cudnnm-0.9.1-x86_64-unknown-linux-gnu.tar.gz\n"
        );
        let a = find_artifact(&parse_sums(&text), "x86_64-unknown-linux-gnu").unwrap();
        assert_eq!(a.version, "0.10.0");
    }

    #[test]
    fn versions_compare_as_numbers() {
        assert!(is_newer("0.10.0", "0.9.9"));
        assert!(is_newer("0.1.1", "0.1.0"));
        assert!(!is_newer("0.1.0", "0.1.0"));
        assert!(!is_newer("0.0.9", "0.1.0"));
        assert!(!is_newer("0.2.0-rc1", "0.1.0"));
    }

    #[test]
    fn staged_binaries_of_killed_runs_are_swept() {
        let d = tempfile::tempdir().unwrap();
        let exe = d.path().join("cudnnm");
        let put = |n: &str| {
            crate::fsops::write_atomic(&d.path().join(n), b"staged").unwrap();
        };
        // A pid no process has (beyond Linux's pid_max), and this process's own.
        let dead = ".update-4194400-cudnnm";
        let mine = format!(".update-{}-cudnnm", std::process::id());
        for n in [
            dead,
            mine.as_str(),
            ".update-4194400-other",
            "cudnnm",
            ".update-x-cudnnm",
        ] {
            put(n);
        }
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        // Younger than the run that sweeps: kept.
        assert_eq!(sweep_staged(&exe, std::time::SystemTime::UNIX_EPOCH), 0);
        assert_eq!(sweep_staged(&exe, later), 1);
        let mut left: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut want = vec![
            ".update-4194400-other".to_string(),
            ".update-x-cudnnm".into(),
            "cudnnm".into(),
            mine,
        ];
        want.sort();
        assert_eq!(left, want);
    }

    #[test]
    fn a_base_is_a_url_or_a_folder() {
        assert_eq!(
            url_in("http://127.0.0.1:8000/dist/", "SHA256SUMS").unwrap(),
            "http://127.0.0.1:8000/dist/SHA256SUMS"
        );
        let dir = tempfile::tempdir().unwrap();
        let url = url_in(dir.path().to_str().unwrap(), "SHA256SUMS").unwrap();
        assert!(
            url.starts_with("file://") && url.ends_with("/SHA256SUMS"),
            "{url}"
        );
    }

    #[test]
    fn the_binary_is_found_in_a_tarball_and_a_zip() {
        let mut tar = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(4);
        h.set_mode(0o755);
        h.set_cksum();
        tar.append_data(&mut h, "README.md", &b"read"[..]).unwrap();
        let mut h = tar::Header::new_gnu();
        h.set_size(3);
        h.set_mode(0o755);
        h.set_cksum();
        tar.append_data(&mut h, "cudnnm", &b"elf"[..]).unwrap();
        let raw = tar.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &raw).unwrap();
        let tgz = gz.finish().unwrap();
        assert_eq!(
            extract_binary(&tgz, "x86_64-unknown-linux-gnu").unwrap(),
            b"elf"
        );

        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        zip.start_file("cudnnm.exe", zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::Write::write_all(&mut zip, b"MZ").unwrap();
        let z = zip.finish().unwrap().into_inner();
        assert_eq!(extract_binary(&z, "x86_64-pc-windows-gnu").unwrap(), b"MZ");
        let e = extract_binary(&z, "x86_64-unknown-linux-gnu").unwrap_err();
        assert_eq!(e.kind(), Kind::Integrity);
    }
}

//! Fetching a cuDNN wheel with the user's own pip (their index, proxy and
//! certificates apply): `python -m pip download --no-deps
//! --only-binary=:all:`. Used by `install pip:REQ` and by `lock` for
//! releases the catalog knows only from PyPI.
//!
//! pip builds (and so runs) a local folder, a path or a direct reference
//! (`NAME @ URL`) even with `--only-binary=:all:`; it is therefore only ever
//! asked for a [`PipRequirement`], `NAME==VERSION` of one of NVIDIA's cuDNN
//! packages from its index, where that option leaves it nothing to build.
//! What it downloaded is one `.whl` file, checked against the SHA-256 the
//! caller expects (a lock's) before anything reads it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use crate::env::{self, Env};
use crate::error::{Error, IoResultExt, Kind, Result};
use crate::fsops;
use crate::hash::Sha256Hex;
use crate::home::Home;
use crate::version::{PipRequirement, Version};

/// How long a `.pip-*` folder nobody holds stays untouched before the
/// next pip download removes it as left by a kill.
pub const STALE: Duration = Duration::from_secs(60 * 60);

/// The file in a `.pip-*` folder that its cudnnm keeps locked while it
/// lives ([`PipFolder`]).
const BUSY_FILE: &str = ".busy";

/// pip's full log in the `.pip-*` folder (`pip --log`), read to tell an
/// index pip could not reach from one without the package.
const LOG_FILE: &str = "pip.log";

/// The folder one `pip download` writes into, `$CUDNNM_HOME/.pip-XXXX`,
/// removed when this is dropped. Its [`BUSY_FILE`] stays locked meanwhile,
/// so that another process's sweep ([`download_folder`]) leaves it alone
/// however long pip takes (pip downloads into its own temporary folder and
/// copies the wheel here at the end; only its log, [`LOG_FILE`], grows here
/// meanwhile).
#[derive(Debug)]
pub struct PipFolder {
    /// Closed first: Windows removes no file a handle holds open.
    _busy: Option<std::fs::File>,
    dir: tempfile::TempDir,
}

impl PipFolder {
    /// The folder.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Makes a [`PipFolder`] in `home`, first removing the `.pip-*` folders a
/// killed cudnnm left: those whose owner no longer holds them and in which
/// nothing changed for [`STALE`].
///
/// # Errors
/// When the home cannot be created or written.
pub fn download_folder(home: &Home) -> Result<PipFolder> {
    home.ensure()?;
    let root = home.root();
    sweep(root, SystemTime::now());
    let dir = tempfile::Builder::new()
        .prefix(".pip-")
        .tempdir_in(root)
        .with_path("create a folder in", root)?;
    let path = dir.path().join(BUSY_FILE);
    let file = fsops::create_new_file(&path).with_path("create", &path)?;
    // A file system that cannot lock: the folder is protected by its age alone.
    let busy = file.try_lock().is_ok().then_some(file);
    Ok(PipFolder { _busy: busy, dir })
}

/// Removes the `.pip-*` folders in `root` that nobody holds and in which
/// nothing changed for [`STALE`] before `now`. Best effort: a folder that
/// cannot be read or removed stays.
fn sweep(root: &Path, now: SystemTime) {
    let Ok(rd) = std::fs::read_dir(root) else {
        return;
    };
    for e in rd.flatten() {
        let path = e.path();
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        if !is_dir || !e.file_name().to_string_lossy().starts_with(".pip-") {
            continue;
        }
        if busy_elsewhere(&path)
            || changed_since(
                &path,
                now.checked_sub(STALE).unwrap_or(SystemTime::UNIX_EPOCH),
            )
        {
            continue;
        }
        let _ = fsops::remove_dir_all(&path);
    }
}

/// Whether another open file holds the lock of `dir`'s [`BUSY_FILE`].
fn busy_elsewhere(dir: &Path) -> bool {
    std::fs::File::open(dir.join(BUSY_FILE))
        .is_ok_and(|f| matches!(f.try_lock(), Err(std::fs::TryLockError::WouldBlock)))
}

/// Whether `dir` or anything in it was modified after `since` (or has a
/// time that cannot be read: then it is not judged stale).
fn changed_since(dir: &Path, since: SystemTime) -> bool {
    walkdir::WalkDir::new(dir).into_iter().any(|e| {
        e.ok()
            .and_then(|e| e.metadata().ok())
            .and_then(|m| m.modified().ok())
            .is_none_or(|t| t > since)
    })
}

/// The Python that runs pip: `CUDNNM_PYTHON`, else `python3` (`python` on Windows).
pub fn python(env: &Env) -> String {
    env.var(env::CUDNNM_PYTHON).unwrap_or_else(|| {
        if crate::platform::HOST_WINDOWS {
            "python".into()
        } else {
            "python3".into()
        }
    })
}

/// Where pip's own messages go while it runs. Library code never prints:
/// the CLI shows them (pip's stdout on its stderr, so stdout stays clean
/// for `--json`; each line pip writes to stderr as it comes), and `-q`
/// passes [`PipOutput::silent`]. pip's stderr is read in any case, to tell
/// "no such version" from a network failure.
#[derive(Debug)]
pub struct PipOutput {
    /// Where pip's stdout goes.
    pub stdout: Stdio,
    /// Called with each line pip writes to its stderr, on a thread of its own.
    pub line: fn(&str),
}

impl PipOutput {
    /// pip's messages shown nowhere.
    pub fn silent() -> PipOutput {
        PipOutput {
            stdout: Stdio::null(),
            line: |_| {},
        }
    }
}

/// Downloads the one wheel `requirement` names into `dest` with `python`'s
/// pip and returns its path; with `expect`, the wheel must have that
/// SHA-256. pip's messages go to `output`.
///
/// # Errors
/// No Python or no pip ([`Kind::NotFound`]), a version pip's index does not
/// have ([`Kind::NotFound`], the nearest it lists in the hint), pip failing
/// otherwise ([`Kind::Network`], with pip's last lines), not exactly one
/// wheel fetched, or one of another SHA-256 than `expect`
/// ([`Kind::Integrity`]; the file is not read further).
pub fn download(
    python: &str,
    requirement: &PipRequirement,
    dest: &Path,
    output: PipOutput,
    expect: Option<&Sha256Hex>,
) -> Result<PathBuf> {
    let requirement = requirement.to_string();
    let requirement = requirement.as_str();
    let mut cmd = Command::new(python);
    cmd.args([
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--dest",
    ])
    .arg(dest)
    // pip's full log: at its default verbosity pip says nothing of an
    // index it could not reach when it does not retry (`PIP_RETRIES=0`);
    // the log keeps its "Could not fetch URL …: connection error" line.
    .arg("--log")
    .arg(dest.join(LOG_FILE))
    .arg(requirement)
    .stdin(Stdio::null());
    let PipOutput { stdout, line: show } = output;
    cmd.stdout(stdout);
    cmd.stderr(Stdio::piped());
    // pip, and whatever starts it (a pyenv shim runs python as its child),
    // in a process group of its own that a signal stops as a whole.
    crate::platform::own_process_group(&mut cmd);
    // Ctrl-C or SIGTERM sets a flag instead of ending this process, so that
    // pip is stopped with it and the caller's download folder is removed.
    crate::interrupt::doing(crate::interrupt::Activity::Import);
    let spawned = cmd.spawn().and_then(|mut child| {
        let reader = child.stderr.take().map(|err| {
            std::thread::spawn(move || {
                use std::io::BufRead;
                let mut text = String::new();
                for line in std::io::BufReader::new(err).lines() {
                    let line = line.unwrap_or_default();
                    show(&line);
                    text.push_str(&line);
                    text.push('\n');
                }
                text
            })
        });
        // A signal sent to cudnnm alone (`kill PID`), or a Ctrl-C (pip's
        // group is not the terminal's), does not reach pip: its group is
        // stopped here rather than left downloading.
        let status = crate::interrupt::wait_child(&mut child)?;
        // Stopped: pip's messages are not needed, and a process that left
        // the group may hold its stderr open; the reader is left to end.
        let text = match (status, reader) {
            (Some(_), Some(r)) => r.join().unwrap_or_default(),
            _ => String::new(),
        };
        Ok((status, text))
    });
    let (status, stderr) = spawned.map_err(|e| {
        Error::new(Kind::NotFound, format!("could not run '{python}' to fetch {requirement}"))
            .cause(e)
            .hint("install Python 3 with pip (Debian/Ubuntu: `apt install python3-pip`), or set CUDNNM_PYTHON to your Python")
    })?;
    let Some(status) = status else {
        return Err(crate::interrupt::import_error());
    };
    if !status.success() {
        if stderr.contains("No module named pip") {
            return Err(Error::new(Kind::NotFound, format!("'{python}' has no pip module"))
                .hint("install pip (`python3 -m ensurepip --upgrade`, or `apt install python3-pip`), or set CUDNNM_PYTHON to a Python that has it"));
        }
        let log = std::fs::read_to_string(dest.join(LOG_FILE)).unwrap_or_default();
        let said = format!("{stderr}\n{log}");
        if let Some(e) = no_such_version(requirement, &said) {
            return Err(e);
        }
        if let Some(e) = unreachable(requirement, &said) {
            return Err(e);
        }
        let tail: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = tail[tail.len().saturating_sub(3)..].join(" / ");
        let mut e = Error::new(
            Kind::Network,
            format!("pip could not download '{requirement}' ({status})"),
        );
        if !tail.is_empty() {
            e = e.cause(tail);
        }
        return Err(e.hint(
            "check the requirement (e.g. nvidia-cudnn-cu12==9.1.0.70, nvidia-cudnn-jit-cu12==9.27.0.42) and your pip index or proxy settings",
        ));
    }
    let wheel = find_wheel(dest, requirement)?;
    if let Some(want) = expect {
        let (size, got) = crate::hash::sha256_file(&wheel)?;
        if got != *want {
            return Err(Error::new(
                Kind::Integrity,
                format!(
                    "the wheel pip fetched for '{requirement}' has SHA-256 {got} ({size} bytes), not {want}; it was not imported"
                ),
            )
            .hint("pip's index serves other bytes than those recorded; check the index (PIP_INDEX_URL, pip.conf)"));
        }
    }
    Ok(wheel)
}

/// pip's "Could not find a version that satisfies the requirement R (from
/// versions: A, B, …)": the index answered and has no such version
/// ([`Kind::NotFound`], the nearest versions it has in the hint). `None`
/// when pip said something else, or listed no versions after connection
/// warnings (`Retrying …`, `NewConnectionError`): that is the network.
fn no_such_version(requirement: &str, stderr: &str) -> Option<Error> {
    let line = stderr
        .lines()
        .find(|l| l.contains("Could not find a version that satisfies the requirement"))?;
    let versions = line
        .rsplit_once("(from versions:")?
        .1
        .trim_end()
        .trim_end_matches(')')
        .trim();
    let (package, want) = match requirement.split_once("==") {
        Some((p, v)) => (p.trim(), v.trim().parse::<Version>().ok()),
        None => (requirement.trim(), None),
    };
    if versions == "none" {
        if network_line(stderr).is_some() {
            return None;
        }
        return Some(
            Error::new(Kind::NotFound, format!("pip's index has no version of '{package}'"))
                .cause(line.trim().trim_start_matches("ERROR: ").to_string())
                .hint("check the package name (nvidia-cudnn-cu12, nvidia-cudnn-cu11, nvidia-cudnn-jit-cu12) and your pip index settings"),
        );
    }
    let known: Vec<Version> = versions
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    let near: Vec<String> = match &want {
        Some(w) => w.nearest(&known, 3),
        None => known.iter().rev().take(3).collect(),
    }
    .into_iter()
    .map(|v| v.to_string())
    .collect();
    let hint = match near.first() {
        Some(first) => format!(
            "the nearest versions pip's index has: {} (`cudnnm install pip:{package}=={first}`)",
            near.join(", ")
        ),
        None => format!("pip's index lists: {versions}"),
    };
    Some(
        Error::new(
            Kind::NotFound,
            format!("no such version: pip's index has no '{requirement}'"),
        )
        .hint(hint),
    )
}

/// pip's line saying it could not reach an index (`stderr` and its log
/// together), without the log's time stamp and level: a connection refused
/// or retried, an `http://` index it ignores as untrusted, a proxy or TLS
/// failure, a timeout. An index that answered "no such page" (404) is not
/// one: that is a package the index does not have.
fn network_line(text: &str) -> Option<String> {
    // Anywhere in a line: words only a failed connection produces.
    const ANYWHERE: [&str; 9] = [
        "is not a trusted or secure host",
        "Failed to establish a new connection",
        "NewConnectionError",
        "ProxyError",
        "SSLError",
        "ConnectTimeout",
        "ReadTimeoutError",
        "Retrying (Retry(",
        "Max retries exceeded",
    ];
    // pip's "Could not fetch URL U: REASON - skipping", for these reasons
    // (a "404 Client Error" reason is an index without the package).
    const FETCH_REASONS: [&str; 6] = [
        "connection error",
        "Connection refused",
        "timed out",
        "ssl certificate",
        "Server Error",
        "proxy",
    ];
    let lines: Vec<&str> = text.lines().map(strip_log_prefix).collect();
    let fetch = lines
        .iter()
        .find(|l| l.contains("Could not fetch URL") && FETCH_REASONS.iter().any(|r| l.contains(r)));
    // The most telling line first: an untrusted host, then the fetch.
    lines
        .iter()
        .find(|l| l.contains(ANYWHERE[0]))
        .or(fetch)
        .or_else(|| {
            lines
                .iter()
                .find(|l| ANYWHERE.iter().any(|w| l.contains(w)))
        })
        .map(|l| l.trim().to_string())
}

/// A line of pip's log without its time stamp (`2025-01-02T03:04:05,678 `)
/// and level (`WARNING: `), as pip prints it on the terminal.
fn strip_log_prefix(line: &str) -> &str {
    let line = match line.split_once(' ') {
        Some((stamp, rest))
            if stamp.len() >= 19
                && stamp.as_bytes()[0].is_ascii_digit()
                && stamp.contains('T')
                && stamp.contains(':') =>
        {
            rest
        }
        _ => line,
    };
    line.trim_start_matches("WARNING: ")
        .trim_start_matches("ERROR: ")
}

/// The indexes pip says it looks in (`Looking in indexes: A, B`), else
/// PyPI, pip's default (which it does not announce).
fn indexes(text: &str) -> String {
    text.lines()
        .map(strip_log_prefix)
        .find_map(|l| l.trim().strip_prefix("Looking in indexes:"))
        .map(|i| i.trim().to_string())
        .unwrap_or_else(|| "https://pypi.org/simple".to_string())
}

/// pip failed because it could not reach its index ([`network_line`]):
/// [`Kind::Network`] (exit 6) naming the index and pip's line, not "no
/// such package" — pip reports both as "from versions: none".
fn unreachable(requirement: &str, text: &str) -> Option<Error> {
    let line = network_line(text)?;
    Some(
        Error::new(
            Kind::Network,
            format!(
                "pip could not reach its index {} to fetch '{requirement}'",
                indexes(text)
            ),
        )
        .cause(line)
        .hint("check the network and proxy (HTTPS_PROXY, pip's `proxy`), and pip's index settings (`index-url`, PIP_INDEX_URL; an http:// index also needs `trusted-host`, PIP_TRUSTED_HOST); or download the wheel where pip can reach the index and install the file: `cudnnm install ./nvidia_cudnn_….whl`"),
    )
}

fn find_wheel(dir: &Path, requirement: &str) -> Result<PathBuf> {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_path("list", dir)?
        .flatten()
        .map(|e| e.path())
        .collect();
    let wheels: Vec<&PathBuf> = files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    match wheels.as_slice() {
        [one] => Ok((*one).clone()),
        _ => Err(Error::new(
            Kind::Integrity,
            format!(
                "pip fetched {} wheel files for '{requirement}', expected one",
                wheels.len()
            ),
        )
        .hint("name one package version, e.g. pip:nvidia-cudnn-cu12==9.1.0.70")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection pip could not make is the network; an index that
    /// answered 404 (no such project) is not.
    #[test]
    fn network_lines_are_told_from_an_index_without_the_package() {
        let refused = "2025-01-02T03:04:05,678 Could not fetch URL http://127.0.0.1:9/simple/x/: connection error: HTTPConnectionPool(host='127.0.0.1', port=9): Max retries exceeded - skipping\n";
        assert_eq!(
            network_line(refused).as_deref(),
            Some(
                "Could not fetch URL http://127.0.0.1:9/simple/x/: connection error: HTTPConnectionPool(host='127.0.0.1', port=9): Max retries exceeded - skipping"
            )
        );
        let missing = "2025-01-02T03:04:05,678 Could not fetch URL https://pypi.org/simple/x/: 404 Client Error: Not Found for url: https://pypi.org/simple/x/ - skipping\n2025-01-02T03:04:05,679 Starting new HTTPS connection (1): pypi.org:443\n";
        assert_eq!(network_line(missing), None);
        let untrusted = "WARNING: The repository located at h.example is not a trusted or secure host and is being ignored.\n";
        assert!(
            network_line(untrusted)
                .unwrap()
                .starts_with("The repository located at h.example")
        );
        assert_eq!(
            indexes("Looking in indexes: http://a/simple, http://b/simple\n"),
            "http://a/simple, http://b/simple"
        );
        assert_eq!(indexes(""), "https://pypi.org/simple");
    }

    /// A sweep an hour and more after the folders last changed removes the
    /// `.pip-*` folders nobody holds, and nothing else.
    #[test]
    fn a_sweep_removes_stale_pip_folders_nobody_holds() {
        let d = tempfile::tempdir().unwrap();
        let mk = |name: &str| {
            let p = d.path().join(name);
            fsops::create_dir_all(&p.join("sub")).unwrap();
            fsops::write_atomic(&p.join("sub/x.whl"), b"wheel").unwrap();
            p
        };
        let (left, other, held) = (mk(".pip-left"), mk("store"), mk(".pip-held"));
        let busy = fsops::create_new_file(&held.join(BUSY_FILE)).unwrap();
        let locked = busy.try_lock().is_ok();
        let now = SystemTime::now();
        sweep(d.path(), now);
        assert!(left.exists(), "changed within the hour");
        sweep(d.path(), now + STALE + Duration::from_secs(60));
        assert!(!left.exists());
        assert!(other.exists());
        // Where the file system locks, a held folder stays however old.
        assert_eq!(held.exists(), locked);
    }

    /// pip's stderr lines reach the reporter as pip writes them and its
    /// stdout goes where the caller says; nothing is printed by the library.
    #[cfg(unix)]
    #[test]
    #[allow(clippy::disallowed_methods)] // the fake python is a test fixture
    fn pips_messages_go_to_the_output_the_caller_gives() {
        use std::os::unix::fs::PermissionsExt;
        use std::sync::Mutex;
        static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());
        let d = tempfile::tempdir().unwrap();
        let python = d.path().join("python");
        std::fs::write(
            &python,
            "#!/bin/sh\nwhile [ \"$1\" != --dest ]; do shift; done\n\
             echo 'Collecting nvidia-cudnn-cu12==9.1.0.70'\n\
             echo 'WARNING: one' >&2\necho 'WARNING: two' >&2\n\
             : > \"$2/nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux1_x86_64.whl\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
        let dest = d.path().join("dest");
        std::fs::create_dir(&dest).unwrap();
        let out = d.path().join("stdout.txt");
        let req: PipRequirement = "nvidia-cudnn-cu12==9.1.0.70".parse().unwrap();
        let wheel = download(
            python.to_str().unwrap(),
            &req,
            &dest,
            PipOutput {
                stdout: Stdio::from(std::fs::File::create(&out).unwrap()),
                line: |l| SEEN.lock().unwrap().push(l.to_string()),
            },
            None,
        )
        .unwrap();
        assert_eq!(
            wheel.file_name().unwrap(),
            "nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux1_x86_64.whl"
        );
        assert_eq!(*SEEN.lock().unwrap(), ["WARNING: one", "WARNING: two"]);
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "Collecting nvidia-cudnn-cu12==9.1.0.70\n"
        );
        // A wheel of other bytes than the caller expects (a lock's): refused.
        std::fs::remove_file(&wheel).unwrap();
        let want = crate::hash::sha256_bytes(b"the locked wheel");
        let e = download(
            python.to_str().unwrap(),
            &req,
            &dest,
            PipOutput::silent(),
            Some(&want),
        )
        .unwrap_err();
        assert_eq!(e.kind(), Kind::Integrity);
        assert!(
            e.message()
                .contains(&format!("not {want}; it was not imported")),
            "{e}"
        );
    }
}

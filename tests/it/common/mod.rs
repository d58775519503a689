//! Shared integration-test harness: a sandbox with its own cudnnm home and a
//! scrubbed environment, running the real binary and printing everything
//! needed to debug a failure (command, folder listing, stdout, stderr).
#![allow(dead_code)]

pub mod fixtures;
pub mod http;
pub mod skip;
pub mod tls;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The cudnnm binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cudnnm"))
}

/// Folder of real cuDNN wheels fetched by `scripts/fetch-test-wheels.sh`
/// (`CUDNNM_TEST_WHEELS`, default `.cache/wheels` in the repository).
pub fn wheels_dir() -> PathBuf {
    std::env::var_os("CUDNNM_TEST_WHEELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".cache/wheels"))
}

/// A real wheel by file-name prefix (e.g. `nvidia_cudnn_jit_cu12-9.12.0.46`).
/// Panics with the command that fetches it when absent: a test that needs
/// real input must not silently pass without it.
pub fn real_wheel(prefix: &str) -> PathBuf {
    let dir = wheels_dir();
    let found = std::fs::read_dir(&dir).ok().and_then(|rd| {
        rd.flatten().map(|e| e.path()).find(|p| {
            p.file_name()
                .and_then(OsStr::to_str)
                .is_some_and(|n| n.starts_with(prefix) && n.ends_with(".whl"))
        })
    });
    found.unwrap_or_else(|| {
        panic!(
            "real wheel {prefix}*.whl not found in {}; run `scripts/fetch-test-wheels.sh` (or .ci/run) first",
            dir.display()
        )
    })
}

/// A folder built once and shared by every test of this build, kept under
/// cargo's `CARGO_TARGET_TMPDIR` as `name` (so nothing outlives `cargo clean`
/// and nothing leaks into /tmp: a `static` TempDir is never dropped).
/// `fill` builds it in a private temporary folder inside the same folder,
/// which is renamed into place when complete; a concurrent builder that
/// loses the race drops its copy. A failed `fill` panics and leaves nothing.
pub fn shared_once(name: &str, fill: impl FnOnce(&Path) -> PathBuf) -> PathBuf {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dest = base.join(name);
    if dest.exists() {
        return dest;
    }
    std::fs::create_dir_all(base).unwrap();
    let tmp = tempfile::Builder::new()
        .prefix(".building-")
        .tempdir_in(base)
        .unwrap();
    let built = fill(tmp.path());
    if let Err(e) = std::fs::rename(&built, &dest) {
        assert!(
            dest.exists(),
            "rename {} -> {}: {e}",
            built.display(),
            dest.display()
        );
    }
    dest
}

/// Spawns `cmd` with the test-only pause hook (debug builds): it stops
/// right after journal step `step`, creating `pause` and waiting while it
/// exists. Returns once the child is paused there; removing `pause` lets it go on.
pub fn spawn_paused(
    mut cmd: Command,
    step: u64,
    pause: &Path,
    stdout: std::process::Stdio,
    stderr: std::process::Stdio,
) -> std::process::Child {
    let child = cmd
        .env("CUDNNM_TEST_PAUSE_AFTER_STEP", step.to_string())
        .env("CUDNNM_TEST_PAUSE_FILE", pause)
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !pause.exists() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "the change never reached step {step}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child
}

/// A temporary world: `root/home` is CUDNNM_HOME, `root/work` the working folder.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    pub env: Vec<(OsString, OsString)>,
}

/// Windows will not delete read-only files, and store files are read-only:
/// `TempDir`'s own removal would leave the sandbox behind. cudnnm's
/// `remove_dir_all` clears the bit where it must.
#[cfg(windows)]
impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = cudnnm::fsops::remove_dir_all(self.dir.path());
    }
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox::new_in(&std::env::temp_dir())
    }

    /// A sandbox inside `parent` (which must exist).
    pub fn new_in(parent: &Path) -> Sandbox {
        let dir = tempfile::Builder::new()
            .prefix("cudnnm-test-")
            .tempdir_in(parent)
            .unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        Sandbox {
            dir,
            env: Vec::new(),
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn home(&self) -> PathBuf {
        self.root().join("home")
    }

    pub fn work(&self) -> PathBuf {
        self.root().join("work")
    }

    /// The system home every sandbox command sees (`CUDNNM_SYSTEM_HOME`), so
    /// that tests never read the machine's own `/opt/cudnnm`.
    pub fn system(&self) -> PathBuf {
        self.root().join("system")
    }

    /// Adds an environment variable for every command run in this sandbox.
    pub fn set_env(&mut self, k: impl Into<OsString>, v: impl Into<OsString>) {
        self.env.push((k.into(), v.into()));
    }

    /// Drops an environment variable [`Sandbox::set_env`] added.
    pub fn remove_env(&mut self, k: &str) {
        self.env.retain(|(key, _)| key != k);
    }

    /// A `Command` for the binary with a scrubbed environment: only PATH,
    /// HOME, CUDNNM_HOME, CUDNNM_SYSTEM_HOME and what `set_env` added; working folder `work/`.
    pub fn command(&self) -> Command {
        let mut c = Command::new(bin());
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root())
            .env("CUDNNM_HOME", self.home())
            .env("CUDNNM_SYSTEM_HOME", self.system())
            .current_dir(self.work());
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    /// A `Command` for `program` (a wrapper such as `unshare` or `sh` that
    /// goes on to run the binary) with the same environment and working
    /// folder as [`Sandbox::command`].
    pub fn wrapped(&self, program: &str) -> Command {
        let c = self.command();
        let mut w = Command::new(program);
        w.env_clear().current_dir(self.work());
        for (k, v) in c.get_envs() {
            if let Some(v) = v {
                w.env(k, v);
            }
        }
        w
    }

    /// Runs `cudnnm ARGS` and returns the output.
    pub fn run<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        let out = output(self.command().args(&args));
        Run {
            args,
            out,
            root: self.root().to_path_buf(),
        }
    }
}

/// Runs `cmd` to completion, with stdin empty, and returns what it wrote.
///
/// Its stdout and stderr go to unnamed temporary files, not pipes, and the
/// wait is for the process itself: a program it starts that inherits those
/// handles and outlives it cannot hold the test. (Under wine, the first
/// `WM_SETTINGCHANGE` broadcast starts the desktop process `explorer.exe
/// /desktop`, which inherits the broadcaster's console handles and stays
/// running; with pipes the read never saw an end and `doctor --fix` hung
/// the test until CI's time ran out.) A run longer than [`RUN_LIMIT`] is
/// killed and fails the test with what it wrote so far.
///
/// Under wine, starting a process now and then fails with
/// ERROR_INTERNAL_ERROR (1359) when many start at once; on Linux a program
/// a test has just copied fails to start with ETXTBSY while a process
/// another test thread forked meanwhile still holds the copy's write handle
/// (until it execs). Either start (nothing ran) is tried again, a few times.
pub fn output(cmd: &mut Command) -> Output {
    use std::io::{Read, Seek};
    let mut out = tempfile::tempfile().expect("temporary file for stdout");
    let mut err = tempfile::tempfile().expect("temporary file for stderr");
    cmd.stdin(std::process::Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(err.try_clone().unwrap());
    let mut tries = 0;
    let mut child = loop {
        match cmd.spawn() {
            Err(e)
                if ((cfg!(windows) && e.raw_os_error() == Some(1359))
                    || e.kind() == std::io::ErrorKind::ExecutableFileBusy)
                    && tries < 5 =>
            {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(100 * tries));
            }
            r => break r.expect("run cudnnm"),
        }
    };
    // The handles given to the child are closed here with `cmd`'s copies
    // (replaced by null), so nothing of ours keeps them open.
    cmd.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let start = std::time::Instant::now();
    let mut nap = std::time::Duration::from_millis(1);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break Some(status);
        }
        if start.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(std::time::Duration::from_millis(20));
    };
    let read = |f: &mut std::fs::File| {
        let mut v = Vec::new();
        f.seek(std::io::SeekFrom::Start(0)).unwrap();
        f.read_to_end(&mut v).unwrap();
        v
    };
    let (stdout, stderr) = (read(&mut out), read(&mut err));
    let Some(status) = status else {
        panic!(
            "{cmd:?} still ran after {} s and was killed\n--- stdout ---\n{}\n--- stderr ---\n{}",
            RUN_LIMIT.as_secs(),
            String::from_utf8_lossy(&stdout),
            String::from_utf8_lossy(&stderr)
        );
    };
    Output {
        status,
        stdout,
        stderr,
    }
}

/// The longest one command of a test may run before it is killed and the
/// test fails (the slowest, a real wheel's import under wine on a loaded
/// machine, takes well under a minute).
pub const RUN_LIMIT: std::time::Duration = std::time::Duration::from_secs(600);

/// The result of one run, with assertions that print everything on failure.
pub struct Run {
    pub args: Vec<OsString>,
    pub out: Output,
    pub root: PathBuf,
}

impl Run {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }

    pub fn code(&self) -> i32 {
        self.out.status.code().unwrap_or(-1)
    }

    /// Everything about the run, for failure messages.
    pub fn describe(&self) -> String {
        format!(
            "command: cudnnm {}\nexit: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}\n--- files ---\n{}",
            self.args
                .iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
            self.out.status.code(),
            self.stdout(),
            self.stderr(),
            listing(&self.root)
        )
    }

    /// Asserts exit code 0; returns self.
    #[track_caller]
    pub fn ok(self) -> Run {
        assert!(
            self.out.status.success(),
            "expected success\n{}",
            self.describe()
        );
        self
    }

    /// Asserts the exit code; returns self.
    #[track_caller]
    pub fn code_is(self, code: i32) -> Run {
        assert_eq!(
            self.code(),
            code,
            "unexpected exit code\n{}",
            self.describe()
        );
        self
    }

    /// Asserts stderr contains each needle.
    #[track_caller]
    pub fn stderr_has(self, needles: &[&str]) -> Run {
        let e = self.stderr();
        for n in needles {
            assert!(e.contains(n), "stderr lacks {n:?}\n{}", self.describe());
        }
        self
    }

    /// Asserts stdout contains each needle.
    #[track_caller]
    pub fn stdout_has(self, needles: &[&str]) -> Run {
        let o = self.stdout();
        for n in needles {
            assert!(o.contains(n), "stdout lacks {n:?}\n{}", self.describe());
        }
        self
    }

    /// The finding `id` in `doctor --json` output; panics with the run when absent.
    #[track_caller]
    pub fn finding(&self, id: &str) -> serde_json::Value {
        self.json()["findings"]
            .as_array()
            .and_then(|a| a.iter().find(|f| f["id"] == id))
            .cloned()
            .unwrap_or_else(|| panic!("no finding {id}\n{}", self.describe()))
    }

    /// Parses stdout as JSON.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.out.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON: {e}\n{}", self.describe()))
    }
}

/// Runs `verify --no-load --json` in `sb` and checks that it fails (exit 7)
/// naming exactly one changed file of the first release, one whose path
/// contains `name`.
pub fn verify_finds_one_changed(sb: &Sandbox, name: &str) {
    let v = sb.run(["verify", "--no-load", "--json"]).code_is(7);
    let modified = v.json()["releases"][0]["modified"].clone();
    assert_eq!(
        modified.as_array().map(Vec::len),
        Some(1),
        "{}",
        v.describe()
    );
    assert!(
        modified[0].as_str().unwrap().contains(name),
        "{}",
        v.describe()
    );
}

/// A recursive listing of `root` (paths, sizes, link targets), capped at 300 lines.
pub fn listing(root: &Path) -> String {
    let mut lines = Vec::new();
    for e in walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .flatten()
    {
        let rel = e
            .path()
            .strip_prefix(root)
            .unwrap_or(e.path())
            .display()
            .to_string();
        let line = if e.path_is_symlink() {
            format!(
                "{rel} -> {}",
                std::fs::read_link(e.path())
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            )
        } else if e.file_type().is_dir() {
            format!("{rel}/")
        } else {
            format!(
                "{rel} ({} bytes)",
                e.metadata().map(|m| m.len()).unwrap_or(0)
            )
        };
        lines.push(line);
        if lines.len() >= 300 {
            lines.push("…".into());
            break;
        }
    }
    lines.join("\n")
}

/// Sends `signal` (`-TERM`, `-INT`, `-KILL`) to the process `pid` alone,
/// as `kill PID` does.
#[cfg(unix)]
pub fn signal(signal: &str, pid: u32) {
    let st = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(st.success(), "kill {signal} {pid}");
}

/// Waits for `child` at most `limit`, then kills it (so a test that
/// expects a quick exit fails instead of hanging); returns its output and
/// how long the wait took.
#[cfg(unix)]
pub fn wait_within(
    mut child: std::process::Child,
    limit: std::time::Duration,
) -> (Output, std::time::Duration) {
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() && start.elapsed() < limit {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let took = start.elapsed();
    let _ = child.kill();
    (child.wait_with_output().unwrap(), took)
}

/// Whether process `pid` still runs: it exists and is not a zombie (one
/// killed whose parent has not collected it yet counts as gone). Read
/// from `/proc` where there is one, else asked with `kill -0`.
#[cfg(unix)]
pub fn process_runs(pid: u32) -> bool {
    if Path::new("/proc/self").exists() {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        let state = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next());
        return state != Some("Z") && state != Some("X");
    }
    Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .success()
}

//! A cloned repository or a shared folder is hostile input: a committed lock
//! runs no code, a lock or pin linked to `/dev/zero` or a credentials file
//! neither hangs nor leaks, a download stops at its declared size, and
//! root's `export dir` into a sticky folder never follows a link another
//! user plants there. Real processes throughout: pip, bash/zsh/fish, a
//! second user (`setpriv`), a server on 127.0.0.1.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::http::TestServer;
use crate::common::{self, Sandbox};
use crate::deploy_support::is_root;

const SHA: &str = "1111111111111111111111111111111111111111111111111111111111111111";

/// A project folder in the sandbox's working folder pinning `9.1.0.70_cuda12`
/// (not installed), with `lock` as its lock file's text.
fn project(sb: &Sandbox, lock: &str) -> PathBuf {
    let p = sb.work().join("proj");
    fs::create_dir_all(&p).unwrap();
    fs::write(p.join(".cudnn-version"), "9.1.0.70_cuda12\n").unwrap();
    fs::write(p.join(".cudnn-version.lock"), lock).unwrap();
    p
}

fn pip_lock(requirement: &str) -> String {
    format!(
        "pin = \"9.1.0.70_cuda12\"\nrelease = \"9.1.0.70_cuda12\"\n\n[platform.linux-x86_64]\npip = \"{}\"\nwheel = \"evil-1.0-py3-none-any.whl\"\nsha256 = \"{SHA}\"\n",
        requirement.replace('\\', "\\\\").replace('"', "\\\"")
    )
}

/// A source package whose `setup.py` creates `marker` when pip builds it.
fn evil_package(dir: &Path, marker: &Path) {
    fs::create_dir_all(dir).unwrap();
    fs::write(
        dir.join("setup.py"),
        format!(
            "open({:?}, 'w').write('ran')\nfrom setuptools import setup\nsetup(name='evil', version='1.0')\n",
            marker.display().to_string()
        ),
    )
    .unwrap();
}

/// The store has no release in it.
fn store_is_empty(sb: &Sandbox) -> bool {
    !sb.home().join("store").exists()
        || walkdir::WalkDir::new(sb.home().join("store"))
            .into_iter()
            .flatten()
            .all(|e| e.file_name() != "receipt.toml")
}

/// Each of the four locks that made pip build (and run) a package — a
/// folder, a folder with a slash, a `file://` and an `http://` direct
/// reference to an sdist — runs no code and exits 4, naming the field,
/// with nothing installed; pip is never started and the server never asked.
#[test]
fn a_lock_that_names_something_to_build_runs_no_code() {
    let mut sb = Sandbox::new();
    let marker = sb.root().join("setup-py-ran");
    let pkg = sb.work().join("proj/evilpkg");
    evil_package(&pkg, &marker);
    // The sdist, built here by tar (no code runs), served and on disk.
    let sdist_dir = sb.root().join("sdist");
    evil_package(&sdist_dir.join("evil-1.0"), &marker);
    let tgz = sb.root().join("evil-1.0.tar.gz");
    assert!(
        Command::new("tar")
            .arg("-czf")
            .arg(&tgz)
            .arg("-C")
            .arg(&sdist_dir)
            .arg("evil-1.0")
            .status()
            .unwrap()
            .success()
    );
    let server = TestServer::start();
    server.file("evil-1.0.tar.gz", fs::read(&tgz).unwrap());
    // A Python that only records that it was started.
    let python_ran = sb.root().join("python-ran");
    let python = sb.root().join("python");
    fs::write(
        &python,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\nexec python3 \"$@\"\n",
            python_ran.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&python, fs::Permissions::from_mode(0o755)).unwrap();
    sb.set_env("CUDNNM_PYTHON", &python);
    sb.set_env("PIP_NO_INDEX", "1");
    sb.set_env("PIP_CONFIG_FILE", "/dev/null");
    for requirement in [
        "./evilpkg".to_string(),
        "evilpkg/".to_string(),
        format!("evil @ file://{}", tgz.display()),
        format!("evil @ {}", server.url("evil-1.0.tar.gz")),
    ] {
        let proj = project(&sb, &pip_lock(&requirement));
        for args in [&["install"][..], &["install", "--locked"]] {
            let r = sb.command().args(args).current_dir(&proj).output().unwrap();
            let run = common::Run {
                args: args.iter().map(Into::into).collect(),
                out: r,
                root: sb.root().to_path_buf(),
            };
            let run = run.code_is(4).stderr_has(&[
                "could not read the lock file",
                "field 'platform.linux-x86_64.pip' is not NAME==VERSION",
                "help: write it again with `cudnnm lock`",
            ]);
            assert!(!run.stderr().contains(&requirement), "{}", run.describe());
        }
        assert!(!marker.exists(), "setup.py ran for {requirement}");
        assert!(!python_ran.exists(), "pip was started for {requirement}");
        assert!(store_is_empty(&sb));
    }
    assert_eq!(server.hits("evil-1.0.tar.gz"), 0);
}

/// Runs `cmd` under a 2 GB address-space limit, killing it after `limit`;
/// its output and how long it took.
fn bounded(mut cmd: Command, limit: Duration) -> (std::process::Output, Duration) {
    let t = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > limit {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    (out, t.elapsed())
}

/// `sh -c 'ulimit -v 2000000; exec cudnnm ARGS'` in `dir`, with the
/// sandbox's environment: a command reading without bound dies of the
/// limit instead of taking the machine's memory.
fn limited(sb: &Sandbox, dir: &Path, args: &[&str]) -> Command {
    let mut c = sb.wrapped("sh");
    c.arg("-c")
        .arg("ulimit -v 2000000; exec \"$0\" \"$@\"")
        .arg(common::bin())
        .args(args)
        .current_dir(dir);
    c
}

/// A lock linked to `/dev/zero` beside a pin whose release is not
/// installed (a fresh clone): `env`, `current`, `which` and `install` fail
/// (or carry on) at once, without reading it, and the `--use-on-cd` hooks
/// of bash, zsh and fish return. `manifest refresh --from /dev/zero` is
/// refused unread too.
#[test]
fn a_lock_linked_to_dev_zero_fails_fast() {
    let sb = Sandbox::new();
    let proj = sb.work().join("clone");
    fs::create_dir_all(&proj).unwrap();
    fs::write(proj.join(".cudnn-version"), "9.1.0.70_cuda12\n").unwrap();
    std::os::unix::fs::symlink("/dev/zero", proj.join(".cudnn-version.lock")).unwrap();
    let limit = Duration::from_secs(20);
    let mut took = Vec::new();
    // `env` and `which` say the release is not installed (exit 3); the
    // commands that read the lock say what it is instead (exit 4).
    for (args, code) in [
        (&["env", "--shell", "bash"][..], 3),
        (&["current"], 4),
        (&["which"], 3),
        (&["install"], 4),
        (&["install", "--locked"], 4),
    ] {
        let (out, t) = bounded(limited(&sb, &proj, args), limit);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        if code == 4 {
            assert!(
                stderr.contains("it is a character device, not a regular file holding a lock file"),
                "{args:?}: {stderr}"
            );
        }
        took.push((args.join(" "), t));
    }
    // An index given as /dev/zero is refused the same way (a usage error: the user named it).
    let (out, t) = bounded(
        limited(&sb, &proj, &["manifest", "refresh", "--from", "/dev/zero"]),
        limit,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("it is a character device, not a regular file holding an index file"),
        "{stderr}"
    );
    took.push(("manifest refresh --from /dev/zero".into(), t));
    // The hooks: cd into the clone and out again, in each shell.
    let mut hook = |shell: &str, script: String, flags: &[&str]| {
        let Some(program) = common::skip::need_program(shell, shell) else {
            return;
        };
        let path = sb.root().join(format!("hook.{shell}"));
        fs::write(&path, script).unwrap();
        let mut c = sb.wrapped(program.to_str().unwrap());
        c.env(
            "PATH",
            format!(
                "{}:/usr/local/bin:/usr/bin:/bin",
                common::bin().parent().unwrap().display()
            ),
        )
        .env("TERM", "dumb")
        .args(flags)
        .arg(&path);
        let (out, t) = bounded(c, limit);
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("back"),
            "{shell}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        took.push((format!("{shell} hook"), t));
    };
    let dir = proj.display().to_string();
    hook(
        "bash",
        // A script runs no prompt: the hook PROMPT_COMMAND would run is called.
        format!(
            "eval \"$(cudnnm env --shell bash --use-on-cd)\"\ncd '{dir}'\n__cudnnm_hook\ncd ..\n__cudnnm_hook\necho back\n"
        ),
        &["--norc", "--noprofile"],
    );
    hook(
        "zsh",
        format!("eval \"$(cudnnm env --shell zsh --use-on-cd)\"\ncd '{dir}'\ncd ..\necho back\n"),
        &["-f"],
    );
    hook(
        "fish",
        format!("cudnnm env --shell fish --use-on-cd | source\ncd '{dir}'\ncd ..\necho back\n"),
        &["--no-config"],
    );
    for (what, t) in &took {
        eprintln!("{what}: {} ms", t.as_millis());
        assert!(*t < Duration::from_secs(5), "{what} took {t:?}");
    }
}

/// A lock that declares `size = 1000` for an archive a mirror sends without
/// end: the download stops at the limit, exit 4, and no partial file stays.
/// A lock whose URL is `file:///dev/zero` is refused before anything is read.
#[test]
fn an_endless_body_stops_at_the_declared_size() {
    let mut sb = Sandbox::new();
    let server = TestServer::start();
    let rel = "cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz";
    server.endless(&format!("compute/{rel}"));
    sb.set_env("CUDNNM_MIRROR", server.url("compute/"));
    let proj = project(
        &sb,
        &format!(
            "pin = \"9.1.0.70_cuda12\"\nrelease = \"9.1.0.70_cuda12\"\n\n[platform.linux-x86_64]\nurl = \"https://developer.download.nvidia.com/compute/{rel}\"\npath = \"{rel}\"\nsha256 = \"{SHA}\"\nsize = 1000\n"
        ),
    );
    // (the lock's bytes are not the catalog's: taken only as unverified)
    let (out, t) = bounded(
        limited(&sb, &proj, &["install", "--allow-unverified"]),
        Duration::from_secs(60),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("sent more than the 1000 bytes its catalog entry or lock declares"),
        "{stderr}"
    );
    let downloads = sb.home().join("downloads");
    let left: Vec<String> = fs::read_dir(&downloads)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".partial-") || !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
    assert!(store_is_empty(&sb));
    eprintln!(
        "stopped after {} ms; the server sent {} bytes before the client hung up",
        t.as_millis(),
        server.sent()
    );
    // The server writes ahead into the socket buffers; the client kept ≤ 1000.
    assert!(server.sent() < 64 << 20, "{}", server.sent());

    // file:///dev/zero needs no server: refused as a scheme a lock may not use.
    let proj = project(
        &sb,
        &format!(
            "pin = \"9.1.0.70_cuda12\"\nrelease = \"9.1.0.70_cuda12\"\n\n[platform.linux-x86_64]\nurl = \"file:///dev/zero\"\nsha256 = \"{SHA}\"\nsize = 1000\n"
        ),
    );
    let (out, _) = bounded(limited(&sb, &proj, &["install"]), Duration::from_secs(20));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("field 'platform.linux-x86_64.url' is not an https:// URL"),
        "{stderr}"
    );
}

/// A pin (and a lock) linked to a credentials file: no command prints a
/// line of it.
#[test]
fn a_pin_linked_to_a_credentials_file_prints_no_line_of_it() {
    let sb = Sandbox::new();
    let creds = sb.root().join(".git-credentials");
    fs::write(&creds, "https://someone:ghp_S3cr3tT0k3nValue@github.com\n").unwrap();
    let proj = sb.work().join("proj");
    fs::create_dir_all(&proj).unwrap();
    std::os::unix::fs::symlink(&creds, proj.join(".cudnn-version")).unwrap();
    let run_in = |args: &[&str]| {
        let out = sb.command().args(args).current_dir(&proj).output().unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.status.success(), "{args:?}: {all}");
        for secret in ["ghp_", "S3cr3t", "someone", "github.com"] {
            assert!(!all.contains(secret), "{args:?} printed {secret}: {all}");
        }
        all
    };
    for args in [
        &["exec", "--", "true"][..],
        &["current"],
        &["install", "--locked"],
        &["env", "--shell", "bash"],
        &["which"],
        &["doctor", "--cuda-root", "/nonexistent"],
    ] {
        let all = run_in(args);
        if args[0] != "doctor" {
            assert!(
                all.contains("it is not a cuDNN version spec"),
                "{args:?}: {all}"
            );
        }
    }
    // The same file as the lock beside a valid pin.
    fs::remove_file(proj.join(".cudnn-version")).unwrap();
    fs::write(proj.join(".cudnn-version"), "9.1.0.70_cuda12\n").unwrap();
    std::os::unix::fs::symlink(&creds, proj.join(".cudnn-version.lock")).unwrap();
    let all = run_in(&["install", "--locked"]);
    assert!(all.contains("it is not a TOML lock file (line 1)"), "{all}");
    assert!(
        all.contains(&format!("({} bytes)", fs::metadata(&creds).unwrap().len())),
        "{all}"
    );
}

/// `export lmod DIR` under umask 077 makes DIR and DIR/cudnn 0755 and the
/// modulefiles 0644, so that other users find the module.
#[test]
fn export_lmod_makes_its_folders_world_readable_whatever_the_umask() {
    let sb = Sandbox::new();
    crate::deploy_support::put_redist_linux_12(&sb.home(), "9.1.0.70");
    let dir = sb.root().join("site/modules");
    let mut c = sb.wrapped("sh");
    c.arg("-c")
        .arg("umask 077; exec \"$0\" \"$@\"")
        .arg(common::bin())
        .args(["export", "lmod"])
        .arg(&dir);
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mode = |p: &Path| fs::metadata(p).unwrap().mode() & 0o777;
    assert_eq!(mode(&sb.root().join("site")), 0o755);
    assert_eq!(mode(&dir), 0o755);
    assert_eq!(mode(&dir.join("cudnn")), 0o755);
    let file = dir.join("cudnn/9.1.0.70-cuda12.lua");
    assert_eq!(mode(&file), 0o644, "{}", common::listing(&dir));
}

/// The race of a second user against root's `export dir` into a sticky
/// folder: while root exports (and re-exports, sweeping leftovers) into
/// `sticky/dest` again and again, `nobody` plants folders named as
/// cudnnm's leftovers and build folders, and swaps them, and folders in
/// them, with links to a file and a folder of root's outside
/// (`renameat2(RENAME_EXCHANGE)`, as fast as it can). Nothing outside the
/// export changes: the file keeps its bytes, mode and owner, the folder
/// its file.
#[test]
fn root_export_into_a_sticky_folder_never_follows_a_planted_link() {
    if !is_root() {
        common::skip::skip("needs root, to race root against a second user (setpriv)");
        return;
    }
    if common::skip::need_program("setpriv", "util-linux").is_none() {
        return;
    }
    let sb = Sandbox::new();
    crate::deploy_support::put_redist_linux_12(&sb.home(), "9.1.0.70");
    fs::set_permissions(sb.root(), fs::Permissions::from_mode(0o755)).unwrap();
    let victim = sb.root().join("root-secret");
    fs::write(&victim, b"root's bytes").unwrap();
    fs::set_permissions(&victim, fs::Permissions::from_mode(0o600)).unwrap();
    let victim_dir = sb.root().join("root-dir");
    fs::create_dir(&victim_dir).unwrap();
    fs::write(victim_dir.join("keep"), b"keep").unwrap();
    fs::set_permissions(&victim_dir, fs::Permissions::from_mode(0o700)).unwrap();
    let sticky = sb.root().join("sticky");
    fs::create_dir(&sticky).unwrap();
    fs::set_permissions(&sticky, fs::Permissions::from_mode(0o1777)).unwrap();
    let dest = sticky.join("dest");
    // The attacker: a python3 process as nobody (RACE_ATTACKER) until the
    // stop file appears.
    let stop = sb.root().join("stop");
    let attacker = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        // The system's python3: one under root's home (pyenv) is out of nobody's reach.
        .args(["/usr/bin/python3", "-c", RACE_ATTACKER])
        .args([&sticky, &victim, &victim_dir, &stop])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let d = dest.to_str().unwrap();
    let mut exported = 0;
    for _ in 0..EXPORTS {
        let r = sb.run(["export", "dir", d, "9.1"]);
        if r.code() == 0 {
            exported += 1;
        }
    }
    fs::write(&stop, b"").unwrap();
    let out = attacker.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let rounds: String = said
        .split_once("rounds: ")
        .map(|(_, r)| r.chars().take_while(char::is_ascii_digit).collect())
        .unwrap_or_default();
    eprintln!(
        "{EXPORTS} root exports ({exported} succeeded) against {rounds} rounds of planted swaps"
    );
    assert!(
        rounds.parse::<u32>().is_ok_and(|n| n > 0),
        "the attacker did not run ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(exported > 0, "no export succeeded");
    let meta = fs::symlink_metadata(&victim).unwrap();
    assert!(meta.is_file());
    assert_eq!(meta.mode() & 0o7777, 0o600);
    assert_eq!((meta.uid(), meta.gid()), (0, 0));
    assert_eq!(fs::read(&victim).unwrap(), b"root's bytes");
    let meta = fs::symlink_metadata(&victim_dir).unwrap();
    assert!(meta.is_dir());
    assert_eq!(meta.mode() & 0o7777, 0o700);
    assert_eq!(fs::read(victim_dir.join("keep")).unwrap(), b"keep");
    // The export itself stands, whole.
    assert!(dest.join(".cudnnm-export.toml").is_file());
}

/// How many times root exports during the race (each one sweeps).
const EXPORTS: u32 = 40;

/// The second user of
/// [`root_export_into_a_sticky_folder_never_follows_a_planted_link`], run
/// by it as `nobody` (python3, `renameat2(RENAME_EXCHANGE)` through ctypes):
/// plants folders named as cudnnm's leftovers of `dest` and a build folder,
/// each holding a `lib/`, and swaps them, and their `lib/`, with links to
/// the victim file and folder and back, over and over, until the stop file
/// appears. Arguments: the sticky folder, the victim file and folder, the
/// stop file.
const RACE_ATTACKER: &str = r#"
import ctypes, os, sys, time
sticky, victim, victim_dir, stop = sys.argv[1:5]
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
def swap(a, b):
    libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), RENAME_EXCHANGE)
def plant(d):
    try:
        os.makedirs(os.path.join(d, "lib"), exist_ok=True)
        for f in (".cudnnm-building", ".cudnnm-export.toml", "lib/libcudnn.so.9"):
            open(os.path.join(d, f), "wb").close()
    except OSError:
        pass
def link(target, at):
    if not os.path.lexists(at):
        try:
            os.symlink(target, at)
        except OSError:
            pass
names = [".cudnnm-export-old-1-dest", ".cudnnm-export-old-2-dest", ".cudnnm-export-1-2"]
t, rounds = time.monotonic(), 0
while not os.path.exists(stop) and time.monotonic() - t < 300:
    rounds += 1
    for n in names:
        d = os.path.join(sticky, n)
        df, dd = d + ".file", d + ".dir"
        lib, lf, ld = os.path.join(d, "lib"), os.path.join(d, "lib.file"), os.path.join(d, "lib.dir")
        plant(d)
        link(victim, df); link(victim_dir, dd); link(victim, lf); link(victim_dir, ld)
        # Each pair of swaps makes the name a link to root's file or folder
        # for a moment, then the planted folder again.
        for a, b in ((lib, lf), (lib, ld), (d, df), (d, dd)):
            swap(a, b); swap(a, b)
print(f"rounds: {rounds}")
"#;

/// A lock's HTTPS URL that redirects to plain HTTP is refused (exit 4)
/// before a byte of the HTTP answer is read; so is an HTTPS mirror's.
#[test]
fn a_redirect_from_https_to_http_is_refused() {
    let mut sb = Sandbox::new();
    let server = TestServer::start();
    let front = crate::common::tls::TlsFront::start(server.port(), sb.root());
    sb.set_env("SSL_CERT_FILE", &front.ca_pem);
    let rel = "cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz";
    server.redirect(&format!("compute/{rel}"), &server.url("plain.tar.xz"));
    server.file("plain.tar.xz", b"bytes over plain HTTP".to_vec());
    let proj = project(
        &sb,
        &format!(
            "pin = \"9.1.0.70_cuda12\"\nrelease = \"9.1.0.70_cuda12\"\n\n[platform.linux-x86_64]\nurl = \"{}\"\nsha256 = \"{SHA}\"\nsize = 1000\n",
            front.url(&format!("compute/{rel}"))
        ),
    );
    let run = |sb: &Sandbox| {
        let out = sb
            .command()
            .args(["install", "--allow-unverified"])
            .current_dir(&proj)
            .output()
            .unwrap();
        common::Run {
            args: vec!["install".into()],
            out,
            root: sb.root().to_path_buf(),
        }
    };
    run(&sb).code_is(4).stderr_has(&["it leaves HTTPS"]);
    // A mirror the user names may be https:// too; its redirect to http:// is refused the same.
    sb.set_env("CUDNNM_MIRROR", front.url("compute/"));
    run(&sb).code_is(4).stderr_has(&["it leaves HTTPS"]);
    assert_eq!(server.hits("plain.tar.xz"), 0);
    assert!(store_is_empty(&sb));
}

/// `self update` from a plain-HTTP base the user names warns that nothing
/// authenticates the download.
#[test]
fn self_update_from_plain_http_warns() {
    let sb = Sandbox::new();
    let base = format!(
        "http://127.0.0.1:{}/rel",
        crate::common::http::closed_port()
    );
    let r = sb.run(["self", "update", "--base", &base]);
    if r.stderr().contains("self update is turned off") {
        return;
    }
    r.stderr_has(&[&format!(
        "warning: {base} is plain HTTP: its SHA256SUMS comes over the same channel as the binary, so nothing authenticates the download"
    )]);
}

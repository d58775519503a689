//! The system store (`install --system`): releases an administrator installs
//! once for every user of a machine. Users see them after their own, may
//! point their default, pins and deployments at them, and never change them.
//! Unix: file modes and a second user; the Windows system home's path is a
//! unit test of `home` (run under wine with the library's tests).

#![cfg(unix)]

use crate::common;
use crate::deploy_support;

use std::path::{Path, PathBuf};

use common::Sandbox;
use common::fixtures;
use serde_json::Value;

fn archive(sb: &Sandbox, version: &str) -> PathBuf {
    let dir = sb.root().join("archives");
    std::fs::create_dir_all(&dir).unwrap();
    fixtures::redist_linux(version, "12").write(&dir)
}

fn system_release(sb: &Sandbox, version: &str) -> PathBuf {
    sb.system().join("store/cuda-12").join(version)
}

fn list(sb: &Sandbox) -> Vec<(String, String)> {
    sb.run(["list", "--json"])
        .ok()
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|v: &Value| {
            (
                v["id"].as_str().unwrap().to_string(),
                v["origin"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

#[test]
fn users_see_system_releases_after_their_own_and_never_change_them() {
    let sb = Sandbox::new();
    let a = archive(&sb, "9.1.0.70");
    sb.run(["install".as_ref(), "--system".as_ref(), a.as_os_str()])
        .ok()
        .stderr_has(&["installed cuDNN 9.1.0.70"]);
    // The system install wrote only the system home.
    assert!(!sb.home().exists(), "the user's home was created");
    let rel = system_release(&sb, "9.1.0.70");
    assert!(rel.join("receipt.toml").is_file());
    {
        assert_eq!(mode(&rel), 0o755);
        assert_eq!(mode(&sb.system().join("store")), 0o755);
        assert_eq!(mode(&sb.system().join("store/cuda-12")), 0o755);
        assert_eq!(mode(&rel.join("include/cudnn_version.h")), 0o444);
        assert_eq!(mode(&rel.join("receipt.toml")), 0o444);
    }

    // The user's own release, and the system one after it.
    let b = archive(&sb, "9.2.0.82");
    sb.run(["install".as_ref(), b.as_os_str()]).ok();
    assert_eq!(
        list(&sb),
        vec![
            ("9.1.0.70_cuda12".to_string(), "system".to_string()),
            ("9.2.0.82_cuda12".to_string(), "user".to_string()),
        ]
    );
    let text = sb.run(["list"]).ok().stdout();
    let line = |v: &str| text.lines().find(|l| l.starts_with(v)).unwrap().to_string();
    assert!(line("9.1.0.70").contains(" system "), "{text}");
    assert!(line("9.2.0.82").contains(" user "), "{text}");

    // A user's default may be a system release; its link points into the system store.
    sb.run(["default", "9.1.0.70_cuda12"]).ok();
    let link = sb.home().join("current/cuda-12");
    assert_eq!(
        std::fs::canonicalize(&link).unwrap(),
        std::fs::canonicalize(&rel).unwrap()
    );
    sb.run(["env", "--shell", "bash"])
        .ok()
        .stdout_has(&[&rel.join("lib").display().to_string()]);

    // A user does not remove a system release.
    sb.run(["uninstall", "9.1.0.70_cuda12"])
        .code_is(5)
        .stderr_has(&["system store", "uninstall 9.1.0.70_cuda12 --system"]);
    assert!(rel.join("receipt.toml").is_file());

    // From a home whose default it is, the administrator is told so;
    // --force removes it; the user's next command says what happened.
    sb.run(["uninstall", "--system", "9.1.0.70_cuda12"])
        .code_is(8)
        .stderr_has(&["is still needed", "the default (config.toml", "--force"]);
    assert!(rel.join("receipt.toml").is_file());
    sb.run(["uninstall", "--system", "9.1.0.70_cuda12", "--force"])
        .ok()
        .stderr_has(&["cannot see", "removed cuDNN 9.1.0.70_cuda12"]);
    assert!(!rel.exists());
    sb.run(["exec", "--", "true"]).code_is(3).stderr_has(&[
        "cuDNN 9.1.0.70_cuda12 is not installed",
        "neither your store nor the system store",
        "choose another default",
        "default 9.2.0.82_cuda12` (installed: 9.2.0.82_cuda12)",
    ]);
}

#[test]
fn a_system_copy_is_hidden_by_the_users_own() {
    let sb = Sandbox::new();
    let a = archive(&sb, "9.1.0.70");
    sb.run(["install".as_ref(), "--system".as_ref(), a.as_os_str()])
        .ok();
    // Installing what the system has is already done.
    sb.run(["install".as_ref(), a.as_os_str()])
        .ok()
        .stderr_has(&["already installed"]);
    assert!(!sb.home().join("store/cuda-12/9.1.0.70").exists());
    sb.run(["install".as_ref(), a.as_os_str(), "--force".as_ref()])
        .ok();
    assert!(
        sb.home()
            .join("store/cuda-12/9.1.0.70/receipt.toml")
            .is_file()
    );
    assert_eq!(
        list(&sb),
        vec![("9.1.0.70_cuda12".to_string(), "user".to_string())]
    );
}

/// A real second user: root installs a real cuDNN build into the system
/// store; `nobody`, with a home of their own, lists it, pins it, runs a
/// program that loads it, deploys it into their own toolkit, and is refused
/// `uninstall --system` (exit 5, nothing changed).
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn an_unprivileged_user_uses_the_system_store_and_cannot_change_it() {
    if !deploy_support::is_root() {
        common::skip::skip("needs root to act as a second user (setpriv --reuid nobody)");
        return;
    }
    if common::skip::need_program("setpriv", "util-linux").is_none()
        || common::skip::need_program("python3", "python3").is_none()
    {
        return;
    }
    let sb = Sandbox::new();
    let wheel = common::real_wheel("nvidia_cudnn_jit_cu12-9.27.0.42");
    sb.run(["install".as_ref(), "--system".as_ref(), wheel.as_os_str()])
        .ok();
    let rel = system_release(&sb, "9.27.0.42+jit");
    let before = deploy_support::snapshot(&sb.system());
    // The user's home and working folder are theirs.
    std::fs::create_dir_all(sb.home()).unwrap();
    std::process::Command::new("chown")
        .args(["65534:65534"])
        .arg(sb.work())
        .status()
        .unwrap();

    let listed = deploy_support::run_as_nobody(&sb, &["list", "--json"]).ok();
    assert_eq!(listed.json()[0]["id"], "9.27.0.42_cuda12+jit");
    assert_eq!(listed.json()[0]["origin"], "system");

    deploy_support::run_as_nobody(&sb, &["pin", "9.27"]).ok();
    let probe = "import ctypes\nlib = ctypes.CDLL('libcudnn.so.9')\nlib.cudnnGetVersion.restype = ctypes.c_size_t\nprint(lib.cudnnGetVersion())";
    let r = deploy_support::run_as_nobody(&sb, &["exec", "--", "python3", "-c", probe]).ok();
    assert_eq!(r.stdout(), "92700\n", "{}", r.describe());

    // Their own toolkit, a sandbox they own.
    let tk = deploy_support::linux_toolkit(&sb.work().join("cuda-12.4"), "12.4");
    std::process::Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(&tk)
        .status()
        .unwrap();
    let t = tk.display().to_string();
    deploy_support::run_as_nobody(&sb, &["use", "9.27.0.42", "--cuda-root", &t]).ok();
    let lib = std::fs::canonicalize(tk.join("lib64/libcudnn.so.9")).unwrap();
    assert!(
        lib.starts_with(std::fs::canonicalize(&rel).unwrap()),
        "{}",
        lib.display()
    );

    let refused = deploy_support::run_as_nobody(&sb, &["uninstall", "--system", "9.27.0.42"]);
    let refused = refused.code_is(5).stderr_has(&[
        "cannot write the system store",
        "uninstall 9.27.0.42 --system",
    ]);
    drop(refused);
    deploy_support::run_as_nobody(&sb, &["uninstall", "9.27.0.42"]).code_is(5);
    assert_eq!(deploy_support::snapshot(&sb.system()), before);

    // The administrator sees the user's toolkit linking into the release.
    let admin = common::output(sb.command().env("CUDA_HOME", &tk).args([
        "uninstall",
        "--system",
        "9.27.0.42",
    ]));
    common::Run {
        args: vec!["uninstall --system 9.27.0.42".into()],
        out: admin,
        root: sb.root().to_path_buf(),
    }
    .code_is(8)
    .stderr_has(&[
        "cuDNN 9.27.0.42_cuda12+jit is still needed",
        &t,
        "linking into it",
    ]);
}

/// The command between the first pair of backticks after `after` in a
/// `help:` line, as words (the sandbox paths hold no spaces), without `sudo`
/// (the tests run as whoever runs them) and without the leading `cudnnm`.
fn hinted(stderr: &str, after: &str) -> Vec<String> {
    let help = stderr
        .lines()
        .find(|l| l.starts_with("help:") || l.starts_with("warning:"))
        .filter(|l| l.contains(after))
        .unwrap_or_else(|| panic!("no hint with {after:?} in\n{stderr}"));
    let rest = &help[help.find(after).unwrap() + after.len()..];
    let cmd = rest.split('`').nth(1).expect("a command in backticks");
    let mut words: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
    if words.first().map(String::as_str) == Some("sudo") {
        words.remove(0);
    }
    assert_eq!(words.remove(0), "cudnnm", "{cmd}");
    words
}

/// Hints printed on the system-store paths carry what makes them work: a
/// system home named only by `--system-home` (no CUDNNM_SYSTEM_HOME, as
/// under `sudo`) is spelled out in each, and each printed command, run as
/// printed, does what it says.
#[test]
fn system_store_hints_work_as_printed() {
    let sb = Sandbox::new();
    let system = sb.root().join("site-cudnnm");
    let flag = system.display().to_string();
    // Commands that know the system home only from the flag, as a user who
    // passes --system-home (or an admin under sudo) does.
    let run = |args: &[&str]| {
        let mut c = sb.command();
        c.env_remove("CUDNNM_SYSTEM_HOME").args(args);
        common::Run {
            args: args.iter().map(Into::into).collect(),
            out: common::output(&mut c),
            root: sb.root().to_path_buf(),
        }
    };
    for v in ["9.1.0.70", "9.2.0.82"] {
        let a = archive(&sb, v).display().to_string();
        run(&["--system-home", &flag, "install", "--system", &a]).ok();
    }
    let rel = |v: &str| system.join("store/cuda-12").join(v);

    // An ambiguous `uninstall --system`: the hint names one release, with --system and the home.
    let amb = run(&["--system-home", &flag, "uninstall", "--system", "9"]).code_is(2);
    let cmd = hinted(&amb.stderr(), "name one exactly");
    assert!(cmd.contains(&"--system".to_string()), "{cmd:?}");
    assert!(cmd.contains(&flag), "{cmd:?}");
    // The user's default is the system's 9.2; the user may not remove it.
    run(&["--system-home", &flag, "default", "9.2.0.82_cuda12"]).ok();
    let refused = run(&["--system-home", &flag, "uninstall", "9.2.0.82_cuda12"]).code_is(5);
    let cmd = hinted(&refused.stderr(), "removes it for everyone");
    assert_eq!(
        cmd,
        [
            "--system-home",
            &flag,
            "uninstall",
            "9.2.0.82_cuda12",
            "--system"
        ]
    );
    // The administrator runs it as printed, from a home of their own (from
    // the user's home it is refused: that home's default is the release):
    // the release is gone.
    let words: Vec<&str> = cmd.iter().map(String::as_str).collect();
    run(&words)
        .code_is(8)
        .stderr_has(&["is still needed", "is the default"]);
    let admin_home = sb.root().join("admin-home");
    let mut c = sb.command();
    c.env_remove("CUDNNM_SYSTEM_HOME")
        .env("CUDNNM_HOME", &admin_home)
        .args(&words);
    common::Run {
        args: words.iter().map(Into::into).collect(),
        out: common::output(&mut c),
        root: sb.root().to_path_buf(),
    }
    .ok()
    .stderr_has(&["checked the", "cannot see", "removed cuDNN 9.2.0.82_cuda12"]);
    assert!(!rel("9.2.0.82").exists());
    assert!(rel("9.1.0.70").exists());

    // The user's next command says their default is gone from both stores,
    // and the command it prints makes the remaining system release the default.
    let gone = run(&["--system-home", &flag, "exec", "--", "true"]).code_is(3);
    let gone = gone.stderr_has(&[
        "cuDNN 9.2.0.82_cuda12 is not installed",
        "neither your store nor the system store",
        "installed: 9.1.0.70_cuda12",
    ]);
    let cmd = hinted(&gone.stderr(), "choose another default");
    assert_eq!(cmd, ["--system-home", &flag, "default", "9.1.0.70_cuda12"]);
    let words: Vec<&str> = cmd.iter().map(String::as_str).collect();
    run(&words).ok();
    let probe = run(&[
        "--system-home",
        &flag,
        "exec",
        "--",
        "sh",
        "-c",
        "echo $CUDNN_PATH",
    ])
    .ok();
    assert_eq!(probe.stdout().trim(), rel("9.1.0.70").display().to_string());

    // `export dir --system` of a release the system store lacks: the
    // administrator's install command names the system store.
    let dest = sb.root().join("out");
    let missing = run(&[
        "--system-home",
        &flag,
        "export",
        "dir",
        "--system",
        &dest.display().to_string(),
        "9.9",
    ])
    .code_is(3);
    let cmd = hinted(&missing.stderr(), "installs it there");
    // The release the catalog has for `9.9`, as every install hint names it.
    assert_eq!(
        cmd,
        [
            "--system-home",
            &flag,
            "install",
            "9.9.0.52_cuda12",
            "--system"
        ]
    );
}

/// `uninstall --system` from a home that deployed the system release into a
/// toolkit: that home's deployments.toml is checked like a plain
/// uninstall's (exit 8, naming the toolkit and the way out), the toolkit's
/// links keep resolving; `--force` removes it and says what was checked.
#[test]
fn uninstall_system_checks_the_deployments_of_the_home_it_runs_with() {
    let sb = Sandbox::new();
    let a = archive(&sb, "9.1.0.70");
    sb.run(["install".as_ref(), "--system".as_ref(), a.as_os_str()])
        .ok();
    let rel = system_release(&sb, "9.1.0.70");
    let tk = deploy_support::linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    let tk_arg = tk.display().to_string();
    sb.run(["use", "9.1.0.70", "--cuda-root", &tk_arg]).ok();
    let header = tk.join("include/cudnn_version.h");
    let before = std::fs::read(&header).unwrap();
    assert!(
        std::fs::canonicalize(&header)
            .unwrap()
            .starts_with(std::fs::canonicalize(&rel).unwrap())
    );
    let refused = sb
        .run(["uninstall", "--system", "9.1.0.70_cuda12"])
        .code_is(8)
        .stderr_has(&[
            &format!("has it deployed in toolkit '{tk_arg}'"),
            "--cuda-root TOOLKIT",
            "--force",
        ]);
    assert!(
        !refused.stderr().contains("checked the 0"),
        "{}",
        refused.describe()
    );
    assert_eq!(std::fs::read(&header).unwrap(), before);
    assert!(rel.join("receipt.toml").is_file());
    sb.run(["uninstall", "--system", "9.1.0.70_cuda12", "--force"])
        .ok()
        .stderr_has(&[
            "checked the 1 toolkit",
            &format!("home '{}'", sb.home().display()),
            "removed cuDNN 9.1.0.70_cuda12",
        ]);
    assert!(!rel.exists());
}

/// A user refused a change to the system store is shown the command to run
/// as root with every flag that changes what it does (`--force`, `--cuda`),
/// not a different command.
#[cfg(target_os = "linux")]
#[test]
fn the_root_command_for_a_refused_system_change_keeps_force_and_cuda() {
    if !deploy_support::is_root() {
        common::skip::skip("needs root to act as a second user (setpriv --reuid nobody)");
        return;
    }
    if common::skip::need_program("setpriv", "util-linux").is_none() {
        return;
    }
    let sb = Sandbox::new();
    let a = archive(&sb, "9.2.0.82");
    sb.run(["install".as_ref(), "--system".as_ref(), a.as_os_str()])
        .ok();
    let a = a.display().to_string();
    let refused =
        deploy_support::run_as_nobody(&sb, &["install", "--system", &a, "--force", "--cuda", "12"])
            .code_is(5);
    let help = refused
        .stderr()
        .lines()
        .find(|l| l.starts_with("help: run it as root: `sudo cudnnm "))
        .unwrap_or_else(|| panic!("{}", refused.describe()))
        .to_string();
    assert!(
        help.contains(&format!("install {a} --cuda 12 --force --system")),
        "{help}"
    );
}

/// `uninstall --system` from a home that holds its own copy of the same
/// release (installed without --system), which hides the system one: that
/// home's deployment, default and `current/` link use its own copy, not the
/// system's, so they do not stop the removal, and they keep working after it.
#[test]
fn uninstall_system_is_not_held_up_by_the_homes_own_copy_of_the_release() {
    let sb = Sandbox::new();
    let a = archive(&sb, "9.1.0.70");
    sb.run(["install".as_ref(), "--system".as_ref(), a.as_os_str()])
        .ok();
    sb.run(["install".as_ref(), a.as_os_str(), "--force".as_ref()])
        .ok();
    let own = sb.home().join("store/cuda-12/9.1.0.70");
    assert!(own.join("receipt.toml").is_file());
    let tk = deploy_support::linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    let tk_arg = tk.display().to_string();
    sb.run(["use", "9.1.0.70", "--cuda-root", &tk_arg]).ok();
    sb.run(["default", "9.1.0.70_cuda12"]).ok();
    let header = tk.join("include/cudnn_version.h");
    let own_real = std::fs::canonicalize(&own).unwrap();
    assert!(
        std::fs::canonicalize(&header)
            .unwrap()
            .starts_with(&own_real)
    );
    let r = sb
        .run(["uninstall", "--system", "9.1.0.70_cuda12"])
        .ok()
        .stderr_has(&["removed cuDNN 9.1.0.70_cuda12"]);
    assert!(
        !r.stderr().contains("still needed") && !r.stderr().contains("will dangle"),
        "{}",
        r.describe()
    );
    assert!(!system_release(&sb, "9.1.0.70").exists());
    // The home's own copy, its deployment and its default are untouched.
    assert!(own.join("receipt.toml").is_file());
    assert!(
        std::fs::canonicalize(&header)
            .unwrap()
            .starts_with(&own_real)
    );
    assert_eq!(
        std::fs::canonicalize(sb.home().join("current/cuda-12")).unwrap(),
        own_real
    );
    sb.run(["current", "--cuda-root", &tk_arg])
        .ok()
        .stdout_has(&["9.1.0.70_cuda12, symlink", "files match"]);
    sb.run(["exec", "--", "true"]).ok();
}

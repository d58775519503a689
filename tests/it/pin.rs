//! `pin`, `default`, `env --json` and `exec` through the real binary:
//! resolution order, every `.cudnn-version` case (good and malformed), the
//! stable `current/cuda-<variant>` link, and `exec`'s environment, arguments
//! and exit code.

use crate::common;
use crate::pin_support;

use std::ffi::OsString;
use std::fs;
use std::path::Path;

use common::{Run, Sandbox};
use pin_support::{fake_release, s};

/// Runs `cudnnm ARGS` in `dir` instead of the sandbox's `work/`.
fn run_in(sb: &Sandbox, dir: &Path, args: &[&str]) -> Run {
    let out = common::output(sb.command().current_dir(dir).args(args));
    Run {
        args: args.iter().map(OsString::from).collect(),
        out,
        root: sb.root().to_path_buf(),
    }
}

fn two_releases(sb: &Sandbox) -> (String, String) {
    let a = fake_release(&sb.home(), "9.12.0.46", "12");
    let b = fake_release(&sb.home(), "9.27.0.42", "12");
    fake_release(&sb.home(), "8.9.7.29", "11.8");
    (s(&a), s(&b))
}

/// With one CUDA toolkit found, the install a hint names is the build for
/// its CUDA, as `install` picks it (9.28 is built for CUDA 12 and 13).
#[cfg(unix)]
#[test]
fn the_install_hint_names_the_build_for_the_toolkit_found() {
    let mut sb = Sandbox::new();
    sb.run(["pin", "9.28"])
        .code_is(3)
        .stderr_has(&["install it first with `cudnnm install 9.28.1.4_cuda13`"]);
    let tk = crate::deploy_support::linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.131");
    sb.set_env("CUDA_HOME", &tk);
    sb.run(["pin", "9.28"])
        .code_is(3)
        .stderr_has(&["install it first with `cudnnm install 9.28.0.42_cuda12`"]);
    // The JIT build has no 9.28 for CUDA 12: the nearest for the toolkit, not CUDA 13's.
    sb.run(["pin", "9.28+jit"]).code_is(3).stderr_has(&[
        "the nearest release the catalog has is cuDNN 9.27.0.42 for CUDA 12 (`cudnnm install 9.27.0.42_cuda12+jit`)",
    ]);
}

#[test]
fn pin_checks_the_spec_writes_the_file_and_keeps_comments() {
    let sb = Sandbox::new();
    let pin = sb.work().join(".cudnn-version");
    // The install command is what the catalog has (9.12: NVIDIA's archive
    // for the newest CUDA, 13).
    sb.run(["pin", "9.12"]).code_is(3).stderr_has(&[
        "no installed cuDNN matches 9.12",
        "install it first with `cudnnm install 9.12.0.46_cuda13`",
        "`cudnnm pin 9.12 --force`",
    ]);
    assert!(!pin.exists());
    sb.run(["pin", "9.12", "--force"])
        .ok()
        .stderr_has(&["not installed yet"]);
    assert_eq!(fs::read_to_string(&pin).unwrap(), "9.12\n");
    two_releases(&sb);
    fs::write(&pin, "# ONNX needs this\r\n9.12 # was\r\n").unwrap();
    let r = sb.run(["pin", "v9.27", "--json"]).ok();
    assert_eq!(r.json()["release"], "9.27.0.42_cuda12");
    assert_eq!(r.json()["spec"], "9.27");
    assert_eq!(
        fs::read_to_string(&pin).unwrap(),
        "# ONNX needs this\r\n9.27 # was\r\n"
    );
    sb.run(["pin", "8.9.7.29_cu11.8"]).ok();
    assert_eq!(
        fs::read_to_string(&pin).unwrap(),
        "# ONNX needs this\r\n8.9.7.29_cuda11.8 # was\r\n"
    );
    sb.run(["pin", "newest"])
        .code_is(2)
        .stderr_has(&["'newest' is not a cuDNN version spec"]);
    fs::remove_file(&pin).unwrap();
    fs::create_dir(&pin).unwrap();
    sb.run(["pin", "9.12"])
        .code_is(8)
        .stderr_has(&["a folder has that name"]);
    assert!(pin.is_dir());
}

#[test]
fn resolution_order_flag_env_nearest_pin_default() {
    let mut sb = Sandbox::new();
    two_releases(&sb);
    let deep = sb.work().join("proj/src/deep");
    fs::create_dir_all(&deep).unwrap();
    let source = |r: &Run| (r.json()["release"].clone(), r.json()["source"].clone());

    // Nothing selected: env prints nothing to change and says no release.
    let r = run_in(&sb, &deep, &["env", "--json"]).ok();
    assert_eq!(
        source(&r),
        (serde_json::Value::Null, serde_json::Value::Null)
    );

    sb.run(["default", "9.12"]).ok();
    let r = run_in(&sb, &deep, &["env", "--json"]).ok();
    assert_eq!(r.json()["release"], "9.12.0.46_cuda12");
    assert_eq!(r.json()["source"]["kind"], "default");
    assert_eq!(
        r.json()["source"]["path"],
        s(&sb.home().join("config.toml"))
    );

    fs::write(sb.work().join("proj/.cudnn-version"), "9.27\n").unwrap();
    let r = run_in(&sb, &deep, &["env", "--json"]).ok();
    assert_eq!(r.json()["release"], "9.27.0.42_cuda12");
    assert_eq!(
        r.json()["source"]["path"],
        s(&sb.work().join("proj").join(".cudnn-version"))
    );

    fs::write(sb.work().join("proj/src/.cudnn-version"), "\n# nearer\n8\n").unwrap();
    let r = run_in(&sb, &deep, &["env", "--json"]).ok();
    assert_eq!(r.json()["release"], "8.9.7.29_cuda11.8");
    assert_eq!(r.json()["source"]["line"], 3);

    sb.set_env("CUDNNM_VERSION", "9.12.0.46");
    let r = run_in(&sb, &deep, &["env", "--json"]).ok();
    assert_eq!(r.json()["release"], "9.12.0.46_cuda12");
    assert_eq!(r.json()["source"]["kind"], "env-var");

    // --version (exec) beats CUDNNM_VERSION.
    let show: &[&str] = if cfg!(windows) {
        &["cmd", "/c", "echo %CUDNNM_ACTIVE%"]
    } else {
        &["printenv", "CUDNNM_ACTIVE"]
    };
    let args: Vec<&str> = ["exec", "--version", "9.27", "--"]
        .iter()
        .chain(show)
        .copied()
        .collect();
    let r = run_in(&sb, &deep, &args).ok();
    assert_eq!(r.stdout().trim_end(), "9.27.0.42_cuda12");

    // `exec SPEC -- CMD`, as `mise exec`: the spec is the release, not a program.
    let args: Vec<&str> = ["exec", "9.27", "--"].iter().chain(show).copied().collect();
    let r = run_in(&sb, &deep, &args).ok();
    assert_eq!(r.stdout().trim_end(), "9.27.0.42_cuda12");
    // Named twice: refused before anything runs.
    let args: Vec<&str> = ["exec", "--version", "9.12", "9.27", "--"]
        .iter()
        .chain(show)
        .copied()
        .collect();
    run_in(&sb, &deep, &args)
        .code_is(2)
        .stderr_has(&["'9.27' before -- names a release", "help:"]);
    // Anything else before a `--` is the program, run with its arguments.
    let args: Vec<&str> = ["exec", "--", "no-such-program", "--", "x"].to_vec();
    run_in(&sb, &deep, &args)
        .code_is(3)
        .stderr_has(&["could not run 'no-such-program'"]);
}

#[test]
fn a_missing_release_names_spec_file_line_and_install_command() {
    let sb = Sandbox::new();
    two_releases(&sb);
    let pin = sb.work().join(".cudnn-version");
    fs::write(&pin, "# needs the new one\n9.30\n").unwrap();
    let want = format!(
        "error: cuDNN 9.30 is not installed (asked for by '{}' line 2)",
        pin.display()
    );
    // 9.30 is in no catalog: the hint names the nearest release there is,
    // never `cudnnm install 9.30`.
    for args in [&["exec", "--", "true"][..], &["env", "--shell", "bash"]] {
        let r = sb.run(args).code_is(3).stderr_has(&[
            &want,
            "help: the nearest release the catalog has is cuDNN 9.",
            ", or pin an installed one with `cudnnm pin SPEC` (see `cudnnm list`)",
        ]);
        assert!(!r.stderr().contains("install 9.30"), "{}", r.describe());
    }
    sb.run(["exec", "--version", "7.6", "--", "true"])
        .code_is(3)
        .stderr_has(&["cuDNN 7.6 is not installed (asked for by the command line)"]);
    fs::remove_file(&pin).unwrap();
    sb.run(["exec", "--", "true"]).code_is(3).stderr_has(&[
        "no cuDNN release is selected for this folder",
        "help: name one (`cudnnm exec SPEC -- COMMAND`), pin one with `cudnnm pin SPEC`",
    ]);
    sb.run(["exec", "7.6", "--", "true"])
        .code_is(3)
        .stderr_has(&["cuDNN 7.6 is not installed (asked for by the command line)"]);
}

fn utf16le(text: &str) -> Vec<u8> {
    let mut out = vec![0xFF, 0xFE];
    for u in text.encode_utf16() {
        out.extend(u.to_le_bytes());
    }
    out
}

#[test]
fn every_pin_file_case() {
    let sb = Sandbox::new();
    two_releases(&sb);
    let pin = sb.work().join(".cudnn-version");
    let accepted: Vec<(Vec<u8>, &str)> = vec![
        (b"9.12.0.46\n".to_vec(), "9.12.0.46_cuda12"),
        (b"9.27".to_vec(), "9.27.0.42_cuda12"),
        (b"9".to_vec(), "9.27.0.42_cuda12"),
        (b"8.9.7.29_cuda11.8\n".to_vec(), "8.9.7.29_cuda11.8"),
        (b"   9.12   \r\n".to_vec(), "9.12.0.46_cuda12"),
        (b"\xEF\xBB\xBF9.12\r\n".to_vec(), "9.12.0.46_cuda12"),
        (b"# c\n\n9.12 # trailing\n".to_vec(), "9.12.0.46_cuda12"),
        // What Windows PowerShell 5.1 writes for `echo 9.12 > .cudnn-version`.
        (utf16le("9.12\r\n"), "9.12.0.46_cuda12"),
        // Ranges and aliases: the newest installed match.
        (b"latest\n".to_vec(), "9.27.0.42_cuda12"),
        (b">=9.12,<9.27\n".to_vec(), "9.12.0.46_cuda12"),
        (
            b"<9.27.0.42 # excludes 9.27.0.42 itself\n".to_vec(),
            "9.12.0.46_cuda12",
        ),
        (b"8.x\n".to_vec(), "8.9.7.29_cuda11.8"),
        (b"latest_cuda11\n".to_vec(), "8.9.7.29_cuda11.8"),
    ];
    for (bytes, want) in accepted {
        fs::write(&pin, &bytes).unwrap();
        let r = sb.run(["env", "--json"]).ok();
        assert_eq!(r.json()["release"], want, "{bytes:?}\n{}", r.describe());
    }
    let shown = pin.display().to_string();
    let rejected: Vec<(Vec<u8>, String)> = vec![
        (
            b"9.12 9.27\n".to_vec(),
            format!("'{shown}' line 1: it holds 2 words"),
        ),
        (
            b"# c\n~9.12\n".to_vec(),
            format!("'{shown}' line 2: it is not a cuDNN version spec (5 characters, not shown)"),
        ),
        (
            b"# only a comment\n".to_vec(),
            format!("'{shown}': it holds no spec"),
        ),
        (
            b"9\x00.\x001\x002\x00".to_vec(),
            format!("'{shown}': it holds NUL bytes"),
        ),
    ];
    for (bytes, want) in rejected {
        fs::write(&pin, &bytes).unwrap();
        sb.run(["exec", "--", "true"])
            .code_is(2)
            .stderr_has(&[&want, "help: write one spec"]);
        // env still prints a usable script (deactivation) and reports the error.
        sb.run(["env", "--shell", "bash"])
            .code_is(2)
            .stderr_has(&[&want]);
    }
    fs::remove_file(&pin).unwrap();
    fs::create_dir(&pin).unwrap();
    sb.run(["exec", "--", "true"])
        .code_is(2)
        .stderr_has(&[&format!("could not read the pin '{shown}': it is a folder")]);
    fs::remove_dir(&pin).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(sb.root().join("nowhere"), &pin).unwrap();
        sb.run(["exec", "--", "true"])
            .code_is(2)
            .stderr_has(&[&format!("could not read the pin '{shown}'")]);
    }
}

#[cfg(unix)]
#[test]
fn default_sets_config_and_repoints_the_current_link_atomically() {
    let sb = Sandbox::new();
    let (a, b) = two_releases(&sb);
    let link = sb.home().join("current/cuda-12");
    sb.run(["default"])
        .ok()
        .stderr_has(&["no default cuDNN release is set"]);
    sb.run(["default", "9.12"]).ok().stderr_has(&[
        "default cuDNN 9.12.0.46_cuda12",
        &format!("'{}' → '{a}' (symlink)", link.display()),
    ]);
    assert_eq!(fs::read_link(&link).unwrap(), Path::new(&a));
    assert!(
        fs::read_to_string(sb.home().join("config.toml"))
            .unwrap()
            .contains("default = \"9.12.0.46_cuda12\"")
    );
    let r = sb.run(["default", "9", "--json"]).ok();
    assert_eq!(r.json()["release"], "9.27.0.42_cuda12");
    assert_eq!(r.json()["link_kind"], "symlink");
    r.stderr_has(&["default cuDNN 9.12.0.46_cuda12 → 9.27.0.42_cuda12"]);
    assert_eq!(fs::read_link(&link).unwrap(), Path::new(&b));
    let names: Vec<_> = fs::read_dir(sb.home().join("current"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names,
        vec![OsString::from("cuda-12")],
        "no temporary link left behind"
    );
    assert_eq!(sb.run(["default"]).ok().stdout(), "9.27.0.42_cuda12\n");
    // Another CUDA variant gets its own link; cuda-12 keeps pointing at 9.27.
    sb.run(["default", "8"]).ok();
    assert_eq!(
        fs::read_link(sb.home().join("current/cuda-11.8")).unwrap(),
        sb.home().join("store/cuda-11.8/8.9.7.29")
    );
    assert_eq!(fs::read_link(&link).unwrap(), Path::new(&b));
    sb.run(["default", "9.3"])
        .code_is(3)
        .stderr_has(&["no installed cuDNN matches 9.3"]);
    // A real folder where the link goes is never replaced.
    fs::remove_file(&link).unwrap();
    fs::create_dir(&link).unwrap();
    fs::write(link.join("mine.txt"), "x").unwrap();
    sb.run(["default", "9.12"])
        .code_is(8)
        .stderr_has(&["is not a link"]);
    assert!(link.join("mine.txt").is_file());
}

/// `default none` unsets the default (as `rustup default none`) and removes
/// its `current/` link; without a default it changes nothing.
#[cfg(unix)]
#[test]
fn default_none_unsets_the_default_and_its_link() {
    let sb = Sandbox::new();
    two_releases(&sb);
    let link = sb.home().join("current/cuda-12");
    sb.run(["default", "9.12"]).ok();
    assert!(fs::symlink_metadata(&link).is_ok());
    sb.run(["default", "none"]).ok().stderr_has(&[
        "default cuDNN 9.12.0.46_cuda12 → none",
        &format!("removed the link '{}'", link.display()),
    ]);
    assert!(fs::symlink_metadata(&link).is_err());
    assert!(
        !fs::read_to_string(sb.home().join("config.toml"))
            .unwrap()
            .contains("default")
    );
    sb.run(["default"])
        .ok()
        .stderr_has(&["no default cuDNN release is set"]);
    sb.run(["default", "none"])
        .ok()
        .stderr_has(&["no default cuDNN release was set; nothing changed"]);
}

#[cfg(unix)]
#[test]
fn uninstalling_the_default_is_refused_and_forced_clears_it_and_its_link() {
    let sb = Sandbox::new();
    let (a, b) = two_releases(&sb);
    let link = sb.home().join("current/cuda-12");
    let config = || fs::read_to_string(sb.home().join("config.toml")).unwrap();
    sb.run(["default", "9.27"]).ok();
    sb.run(["uninstall", "9.27.0.42"]).code_is(8).stderr_has(&[
        "error: cuDNN 9.27.0.42_cuda12 is the default (config.toml: default = \"9.27.0.42_cuda12\"), and what",
        &format!("'{}' points at", link.display()),
        "help: make another release the default first (`cudnnm default OTHER`; installed: 9.12.0.46_cuda12, 8.9.7.29_cuda11.8), or pass --force",
    ]);
    assert!(
        Path::new(&b).join("receipt.toml").is_file(),
        "nothing removed"
    );
    assert_eq!(fs::read_link(&link).unwrap(), Path::new(&b));
    sb.run(["uninstall", "9.27.0.42", "--force"])
        .ok()
        .stderr_has(&[
            "removed cuDNN 9.27.0.42_cuda12",
            &format!(
                "warning: removed '{}', which pointed at cuDNN 9.27.0.42_cuda12",
                link.display()
            ),
            "warning: cleared the default cuDNN (was 9.27.0.42_cuda12); set another with `cudnnm default SPEC`",
        ]);
    assert!(!Path::new(&b).exists());
    assert!(
        fs::symlink_metadata(&link).is_err(),
        "no dangling link is left"
    );
    assert!(!config().contains("default"), "{}", config());
    sb.run(["default"])
        .ok()
        .stderr_has(&["no default cuDNN release is set"]);

    // A link left by an earlier default of this variant dangles too, though
    // config.toml names another variant's release now: refused, and --force
    // removes that link and keeps the default.
    sb.run(["default", "9.12"]).ok();
    sb.run(["default", "8"]).ok();
    let r = sb
        .run(["uninstall", "9.12.0.46"])
        .code_is(8)
        .stderr_has(&[&format!(
            "error: cuDNN 9.12.0.46_cuda12 is what '{}' points at",
            link.display()
        )]);
    assert!(!r.stderr().contains("config.toml"), "{}", r.describe());
    sb.run(["uninstall", "9.12.0.46", "--force"]).ok();
    assert!(!Path::new(&a).exists());
    assert!(fs::symlink_metadata(&link).is_err());
    assert_eq!(sb.run(["default"]).ok().stdout(), "8.9.7.29_cuda11.8\n");

    // Where no folder link could be made, `default` records the path in
    // `current/cuda-<variant>.path`: that record goes with --force as well.
    let l118 = sb.home().join("current/cuda-11.8");
    let rel = sb.home().join("store/cuda-11.8/8.9.7.29");
    fs::remove_file(&l118).unwrap();
    let record = sb.home().join("current/cuda-11.8.path");
    fs::write(&record, rel.to_str().unwrap()).unwrap();
    sb.run(["uninstall", "8.9.7.29"])
        .code_is(8)
        .stderr_has(&[&format!("'{}' points at", record.display())]);
    sb.run(["uninstall", "8.9.7.29", "--force"])
        .ok()
        .stderr_has(&["cleared the default cuDNN (was 8.9.7.29_cuda11.8)"]);
    assert!(!record.exists() && !rel.exists());
    assert!(!config().contains("default"), "{}", config());
}

#[cfg(unix)]
#[test]
fn exec_sets_the_environment_replacing_earlier_cudnnm_entries() {
    let mut sb = Sandbox::new();
    let (a, b) = two_releases(&sb);
    let home = s(&sb.home());
    sb.set_env(
        "LD_LIBRARY_PATH",
        format!("/opt/user/lib:{b}/lib:/usr/lib64::{home}/current/cuda-12/lib"),
    );
    sb.set_env("CPATH", "/opt/user/include");
    sb.set_env("CUDNN_PATH", "/opt/user/cudnn");
    let script = r#"for v in LD_LIBRARY_PATH CPATH LIBRARY_PATH CUDNN_PATH CUDNN_INCLUDE_DIR CUDNN_LIBRARY_DIR CUDNNM_ACTIVE CUDNNM_ORIG_CUDNN_PATH; do printf '%s=%s\n' "$v" "$(printenv "$v")"; done"#;
    let r = sb
        .run(["exec", "--version", "9.12", "--", "sh", "-c", script])
        .ok();
    assert_eq!(
        r.stdout(),
        format!(
            "LD_LIBRARY_PATH={a}/lib:/opt/user/lib:/usr/lib64:\n\
             CPATH={a}/include:/opt/user/include\n\
             LIBRARY_PATH={a}/lib\n\
             CUDNN_PATH={a}\n\
             CUDNN_INCLUDE_DIR={a}/include\n\
             CUDNN_LIBRARY_DIR={a}/lib\n\
             CUDNNM_ACTIVE=9.12.0.46_cuda12\n\
             CUDNNM_ORIG_CUDNN_PATH=/opt/user/cudnn\n"
        )
    );
}

#[cfg(unix)]
#[test]
fn exec_passes_arguments_untouched_and_returns_the_exit_code() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let sb = Sandbox::new();
    two_releases(&sb);
    let args: Vec<&OsStr> = vec![
        OsStr::new("a b"),
        OsStr::new("\"q\" 'x'"),
        OsStr::new("$HOME `id` \\n"),
        OsStr::new("ü 你 😀"),
        OsStr::new("--version"),
        OsStr::new("-q"),
        OsStr::new(""),
        OsStr::from_bytes(b"raw\xffbyte"),
    ];
    let mut cmd = sb.command();
    cmd.args(["exec", "--version", "9", "--", "printf", "[%s]\\n"])
        .args(&args);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let mut want = Vec::new();
    for a in &args {
        want.extend_from_slice(b"[");
        want.extend_from_slice(a.as_bytes());
        want.extend_from_slice(b"]\n");
    }
    assert_eq!(out.stdout, want);
    sb.run(["exec", "--version", "9", "--", "sh", "-c", "exit 42"])
        .code_is(42);
    sb.run(["exec", "--version", "9", "--", "sh", "-c", "kill -TERM $$"])
        .code_is(-1);
    sb.run(["exec", "--version", "9", "--", "/nonexistent/tool"])
        .code_is(3)
        .stderr_has(&["could not run '/nonexistent/tool'"]);
}

/// A project folder this user may not write to: the error names the file
/// and does not send the user to the home, which has nothing to do with it;
/// a home that cannot be written still gets the home's advice.
#[cfg(unix)]
#[test]
fn an_unwritable_project_folder_is_not_blamed_on_the_home() {
    use std::os::unix::fs::PermissionsExt;
    if !crate::deploy_support::is_root() {
        return; // setpriv to another user needs root
    }
    let sb = Sandbox::new();
    fake_release(&sb.home(), "9.1.0.70", "12");
    let r = crate::deploy_support::run_as_nobody(&sb, &["pin", "9.1", "--force"])
        .code_is(5)
        .stderr_has(&[
            &format!(
                "help: pin writes '.cudnn-version' in the working folder, and '{}' is not yours to write: run it in a folder you may write to, or choose the release per process without a file (`CUDNNM_VERSION=9.1`, or `cudnnm exec --version 9.1 -- COMMAND`)",
                sb.work().display()
            ),
        ]);
    assert!(!r.stderr().contains("CUDNNM_HOME"), "{}", r.describe());
    assert!(!sb.work().join(".cudnn-version").exists());
    // The home itself read-only: the home's advice.
    crate::deploy_support::run_as_nobody(&sb, &["list"]).ok();
    fs::set_permissions(sb.home(), fs::Permissions::from_mode(0o555)).unwrap();
    let r = crate::deploy_support::run_as_nobody(&sb, &["default", "9.1"]);
    fs::set_permissions(sb.home(), fs::Permissions::from_mode(0o755)).unwrap();
    r.code_is(5)
        .stderr_has(&["point CUDNNM_HOME / --home at a folder you may write to"]);
}

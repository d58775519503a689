//! The command line itself: the names users of nvm, fnm and rustup type
//! (`ls`, `ls-remote`, `rm`, `which`), help with examples and exit codes,
//! colour, and completions driven through a real bash.

use crate::common;
use crate::deploy_support::*;

use common::Sandbox;
#[cfg(unix)]
use common::fixtures;
#[cfg(unix)]
use cudnnm::version::Platform;

#[test]
fn ls_ls_remote_and_rm_are_list_list_remote_and_uninstall() {
    let sb = Sandbox::new();
    put_redist_linux_12(&sb.home(), "9.1.0.70");
    put_redist_linux_12(&sb.home(), "9.12.0.46");
    let list = sb.run(["list", "--json"]).ok().stdout();
    assert_eq!(sb.run(["ls", "--json"]).ok().stdout(), list);
    assert!(list.contains("9.1.0.70_cuda12"), "{list}");
    let remote = ["--platform", "linux-x86_64", "--cuda", "12", "--json"];
    let a = sb
        .run(["list", "--remote"].iter().chain(&remote))
        .ok()
        .stdout();
    let b = sb.run(["ls-remote"].iter().chain(&remote)).ok().stdout();
    assert_eq!(a, b);
    assert!(b.contains("\"installed\": true"), "{b}");
    sb.run(["rm", "9.1.0.7"]).code_is(3).stderr_has(&[
        "help: the nearest installed: 9.1.0.70_cuda12, 9.12.0.46_cuda12; `cudnnm list` shows them all",
    ]);
    sb.run(["rm", "9.1.0.70"])
        .ok()
        .stderr_has(&["removed cuDNN 9.1.0.70_cuda12"]);
    assert!(!sb.home().join("store/cuda-12/9.1.0.70").exists());
    sb.run(["remove", "9.12.0.46"])
        .ok()
        .stderr_has(&["removed cuDNN 9.12.0.46_cuda12"]);
    assert_eq!(sb.run(["ls", "--json"]).ok().json(), serde_json::json!([]));
}

// The real Linux wheel's soname link; a Windows store holds no links.
#[cfg(unix)]
#[test]
fn which_prints_the_main_library_of_the_release_that_applies_here() {
    let sb = Sandbox::new();
    put_redist_linux_12(&sb.home(), "9.12.0.46");
    put_release(
        &sb.home(),
        &fixtures::windows_zip_8_1_0_77(),
        "8.1.0.77",
        "11.2",
        Platform::WindowsX86_64,
    );
    // Nothing pinned: the error says how to pick one.
    sb.run(["which"])
        .code_is(3)
        .stderr_has(&["no cuDNN release is selected", "help: pass --version SPEC"]);
    std::fs::write(sb.work().join(".cudnn-version"), "9.12\n").unwrap();
    let r = sb.run(["which"]).ok();
    let lib = sb.home().join("store/cuda-12/9.12.0.46/lib/libcudnn.so.9");
    assert_eq!(r.stdout().trim_end(), lib.display().to_string());
    assert_eq!(
        std::fs::read(&lib).unwrap(),
        fixtures::elf_bytes("libcudnn.so.9 9.12.0.46", false),
        "the path is the release's real main library"
    );
    r.stderr_has(&["cuDNN 9.12.0.46_cuda12 (from '"]);
    // A Windows release's is its DLL in bin.
    let r = sb.run(["which", "--version", "8.1", "--json"]).ok().json();
    assert_eq!(r["release"], "8.1.0.77_cuda11.2");
    assert_eq!(
        r["library"],
        sb.home()
            .join("store/cuda-11.2/8.1.0.77/bin/cudnn64_8.dll")
            .display()
            .to_string()
    );
}

/// Runs `cudnnm ARGS` in the sandbox on a pseudo-terminal (util-linux
/// `script`), `extra` added to the environment; returns what the terminal
/// showed (stdout and stderr together). `None` without `script`.
#[cfg(unix)]
fn on_a_terminal(sb: &Sandbox, args: &[&str], extra: &[(&str, &str)]) -> Option<String> {
    let script = common::skip::need_program("script", "util-linux")?;
    let mut line = common::bin().display().to_string();
    for a in args {
        line.push(' ');
        line.push_str(a);
    }
    let mut cmd = sb.wrapped(&script.display().to_string());
    // A terminal says what it is; anstream colours only one that does.
    cmd.args(["-qec", &line, "/dev/null"])
        .env("TERM", "xterm-256color");
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let out = common::output(&mut cmd);
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

// A real pseudo-terminal through util-linux's `script`.
#[cfg(unix)]
#[test]
fn error_and_help_are_coloured_on_a_terminal_and_with_color_always_only() {
    let sb = Sandbox::new();
    let red_error = "\u{1b}[1m\u{1b}[31merror:\u{1b}[0m cuDNN 7 is not installed";
    let cyan_help = "\u{1b}[1m\u{1b}[36mhelp:\u{1b}[0m ";
    // Piped (as every test runs): plain.
    let piped = sb.run(["uninstall", "7"]).code_is(3);
    assert!(!piped.stderr().contains('\u{1b}'), "{}", piped.describe());
    piped.stderr_has(&["error: cuDNN 7 is not installed", "\nhelp: "]);
    // --color always: coloured even into a pipe.
    sb.run(["--color", "always", "uninstall", "7"])
        .code_is(3)
        .stderr_has(&[red_error, cyan_help]);
    let Some(tty) = on_a_terminal(&sb, &["uninstall", "7"], &[]) else {
        return;
    };
    assert!(
        tty.contains(red_error) && tty.contains(cyan_help),
        "{tty:?}"
    );
    // NO_COLOR and --color never turn it off on a terminal too.
    let no_color = on_a_terminal(&sb, &["uninstall", "7"], &[("NO_COLOR", "1")]).unwrap();
    assert!(
        no_color.contains("error: cuDNN 7 is not installed"),
        "{no_color:?}"
    );
    assert!(!no_color.contains('\u{1b}'), "{no_color:?}");
    let never = on_a_terminal(&sb, &["--color", "never", "uninstall", "7"], &[]).unwrap();
    assert!(never.contains("help: "), "{never:?}");
    assert!(!never.contains('\u{1b}'), "{never:?}");
}

#[test]
fn help_shows_examples_for_each_command_and_the_exit_codes() {
    let sb = Sandbox::new();
    let main = sb.run(["--help"]).ok().stdout();
    // Every export, `dir` with the rest.
    assert!(
        main.lines().any(|l| l.trim_start().starts_with("export")
            && l.contains(
                "Write releases out: Lmod or Tcl modulefiles, Spack, a plain folder (dir)"
            )),
        "{main}"
    );
    for line in [
        "Exit codes:",
        "    3  not found:",
        "    6  network",
        "  130  interrupted",
    ] {
        assert!(main.contains(line), "{line:?} in {main}");
    }
    sb.run(["rollback", "--help"]).ok().stdout_has(&[
        "Examples:\n  cudnnm rollback\n      undo the last change to the toolkit",
        "  cudnnm rollback --to 3\n",
    ]);
    // The short help and an alias show them too.
    sb.run(["ls", "-h"])
        .ok()
        .stdout_has(&["Examples:\n  cudnnm ls\n"]);
    sb.run(["export", "dir", "--help"])
        .ok()
        .stdout_has(&["  cudnnm export dir ./cudnn 9.12 --prefix /opt/cudnn\n"]);
}

/// The `Usage:` lines of a run's stdout and stderr (clap names the program
/// `cudnnm.exe` on Windows).
fn usage_lines(r: &common::Run) -> Vec<String> {
    format!("{}{}", r.stdout(), r.stderr())
        .lines()
        .filter(|l| l.trim_start().starts_with("Usage:"))
        .map(|l| l.replace("cudnnm.exe", "cudnnm"))
        .collect()
}

#[test]
fn usage_lines_show_global_flags_as_optional_even_when_their_variables_are_set() {
    let mut sb = Sandbox::new();
    // Every variable a flag falls back to is set (CUDNNM_HOME by the sandbox).
    sb.set_env("CUDNNM_MIRROR", "http://127.0.0.1:9/mirror/");
    sb.set_env("CUDNNM_INSTALL_BASE", "http://127.0.0.1:9/base/");
    let cases: [(&[&str], &str, i32); 7] = [
        (&["pin"], "Usage: cudnnm pin <SPEC>", 2),
        (
            &["export", "dir", "x"],
            "Usage: cudnnm export dir <DEST> <SPEC>",
            2,
        ),
        (
            &["install", "--locked", "9"],
            "Usage: cudnnm install --locked",
            2,
        ),
        (&["self"], "Usage: cudnnm self [OPTIONS] <COMMAND>", 2),
        (
            &["self", "update", "--help"],
            "Usage: cudnnm self update [OPTIONS]",
            0,
        ),
        (&["--help"], "Usage: cudnnm [OPTIONS] <COMMAND>", 0),
        // SPEC is optional since `pin --for python` chooses the release instead (issue 29).
        (&["pin", "--help"], "Usage: cudnnm pin [OPTIONS] [SPEC]", 0),
    ];
    for (args, want, code) in cases {
        let r = sb.run(args).code_is(code);
        let lines = usage_lines(&r);
        assert!(
            lines.iter().any(|l| l.contains(want)),
            "{want:?} in {lines:?}\n{}",
            r.describe()
        );
        for l in &lines {
            for flag in ["--home", "--mirror", "--base"] {
                assert!(
                    !l.contains(flag) || args.contains(&flag),
                    "{flag} in {l:?}\n{}",
                    r.describe()
                );
            }
        }
    }
    // The variables still work: the home is the sandbox's, the mirror the one set.
    sb.run(["install", "8.9.7.29_cuda12", "--platform", "linux-x86_64"])
        .code_is(6)
        .stderr_has(&["127.0.0.1:9/mirror/"]);
    assert!(
        sb.home().join("downloads").is_dir(),
        "the sandbox's home was used"
    );
}

/// What a real bash offers on TAB after `words` (the last one being the
/// word completed), through the registration `cudnnm completions bash`
/// prints and the completion function it defines; one candidate a line.
#[cfg(unix)]
fn bash_offers(sb: &Sandbox, words: &[&str]) -> Option<Vec<String>> {
    let bash = common::skip::need_program("bash", "bash")?;
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let script = format!(
        r#"source <('{bin}' completions bash) || exit 9
COMP_WORDS=(cudnnm {words}); COMP_CWORD={cword}; COMP_TYPE=9
_clap_complete_cudnnm cudnnm "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}""#,
        bin = common::bin().display(),
        words = quoted.join(" "),
        cword = words.len(),
    );
    let out = common::output(sb.wrapped(&bash.display().to_string()).args([
        "--norc",
        "--noprofile",
        "-c",
        &script,
    ]));
    assert!(out.status.success(), "{out:?}");
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

// A real bash completing through clap's env protocol.
#[cfg(unix)]
#[test]
fn bash_completes_installed_versions_backup_ids_and_toolkit_folders() {
    let sb = Sandbox::new();
    put_redist_linux_12(&sb.home(), "9.1.0.70");
    put_redist_linux_12(&sb.home(), "9.12.0.46");
    let tk = linux_toolkit(&sb.root().join("sandbox-cuda-12.4"), "12.4.1");
    let root = std::fs::canonicalize(&tk).unwrap().display().to_string();
    sb.run(["use", "9.1.0.70", "--cuda-root", &root]).ok();
    let Some(all) = bash_offers(&sb, &["use", ""]) else {
        return;
    };
    for want in [
        "9.12.0.46_cuda12",
        "9.12.0.46",
        "9.1.0.70_cuda12",
        "9.1.0.70",
    ] {
        assert!(all.iter().any(|c| c == want), "{want} in {all:?}");
    }
    // What was typed narrows them; commands and flags still complete.
    assert_eq!(
        bash_offers(&sb, &["use", "9.12"]).unwrap(),
        ["9.12.0.46_cuda12", "9.12.0.46"]
    );
    assert_eq!(bash_offers(&sb, &["rollback", "--to", ""]).unwrap(), ["1"]);
    // The toolkits cudnnm knows first, then folders as typed: a toolkit new
    // to this home completes too.
    assert_eq!(
        bash_offers(&sb, &["use", "--cuda-root", ""]).unwrap()[0],
        root
    );
    // Once: not again as a folder with a trailing slash.
    let near = format!("{}/sandbox-cu", sb.root().display());
    assert_eq!(
        bash_offers(&sb, &["use", "--cuda-root", &near]).unwrap(),
        [root.as_str()]
    );
    let fresh = sb.root().join("new-cuda-12.6");
    std::fs::create_dir_all(&fresh).unwrap();
    let typed = format!("{}/new-cu", sb.root().display());
    assert_eq!(
        bash_offers(&sb, &["use", "--cuda-root", &typed]).unwrap(),
        [format!("{}/", fresh.display())]
    );
    assert_eq!(bash_offers(&sb, &["rollb"]).unwrap(), ["rollback"]);
    assert!(
        bash_offers(&sb, &["use", "--cuda-r"])
            .unwrap()
            .contains(&"--cuda-root".to_string())
    );
    // `backups remove` completes ids too.
    let ids: Vec<String> = bash_offers(&sb, &["backups", "remove", ""])
        .unwrap()
        .into_iter()
        .filter(|c| !c.starts_with('-'))
        .collect();
    assert_eq!(ids, ["1"]);
    // A `--home` on the line is the home the candidates come from.
    let other = sb.root().join("other-home");
    put_redist_linux_12(&other, "9.27.0.42");
    let o = other.display().to_string();
    assert_eq!(
        bash_offers(&sb, &["--home", &o, "use", "9."]).unwrap(),
        ["9.27.0.42_cuda12", "9.27.0.42"]
    );
    assert_eq!(
        bash_offers(&sb, &[&format!("--home={o}"), "use", "9.1"]).unwrap(),
        Vec::<String>::new()
    );
}

/// `scripts/demo.sh` shows cargo's progress while it builds: run with a
/// `cargo` on PATH that prints as the real one does (nothing under
/// `--quiet`/`-q`) and then fails, which stops the script right there.
#[cfg(unix)]
#[test]
fn the_demo_shows_the_builds_progress() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let bin = sb.root().join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let cargo = bin.join("cargo");
    std::fs::write(
        &cargo,
        "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in --quiet|-q) exit 3;; esac; done\necho '   Compiling cudnnm v0.1.0' >&2\nexit 3\n",
    )
    .unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/demo.sh");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = common::output(sb.wrapped("bash").arg(&script).env("PATH", path));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{stderr}");
    assert!(stdout.contains("== building cudnnm"), "{stdout}");
    assert!(stderr.contains("Compiling cudnnm"), "{stderr}");
}

// A real pseudo-terminal through util-linux's `script`.
#[cfg(unix)]
#[test]
fn clap_help_and_usage_errors_follow_the_color_flag() {
    let sb = Sandbox::new();
    let always = sb.run(["--color", "always", "use", "--help"]).ok().stdout();
    assert!(always.contains('\u{1b}'), "{always}");
    let r = sb
        .run(["--color=always", "use", "--no-such-flag"])
        .code_is(2);
    assert!(r.stderr().contains('\u{1b}'), "{}", r.describe());
    let Some(tty) = on_a_terminal(&sb, &["--color", "never", "use", "--help"], &[]) else {
        return;
    };
    assert!(
        tty.contains("Examples:") && !tty.contains('\u{1b}'),
        "{tty:?}"
    );
}

/// `completions --json`: the shell and the very code the text form prints.
#[test]
fn completions_as_json_carry_the_shell_and_its_registration() {
    let sb = Sandbox::new();
    let text = sb.run(["completions", "bash"]).ok().stdout();
    let j = sb.run(["--json", "completions", "bash"]).ok().json();
    assert_eq!(j["shell"], "bash");
    let script = j["script"].as_str().unwrap();
    assert_eq!(script.trim_end(), text.trim_end());
    assert!(script.contains("COMPLETE="), "{script}");
}

/// `exec --json`: stdout stays the command's own, byte for byte; an error
/// of cudnnm's own is the JSON error object, as for every command.
#[cfg(unix)]
#[test]
fn exec_with_json_leaves_stdout_to_the_command_and_reports_its_errors_as_json() {
    let sb = Sandbox::new();
    let e = sb.run(["--json", "exec", "--", "true"]).code_is(3);
    let j = e.json();
    assert_eq!(j["error"]["kind"], "not-found", "{}", e.describe());
    assert_eq!(j["error"]["exit_code"], 3);
    put_redist_linux_12(&sb.home(), "9.1.0.70");
    let r = sb
        .run(["--json", "exec", "--version", "9.1", "--", "echo", "hi"])
        .ok();
    assert_eq!(r.stdout(), "hi\n");
}

//! The shell hooks from `shims/` in real bash, zsh and fish processes: the
//! profile line, `cd` into a pinned folder, nested pins, folders with spaces,
//! leaving restores the user's own values, a default takes over outside pins,
//! and cudnnm runs once per change of folder, never per prompt. The cudnnm
//! home itself has quotes, `$`, a backtick, a backslash and non-ASCII in its
//! name, so every value the hook sets goes through each shell's quoting.
//! PowerShell and cmd renderings are checked as text (cmd also under wine).

#![cfg(unix)]

use crate::common;
use crate::pin_support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::Sandbox;
use pin_support::{fake_release, s};

/// A home whose path needs quoting in every shell.
const NASTY_HOME: &str = "home it's $x `y` \"q\" ü \\z";

struct World {
    sb: Sandbox,
    home: PathBuf,
    a: String,
    b: String,
    wrapper: PathBuf,
    log: PathBuf,
}

fn world() -> World {
    let sb = Sandbox::new();
    let home = sb.root().join(NASTY_HOME);
    let a = s(&fake_release(&home, "9.12.0.46", "12"));
    let b = s(&fake_release(&home, "9.27.0.42", "12"));
    let w = sb.work();
    fs::create_dir_all(w.join("proj a/sub dir")).unwrap();
    fs::create_dir_all(w.join("proj a/other")).unwrap();
    fs::create_dir_all(w.join("plain")).unwrap();
    fs::write(w.join("proj a/.cudnn-version"), "9.27\n").unwrap();
    fs::write(
        w.join("proj a/sub dir/.cudnn-version"),
        "# nested\n9.12.0.46\n",
    )
    .unwrap();
    // Counts the hook's calls: logs, then runs the real binary.
    let bin_dir = sb.root().join("bin dir");
    fs::create_dir_all(&bin_dir).unwrap();
    let wrapper = bin_dir.join("cudnnm-logged");
    let log = sb.root().join("calls.log");
    fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$PWD\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            common::bin().display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
    World {
        sb,
        home,
        a,
        b,
        wrapper,
        log,
    }
}

impl World {
    /// A shell process with a scrubbed environment: the user's own cuDNN
    /// variables, cudnnm on PATH, the nasty home.
    fn shell(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let bin_dir = common::bin().parent().unwrap().to_path_buf();
        let mut c = Command::new(program);
        c.env_clear()
            .env(
                "PATH",
                format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir.display()),
            )
            .env("HOME", self.sb.root())
            .env("TERM", "dumb")
            // fish in the C locale re-encodes non-ASCII bytes of inherited
            // variables (CUDNNM_HOME) when it exports them; users run UTF-8.
            .env("LANG", "C.UTF-8")
            .env("CUDNNM_HOME", &self.home)
            .env("LD_LIBRARY_PATH", "/opt/user/lib")
            .env("LIBRARY_PATH", "/opt/user/link")
            .env("CUDNN_PATH", "/opt/user/cudnn")
            .current_dir(self.sb.work());
        c
    }

    /// The `show STEP` line expected when `release` (a store folder) is active.
    fn active(&self, step: &str, id: &str, dir: &str) -> String {
        format!("{step}|{id}|{dir}/lib:/opt/user/lib|{dir}|{dir}/include|{dir}/lib:/opt/user/link")
    }

    fn user(&self, step: &str) -> String {
        format!("{step}|<unset>|/opt/user/lib|/opt/user/cudnn|<unset>|/opt/user/link")
    }

    fn expected(&self) -> String {
        [
            self.user("start"),
            self.active("pinned", "9.27.0.42_cuda12", &self.b),
            self.active("nested", "9.12.0.46_cuda12", &self.a),
            self.active("inherited", "9.27.0.42_cuda12", &self.b),
            self.user("left"),
            self.active("default", "9.12.0.46_cuda12", &self.a),
        ]
        .join("\n")
            + "\n"
    }

    fn calls(&self) -> Vec<String> {
        fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The folders cudnnm is called from: one per change of folder, and,
    /// in a shell that runs its prompt hook (`prompts`), one more at the
    /// prompt after `default` changed `config.toml`.
    fn expected_calls(&self, prompts: bool) -> Vec<String> {
        let w = self.sb.work();
        let mut calls = vec![
            w.join("proj a"),
            w.join("proj a/sub dir"),
            w.join("proj a/other"),
            w.clone(),
        ];
        if prompts {
            calls.push(w.clone());
        }
        calls.push(w.join("plain"));
        calls.iter().map(|p| s(p)).collect()
    }
}

/// The steps every shell runs, in its own syntax via `show`/`quote`.
fn steps(profile: &str, set_exe: &str) -> String {
    format!(
        "{profile}\n{set_exe}\nshow start\ncd 'proj a'\nshow pinned\ncd 'sub dir'\nshow nested\n\
         cd ../other\nshow inherited\ntrue\ntrue\ncd ../..\nshow left\ncudnnm -q default 9.12\n\
         cd plain\nshow default\n"
    )
}

fn posix_quote(p: &Path) -> String {
    format!("'{}'", s(p).replace('\'', "'\\''"))
}

fn check(w: &World, out: std::process::Output, prompts: bool) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout,
        w.expected(),
        "\n--- stderr ---\n{}\n--- calls ---\n{:?}",
        String::from_utf8_lossy(&out.stderr),
        w.calls()
    );
    assert_eq!(
        w.calls(),
        w.expected_calls(prompts),
        "one cudnnm call per change of folder or of the key, none per prompt"
    );
}

const POSIX_SHOW: &str = r#"show() { printf '%s|%s|%s|%s|%s|%s\n' "$1" "${CUDNNM_ACTIVE-<unset>}" "${LD_LIBRARY_PATH-<unset>}" "${CUDNN_PATH-<unset>}" "${CPATH-<unset>}" "${LIBRARY_PATH-<unset>}"; }"#;

#[test]
fn bash_hook_follows_pins_and_restores() {
    let w = world();
    // An interactive bash (reading commands from a pipe) so PROMPT_COMMAND runs
    // before each prompt, as in a terminal. The shell is detected, not given.
    let script = format!(
        "{POSIX_SHOW}\n{}exit\n",
        steps(
            r#"eval "$(cudnnm env --use-on-cd)""#,
            &format!("__cudnnm_exe={}", posix_quote(&w.wrapper))
        )
    );
    let mut child = w
        .shell("bash")
        .args(["--norc", "--noprofile", "-i"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    check(&w, child.wait_with_output().unwrap(), true);
}

/// In a hooked bash, `cudnnm pin` in a pinned folder applies at the next
/// prompt, without a change of folder, and the hook says what changed;
/// prompts after it start no cudnnm.
#[test]
fn bash_hook_follows_a_new_pin_at_once_and_says_so() {
    let w = world();
    let script = format!(
        "{POSIX_SHOW}\n{}\n__cudnnm_exe={}\ncd 'proj a'\nshow pinned\ncudnnm -q pin 9.12\nshow repinned\ntrue\ntrue\nexit\n",
        r#"eval "$(cudnnm env --use-on-cd)""#,
        posix_quote(&w.wrapper)
    );
    let mut child = w
        .shell("bash")
        .args(["--norc", "--noprofile", "-i"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "{}\n{}\n",
            w.active("pinned", "9.27.0.42_cuda12", &w.b),
            w.active("repinned", "9.12.0.46_cuda12", &w.a)
        ),
        "{stderr}"
    );
    let pin = w.sb.work().join("proj a/.cudnn-version");
    assert!(
        stderr.contains(&format!(
            "cudnnm: cuDNN 9.27.0.42_cuda12 → 9.12.0.46_cuda12 (from '{}' line 1)",
            pin.display()
        )),
        "{stderr}"
    );
    let dir = s(&w.sb.work().join("proj a"));
    assert_eq!(
        w.calls(),
        [dir.clone(), dir],
        "once for cd, once for the new pin"
    );
}

#[test]
fn zsh_hook_follows_pins_and_restores() {
    let Some(zsh) = common::skip::need_program("zsh", "zsh") else {
        return;
    };
    let w = world();
    let script = format!(
        "{POSIX_SHOW}\n{}",
        steps(
            r#"eval "$(cudnnm env --use-on-cd)""#,
            &format!("__cudnnm_exe={}", posix_quote(&w.wrapper))
        )
    );
    let path = w.sb.root().join("steps.zsh");
    fs::write(&path, script).unwrap();
    check(
        &w,
        w.shell(&zsh).arg("-f").arg(&path).output().unwrap(),
        false,
    );
}

#[test]
fn fish_hook_follows_pins_and_restores() {
    let Some(fish) = common::skip::need_program("fish", "fish") else {
        return;
    };
    let w = world();
    let show = r#"function show
    set -l out $argv[1]
    for n in CUDNNM_ACTIVE LD_LIBRARY_PATH CUDNN_PATH CPATH LIBRARY_PATH
        if set -q $n
            set -a out (string join : -- $$n)
        else
            set -a out '<unset>'
        end
    end
    string join '|' -- $out
end"#;
    let exe = format!(
        "set -g __cudnnm_exe '{}'",
        s(&w.wrapper).replace('\\', "\\\\").replace('\'', "\\'")
    );
    let script = format!("{show}\n{}", steps("cudnnm env --use-on-cd | source", &exe));
    let path = w.sb.root().join("steps.fish");
    fs::write(&path, script).unwrap();
    check(
        &w,
        w.shell(&fish)
            .arg("--no-config")
            .arg(&path)
            .output()
            .unwrap(),
        false,
    );
}

#[test]
fn env_output_evaluates_to_the_exact_values_in_each_posix_shell() {
    // Plain `env` (no hook) for an explicit shell, evaluated by that shell.
    let w = world();
    fs::write(w.sb.work().join(".cudnn-version"), "9.27.0.42_cuda12\n").unwrap();
    for (shell, args, eval) in [
        (
            "bash",
            vec!["--norc", "--noprofile", "-c"],
            r#"eval "$(cudnnm env --shell bash)"; printf '%s\n' "$CUDNN_PATH""#,
        ),
        (
            "zsh",
            vec!["-f", "-c"],
            r#"eval "$(cudnnm env --shell zsh)"; printf '%s\n' "$CUDNN_PATH""#,
        ),
        (
            "fish",
            vec!["--no-config", "-c"],
            r#"cudnnm env --shell fish | source; printf '%s\n' "$CUDNN_PATH""#,
        ),
        (
            "sh",
            vec!["-c"],
            r#"eval "$(cudnnm env --shell bash)"; printf '%s\n' "$CUDNN_PATH""#,
        ),
    ] {
        // A missing shell skips its part (a failure under CI).
        let package = if shell == "sh" { "dash" } else { shell };
        let Some(exe) = common::skip::need_program(shell, package) else {
            continue;
        };
        let out = w.shell(&exe).args(&args).arg(eval).output().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{}\n", w.b),
            "{shell}: {out:?}"
        );
    }
}

#[test]
fn powershell_and_cmd_renderings_quote_as_text() {
    let w = world();
    fs::write(w.sb.work().join(".cudnn-version"), "9.12\n").unwrap();
    let run = |shell: &str, hook: bool| {
        let mut c = w.shell(common::bin().to_str().unwrap());
        c.args(["env", "--shell", shell]);
        if hook {
            c.arg("--use-on-cd");
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let a = &w.a;
    // PowerShell: ASCII only, `'` doubled, non-ASCII as [char] units.
    let ps = run("powershell", false);
    assert!(ps.is_ascii(), "{ps}");
    let ps_path = |p: &str| {
        let (before, after) = p.split_once('ü').unwrap();
        format!(
            "'{}' + [char]0x00FC + '{}'",
            before.replace('\'', "''"),
            after.replace('\'', "''")
        )
    };
    assert!(
        ps.contains(&format!("$env:CUDNN_PATH = {}\n", ps_path(a))),
        "{ps}"
    );
    assert!(
        ps.contains(&format!(
            "$env:LD_LIBRARY_PATH = {}\n",
            ps_path(&format!("{a}/lib:/opt/user/lib"))
        )),
        "{ps}"
    );
    assert!(
        ps.contains("$env:CUDNNM_ACTIVE = '9.12.0.46_cuda12'\n"),
        "{ps}"
    );
    let ps_hook = run("powershell", true);
    assert!(
        ps_hook.starts_with(&ps),
        "the hook comes after the activation"
    );
    assert!(ps_hook.contains(&format!(
        "$global:__CudnnmHome = {}\n",
        ps_path(&s(&w.home))
    )));
    assert!(ps_hook.contains("function global:__CudnnmHook"));
    assert!(ps_hook.contains("env --shell powershell | Out-String | Invoke-Expression"));

    // cmd: a batch file; CRLF, `@set "…"`, `%` doubled, UTF-8 code page around non-ASCII.
    let cmd = run("cmd", false);
    let lines: Vec<&str> = cmd.split("\r\n").collect();
    assert_eq!(
        lines[0],
        r#"@for /f "tokens=2 delims=:." %%c in ('chcp') do @set /a "__CUDNNM_CP=%%c" >nul"#
    );
    assert_eq!(lines[1], "@chcp 65001 >nul");
    assert!(
        lines.contains(&format!("@set \"CUDNN_PATH={a}\"").as_str()),
        "{cmd}"
    );
    assert!(
        lines.contains(&"@set \"CUDNNM_ACTIVE=9.12.0.46_cuda12\""),
        "{cmd}"
    );
    assert_eq!(lines[lines.len() - 3], "@chcp %__CUDNNM_CP% >nul");
    assert!(!cmd.replace("\r\n", "").contains('\n'), "CRLF only");
    let cmd_hook = run("cmd", true);
    assert!(cmd_hook.contains(
        "@doskey cd=cd $* $T \"%__CUDNNM_EXE%\" --home \"%__CUDNNM_HOME%\" env --shell cmd $G"
    ));
}

/// wine's loader: `WINE` if set, else the Debian package's path, else
/// `wine64`/`wine` on PATH; `None` after saying it is missing (see `common::skip`).
fn wine() -> Option<PathBuf> {
    if let Some(w) = std::env::var_os("WINE") {
        return Some(PathBuf::from(w));
    }
    let debian = Path::new("/usr/lib/wine/wine64");
    if debian.exists() {
        return Some(debian.to_path_buf());
    }
    for name in ["wine64", "wine"] {
        for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
            if dir.join(name).is_file() {
                return Some(dir.join(name));
            }
        }
    }
    common::skip::skip(
        "wine is not installed: this test runs the cmd rendering in wine's cmd.exe; install it with `apt-get install -y wine64` (or set WINE)",
    );
    None
}

#[test]
fn cmd_rendering_sets_exact_values_in_wine_cmd() {
    let Some(wine) = wine() else {
        return;
    };
    // cmd's specials in the home path: % ^ & ( ) ! ' spaces and an odd " (after
    // which & and ^ must be escaped). (ASCII only:
    // wine's chcp does not switch the batch decoding, real Windows does.)
    let sb = Sandbox::new();
    let home = sb.root().join("h it's %PATH% & ^c (x) !b \"q&r^s");
    let dir = s(&fake_release(&home, "9.12.0.46", "12"));
    fs::write(sb.work().join(".cudnn-version"), "9.12\n").unwrap();
    let out = Command::new(common::bin())
        .env_clear()
        .env("CUDNNM_HOME", &home)
        .args(["env", "--shell", "cmd"])
        .current_dir(sb.work())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let mut batch = out.stdout;
    // `set CUDNN` lists every variable starting so: CUDNN_* and CUDNNM_ACTIVE.
    batch.extend_from_slice(b"@set CUDNN\r\n");
    let file = sb.root().join("activate.cmd");
    fs::write(&file, &batch).unwrap();
    let mut wine_cmd = Command::new(wine);
    wine_cmd
        .arg("cmd")
        .arg("/c")
        .arg(&file)
        .env("WINEDEBUG", "-all")
        .current_dir(sb.root());
    // Wine passes the Unix environment through, and `set CUDNN` would list
    // any CUDNN* variable of the caller (CI sets CUDNNM_TEST_WHEELS).
    for (name, _) in std::env::vars_os() {
        if name
            .to_string_lossy()
            .to_ascii_uppercase()
            .starts_with("CUDNN")
        {
            wine_cmd.env_remove(name);
        }
    }
    let run = wine_cmd.output().unwrap();
    let text = String::from_utf8_lossy(&run.stdout).replace("\r\n", "\n");
    assert_eq!(
        text,
        format!(
            "CUDNN_INCLUDE_DIR={dir}/include\nCUDNN_LIBRARY_DIR={dir}/lib\nCUDNN_PATH={dir}\n\
             CUDNNM_ACTIVE=9.12.0.46_cuda12\n"
        ),
        "\n--- batch ---\n{}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&batch),
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn bash_hook_installs_once_even_with_an_array_prompt_command() {
    let w = world();
    let bin_dir = common::bin().parent().unwrap().to_path_buf();
    let script = r#"PROMPT_COMMAND=(other_cmd)
eval "$(cudnnm env --shell bash --use-on-cd)"
eval "$(cudnnm env --shell bash --use-on-cd)"
declare -p PROMPT_COMMAND"#;
    let out =
        w.sb.command()
            .env(
                "PATH",
                std::env::join_paths([bin_dir, "/usr/bin".into(), "/bin".into()]).unwrap(),
            )
            .env("CUDNNM_HOME", w.sb.home())
            .output_of_shell(script);
    assert_eq!(out.matches("__cudnnm_hook").count(), 1, "{out}");
    assert!(out.contains("other_cmd"), "{out}");
}

trait ShellOutput {
    fn output_of_shell(&mut self, script: &str) -> String;
}

impl ShellOutput for std::process::Command {
    /// Runs `script` in `bash --norc --noprofile -c` with this command's environment.
    fn output_of_shell(&mut self, script: &str) -> String {
        let envs: Vec<(std::ffi::OsString, std::ffi::OsString)> = self
            .get_envs()
            .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned())))
            .collect();
        let out = std::process::Command::new("bash")
            .args(["--norc", "--noprofile", "-c", script])
            .env_clear()
            .envs(envs)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

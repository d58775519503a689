//! Shell rendering: the [`Shell`]s `env` can print for, an [`Activation`]'s
//! changes as that shell's code, and the `--use-on-cd` hook from `shims/`
//! (embedded with `include_str!`, as rustup does with its env files).
//! Values are quoted by [`crate::quote`].
//!
//! [`Activation`]: super::Activation

use std::ffi::OsStr;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use super::VarChange;
use crate::env::{self, Env};
use crate::error::{Error, Kind, Result};
use crate::quote::{cmd_set, quote_fish, quote_posix, quote_powershell};

/// The bash hook (`shims/cudnnm.bash`).
pub const BASH_HOOK: &str = include_str!("../../shims/cudnnm.bash");

/// The zsh hook (`shims/cudnnm.zsh`).
pub const ZSH_HOOK: &str = include_str!("../../shims/cudnnm.zsh");

/// The fish hook (`shims/cudnnm.fish`).
pub const FISH_HOOK: &str = include_str!("../../shims/cudnnm.fish");

/// The PowerShell hook (`shims/cudnnm.ps1`).
pub const POWERSHELL_HOOK: &str = include_str!("../../shims/cudnnm.ps1");

/// The cmd hook (`shims/cudnnm.cmd`).
pub const CMD_HOOK: &str = include_str!("../../shims/cudnnm.cmd");

/// A shell whose syntax `env` can print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shell {
    /// GNU bash (also right for POSIX `sh` without the hook).
    Bash,
    /// zsh.
    Zsh,
    /// fish.
    Fish,
    /// Windows PowerShell 5.1 and PowerShell 7 (`pwsh`).
    PowerShell,
    /// Windows `cmd.exe`: the output is a batch file to `call`.
    Cmd,
}

impl Shell {
    /// Every shell, in display order.
    pub const ALL: [Shell; 5] = [
        Shell::Bash,
        Shell::Zsh,
        Shell::Fish,
        Shell::PowerShell,
        Shell::Cmd,
    ];

    /// The name `--shell` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Shell::Bash => "bash",
            Shell::Zsh => "zsh",
            Shell::Fish => "fish",
            Shell::PowerShell => "powershell",
            Shell::Cmd => "cmd",
        }
    }

    /// The shell for a process or program name (`bash`, `-zsh`, `/usr/bin/fish`,
    /// `pwsh.exe`, `sh`); `None` for anything else.
    pub fn from_program(name: &str) -> Option<Shell> {
        let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
        let base = base.trim_start_matches('-').to_ascii_lowercase();
        let base = base.strip_suffix(".exe").unwrap_or(&base);
        Some(match base {
            "bash" | "sh" | "dash" | "ksh" => Shell::Bash,
            "zsh" => Shell::Zsh,
            "fish" => Shell::Fish,
            "pwsh" | "powershell" | "powershell_ise" => Shell::PowerShell,
            "cmd" => Shell::Cmd,
            _ => return None,
        })
    }

    /// Guesses the calling shell: the parent process's name (Linux), else
    /// `SHELL`, else PowerShell on Windows and bash elsewhere.
    pub fn detect(env: &Env, parent: Option<&str>) -> Shell {
        parent
            .and_then(Shell::from_program)
            .or_else(|| env.var(env::SHELL).as_deref().and_then(Shell::from_program))
            .unwrap_or(if env.is_windows() {
                Shell::PowerShell
            } else {
                Shell::Bash
            })
    }

    /// The hook script from `shims/` for this shell.
    pub fn hook_script(self) -> &'static str {
        match self {
            Shell::Bash => BASH_HOOK,
            Shell::Zsh => ZSH_HOOK,
            Shell::Fish => FISH_HOOK,
            Shell::PowerShell => POWERSHELL_HOOK,
            Shell::Cmd => CMD_HOOK,
        }
    }

    fn newline(self) -> &'static str {
        if self == Shell::Cmd { "\r\n" } else { "\n" }
    }
}

impl FromStr for Shell {
    type Err = Error;

    fn from_str(s: &str) -> Result<Shell> {
        match s.trim().to_ascii_lowercase().as_str() {
            "bash" => Ok(Shell::Bash),
            "zsh" => Ok(Shell::Zsh),
            "fish" => Ok(Shell::Fish),
            "powershell" | "pwsh" => Ok(Shell::PowerShell),
            "cmd" | "cmd.exe" => Ok(Shell::Cmd),
            _ => Err(
                Error::new(Kind::Usage, format!("'{s}' is not a shell cudnnm supports"))
                    .hint("use --shell bash, zsh, fish, powershell or cmd"),
            ),
        }
    }
}

impl fmt::Display for Shell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Renders `changes` as code for `shell`: `export`/`unset` (bash, zsh),
/// `set -gx`/`set -e` (fish), `$env:` (PowerShell), `set "…"` lines of a
/// batch file (cmd). Values are quoted for that shell, never with `{:?}`.
///
/// # Errors
/// A value that `cmd` cannot express (a line break).
pub fn render(shell: Shell, changes: &[VarChange]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for c in changes {
        let line = assignment(shell, &c.name, c.value.as_deref())?;
        out.extend_from_slice(&line);
        out.extend_from_slice(shell.newline().as_bytes());
    }
    let non_ascii = changes.iter().any(|c| {
        c.value
            .as_ref()
            .is_some_and(|v| !v.as_encoded_bytes().is_ascii())
    });
    Ok(if shell == Shell::Cmd && non_ascii {
        cmd_utf8(out)
    } else {
        out
    })
}

/// Wraps batch lines holding non-ASCII text so cmd reads them as UTF-8: it
/// decodes a batch file line by line with the console code page, so switch
/// to 65001 for these lines and back to the user's page after (the way
/// conda's activation scripts do it).
fn cmd_utf8(body: Vec<u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 200);
    out.extend_from_slice(
        b"@for /f \"tokens=2 delims=:.\" %%c in ('chcp') do @set /a \"__CUDNNM_CP=%%c\" >nul\r\n@chcp 65001 >nul\r\n",
    );
    out.extend(body);
    out.extend_from_slice(b"@chcp %__CUDNNM_CP% >nul\r\n@set \"__CUDNNM_CP=\"\r\n");
    out
}

/// One line of `shell` code setting `name` to `value` (or unsetting it).
///
/// # Errors
/// A line break in a value for `cmd`.
pub fn assignment(shell: Shell, name: &str, value: Option<&OsStr>) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    match (shell, value) {
        (Shell::Bash | Shell::Zsh, Some(v)) => {
            out.extend_from_slice(format!("export {name}=").as_bytes());
            out.extend(quote_posix(v.as_encoded_bytes()));
        }
        (Shell::Bash | Shell::Zsh, None) => {
            out.extend_from_slice(format!("unset {name}").as_bytes())
        }
        (Shell::Fish, Some(v)) => {
            out.extend_from_slice(format!("set -gx {name} ").as_bytes());
            out.extend(quote_fish(v.as_encoded_bytes()));
        }
        (Shell::Fish, None) => out.extend_from_slice(format!("set -e -g {name}").as_bytes()),
        (Shell::PowerShell, Some(v)) => {
            out.extend_from_slice(
                format!("$env:{name} = {}", quote_powershell(&v.to_string_lossy())).as_bytes(),
            );
        }
        (Shell::PowerShell, None) => out.extend_from_slice(
            format!("Remove-Item -LiteralPath 'Env:{name}' -ErrorAction SilentlyContinue")
                .as_bytes(),
        ),
        // `@`: a batch file echoes each command unless told not to.
        (Shell::Cmd, Some(v)) => {
            out.extend_from_slice(format!("@{}", cmd_set(name, &v.to_string_lossy())?).as_bytes())
        }
        (Shell::Cmd, None) => out.extend_from_slice(format!("@set \"{name}=\"").as_bytes()),
    }
    Ok(out)
}

/// The `--use-on-cd` part for `shell`: lines recording the cudnnm program
/// and home the hook must call, then the hook script from `shims/`.
///
/// # Errors
/// A program or home path that `cmd` cannot express.
pub fn hook(shell: Shell, exe: &OsStr, home: &Path) -> Result<Vec<u8>> {
    let home = home.as_os_str();
    let mut out = Vec::new();
    let nl = shell.newline().as_bytes();
    match shell {
        Shell::Bash | Shell::Zsh => {
            for (name, v) in [("__cudnnm_exe", exe), ("__cudnnm_home", home)] {
                out.extend_from_slice(format!("{name}=").as_bytes());
                out.extend(quote_posix(v.as_encoded_bytes()));
                out.extend_from_slice(nl);
            }
        }
        Shell::Fish => {
            for (name, v) in [("__cudnnm_exe", exe), ("__cudnnm_home", home)] {
                out.extend_from_slice(format!("set -g {name} ").as_bytes());
                out.extend(quote_fish(v.as_encoded_bytes()));
                out.extend_from_slice(nl);
            }
        }
        Shell::PowerShell => {
            for (name, v) in [("__CudnnmExe", exe), ("__CudnnmHome", home)] {
                let line = format!(
                    "$global:{name} = {}",
                    quote_powershell(&v.to_string_lossy())
                );
                out.extend_from_slice(line.as_bytes());
                out.extend_from_slice(nl);
            }
        }
        Shell::Cmd => {
            let mut lines = Vec::new();
            for (name, v) in [("__CUDNNM_EXE", exe), ("__CUDNNM_HOME", home)] {
                let line = format!("@{}", cmd_set(name, &v.to_string_lossy())?);
                lines.extend_from_slice(line.as_bytes());
                lines.extend_from_slice(nl);
            }
            if exe.as_encoded_bytes().is_ascii() && home.as_encoded_bytes().is_ascii() {
                out.extend(lines);
            } else {
                out.extend(cmd_utf8(lines));
            }
        }
    }
    let script = shell.hook_script();
    if shell == Shell::Cmd {
        // Batch files want CRLF line ends whatever the checkout did.
        out.extend_from_slice(
            script
                .replace("\r\n", "\n")
                .replace('\n', "\r\n")
                .as_bytes(),
        );
    } else {
        out.extend_from_slice(script.as_bytes());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_lines() {
        let changes = vec![
            VarChange {
                name: "A".into(),
                value: Some("x y".into()),
            },
            VarChange {
                name: "B".into(),
                value: None,
            },
        ];
        let r = |s| String::from_utf8(render(s, &changes).unwrap()).unwrap();
        assert_eq!(r(Shell::Bash), "export A='x y'\nunset B\n");
        assert_eq!(r(Shell::Zsh), "export A='x y'\nunset B\n");
        assert_eq!(r(Shell::Fish), "set -gx A 'x y'\nset -e -g B\n");
        assert_eq!(
            r(Shell::PowerShell),
            "$env:A = 'x y'\nRemove-Item -LiteralPath 'Env:B' -ErrorAction SilentlyContinue\n"
        );
        assert_eq!(r(Shell::Cmd), "@set \"A=x y\"\r\n@set \"B=\"\r\n");
        let utf8 = [VarChange {
            name: "A".into(),
            value: Some(r"C:\Users\Jürgen".into()),
        }];
        assert_eq!(
            String::from_utf8(render(Shell::Cmd, &utf8).unwrap()).unwrap(),
            "@for /f \"tokens=2 delims=:.\" %%c in ('chcp') do @set /a \"__CUDNNM_CP=%%c\" >nul\r\n\
             @chcp 65001 >nul\r\n\
             @set \"A=C:\\Users\\Jürgen\"\r\n\
             @chcp %__CUDNNM_CP% >nul\r\n\
             @set \"__CUDNNM_CP=\"\r\n"
        );
    }

    #[test]
    fn shells_from_names_and_detection() {
        assert_eq!(Shell::from_program("-bash"), Some(Shell::Bash));
        assert_eq!(Shell::from_program("/usr/bin/zsh"), Some(Shell::Zsh));
        assert_eq!(
            Shell::from_program(r"C:\Program Files\PowerShell\7\pwsh.exe"),
            Some(Shell::PowerShell)
        );
        assert_eq!(Shell::from_program("cargo"), None);
        let env = Env::from_vars([("SHELL", "/usr/bin/fish")], "/", false);
        assert_eq!(Shell::detect(&env, Some("zsh")), Shell::Zsh);
        assert_eq!(Shell::detect(&env, Some("cudnnm-test")), Shell::Fish);
        assert_eq!(Shell::detect(&Env::default(), None), Shell::Bash);
        assert_eq!(
            Shell::detect(
                &Env::from_vars(Vec::<(String, String)>::new(), r"C:\", true),
                None
            ),
            Shell::PowerShell
        );
        assert_eq!("PWSH".parse::<Shell>().unwrap(), Shell::PowerShell);
        assert!("tcsh".parse::<Shell>().is_err());
    }

    #[test]
    fn hooks_embed_their_shim() {
        for s in Shell::ALL {
            let h = String::from_utf8(
                hook(s, OsStr::new("/opt/my tools/cudnnm"), Path::new("/h")).unwrap(),
            )
            .unwrap();
            assert!(
                h.contains(s.hook_script().lines().nth(1).unwrap().trim_end()),
                "{s}"
            );
            assert!(h.contains("my tools"), "{s}");
        }
    }
}

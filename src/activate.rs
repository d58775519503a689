//! Per-process activation (DESIGN.md §6): the environment that makes one
//! release visible to a process, and its rendering for each shell.
//!
//! An [`Activation`] is plain data: the variables to set or unset, computed
//! from an [`Env`] snapshot, so every Windows case is a unit test on Linux.
//! `exec` applies it to a child process; `env` renders it as shell code, and
//! with `--use-on-cd` appends the hook from `shims/` (embedded here with
//! `include_str!`, as rustup does with its env files).
//!
//! Rules that make switching reversible:
//! - path lists (`LD_LIBRARY_PATH`/`CPATH`/`LIBRARY_PATH`, or on Windows
//!   `PATH`/`INCLUDE`/`LIB`) get the release's folder in front; any entry under
//!   `$CUDNNM_HOME/store/` or `$CUDNNM_HOME/current/` is removed first
//!   (replaced, never stacked), other entries keep their order and spelling;
//! - the first activation in an environment (no `CUDNNM_ACTIVE`) saves the
//!   user's own `CUDNN_PATH`, `CUDNN_INCLUDE_DIR`, `CUDNN_LIBRARY_DIR` in
//!   `CUDNNM_ORIG_*`; deactivation puts them back (or unsets them) and removes
//!   exactly the cudnnm entries from the path lists, so leaving a pinned
//!   folder gives back what the user had.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use crate::env::{self, Env};
use crate::error::{Error, Kind, Result};
use crate::home::Home;
use crate::store::Release;

/// The bash hook (`shims/cudnnm.bash`).
pub const BASH_HOOK: &str = include_str!("../shims/cudnnm.bash");
/// The zsh hook (`shims/cudnnm.zsh`).
pub const ZSH_HOOK: &str = include_str!("../shims/cudnnm.zsh");
/// The fish hook (`shims/cudnnm.fish`).
pub const FISH_HOOK: &str = include_str!("../shims/cudnnm.fish");
/// The PowerShell hook (`shims/cudnnm.ps1`).
pub const POWERSHELL_HOOK: &str = include_str!("../shims/cudnnm.ps1");
/// The cmd hook (`shims/cudnnm.cmd`).
pub const CMD_HOOK: &str = include_str!("../shims/cudnnm.cmd");

/// The scalar variables an activation sets, whose user values are saved in
/// `CUDNNM_ORIG_<NAME>` while a release is active.
const SAVED_SCALARS: [&str; 3] = [
    env::CUDNN_PATH,
    env::CUDNN_INCLUDE_DIR,
    env::CUDNN_LIBRARY_DIR,
];

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

/// One variable to set (`Some`) or unset (`None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The variable name.
    pub name: String,
    /// Its new value; `None` removes it.
    pub value: Option<OsString>,
}

/// What activating (or deactivating) does to an environment: only real
/// changes, in a stable order (path lists, saved originals, scalars, `CUDNNM_ACTIVE`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Activation {
    /// The release id made active (`9.12.0.46_cuda12`), `None` when deactivating.
    pub release: Option<String>,
    /// The variable changes, no-ops left out.
    pub changes: Vec<Change>,
}

impl Activation {
    /// Applies the changes to a command about to be spawned.
    pub fn apply(&self, cmd: &mut std::process::Command) {
        for c in &self.changes {
            match &c.value {
                Some(v) => cmd.env(&c.name, v),
                None => cmd.env_remove(&c.name),
            };
        }
    }
}

/// The path-list variables for an environment: (loader, compiler include, compiler lib).
fn path_vars(windows: bool) -> [&'static str; 3] {
    if windows {
        [env::PATH, env::INCLUDE, env::LIB]
    } else {
        [env::LD_LIBRARY_PATH, env::CPATH, env::LIBRARY_PATH]
    }
}

fn orig_name(name: &str) -> String {
    format!("{}{name}", env::CUDNNM_ORIG_PREFIX)
}

fn is_active(env: &Env) -> bool {
    env.var_os(env::CUDNNM_ACTIVE)
        .is_some_and(|v| !v.is_empty())
}

/// Keeps only the entries of `want` that differ from `env`.
fn only_changes(env: &Env, want: Vec<(String, Option<OsString>)>) -> Vec<Change> {
    want.into_iter()
        .filter(|(name, value)| env.var_os(name) != value.as_deref())
        .map(|(name, value)| Change { name, value })
        .collect()
}

/// The changes that make `release` the active one in `env`: its loader,
/// include and library folders in front of the path lists (replacing any
/// earlier cudnnm entry of `home`), `CUDNN_PATH`, `CUDNN_INCLUDE_DIR`,
/// `CUDNN_LIBRARY_DIR`, `CUDNNM_ACTIVE`, and, on the first activation, the
/// user's own values saved in `CUDNNM_ORIG_*`.
pub fn activate(env: &Env, home: &Home, release: &Release) -> Activation {
    let windows = env.is_windows();
    let [loader, include, lib] = path_vars(windows);
    let mut want: Vec<(String, Option<OsString>)> = Vec::new();
    for (name, dir) in [
        (loader, release.loader_dir()),
        (include, release.include_dir()),
        (lib, release.lib_dir()),
    ] {
        let value = edit_path_list(
            env.var_os(name),
            Some(dir.as_os_str()),
            home.root(),
            windows,
        );
        want.push((name.to_string(), value));
    }
    let scalars = [
        (env::CUDNN_PATH, release.dir.clone()),
        (env::CUDNN_INCLUDE_DIR, release.include_dir()),
        (env::CUDNN_LIBRARY_DIR, release.lib_dir()),
    ];
    if !is_active(env) {
        // First activation here: remember the user's values (and drop stale saves).
        for name in SAVED_SCALARS {
            want.push((orig_name(name), env.var_os(name).map(OsStr::to_owned)));
        }
    }
    for (name, value) in scalars {
        want.push((name.to_string(), Some(value.into_os_string())));
    }
    want.push((env::CUDNNM_ACTIVE.to_string(), Some(release.id().into())));
    Activation {
        release: Some(release.id()),
        changes: only_changes(env, want),
    }
}

/// The changes that undo cudnnm's activation in `env`: cudnnm entries of
/// `home` removed from the path lists (a list left empty is unset), the
/// user's saved `CUDNN_*` values restored or the variables unset, and
/// `CUDNNM_ACTIVE` unset. Nothing when no release is active.
pub fn deactivate(env: &Env, home: &Home) -> Activation {
    if !is_active(env) {
        return Activation::default();
    }
    let windows = env.is_windows();
    let mut want: Vec<(String, Option<OsString>)> = Vec::new();
    for name in path_vars(windows) {
        want.push((
            name.to_string(),
            edit_path_list(env.var_os(name), None, home.root(), windows),
        ));
    }
    for name in SAVED_SCALARS {
        let orig = orig_name(name);
        want.push((name.to_string(), env.var_os(&orig).map(OsStr::to_owned)));
        want.push((orig, None));
    }
    want.push((env::CUDNNM_ACTIVE.to_string(), None));
    Activation {
        release: None,
        changes: only_changes(env, want),
    }
}

/// Whether a path-list entry is a cudnnm entry: under `home/store` or
/// `home/current` (Windows: `\` or `/`, case-insensitive; Unix: exact
/// components). Repeated separators and `.` components are ignored.
pub fn is_cudnnm_entry(entry: &str, home: &Path, windows: bool) -> bool {
    let e = components(entry, windows);
    let h = components(&home.to_string_lossy(), windows);
    e.len() > h.len() && e[..h.len()] == h[..] && (e[h.len()] == "store" || e[h.len()] == "current")
}

fn components(path: &str, windows: bool) -> Vec<String> {
    let is_sep = |c: char| c == '/' || (windows && c == '\\');
    let mut out = Vec::new();
    if path.starts_with(is_sep) {
        out.push(String::new()); // the root: "/a" is not "a"
    }
    for c in path.split(is_sep).filter(|c| !c.is_empty() && *c != ".") {
        out.push(if windows {
            c.to_lowercase()
        } else {
            c.to_string()
        });
    }
    out
}

/// Edits a path list: removes every cudnnm entry of `home`, then puts `add`
/// (if any) in front. Other entries keep their order and exact bytes, empty
/// entries included. Returns `None` when nothing is left (unset rather than
/// an empty value, which some tools read as "the current folder").
pub fn edit_path_list(
    value: Option<&OsStr>,
    add: Option<&OsStr>,
    home: &Path,
    windows: bool,
) -> Option<OsString> {
    let sep = if windows { b';' } else { b':' };
    let mut out: Vec<&[u8]> = Vec::new();
    if let Some(a) = add {
        out.push(a.as_encoded_bytes());
    }
    if let Some(v) = value.filter(|v| !v.is_empty()) {
        for entry in v.as_encoded_bytes().split(|b| *b == sep) {
            if !is_cudnnm_entry(&String::from_utf8_lossy(entry), home, windows) {
                out.push(entry);
            }
        }
    }
    if out.is_empty() {
        return None;
    }
    Some(os_from_bytes(out.join(&sep)))
}

#[cfg(unix)]
fn os_from_bytes(bytes: Vec<u8>) -> OsString {
    use std::os::unix::ffi::OsStringExt;
    OsString::from_vec(bytes)
}

#[cfg(not(unix))]
fn os_from_bytes(bytes: Vec<u8>) -> OsString {
    // Pieces of WTF-8 split at ASCII separators; lossless for valid Unicode.
    String::from_utf8_lossy(&bytes).into_owned().into()
}

/// Renders `changes` as code for `shell`: `export`/`unset` (bash, zsh),
/// `set -gx`/`set -e` (fish), `$env:` (PowerShell), `set "…"` lines of a
/// batch file (cmd). Values are quoted for that shell, never with `{:?}`.
///
/// # Errors
/// A value that `cmd` cannot express (a line break).
pub fn render(shell: Shell, changes: &[Change]) -> Result<Vec<u8>> {
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

/// POSIX single quoting (bash, zsh, sh): `'…'`, each `'` written `'\''`.
/// Nothing inside is special: `$`, backticks, `\`, `"`, newlines stay literal.
pub fn quote_posix(value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len() + 2);
    out.push(b'\'');
    for &b in value {
        if b == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(b);
        }
    }
    out.push(b'\'');
    out
}

/// fish quoting that does not depend on the locale: ASCII runs in single
/// quotes where only `\` and `'` need a backslash, every non-ASCII byte as
/// an unquoted `\XHH` escape (a raw byte), so a UTF-8 path survives even a
/// fish running in the C locale, which would otherwise re-encode it.
pub fn quote_fish(value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len() + 2);
    let mut open = false;
    for &b in value {
        if b.is_ascii() {
            if !open {
                out.push(b'\'');
                open = true;
            }
            if b == b'\\' || b == b'\'' {
                out.push(b'\\');
            }
            out.push(b);
        } else {
            if open {
                out.push(b'\'');
                open = false;
            }
            out.extend_from_slice(format!("\\X{b:02X}").as_bytes());
        }
    }
    if open || out.is_empty() {
        if !open {
            out.push(b'\'');
        }
        out.push(b'\'');
    }
    out
}

/// PowerShell quoting that is pure ASCII, so it survives any console code
/// page (Windows PowerShell 5.1 decodes native output with the OEM page):
/// ASCII runs in single quotes with `'` doubled, every other character as
/// `[char]0xXXXX` (UTF-16 units) joined with `+`. Curly quotes, which
/// PowerShell also treats as single quotes, are therefore never inside a literal.
pub fn quote_powershell(value: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut run = String::new();
    let mut run_open = true; // the expression must start with a string literal
    for ch in value.chars() {
        if ch.is_ascii() {
            if ch == '\'' {
                run.push_str("''");
            } else {
                run.push(ch);
            }
            run_open = true;
        } else {
            if run_open {
                parts.push(format!("'{run}'"));
                run.clear();
                run_open = false;
            }
            let mut buf = [0u16; 2];
            for unit in ch.encode_utf16(&mut buf) {
                parts.push(format!("[char]0x{unit:04X}"));
            }
        }
    }
    if run_open {
        parts.push(format!("'{run}'"));
    }
    parts.join(" + ")
}

/// A `cmd` batch-file line `set "NAME=value"`: `%` doubled (batch files
/// expand `%%` to `%`), and `^ & | < > ( )` escaped with `^` wherever an
/// inner `"` has left the quoted part. Assumes delayed expansion is off (the
/// default), where `!` is literal.
///
/// # Errors
/// A value holding a line break, which `set` cannot express.
pub fn cmd_set(name: &str, value: &str) -> Result<String> {
    if value.contains(['\r', '\n']) {
        return Err(Error::new(
            Kind::Usage,
            format!("the value of {name} holds a line break, which cmd cannot set"),
        )
        .hint("use --shell powershell, or remove the line break from the variable"));
    }
    let mut out = format!("set \"{name}=");
    let mut quoted = true;
    for ch in value.chars() {
        match ch {
            '%' => out.push_str("%%"),
            '"' => {
                quoted = !quoted;
                out.push('"');
            }
            '^' | '&' | '|' | '<' | '>' | '(' | ')' if !quoted => {
                out.push('^');
                out.push(ch);
            }
            _ => out.push(ch),
        }
    }
    out.push('"');
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
    use crate::store::{Receipt, Source};
    use crate::version::Platform;
    use std::path::PathBuf;

    fn release(dir: &str, platform: Platform) -> Release {
        Release {
            dir: PathBuf::from(dir),
            receipt: Receipt {
                schema: 1,
                version: "9.12.0.46".parse().unwrap(),
                cuda: "12".parse().unwrap(),
                platform,
                header_version: "9.12.0".parse().unwrap(),
                installed_at: String::new(),
                source: Source {
                    kind: crate::archive::layout::Shape::Wheel,
                    name: "x".into(),
                    sha256: None,
                    size: 0,
                    url: None,
                },
                files: vec![],
            },
        }
    }

    fn get<'a>(a: &'a Activation, name: &str) -> Option<Option<&'a str>> {
        a.changes
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.value.as_deref().map(|v| v.to_str().unwrap()))
    }

    /// `env` with the changes applied.
    fn applied(env: &Env, a: &Activation) -> Env {
        let mut vars: std::collections::BTreeMap<String, String> = env
            .vars()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.to_string_lossy().into_owned(),
                )
            })
            .collect();
        for c in &a.changes {
            let key = vars
                .keys()
                .find(|k| {
                    if env.is_windows() {
                        k.eq_ignore_ascii_case(&c.name)
                    } else {
                        **k == c.name
                    }
                })
                .cloned();
            if let Some(k) = key {
                vars.remove(&k);
            }
            if let Some(v) = &c.value {
                vars.insert(c.name.clone(), v.to_string_lossy().into_owned());
            }
        }
        Env::from_vars(vars, env.cwd(), env.is_windows())
    }

    #[test]
    fn cudnnm_entries_are_recognised_per_platform() {
        let h = Path::new("/home/u/.local/share/cudnnm");
        assert!(is_cudnnm_entry(
            "/home/u/.local/share/cudnnm/store/cuda-12/9.12.0.46/lib",
            h,
            false
        ));
        assert!(is_cudnnm_entry(
            "/home/u/.local/share/cudnnm//current/cuda-12/lib/",
            h,
            false
        ));
        assert!(is_cudnnm_entry(
            "/home/u/.local/share/cudnnm/./store",
            h,
            false
        ));
        assert!(!is_cudnnm_entry("/home/u/.local/share/cudnnm", h, false));
        assert!(!is_cudnnm_entry(
            "/home/u/.local/share/cudnnm/backups/1",
            h,
            false
        ));
        assert!(
            !is_cudnnm_entry("/home/u/.local/share/CUDNNM/store/x", h, false),
            "Unix is case-sensitive"
        );
        assert!(
            !is_cudnnm_entry("home/u/.local/share/cudnnm/store/x", h, false),
            "relative is not absolute"
        );
        assert!(!is_cudnnm_entry("/usr/local/cuda/lib64", h, false));
        let w = Path::new(r"C:\Users\Ann Lee\AppData\Local\cudnnm\data");
        assert!(is_cudnnm_entry(
            r"c:\users\ann lee\appdata\local\CUDNNM\data\Store\cuda-12\9.12.0.46\bin",
            w,
            true
        ));
        assert!(is_cudnnm_entry(
            r"C:/Users/Ann Lee/AppData/Local/cudnnm/data/current/cuda-12/bin",
            w,
            true
        ));
        assert!(!is_cudnnm_entry(
            r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4\bin",
            w,
            true
        ));
    }

    #[test]
    fn path_lists_replace_never_stack_and_keep_order() {
        let h = Path::new("/h");
        let edit = |v: Option<&str>, add: Option<&str>| {
            edit_path_list(v.map(OsStr::new), add.map(OsStr::new), h, false)
                .map(|v| v.into_string().unwrap())
        };
        assert_eq!(
            edit(None, Some("/h/store/a/lib")).as_deref(),
            Some("/h/store/a/lib")
        );
        assert_eq!(
            edit(Some(""), Some("/h/store/a/lib")).as_deref(),
            Some("/h/store/a/lib"),
            "no trailing ':'"
        );
        assert_eq!(
            edit(
                Some("/opt/x:/h/store/a/lib:/usr/lib:/h/current/cuda-12/lib"),
                Some("/h/store/b/lib")
            )
            .as_deref(),
            Some("/h/store/b/lib:/opt/x:/usr/lib")
        );
        // Empty entries are the user's (they mean "current folder") and stay.
        assert_eq!(
            edit(Some("/a::/b:"), Some("/h/store/b/lib")).as_deref(),
            Some("/h/store/b/lib:/a::/b:")
        );
        assert_eq!(edit(Some("/h/store/a/lib"), None), None, "only ours: unset");
        assert_eq!(
            edit(Some("/opt/x:/h/store/a/lib"), None).as_deref(),
            Some("/opt/x")
        );
        let w = Path::new(r"C:\h");
        let got = edit_path_list(
            Some(OsStr::new(
                r"C:\Windows\system32;c:\H\store\cuda-12\9.1.0\bin;C:\Program Files\x",
            )),
            Some(OsStr::new(r"C:\h\store\cuda-12\9.12.0.46\bin")),
            w,
            true,
        );
        assert_eq!(
            got.unwrap(),
            r"C:\h\store\cuda-12\9.12.0.46\bin;C:\Windows\system32;C:\Program Files\x"
        );
    }

    #[test]
    fn activate_then_switch_then_deactivate_restores_the_user_values() {
        let home = Home::new("/h");
        let user = Env::from_vars(
            [
                ("LD_LIBRARY_PATH", "/opt/a:/opt/b"),
                ("CUDNN_PATH", "/usr/local/cudnn"),
                ("PATH", "/usr/bin"),
            ],
            "/w",
            false,
        );
        let a = activate(
            &user,
            &home,
            &release("/h/store/cuda-12/9.12.0.46", Platform::LinuxX86_64),
        );
        assert_eq!(a.release.as_deref(), Some("9.12.0.46_cuda12"));
        assert_eq!(
            get(&a, "LD_LIBRARY_PATH"),
            Some(Some(
                j("/h/store/cuda-12/9.12.0.46", "lib", ":/opt/a:/opt/b").as_str()
            ))
        );
        assert_eq!(
            get(&a, "CPATH"),
            Some(Some(
                j("/h/store/cuda-12/9.12.0.46", "include", "").as_str()
            ))
        );
        assert_eq!(
            get(&a, "LIBRARY_PATH"),
            Some(Some(j("/h/store/cuda-12/9.12.0.46", "lib", "").as_str()))
        );
        assert_eq!(
            get(&a, "CUDNN_PATH"),
            Some(Some("/h/store/cuda-12/9.12.0.46"))
        );
        assert_eq!(
            get(&a, "CUDNN_INCLUDE_DIR"),
            Some(Some(
                j("/h/store/cuda-12/9.12.0.46", "include", "").as_str()
            ))
        );
        assert_eq!(
            get(&a, "CUDNN_LIBRARY_DIR"),
            Some(Some(j("/h/store/cuda-12/9.12.0.46", "lib", "").as_str()))
        );
        assert_eq!(
            get(&a, "CUDNNM_ORIG_CUDNN_PATH"),
            Some(Some("/usr/local/cudnn"))
        );
        assert_eq!(
            get(&a, "CUDNNM_ORIG_CUDNN_INCLUDE_DIR"),
            None,
            "unset stays unset: nothing to save"
        );
        assert_eq!(get(&a, "CUDNNM_ACTIVE"), Some(Some("9.12.0.46_cuda12")));
        assert_eq!(get(&a, "PATH"), None, "PATH is not touched on Linux");
        let e1 = applied(&user, &a);

        // Switching: replaced, not stacked; the saved originals are not overwritten.
        let b = activate(
            &e1,
            &home,
            &release("/h/store/cuda-12/9.27.0.42", Platform::LinuxX86_64),
        );
        assert_eq!(
            get(&b, "LD_LIBRARY_PATH"),
            Some(Some(
                j("/h/store/cuda-12/9.27.0.42", "lib", ":/opt/a:/opt/b").as_str()
            ))
        );
        assert_eq!(get(&b, "CUDNNM_ORIG_CUDNN_PATH"), None);
        let e2 = applied(&e1, &b);
        // Re-activating the same release changes nothing.
        assert!(
            activate(
                &e2,
                &home,
                &release("/h/store/cuda-12/9.27.0.42", Platform::LinuxX86_64)
            )
            .changes
            .is_empty()
        );

        let d = deactivate(&e2, &home);
        let e3 = applied(&e2, &d);
        let mut back: Vec<(String, String)> = e3
            .vars()
            .map(|(k, v)| (k.to_string_lossy().into(), v.to_string_lossy().into()))
            .collect();
        let mut orig: Vec<(String, String)> = user
            .vars()
            .map(|(k, v)| (k.to_string_lossy().into(), v.to_string_lossy().into()))
            .collect();
        back.sort();
        orig.sort();
        assert_eq!(
            back, orig,
            "deactivation gives back exactly the user's environment"
        );
        assert!(
            deactivate(&user, &home).changes.is_empty(),
            "nothing active: nothing to undo"
        );
    }

    #[test]
    fn windows_activation_uses_bin_path_include_lib() {
        let home = Home::new(r"C:\Users\me\AppData\Local\cudnnm\data");
        let env = Env::from_vars(
            [
                (
                    "Path",
                    r"C:\Windows;C:\Users\me\AppData\Local\cudnnm\data\current\cuda-12\bin",
                ),
                ("LIB", r"C:\VS\lib"),
            ],
            r"C:\work",
            true,
        );
        let r = release(
            r"C:\Users\me\AppData\Local\cudnnm\data\store\cuda-12\9.12.0.46",
            Platform::WindowsX86_64,
        );
        let a = activate(&env, &home, &r);
        let dir = r.dir.display().to_string();
        assert_eq!(
            get(&a, "PATH"),
            Some(Some(j(&dir, "bin", ";C:\\Windows").as_str()))
        );
        assert_eq!(
            get(&a, "INCLUDE"),
            Some(Some(j(&dir, "include", "").as_str()))
        );
        assert_eq!(
            get(&a, "LIB"),
            Some(Some(j(&dir, "lib", ";C:\\VS\\lib").as_str()))
        );
        assert_eq!(get(&a, "LD_LIBRARY_PATH"), None);
    }

    /// `dir` joined with `sub` as this host joins paths, then `rest`: the
    /// activation values are the host's paths (`\` on Windows, `/` elsewhere).
    fn j(dir: &str, sub: &str, rest: &str) -> String {
        format!("{}{rest}", Path::new(dir).join(sub).display())
    }

    const NASTY: &str = "it's a \"q\" $HOME `id` \\n %PATH% ^& ü 你 ‘x’ !";

    #[test]
    fn quoting_per_shell() {
        assert_eq!(quote_posix(b"a b"), b"'a b'");
        assert_eq!(
            String::from_utf8(quote_posix(NASTY.as_bytes())).unwrap(),
            "'it'\\''s a \"q\" $HOME `id` \\n %PATH% ^& ü 你 ‘x’ !'"
        );
        assert_eq!(
            String::from_utf8(quote_fish(br#"it's "q" $HOME `id` \n"#)).unwrap(),
            r#"'it\'s "q" $HOME `id` \\n'"#
        );
        assert_eq!(
            String::from_utf8(quote_fish("a ü‘".as_bytes())).unwrap(),
            r"'a '\XC3\XBC\XE2\X80\X98"
        );
        assert_eq!(quote_fish(b""), b"''");
        assert_eq!(quote_powershell("C:\\it's"), "'C:\\it''s'");
        assert_eq!(quote_powershell("ü"), "'' + [char]0x00FC");
        assert_eq!(quote_powershell("a‘b"), "'a' + [char]0x2018 + 'b'");
        assert_eq!(quote_powershell("😀"), "'' + [char]0xD83D + [char]0xDE00");
        assert!(quote_powershell(NASTY).is_ascii());
        assert_eq!(
            cmd_set("X", r"C:\a b\%PATH%").unwrap(),
            r#"set "X=C:\a b\%%PATH%%""#
        );
        assert_eq!(
            cmd_set("X", "a&b^c").unwrap(),
            r#"set "X=a&b^c""#,
            "inside quotes nothing is special"
        );
        assert_eq!(
            cmd_set("X", r#"a"b&c"d&e"#).unwrap(),
            r#"set "X=a"b^&c"d&e""#
        );
        assert!(cmd_set("X", "a\nb").is_err());
    }

    #[test]
    fn render_lines() {
        let changes = vec![
            Change {
                name: "A".into(),
                value: Some("x y".into()),
            },
            Change {
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
        let utf8 = [Change {
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

//! Quoting for the shells cudnnm writes to: the one place that decides how a
//! value survives a shell, whether it is an assignment in `cudnnm env`'s
//! output or a path in a command printed for the user to paste.
//!
//! Two uses, two shapes:
//! - Script output that a shell evaluates (`eval "$(cudnnm env)"`,
//!   `cudnnm env | Invoke-Expression`, a batch file to `call`): every value
//!   quoted, and for fish and PowerShell in a form that does not depend on
//!   the locale or console code page ([`quote_posix`], [`quote_fish`],
//!   [`quote_powershell`], [`cmd_set`]).
//! - Commands printed for a person ([`Dialect`], [`quote_arg`],
//!   [`sh_quote`], [`ps_quote`]): a plain word stays bare so the command
//!   reads naturally; anything else is quoted so that pasting it runs
//!   exactly that argument. The `command` module builds whole commands on this.
//!
//! Never `{:?}`: Rust's escapes are not any shell's.

use crate::error::{Error, Kind, Result};

/// The shell a printed command is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// POSIX `sh` and the shells that read its single quotes alike (bash, zsh).
    Posix,
    /// PowerShell (Windows PowerShell 5.1 and `pwsh`). A path it holds in
    /// double quotes (the usual case) reads the same in `cmd`.
    PowerShell,
    /// Windows `cmd.exe`, typed at its prompt.
    Cmd,
}

impl Dialect {
    /// The dialect of commands printed for the user of a machine: POSIX
    /// `sh` on Linux; PowerShell on Windows, its default shell (the double
    /// quotes an ordinary path gets also work in `cmd`).
    pub fn host(windows: bool) -> Dialect {
        if windows {
            Dialect::PowerShell
        } else {
            Dialect::Posix
        }
    }

    /// A word of a command (a release spec, a mode, a `pip:` requirement):
    /// bare when nothing in it is special to this shell, else quoted as
    /// [`Dialect::path`] quotes.
    pub fn word(self, s: &str) -> String {
        let plain = !s.is_empty()
            && match self {
                Dialect::Posix => s.chars().all(is_posix_plain),
                Dialect::PowerShell | Dialect::Cmd => s.chars().all(is_windows_plain),
            };
        if plain { s.to_string() } else { self.path(s) }
    }

    /// A path in a command: POSIX bare when plain ([`sh_quote`]); on Windows
    /// always in double quotes, which `cmd` and PowerShell both read, except
    /// where that shell would still expand something inside them: for
    /// PowerShell a `$`, a backtick or a double quote (straight or curly)
    /// makes it a single-quoted literal ([`ps_quote`]); for `cmd` each `%`
    /// is written outside the quotes as `^%`, so no `%VAR%` expands.
    pub fn path(self, s: &str) -> String {
        match self {
            Dialect::Posix => sh_quote(s),
            Dialect::PowerShell => {
                if s.contains(['$', '`', '"', '\u{201C}', '\u{201D}', '\u{201E}']) {
                    ps_quote(s)
                } else {
                    format!("\"{s}\"")
                }
            }
            Dialect::Cmd => {
                // A `"` cannot be in a Windows file name; doubled, as cmd's own
                // programs read it, should one come from elsewhere.
                let inner = s.replace('"', "\"\"").replace('%', "\"^%\"");
                format!("\"{inner}\"")
            }
        }
    }
}

/// Characters a POSIX shell takes literally in an unquoted word.
fn is_posix_plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "/._-+:=,@%".contains(c)
}

/// Characters both `cmd` and PowerShell take literally in an unquoted word
/// (no `,` `@` `;` `%` `$` `&` `(`, which one of them treats specially).
fn is_windows_plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "/\\._-+:=".contains(c)
}

/// Quotes one argument (a path) of a command printed for the user of a
/// machine, so that it arrives intact when pasted into its shell:
/// [`Dialect::host`]'s [`Dialect::path`].
pub fn quote_arg(p: &str, windows: bool) -> String {
    Dialect::host(windows).path(p)
}

/// Quotes a path for a POSIX shell when it needs it: a plain word (ASCII
/// letters, digits, `/._-+:=,@%`) stays bare; anything else goes in single
/// quotes ([`quote_posix`]), inside which nothing is special.
pub fn sh_quote(p: &str) -> String {
    if !p.is_empty() && p.chars().all(is_posix_plain) {
        return p.to_string();
    }
    String::from_utf8(quote_posix(p.as_bytes())).expect("quoting keeps UTF-8")
}

/// A PowerShell single-quoted literal for a command printed for a person:
/// nothing inside expands; each single-quote character PowerShell knows
/// (`'` and the curly `‘ ’ ‚ ‛`, which it also ends a literal on) is
/// doubled, which PowerShell reads as that one character. Unlike
/// [`quote_powershell`] it keeps non-ASCII text readable.
pub fn ps_quote(p: &str) -> String {
    let mut out = String::with_capacity(p.len() + 2);
    out.push('\'');
    for ch in p.chars() {
        if matches!(ch, '\'' | '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}') {
            out.push(ch);
        }
        out.push(ch);
    }
    out.push('\'');
    out
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
/// `[char]0xXXXX` (UTF-16 units) joined with `+` (an expression: right
/// after `=`, not as a command's argument). Curly quotes, which PowerShell
/// also treats as single quotes, are therefore never inside a literal.
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn printed_arguments() {
        assert_eq!(sh_quote("/usr/local/cuda/lib64"), "/usr/local/cuda/lib64");
        assert_eq!(sh_quote("/a b/it's"), r"'/a b/it'\''s'");
        assert_eq!(sh_quote(""), "''");
        assert_eq!(quote_arg("/opt/cuda-12.4", false), "/opt/cuda-12.4");
        assert_eq!(
            quote_arg("/t/we ird 'q\" é$x", false),
            r#"'/t/we ird '\''q" é$x'"#
        );
        // Windows: double quotes, as cmd and PowerShell both read them…
        assert_eq!(
            quote_arg(r"C:\Program Files\CUDA\v12.4", true),
            r#""C:\Program Files\CUDA\v12.4""#
        );
        assert_eq!(quote_arg(r"C:\50%", true), r#""C:\50%""#);
        // …unless PowerShell would expand something inside them.
        assert_eq!(
            quote_arg(r"C:\Users\$me\cuda", true),
            r"'C:\Users\$me\cuda'"
        );
        assert_eq!(
            quote_arg(r#"C:\we ird "q" $x"#, true),
            r#"'C:\we ird "q" $x'"#
        );
        assert_eq!(quote_arg("C:\\it's $x ‘y’", true), "'C:\\it''s $x ‘‘y’’'");
        assert_eq!(ps_quote(r"C:\it's"), r"'C:\it''s'");
        assert_eq!(ps_quote("Jürgen"), "'Jürgen'");
        assert_eq!(Dialect::Cmd.path(r"C:\a b"), r#""C:\a b""#);
        assert_eq!(Dialect::Cmd.path(r"C:\%PATH%\x"), r#""C:\"^%"PATH"^%"\x""#);
        for d in [Dialect::Posix, Dialect::PowerShell, Dialect::Cmd] {
            assert_eq!(d.word("9.1.0.70_cuda12"), "9.1.0.70_cuda12");
            assert_eq!(
                d.word("pip:nvidia-cudnn-cu12==9.1.0.70"),
                "pip:nvidia-cudnn-cu12==9.1.0.70"
            );
        }
        assert_eq!(Dialect::Posix.word("a,b"), "a,b");
        assert_eq!(Dialect::PowerShell.word("a,b"), "\"a,b\"");
        assert_eq!(Dialect::Posix.word("it's"), r"'it'\''s'");
        assert_eq!(Dialect::host(false), Dialect::Posix);
        assert_eq!(Dialect::host(true), Dialect::PowerShell);
    }
}

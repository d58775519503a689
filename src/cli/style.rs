//! Colour on a terminal: `error:`, `warning:`, `help:` and doctor
//! severities. Text is written with ANSI styles (anstyle) through
//! anstream's streams, which strip them when the stream is not a terminal,
//! when `NO_COLOR` is set (https://no-color.org), or with `--color never`;
//! `--color always` (or `CLICOLOR_FORCE`) keeps them.

use anstyle::{AnsiColor, Style};

/// `--color`: when to colour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless `NO_COLOR` is set.
    #[default]
    Auto,
    /// Always, piped or not.
    Always,
    /// Never.
    Never,
}

impl ColorWhen {
    /// Makes this the choice of every stream anstream opens from now on.
    pub fn apply(self) {
        anstream::ColorChoice::write_global(match self {
            ColorWhen::Auto => anstream::ColorChoice::Auto,
            ColorWhen::Always => anstream::ColorChoice::Always,
            ColorWhen::Never => anstream::ColorChoice::Never,
        });
    }
}

impl ColorWhen {
    /// The `--color` value on a command line, read before clap parses it
    /// (so that clap's own help and usage errors follow it too); `Auto`
    /// when absent or not one of the three.
    pub fn from_args(args: &[std::ffi::OsString]) -> ColorWhen {
        let mut when = ColorWhen::Auto;
        let mut it = args.iter().skip(1).map(|a| a.to_string_lossy());
        while let Some(a) = it.next() {
            if a == "--" {
                break;
            }
            let value = match a.strip_prefix("--color") {
                Some("") => it.next().map(|v| v.into_owned()),
                Some(rest) => rest.strip_prefix('=').map(str::to_string),
                None => None,
            };
            if let Some(v) = value {
                when = <ColorWhen as clap::ValueEnum>::from_str(&v, true).unwrap_or(when);
            }
        }
        when
    }

    /// clap's own choice for its help and errors.
    pub fn clap(self) -> clap::ColorChoice {
        match self {
            ColorWhen::Auto => clap::ColorChoice::Auto,
            ColorWhen::Always => clap::ColorChoice::Always,
            ColorWhen::Never => clap::ColorChoice::Never,
        }
    }
}

const ERROR: Style = Style::new()
    .bold()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));
const WARNING: Style = Style::new()
    .bold()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));
const HELP: Style = Style::new()
    .bold()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Cyan)));
const INFO: Style = Style::new()
    .bold()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Blue)));

/// `label` (`error:`) in `style`.
fn paint(style: Style, label: &str) -> String {
    format!("{style}{label}{style:#}")
}

/// `error:` in red.
pub fn error() -> String {
    paint(ERROR, "error:")
}

/// `warning:` in yellow.
pub fn warning() -> String {
    paint(WARNING, "warning:")
}

/// `help:` in cyan.
pub fn help() -> String {
    paint(HELP, "help:")
}

/// A line of `doctor`'s text with its leading severity (`error[…]`,
/// `warning[…]`, `info[…]`) coloured; other lines as they are.
pub fn doctor_line(line: &str) -> String {
    for (word, style) in [("error", ERROR), ("warning", WARNING), ("info", INFO)] {
        if let Some(rest) = line.strip_prefix(word)
            && rest.starts_with('[')
        {
            return format!("{}{rest}", paint(style, word));
        }
    }
    line.to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_color_flag_is_read_before_parsing() {
        use super::ColorWhen;
        let args = |v: &[&str]| {
            v.iter()
                .map(Into::into)
                .collect::<Vec<std::ffi::OsString>>()
        };
        assert_eq!(
            ColorWhen::from_args(&args(&["cudnnm", "use", "--color", "never"])),
            ColorWhen::Never
        );
        assert_eq!(
            ColorWhen::from_args(&args(&["cudnnm", "--color=always", "ls"])),
            ColorWhen::Always
        );
        assert_eq!(
            ColorWhen::from_args(&args(&["cudnnm", "exec", "--", "x", "--color", "never"])),
            ColorWhen::Auto
        );
        assert_eq!(
            ColorWhen::from_args(&args(&["cudnnm", "--color"])),
            ColorWhen::Auto
        );
    }

    #[test]
    fn doctor_lines_colour_only_a_leading_severity() {
        assert_eq!(
            super::doctor_line("warning[stale-copy]: x"),
            "\u{1b}[1m\u{1b}[33mwarning\u{1b}[0m[stale-copy]: x"
        );
        assert_eq!(super::doctor_line("  error is here"), "  error is here");
        assert_eq!(super::doctor_line("information"), "information");
    }
}

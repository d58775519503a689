//! Terminal progress bars (indicatif), drawn only by the CLI, and where
//! the messages of a pip the CLI runs go.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::catalog::pip::PipOutput;
use crate::progress::Progress;

/// Where pip's messages go: on stderr as pip writes them (stdout stays
/// clean for `--json`), nowhere when `quiet`.
pub fn pip_output(quiet: bool) -> PipOutput {
    if quiet {
        return PipOutput::silent();
    }
    PipOutput {
        stdout: std::process::Stdio::from(std::io::stderr()),
        line: |line| eprintln!("{line}"),
    }
}

/// The widest a bar's line is drawn: the terminal's width, at most 80
/// columns, so a line never wraps.
fn line_width() -> usize {
    console::Term::stderr()
        .size_checked()
        .map_or(80, |(_, cols)| usize::from(cols))
        .clamp(32, 80)
}

/// The bar's template for a line of `width` columns: the label cut to what
/// the bar and the counts leave (`!` truncates).
fn template(width: usize, total_known: bool) -> String {
    if width < 60 {
        // A narrow terminal: the label and the count (` 1023.99 MiB`, 12).
        let count = if total_known {
            "{bytes}/{total_bytes}"
        } else {
            "{bytes}"
        };
        let msg = width
            .saturating_sub(if total_known { 24 } else { 12 })
            .max(8);
        return format!("{{msg:{msg}!}} {count}");
    }
    if total_known {
        // ` [` + bar + `] ` + `1023.99 MiB/1023.99 MiB 100h` (28).
        let bar = if width >= 70 { 14 } else { 6 };
        let msg = width.saturating_sub(1 + bar + 4 + 28).max(8);
        format!("{{msg:{msg}!}} [{{bar:{bar}}}] {{bytes}}/{{total_bytes}} {{eta}}")
    } else {
        // spinner + ` ` + `1023.99 MiB 1023.99 MiB/s` (25).
        let msg = width.saturating_sub(2 + 1 + 25).max(8);
        format!("{{spinner}} {{msg:{msg}!}} {{bytes}} {{binary_bytes_per_sec}}")
    }
}

/// Progress bars on stderr: bytes and ETA when the total is known, a
/// spinner with the rate otherwise; never wider than [`line_width`].
pub struct Bars {
    bar: Mutex<Option<ProgressBar>>,
}

impl Bars {
    pub fn new() -> Bars {
        Bars {
            bar: Mutex::new(None),
        }
    }
}

impl Progress for Bars {
    fn start(&self, what: &str, total: Option<u64>) {
        let bar = match total {
            Some(n) => ProgressBar::new(n).with_style(
                ProgressStyle::with_template(&template(line_width(), true))
                    .expect("valid template")
                    .progress_chars("=> "),
            ),
            None => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template(&template(line_width(), false))
                    .expect("valid template"),
            ),
        };
        bar.set_message(what.to_string());
        let mut g = self.bar.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(old) = g.replace(bar) {
            old.finish_and_clear();
        }
    }

    fn advance(&self, bytes: u64) {
        if let Some(b) = self.bar.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            b.inc(bytes);
        }
    }

    fn finish(&self) {
        if let Some(b) = self.bar.lock().unwrap_or_else(|p| p.into_inner()).take() {
            b.finish_and_clear();
        }
    }
}

/// Progress without a terminal (a pipe, a log file): nothing for a step
/// that ends within a second; for a longer one, a line once it has run a
/// second (what it is doing) and a line when it ends (how much, how long),
/// so a log shows long work without a bar's redraws.
pub struct Lines {
    step: Mutex<Option<Step>>,
    /// How long a step runs before it is said.
    after: Duration,
    /// Where the lines go (stderr).
    say: fn(&str),
}

struct Step {
    what: String,
    started: Instant,
    bytes: u64,
    said: bool,
}

impl Lines {
    pub fn new() -> Lines {
        Lines {
            step: Mutex::new(None),
            after: SAY_AFTER,
            say: |line| eprintln!("{line}"),
        }
    }
}

/// How long a step runs before [`Lines`] says so.
const SAY_AFTER: Duration = Duration::from_secs(1);

impl Progress for Lines {
    fn start(&self, what: &str, _total: Option<u64>) {
        self.finish();
        *self.step.lock().unwrap_or_else(|p| p.into_inner()) = Some(Step {
            what: what.to_string(),
            started: Instant::now(),
            bytes: 0,
            said: false,
        });
    }

    fn advance(&self, bytes: u64) {
        if let Some(s) = self.step.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            s.bytes += bytes;
            if !s.said && s.started.elapsed() >= self.after {
                s.said = true;
                (self.say)(&format!("{}…", s.what));
            }
        }
    }

    fn finish(&self) {
        let step = self.step.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(s) = step
            && (s.said || s.started.elapsed() >= self.after)
        {
            (self.say)(&format!(
                "{}: done, {} in {:.1} s",
                s.what,
                indicatif::HumanBytes(s.bytes),
                s.started.elapsed().as_secs_f64()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());

    #[test]
    fn without_a_terminal_a_long_step_is_said_at_start_and_end_a_short_one_not() {
        let said = || std::mem::take(&mut *SAID.lock().unwrap());
        let say: fn(&str) = |l| SAID.lock().unwrap().push(l.to_string());
        // A step over the threshold (zero here): a line once, and one at the end.
        let long = Lines {
            step: Mutex::new(None),
            after: Duration::ZERO,
            say,
        };
        long.start("exporting cuDNN 9.12.0.46_cuda12", Some(3000));
        long.advance(1000);
        long.advance(2000);
        long.finish();
        let lines = said();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[0], "exporting cuDNN 9.12.0.46_cuda12…");
        assert!(
            lines[1].starts_with("exporting cuDNN 9.12.0.46_cuda12: done, 2.93 KiB in "),
            "{lines:?}"
        );
        // A step that ends within its second says nothing.
        let short = Lines {
            step: Mutex::new(None),
            after: SAY_AFTER,
            say,
        };
        short.start("unpacking", None);
        short.advance(10);
        short.finish();
        assert_eq!(said(), Vec::<String>::new());
    }

    #[test]
    fn a_bar_line_fits_80_columns_and_narrower_terminals() {
        for width in [32, 59, 60, 80] {
            for known in [true, false] {
                // A template indicatif accepts.
                ProgressStyle::with_template(&template(width, known)).unwrap();
                // The widest values each field can take are in the template's budget.
                let t = template(width, known);
                let msg: usize = t
                    .split("{msg:")
                    .nth(1)
                    .and_then(|r| r.split('!').next())
                    .unwrap()
                    .parse()
                    .unwrap();
                let rest = if width < 60 {
                    if known { 24 } else { 12 }
                } else if known {
                    let bar_w: usize = t
                        .split("{bar:")
                        .nth(1)
                        .and_then(|r| r.split('}').next())
                        .unwrap()
                        .parse()
                        .unwrap();
                    1 + 2 + bar_w + 2 + "1023.99 MiB/1023.99 MiB 100h".len()
                } else {
                    2 + 1 + "1023.99 MiB 1023.99 MiB/s".len()
                };
                assert!(msg + rest <= width, "{width} {known}: {t}");
                assert!(msg >= 8, "{t}");
            }
        }
    }
}

//! Terminal progress bars (indicatif), drawn only by the CLI, and where
//! the messages of a pip the CLI runs go.

use std::sync::Mutex;

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

/// Progress bars on stderr: bytes, rate and ETA when the total is known, a spinner otherwise.
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
                ProgressStyle::with_template(
                    "{msg} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} ETA {eta}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            ),
            None => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{spinner} {msg} {bytes} {binary_bytes_per_sec}")
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

//! Child processes started now and collected later: their output is read on
//! threads (so a full pipe never blocks them) and they are killed after a
//! timeout. `doctor` runs `ldconfig -p`, `nvcc --version`, `nvidia-smi` and
//! one library load per child this way, all at the same time (the
//! library-load protocol itself is `libcudnn`'s, which builds on this).

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long an external program or library load may take.
pub const TIMEOUT: Duration = Duration::from_secs(20);

/// A running child process whose standard output and error are being read.
pub struct Running {
    child: Child,
    reader: JoinHandle<String>,
    /// Standard error, for the message when the child fails (cuDNN prints
    /// "Unable to load any of {…}" there before it aborts).
    errors: JoinHandle<String>,
}

impl Running {
    /// Starts `cmd` with no standard input; `None` when it cannot start.
    pub fn spawn(cmd: &mut Command) -> Option<Running> {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .ok()?;
        fn drain(mut r: impl Read + Send + 'static) -> JoinHandle<String> {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = r.read_to_end(&mut buf);
                String::from_utf8_lossy(&buf).into_owned()
            })
        }
        let reader = drain(child.stdout.take()?);
        let errors = drain(child.stderr.take()?);
        Some(Running {
            child,
            reader,
            errors,
        })
    }

    /// Waits for the child (killing it after [`TIMEOUT`]).
    ///
    /// # Errors
    /// When it times out, cannot be waited for, or exits unsuccessfully: the
    /// exit status and the last three lines it printed (standard error
    /// first, else standard output), joined by ` / `.
    pub fn finish(self) -> Result<String, String> {
        self.finish_both().map(|(out, _)| out)
    }

    /// [`Running::finish`], with the standard error of a successful child too.
    ///
    /// # Errors
    /// As [`Running::finish`].
    pub fn finish_both(mut self) -> Result<(String, String), String> {
        let start = Instant::now();
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(st)) => break st,
                Ok(None) if start.elapsed() < TIMEOUT => {
                    std::thread::sleep(Duration::from_millis(2))
                }
                Ok(None) => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Err(format!("timed out after {} s", TIMEOUT.as_secs()));
                }
                Err(e) => return Err(e.to_string()),
            }
        };
        let out = self.reader.join().unwrap_or_default();
        let errors = self.errors.join().unwrap_or_default();
        if status.success() {
            Ok((out, errors))
        } else {
            // The last lines the child printed say why (stderr first).
            let lines = |t: &str| -> Vec<String> {
                t.lines()
                    .filter(|l| !is_loader_trace(l))
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(String::from)
                    .collect()
            };
            let said = match lines(&errors) {
                e if e.is_empty() => lines(&out),
                e => e,
            };
            let tail = said[said.len().saturating_sub(3)..].join(" / ");
            Err(format!("exited with {status}: {tail}"))
        }
    }
}

/// A line of glibc's `LD_DEBUG` trace (`   1234:\tfind library=…`): not
/// the child's own words.
fn is_loader_trace(line: &str) -> bool {
    let t = line.trim_start();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && t[digits..].starts_with(":\t")
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn loader_trace_lines_are_not_the_childs_words() {
        assert!(is_loader_trace(
            "     15593:\tfind library=libz.so.1 [0]; searching"
        ));
        assert!(!is_loader_trace(
            "Unable to load any of {libcudnn_graph.so.9}"
        ));
        assert!(!is_loader_trace("12: not a trace"));
    }

    #[test]
    fn a_failed_child_is_described_by_what_it_printed_last() {
        // As cuDNN does before it aborts: the reason goes to stderr.
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            "echo partial; echo 'Unable to load any of {libcudnn_graph.so.9.1.0}' >&2; kill -ABRT $$",
        ]);
        let err = Running::spawn(&mut cmd).unwrap().finish().unwrap_err();
        assert!(err.contains("SIGABRT"), "{err}");
        assert!(
            err.ends_with(": Unable to load any of {libcudnn_graph.so.9.1.0}"),
            "{err}"
        );
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo only stdout; exit 3"]);
        let err = Running::spawn(&mut cmd).unwrap().finish().unwrap_err();
        assert!(err.ends_with(": only stdout"), "{err}");
    }

    #[test]
    fn a_successful_child_gives_its_whole_output() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo one; echo two; echo ignored >&2"]);
        assert_eq!(
            Running::spawn(&mut cmd).unwrap().finish().unwrap(),
            "one\ntwo\n"
        );
    }
}

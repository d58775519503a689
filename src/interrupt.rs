//! Ctrl-C and SIGTERM during a change to a toolkit (`docs/architecture.md#deploying`)
//! or an import into the store (which then stops and removes its partial
//! folder, [`import_error`]): the first
//! signal only sets a flag; the transaction checks it at each journal step
//! and, when set, undoes what it did and fails with [`Kind::Interrupted`]
//! (exit 130, as a shell reports a process ended by SIGINT), which returns
//! through `main` like any error. A second signal ends the process at once
//! (the main thread may be blocked in a copy or a read, so it cannot be
//! asked to return): the front end, the only code that prints or exits,
//! sets what ends it ([`on_second_signal`]), which says so ([`AGAIN`]);
//! the journal then lets the next command finish the undo, as after
//! `kill -9`. A child process waited for with [`wait_child`] (pip) is killed
//! with its process group on either signal.
//!
//! A signal that comes within [`SAME_SIGNAL`] of the first is the same
//! interruption delivered twice, not a second one: `timeout -s INT` sends
//! its signal to cudnnm and then to its process group, and a terminal's
//! Ctrl-C reaches a process both ways too.

use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Mutex, Once, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use crate::error::{Error, Kind};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// When the first signal came.
static FIRST: OnceLock<Instant> = OnceLock::new();

/// How soon after the first signal another one still counts as the same
/// (a second signal ends the process at once; see the module's text).
pub const SAME_SIGNAL: Duration = Duration::from_millis(500);

/// The process group (its leader's id) of the child [`wait_child`] waits
/// for, which a second signal kills before the process exits. Locked
/// while the child is reaped, so that a group id is never killed after
/// its leader was waited for (when the id may belong to another process).
static CHILD: Mutex<Option<u32>> = Mutex::new(None);

/// What a second signal prints before the process ends during a toolkit
/// change: the journal stays, and the next command undoes the rest.
pub const AGAIN: &str = "error: interrupted again; the change is left for the next cudnnm command to finish undoing\nhelp: run any cudnnm command (e.g. `cudnnm current`) to finish the undo; until then the original files are safe in the change's backup folder\n";

/// What a second signal prints before the process ends during an import:
/// its partial folder stays until the next install sweeps it.
pub const AGAIN_IMPORT: &str = "error: interrupted again; the install stopped at once and nothing was installed\nhelp: its partial folder in the store (`store/.partial-*`) is removed by the next `cudnnm install`, which also resumes a download's bytes; `cudnnm list` and `cudnnm doctor` name the folder until then\n";

/// What the process is doing when a signal arrives, for what a second
/// signal says ([`doing`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    /// A change to a toolkit (`use`, `rollback`, the doctor's redeploy).
    Change = 0,
    /// An import into the store, or the download before it.
    Import = 1,
}

static ACTIVITY: AtomicU8 = AtomicU8::new(Activity::Change as u8);

/// Records what the process is doing (see [`Activity`]) and installs the
/// handler ([`install`]).
pub fn doing(what: Activity) {
    ACTIVITY.store(what as u8, Ordering::SeqCst);
    install();
}

/// The message a second signal prints for what the process is doing
/// (an [`Activity`] as stored).
fn again_message(activity: u8) -> &'static str {
    if activity == Activity::Import as u8 {
        AGAIN_IMPORT
    } else {
        AGAIN
    }
}

/// What ends the process on a second signal, given the message for what is
/// running ([`AGAIN`] or [`AGAIN_IMPORT`]): set by the front end, which
/// prints it and exits with 130. Unset (library tests), a second signal
/// ends nothing: the first one's undo goes on.
static ON_SECOND: OnceLock<fn(&'static str) -> !> = OnceLock::new();

/// Sets what a second signal does (once per process; later calls do
/// nothing): `end` gets the message for what is running, says it and ends
/// the process. pip's process group is killed before `end` is called.
pub fn on_second_signal(end: fn(&'static str) -> !) {
    let _ = ON_SECOND.set(end);
}

static INSTALL: Once = Once::new();

/// Installs the handler (once per process; later calls do nothing). Until
/// then a signal ends the process the usual way, which is safe while nothing
/// has changed yet.
pub fn install() {
    INSTALL.call_once(|| {
        // Best effort: without a handler a signal still ends the process, and
        // the journal covers that.
        // `ctrlc` runs this on its own thread, not in the signal handler,
        // so what a second signal calls may write and exit.
        let _ = ctrlc::set_handler(|| {
            let now = Instant::now();
            if !REQUESTED.swap(true, Ordering::SeqCst) {
                let _ = FIRST.set(now);
                return;
            }
            if !is_again(FIRST.get().copied(), now) {
                return;
            }
            // pip (and what its shim started) goes with this process.
            let child = CHILD.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(leader) = *child {
                crate::platform::kill_process_group(leader);
            }
            if let Some(end) = ON_SECOND.get() {
                end(again_message(ACTIVITY.load(Ordering::SeqCst)));
            }
        });
    });
}

/// Whether a signal at `now` is a second interruption: more than
/// [`SAME_SIGNAL`] after the first (at `first`).
fn is_again(first: Option<Instant>, now: Instant) -> bool {
    first.is_none_or(|t| now.saturating_duration_since(t) > SAME_SIGNAL)
}

/// Waits for `child`, started in a process group of its own
/// ([`crate::platform::own_process_group`]), while watching for a signal.
/// `Ok(None)` when one came: the child's group was killed (on Windows the
/// child alone) and the child collected. Until the child ends, a second
/// signal kills its group before the process exits. Call [`doing`] (or
/// [`install`]) first, or a signal ends the process the usual way.
///
/// # Errors
/// When the child's state cannot be read (`waitpid` failed).
pub fn wait_child(child: &mut Child) -> std::io::Result<Option<ExitStatus>> {
    let leader = child.id();
    let lock = || CHILD.lock().unwrap_or_else(PoisonError::into_inner);
    *lock() = Some(leader);
    loop {
        {
            let mut registered = lock();
            let ended = child.try_wait();
            if !matches!(ended, Ok(None)) {
                *registered = None;
                return ended;
            }
            if requested() {
                crate::platform::kill_process_group(leader);
                *registered = None;
                drop(registered);
                let _ = child.wait();
                return Ok(None);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// True once a signal asked this process to stop.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// The error a transaction returns after undoing itself on a signal.
pub fn error() -> Error {
    Error::new(Kind::Interrupted, "interrupted; the toolkit is as it was")
        .hint("nothing was changed; run the command again to make the change")
}

/// The error an import returns when a signal stopped it (its partial
/// folder is removed as the error unwinds).
pub fn import_error() -> Error {
    Error::new(Kind::Interrupted, "interrupted; nothing was installed")
        .hint("the store is as it was; run the command again to install")
}

/// The test-only pause of a change in flight (store import, deploy): writes
/// this process's id to `file`, then waits until a test removes the file,
/// an interrupt arrives, or 60 s pass, so a test can signal or race a
/// process at a known step. While a file named like `file` plus `.hold`
/// exists, an interrupt does not end the pause: a test sends a second
/// signal to a process that is still at that step.
pub fn test_pause(file: &std::path::Path) {
    let _ = crate::fsops::write_atomic(file, std::process::id().to_string().as_bytes());
    let mut hold = file.as_os_str().to_owned();
    hold.push(".hold");
    let hold = std::path::PathBuf::from(hold);
    let start = Instant::now();
    while file.exists()
        && (!requested() || hold.exists())
        && start.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A second signal during an install speaks of the install's partial
    /// folder, not of a toolkit change's journal and backup.
    #[test]
    fn a_second_signal_says_what_it_left_for_what_was_running() {
        assert!(again_message(Activity::Import as u8).contains("nothing was installed"));
        assert!(again_message(Activity::Import as u8).contains("next `cudnnm install`"));
        assert!(!again_message(Activity::Import as u8).contains("backup"));
        assert_eq!(again_message(Activity::Change as u8), AGAIN);
    }

    /// A signal within half a second of the first is the same one
    /// delivered twice (`timeout`, a terminal); later, it is a second one.
    #[test]
    fn only_a_signal_after_the_window_is_a_second_one() {
        let t = Instant::now();
        assert!(!is_again(Some(t), t));
        assert!(!is_again(Some(t), t + Duration::from_millis(10)));
        assert!(!is_again(Some(t), t + SAME_SIGNAL));
        assert!(is_again(
            Some(t),
            t + SAME_SIGNAL + Duration::from_millis(1)
        ));
        assert!(is_again(Some(t), t + Duration::from_secs(5)));
        assert!(is_again(None, t));
    }
}

//! Ctrl-C and SIGTERM during a change to a toolkit (`docs/architecture.md#deploying`)
//! or an import into the store (which then stops and removes its partial
//! folder, [`import_error`]): the first
//! signal only sets a flag; the transaction checks it at each journal step
//! and, when set, undoes what it did and fails with [`Kind::Interrupted`]
//! (exit 130, as a shell reports a process ended by SIGINT). A second signal
//! ends the process at once, saying so ([`AGAIN`]); the journal then lets
//! the next command finish the undo, as after `kill -9`.

use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, Kind};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// What a second signal prints before the process ends: the journal stays,
/// and the next command undoes the rest.
pub const AGAIN: &str = "error: interrupted again; the change is left for the next cudnnm command to finish undoing\nhelp: run any cudnnm command (e.g. `cudnnm current`) to finish the undo; until then the original files are safe in the change's backup folder\n";
static INSTALL: Once = Once::new();

/// Installs the handler (once per process; later calls do nothing). Until
/// then a signal ends the process the usual way, which is safe while nothing
/// has changed yet.
pub fn install() {
    INSTALL.call_once(|| {
        // Best effort: without a handler a signal still ends the process, and
        // the journal covers that.
        // `ctrlc` runs this on its own thread, not in the signal handler,
        // so it may write and exit.
        let _ = ctrlc::set_handler(|| {
            if REQUESTED.swap(true, Ordering::SeqCst) {
                use std::io::Write;
                let mut err = std::io::stderr();
                let _ = err.write_all(AGAIN.as_bytes());
                let _ = err.flush();
                std::process::exit(i32::from(Kind::Interrupted.exit_code()));
            }
        });
    });
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
/// process at a known step.
pub fn test_pause(file: &std::path::Path) {
    let _ = crate::fsops::write_atomic(file, std::process::id().to_string().as_bytes());
    let start = std::time::Instant::now();
    while file.exists() && !requested() && start.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

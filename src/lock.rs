//! The home lock: one cudnnm writer at a time per home folder.
//!
//! An advisory OS file lock on `$CUDNNM_HOME/lock` (std's `File::lock`: `flock`
//! on Unix, `LockFileEx` on Windows). The OS drops it when the process dies,
//! even by `kill -9`, so a crash never leaves a stale lock; the journal, not
//! the lock, records unfinished work. A waiting process says so once, like Volta.

use std::fs::{File, TryLockError};
use std::io::Write;

use crate::error::{Error, IoResultExt, Result};
use crate::home::Home;

/// The holder's record in the lock file: its PID, padded with spaces to a
/// fixed width so that each holder overwrites the last one's whole record.
fn pid_record(pid: u32) -> String {
    format!("{pid:<20}\n")
}

/// A held exclusive lock; released on drop.
#[derive(Debug)]
pub struct HomeLock {
    _file: File,
}

impl HomeLock {
    /// Takes the exclusive lock on `home`, waiting for other cudnnm processes.
    /// `on_wait` is called once if the lock is busy (to tell the user).
    ///
    /// # Errors
    /// When the home folder or lock file cannot be created or locked.
    pub fn acquire(home: &Home, on_wait: impl FnOnce()) -> Result<HomeLock> {
        home.ensure()?;
        let path = home.lock_file();
        let mut file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_path("open the lock file", &path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                on_wait();
                file.lock().with_path("lock", &path)?;
            }
            Err(TryLockError::Error(e)) => {
                return Err(Error::io("lock", &path, e));
            }
        }
        // Record the holder for people reading the file; the lock itself is
        // the OS's. Written over the previous holder's record at a fixed
        // width, never truncated: a file truncated and written again is
        // flushed on close by ext4 (its replace-by-truncate heuristic), which
        // cost every command 5–11 ms under load.
        let _ = file.write_all(pid_record(std::process::id()).as_bytes());
        Ok(HomeLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn the_holder_is_recorded_over_the_last_one_without_truncating() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path());
        // A longer PID from an earlier holder is fully overwritten.
        std::fs::write(home.lock_file(), pid_record(4_000_000_000)).unwrap();
        let l = HomeLock::acquire(&home, || panic!("free lock must not wait")).unwrap();
        // Read once released: Windows' lock also locks the bytes.
        drop(l);
        let text = std::fs::read_to_string(home.lock_file()).unwrap();
        assert_eq!(text, pid_record(std::process::id()));
        assert_eq!(text.trim().parse::<u32>().unwrap(), std::process::id());
        assert_eq!(text.len(), 21);
    }

    #[test]
    fn second_holder_waits_until_first_drops() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path());
        let first = HomeLock::acquire(&home, || panic!("free lock must not wait")).unwrap();
        let waited = Arc::new(AtomicBool::new(false));
        let w = waited.clone();
        let h2 = home.clone();
        let t = std::thread::spawn(move || {
            let _l = HomeLock::acquire(&h2, || w.store(true, Ordering::SeqCst)).unwrap();
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        drop(first);
        t.join().unwrap();
        assert!(waited.load(Ordering::SeqCst));
    }
}

//! The home lock: one cudnnm writer at a time per home folder; and the
//! toolkit lock: one change at a time per CUDA toolkit, whichever home it
//! comes from (two users, or `--home` pointing elsewhere, deploying into one
//! toolkit must not interleave their moves).
//!
//! An advisory OS file lock on `$CUDNNM_HOME/lock` (std's `File::lock`: `flock`
//! on Unix, `LockFileEx` on Windows). The OS drops it when the process dies,
//! even by `kill -9`, so a crash never leaves a stale lock; the journal, not
//! the lock, records unfinished work. A waiting process says so once, like Volta.

use std::fs::{File, TryLockError};
use std::io::Write;
use std::path::Path;

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

/// A held exclusive lock on a CUDA toolkit; released on drop (and by the OS
/// when the process dies, like the home lock).
#[derive(Debug)]
pub struct ToolkitLock {
    _file: File,
}

impl ToolkitLock {
    /// Takes the exclusive lock on the toolkit at `root`, waiting for a
    /// cudnnm process of any home that is changing it. On Unix the lock is
    /// `flock` on the toolkit folder itself, opened read-only (nothing is
    /// written into the toolkit); on Windows, which cannot lock a folder, a
    /// `.cudnnm-lock` file in the toolkit root (without write access there,
    /// one named after the toolkit in the temp folder, so that the access
    /// check can give its elevation hint). `on_wait` is called once if
    /// the lock is busy.
    ///
    /// # Errors
    /// When the folder (or lock file) cannot be opened or locked.
    pub fn acquire(root: &Path, on_wait: impl FnOnce()) -> Result<ToolkitLock> {
        let (file, path) = open_toolkit_lock(root)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                on_wait();
                file.lock().with_path("lock", &path)?;
            }
            Err(TryLockError::Error(e)) => return Err(Error::io("lock", &path, e)),
        }
        Ok(ToolkitLock { _file: file })
    }
}

/// Whether a cudnnm process holds the toolkit lock of `root` right now (a
/// change is running there). Takes the lock for a moment when it is free;
/// `false` when the lock cannot be opened at all.
pub fn toolkit_busy(root: &Path) -> bool {
    open_toolkit_lock(root)
        .is_ok_and(|(file, _)| matches!(file.try_lock(), Err(TryLockError::WouldBlock)))
}

/// Whether a cudnnm process holds the lock of `home` right now (a command
/// that changes the home is running). `false` when there is no lock file.
pub fn home_busy(home: &Home) -> bool {
    File::options()
        .read(true)
        .write(true)
        .open(home.lock_file())
        .is_ok_and(|f| matches!(f.try_lock(), Err(TryLockError::WouldBlock)))
}

/// What a process waiting for the toolkit lock tells the user.
pub fn toolkit_wait_message(root: &Path) -> String {
    format!(
        "waiting for another cudnnm process to finish changing '{}' (toolkit lock)",
        root.display()
    )
}

/// Opens what the toolkit lock is taken on: the folder itself where the OS
/// allows it, else a lock file inside it (see [`crate::platform::toolkit_lock_file`]).
fn open_toolkit_lock(root: &Path) -> Result<(File, std::path::PathBuf)> {
    let Some(path) = crate::platform::toolkit_lock_file(root) else {
        let f = File::open(root).with_path("open the toolkit folder to lock it", root)?;
        return Ok((f, root.to_path_buf()));
    };
    let open = |path: &Path| {
        File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
    };
    match open(&path) {
        Ok(f) => Ok((f, path)),
        // Without write access to the root (Program Files as a normal user)
        // the access check that follows must speak, with its elevation hint:
        // lock a file named after the toolkit in the temp folder instead.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            let key = root.to_string_lossy().to_lowercase();
            let hash = crate::hash::sha256_bytes(key.as_bytes());
            let path = std::env::temp_dir()
                .join(format!("cudnnm-toolkit-{}.lock", &hash.to_string()[..16]));
            let f = open(&path).with_path("open the toolkit lock file", &path)?;
            Ok((f, path))
        }
        Err(e) => Err(Error::io("open the toolkit lock file", &path, e)),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
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
    fn a_toolkit_is_locked_across_holders() {
        let d = tempfile::tempdir().unwrap();
        let first = ToolkitLock::acquire(d.path(), || panic!("free lock must not wait")).unwrap();
        let waited = Arc::new(AtomicBool::new(false));
        let w = waited.clone();
        let root = d.path().to_path_buf();
        let t = std::thread::spawn(move || {
            let _l = ToolkitLock::acquire(&root, || w.store(true, Ordering::SeqCst)).unwrap();
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        drop(first);
        t.join().unwrap();
        assert!(waited.load(Ordering::SeqCst));
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

//! The home lock: one cudnnm writer at a time per home folder; and the
//! toolkit lock: one change at a time per CUDA toolkit, whichever home it
//! comes from (two users, or `--home` pointing elsewhere, deploying into one
//! toolkit must not interleave their moves).
//!
//! An advisory OS file lock on `$CUDNNM_HOME/lock` (std's `File::lock`: `flock`
//! on Unix, `LockFileEx` on Windows). The OS drops it when the process dies,
//! even by `kill -9`, so a crash never leaves a stale lock; the journal, not
//! the lock, records unfinished work. A waiting process says so once, like Volta.
//!
//! Network file systems may not lock: Lustre mounted without `flock` fails
//! the call (`ENOSYS`), NFS mounted with `nolock` or without a lock daemon
//! fails it too (`ENOLCK`, `EOPNOTSUPP`). The home lock then falls back to
//! an exclusive lock file, `lock.held`, created only if absent (`O_EXCL`,
//! which NFS v3 and later honour), holding the holder's host, PID and start
//! time ([`Holder`]). The OS no longer drops it when its process dies, so a
//! waiter takes over a lock file left by a dead process of this host, and
//! reports one from another host with its age (it cannot tell whether that
//! process lives). `doctor` warns when a home is on such a file system.

use std::fs::{File, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, IoResultExt, Result};
use crate::fsops;
use crate::platform;

/// The exclusive lock file used where the file system cannot lock (see the module docs).
pub const HELD_FILE: &str = "lock.held";

/// How often a waiter looks at an exclusive lock file again.
const POLL: Duration = Duration::from_millis(100);

/// How old an exclusive lock file without a readable record must be to be
/// taken as left by a holder that died while writing it.
const UNREADABLE_STALE: Duration = Duration::from_secs(30);

/// Who holds an exclusive lock file: written into it by the holder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// The host name of the holder's machine.
    pub host: String,
    /// Its process id.
    pub pid: u32,
    /// When it took the lock, seconds since the Unix epoch.
    pub since: u64,
    /// The process's start time as the OS counts it (Linux: clock ticks
    /// after boot, `/proc/PID/stat` field 22), telling a reused PID apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<u64>,
}

impl Holder {
    /// This process.
    pub fn this_process() -> Holder {
        let pid = std::process::id();
        Holder {
            host: platform::host_name(),
            pid,
            since: now_secs(),
            started: platform::process_start(pid),
        }
    }

    /// Whether the holder is a process of this host that is gone (or whose
    /// PID now belongs to another process); `false` when unknown.
    pub fn is_dead_here(&self, host: &str) -> bool {
        if self.host != host {
            return false;
        }
        match platform::process_start(self.pid) {
            Some(now) => self.started.is_some_and(|s| s != now),
            None => platform::process_gone(self.pid),
        }
    }

    /// `host 'h', pid 12, for 3m 5s`.
    pub fn describe(&self) -> String {
        let age = now_secs().saturating_sub(self.since);
        format!(
            "host '{}', pid {}, for {}",
            self.host,
            self.pid,
            humantime::format_duration(Duration::from_secs(age))
        )
    }
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// How [`HomeLock::acquire_with`] locks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LockOptions {
    /// Act as if the file system could not lock (tests: the fallback on a
    /// local disk; `CUDNNM_TEST_LOCK_UNSUPPORTED` in debug builds).
    pub force_fallback: bool,
}

/// The holder's record in the lock file: its PID, padded with spaces to a
/// fixed width so that each holder overwrites the last one's whole record.
fn pid_record(pid: u32) -> String {
    format!("{pid:<20}\n")
}

/// A held exclusive lock; released on drop.
#[derive(Debug)]
pub struct HomeLock {
    _file: File,
    /// The exclusive lock file and its record, when the fallback holds the lock.
    held: Option<(PathBuf, Holder)>,
}

impl Drop for HomeLock {
    fn drop(&mut self) {
        if let Some((path, me)) = &self.held
            && read_holder(path).as_ref() == Some(me)
        {
            let _ = fsops::remove_file(path);
        }
    }
}

/// Whether a lock call failed because the file system cannot lock (not
/// because another process holds the lock).
pub fn is_unsupported(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::Unsupported || platform::is_lock_unsupported(e)
}

fn read_holder(path: &Path) -> Option<Holder> {
    toml::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

impl HomeLock {
    /// Takes the exclusive lock on the lock file `path` (a home's `lock`, in
    /// a folder that exists: `Home::lock`), waiting for other cudnnm processes.
    /// `on_wait` is called once if the lock is busy (to tell the user).
    ///
    /// # Errors
    /// When the lock file cannot be created or locked.
    pub fn acquire(path: &Path, on_wait: impl FnOnce()) -> Result<HomeLock> {
        Self::acquire_with(path, LockOptions::default(), |_| on_wait())
    }

    /// [`HomeLock::acquire`], falling back to the exclusive lock file
    /// [`HELD_FILE`] beside `path` when the file system cannot lock.
    /// `on_wait` gets who holds the lock file, when that is known.
    ///
    /// # Errors
    /// When the lock file cannot be created or locked.
    pub fn acquire_with(
        path: &Path,
        options: LockOptions,
        on_wait: impl FnOnce(Option<String>),
    ) -> Result<HomeLock> {
        let mut file = fsops::open_lock_file(path).with_path("open the lock file", path)?;
        match try_lock(&file, options) {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                on_wait(None);
                file.lock().with_path("lock", path)?;
            }
            Err(TryLockError::Error(e)) if is_unsupported(&e) => {
                let held = hold_lock_file(&path.with_file_name(HELD_FILE), on_wait)?;
                return Ok(HomeLock {
                    _file: file,
                    held: Some(held),
                });
            }
            Err(TryLockError::Error(e)) => {
                return Err(Error::io("lock", path, e));
            }
        }
        // Record the holder for people reading the file; the lock itself is
        // the OS's. Written over the previous holder's record at a fixed
        // width, never truncated: a file truncated and written again is
        // flushed on close by ext4 (its replace-by-truncate heuristic), which
        // cost every command 5–11 ms under load.
        let _ = file.write_all(pid_record(std::process::id()).as_bytes());
        Ok(HomeLock {
            _file: file,
            held: None,
        })
    }
}

/// Takes the exclusive lock file at `path`: created only if absent, with
/// this process's [`Holder`] record. While another holder has it, waits
/// (telling `on_wait` once who holds it); a file left by a dead process of
/// this host is taken over.
fn hold_lock_file(path: &Path, on_wait: impl FnOnce(Option<String>)) -> Result<(PathBuf, Holder)> {
    let me = Holder::this_process();
    let text = toml::to_string(&me).expect("holders encode");
    let mut on_wait = Some(on_wait);
    loop {
        if fsops::create_exclusive(path, text.as_bytes())? {
            return Ok((path.to_path_buf(), me));
        }
        match read_holder(path) {
            Some(h) if h.is_dead_here(&me.host) => {
                take_over(path, Some(&h));
                continue;
            }
            // A holder that died between creating the file and writing it.
            None if std::fs::metadata(path)
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > UNREADABLE_STALE)) =>
            {
                take_over(path, None);
                continue;
            }
            holder => {
                if let Some(f) = on_wait.take() {
                    f(holder.map(|h| h.describe()));
                }
            }
        }
        std::thread::sleep(POLL);
    }
}

/// Removes the stale lock file of `dead` (`None`: an unreadable one):
/// moved aside first, then removed only when the file moved is still the
/// stale one (another waiter may have taken over and locked in between;
/// its file is put back unless a third has locked since).
fn take_over(path: &Path, dead: Option<&Holder>) {
    let aside = fsops::sibling(path, "stale");
    if fsops::rename(path, &aside).is_err() {
        return;
    }
    if read_holder(&aside).as_ref() != dead {
        let _ = fsops::hard_link(&aside, path);
    }
    let _ = fsops::remove_file(&aside);
}

/// The exclusive lock file in a toolkit root where its file system cannot
/// `flock` (see [`HELD_FILE`] for the home's).
pub const TOOLKIT_HELD_FILE: &str = ".cudnnm-lock.held";

/// Set once by the CLI in debug builds when `CUDNNM_TEST_LOCK_UNSUPPORTED`
/// is set: toolkit locks then act as on a file system that cannot lock.
static FORCE_TOOLKIT_FALLBACK: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Makes every later [`ToolkitLock::acquire`] of this process use the lock
/// file fallback (tests of network file systems on a local disk).
pub fn force_toolkit_fallback(on: bool) {
    FORCE_TOOLKIT_FALLBACK.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// A held exclusive lock on a CUDA toolkit; released on drop (and by the OS
/// when the process dies, like the home lock; a fallback lock file left by a
/// dead process of this host is taken over).
#[derive(Debug)]
pub struct ToolkitLock {
    _file: File,
    /// The exclusive lock file and its record, when the fallback holds the lock.
    held: Option<(PathBuf, Holder)>,
}

impl Drop for ToolkitLock {
    fn drop(&mut self) {
        if let Some((path, me)) = &self.held
            && read_holder(path).as_ref() == Some(me)
        {
            let _ = fsops::remove_file(path);
        }
    }
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
    ///
    /// Where the file system cannot lock (Lustre without `flock`, NFS with
    /// `nolock`), the lock is the exclusive file [`TOOLKIT_HELD_FILE`] in the
    /// toolkit root, as for the home.
    pub fn acquire(root: &Path, on_wait: impl FnOnce()) -> Result<ToolkitLock> {
        let options = LockOptions {
            force_fallback: FORCE_TOOLKIT_FALLBACK.load(std::sync::atomic::Ordering::Relaxed),
        };
        Self::acquire_with(root, options, on_wait)
    }

    /// [`ToolkitLock::acquire`] with explicit options.
    ///
    /// # Errors
    /// As [`ToolkitLock::acquire`].
    pub fn acquire_with(
        root: &Path,
        options: LockOptions,
        on_wait: impl FnOnce(),
    ) -> Result<ToolkitLock> {
        let (file, path) = open_toolkit_lock(root)?;
        match try_lock(&file, options) {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                on_wait();
                file.lock().with_path("lock", &path)?;
            }
            Err(TryLockError::Error(e)) if is_unsupported(&e) => {
                let held = hold_lock_file(&root.join(TOOLKIT_HELD_FILE), |_| on_wait())?;
                return Ok(ToolkitLock {
                    _file: file,
                    held: Some(held),
                });
            }
            Err(TryLockError::Error(e)) => return Err(Error::io("lock", &path, e)),
        }
        Ok(ToolkitLock {
            _file: file,
            held: None,
        })
    }
}

/// `file.try_lock()`, or the error of a file system that cannot lock when
/// `options` ask for the fallback.
fn try_lock(file: &File, options: LockOptions) -> std::result::Result<(), TryLockError> {
    if options.force_fallback {
        Err(TryLockError::Error(std::io::Error::from(
            std::io::ErrorKind::Unsupported,
        )))
    } else {
        file.try_lock()
    }
}

/// Whether a cudnnm process holds the toolkit lock of `root` right now (a
/// change is running there). Takes the lock for a moment when it is free;
/// `false` when the lock cannot be opened at all.
pub fn toolkit_busy(root: &Path) -> bool {
    let forced = LockOptions {
        force_fallback: FORCE_TOOLKIT_FALLBACK.load(std::sync::atomic::Ordering::Relaxed),
    };
    match open_toolkit_lock(root).map(|(file, _)| try_lock(&file, forced)) {
        Err(_) | Ok(Ok(())) => false,
        Ok(Err(TryLockError::WouldBlock)) => true,
        // Without locks, a live holder's lock file says a change is running.
        Ok(Err(TryLockError::Error(e))) if is_unsupported(&e) => {
            read_holder(&root.join(TOOLKIT_HELD_FILE))
                .is_some_and(|h| !h.is_dead_here(&platform::host_name()))
        }
        Ok(Err(TryLockError::Error(_))) => false,
    }
}

/// Whether a cudnnm process holds the home lock file `lock_file` right now
/// (a command that changes the home is running). `false` when there is no
/// lock file.
pub fn home_busy(lock_file: &Path) -> bool {
    fsops::open_to_try_lock(lock_file)
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
    let open = fsops::open_lock_file;
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
        let lock_file = d.path().join("lock");
        // A longer PID from an earlier holder is fully overwritten.
        std::fs::write(&lock_file, pid_record(4_000_000_000)).unwrap();
        let l = HomeLock::acquire(&lock_file, || panic!("free lock must not wait")).unwrap();
        // Read once released: Windows' lock also locks the bytes.
        drop(l);
        let text = std::fs::read_to_string(&lock_file).unwrap();
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

    const FALLBACK: LockOptions = LockOptions {
        force_fallback: true,
    };

    #[test]
    fn the_fallback_lock_file_names_its_holder_and_goes_on_drop() {
        let d = tempfile::tempdir().unwrap();
        let lock_file = d.path().join("lock");
        let l = HomeLock::acquire_with(&lock_file, FALLBACK, |_| panic!("free lock must not wait"))
            .unwrap();
        let held = read_holder(&d.path().join(HELD_FILE)).unwrap();
        assert_eq!(held.pid, std::process::id());
        assert_eq!(held.host, platform::host_name());
        assert_eq!(held.started, platform::process_start(std::process::id()));
        drop(l);
        assert!(!d.path().join(HELD_FILE).exists());
    }

    /// Linux only: telling a dead process needs `/proc`.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_lock_file_of_a_dead_process_of_this_host_is_taken_over() {
        let d = tempfile::tempdir().unwrap();
        let lock_file = d.path().join("lock");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let dead = Holder {
            host: platform::host_name(),
            pid,
            since: 0,
            started: Some(1),
        };
        std::fs::write(d.path().join(HELD_FILE), toml::to_string(&dead).unwrap()).unwrap();
        let l = HomeLock::acquire_with(&lock_file, FALLBACK, |_| {
            panic!("a dead holder is not waited for")
        })
        .unwrap();
        assert_eq!(
            read_holder(&d.path().join(HELD_FILE)).unwrap().pid,
            std::process::id()
        );
        drop(l);
    }

    #[test]
    fn a_lock_file_of_another_host_is_waited_for_and_reported_with_its_age() {
        let d = tempfile::tempdir().unwrap();
        let lock_file = d.path().join("lock");
        let other = Holder {
            host: "node-17.cluster".into(),
            pid: 1,
            since: now_secs() - 125,
            started: None,
        };
        let path = d.path().join(HELD_FILE);
        std::fs::write(&path, toml::to_string(&other).unwrap()).unwrap();
        let p = path.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            std::fs::remove_file(p).unwrap();
        });
        let said = std::cell::RefCell::new(None);
        let l = HomeLock::acquire_with(&lock_file, FALLBACK, |h| *said.borrow_mut() = h).unwrap();
        t.join().unwrap();
        let said = said.into_inner().unwrap();
        // 125 s old when written; a slow start (wine) may read it a second later.
        assert!(
            ["5s", "6s", "7s"]
                .iter()
                .any(|s| said.starts_with(&format!("host 'node-17.cluster', pid 1, for 2m {s}"))),
            "{said}"
        );
        drop(l);
    }

    /// Linux's errno numbers.
    #[cfg(target_os = "linux")]
    #[test]
    fn lock_errors_of_network_file_systems_are_told_apart() {
        assert!(is_unsupported(&std::io::Error::from(
            std::io::ErrorKind::Unsupported
        )));
        for code in [38, 37, 95] {
            assert!(is_unsupported(&std::io::Error::from_raw_os_error(code)));
        }
        assert!(!is_unsupported(&std::io::Error::from_raw_os_error(11)));
    }

    #[test]
    fn second_fallback_holder_waits_until_first_drops() {
        let d = tempfile::tempdir().unwrap();
        let lock_file = d.path().join("lock");
        let first = HomeLock::acquire_with(&lock_file, FALLBACK, |_| panic!("free")).unwrap();
        let waited = Arc::new(AtomicBool::new(false));
        let w = waited.clone();
        let h2 = lock_file.clone();
        let t = std::thread::spawn(move || {
            let _l = HomeLock::acquire_with(&h2, FALLBACK, |h| {
                assert!(h.unwrap().contains(&format!("pid {}", std::process::id())));
                w.store(true, Ordering::SeqCst)
            })
            .unwrap();
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(waited.load(Ordering::SeqCst));
        drop(first);
        t.join().unwrap();
    }

    #[test]
    fn second_holder_waits_until_first_drops() {
        let d = tempfile::tempdir().unwrap();
        let lock_file = d.path().join("lock");
        let first = HomeLock::acquire(&lock_file, || panic!("free lock must not wait")).unwrap();
        let waited = Arc::new(AtomicBool::new(false));
        let w = waited.clone();
        let h2 = lock_file.clone();
        let t = std::thread::spawn(move || {
            let _l = HomeLock::acquire(&h2, || w.store(true, Ordering::SeqCst)).unwrap();
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        drop(first);
        t.join().unwrap();
        assert!(waited.load(Ordering::SeqCst));
    }

    #[test]
    fn a_toolkit_on_a_file_system_without_locks_is_locked_by_a_lock_file() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().to_path_buf();
        let first =
            ToolkitLock::acquire_with(&root, FALLBACK, || panic!("free lock must not wait"))
                .unwrap();
        let held = read_holder(&root.join(TOOLKIT_HELD_FILE)).unwrap();
        assert_eq!(held.pid, std::process::id());
        let waited = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let w = waited.clone();
        let r = root.clone();
        let t = std::thread::spawn(move || {
            let _l = ToolkitLock::acquire_with(&r, FALLBACK, || {
                w.store(true, std::sync::atomic::Ordering::SeqCst)
            })
            .unwrap();
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(
            !t.is_finished(),
            "a second holder must wait for the lock file"
        );
        drop(first);
        t.join().unwrap();
        assert!(waited.load(std::sync::atomic::Ordering::SeqCst));
        assert!(!root.join(TOOLKIT_HELD_FILE).exists());
    }
}

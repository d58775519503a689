//! The one module that changes the filesystem. Everything else asks it, so
//! the safety rules live in one place (after mise and uv):
//! - state files are written to a temporary file beside the target, synced,
//!   then renamed over it, and the folder is synced;
//! - renames retry briefly on Windows sharing violations (antivirus scanners
//!   hold freshly written files for a moment);
//! - links are replaced atomically (new link, rename over), and a function
//!   that means to remove a link refuses to remove anything else;
//! - moves across volumes copy, sync, verify the hash, and only then remove.
//!
//! By concern: [`write`] (atomic and append-only writes), [`copy`] (copies
//! and verified moves), [`link`] (links made, replaced and removed only as
//! links), [`remove`] (files and trees cudnnm owns), [`attr`] (permissions,
//! times, the writability probe), [`state`] (TOML state files read and
//! written one way), [`at`] (changes inside a folder held open, never
//! through a link), [`read`] (files others may have placed, read bounded:
//! regular files only, up to a size); renames with retry, folder sync and path
//! helpers live here. Every function is re-exported, so callers write
//! `fsops::write_atomic`.

#![allow(clippy::disallowed_methods)] // the one place files change
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, IoResultExt, Result};
use crate::platform;

pub mod at;
mod attr;
mod copy;
mod link;
mod read;
mod remove;
mod state;
mod write;

pub use attr::{
    give_home_to_its_owner, make_shared, make_tree_shared, make_tree_shared_at, probe_dir_writable,
    protect_system_home, set_mtime, set_readonly,
};
pub use copy::{copy_file, copy_file_checked, copy_file_hashed, move_file};
pub use link::{
    Placed, hard_link, remove_link, replace_dir_link, replace_link, symlink, symlink_or_copy,
};
pub use read::{read_bounded, read_bounded_if_exists, read_bounded_text};
pub use remove::{
    remove_dir_all, remove_dir_if_empty, remove_file, remove_own_tree, sweep_stale_temps,
};
pub use state::{
    MAX_CONFIG_BYTES, MAX_STATE_BYTES, load_toml, load_toml_bounded, load_toml_or_default,
    save_toml,
};
pub use write::{
    AppendLog, create_exclusive, create_new_file, open_append, open_lock_file, open_to_try_lock,
    truncate, write_atomic, write_atomic_all, write_new, write_new_synced,
};

/// Renames `from` to `to`, replacing a file at `to`. Retries for up to about
/// two seconds on Windows when another process briefly holds a file.
///
/// # Errors
/// The last OS error, naming both paths.
pub fn rename(from: &Path, to: &Path) -> Result<()> {
    retry_busy(|| fs::rename(from, to)).map_err(|e| {
        Error::io("rename", from, e).context(format!(
            "could not move '{}' to '{}'",
            from.display(),
            to.display()
        ))
    })
}

/// Runs `op`, retrying on errors that mean "busy for a moment" on Windows
/// (sharing violation, access denied from a scanner). Elsewhere runs once.
pub fn retry_busy<T>(op: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    retry_if(platform::is_transient_busy, op)
}

/// Runs `op`, retrying while its error satisfies `busy`, for about two
/// seconds in all (backoff from 10 ms to 250 ms); then returns the last error.
pub fn retry_if<T>(
    busy: impl Fn(&io::Error) -> bool,
    mut op: impl FnMut() -> io::Result<T>,
) -> io::Result<T> {
    let mut delay = Duration::from_millis(10);
    let mut waited = Duration::ZERO;
    loop {
        match op() {
            Ok(v) => return Ok(v),
            Err(e) if busy(&e) && waited < Duration::from_secs(2) => {
                std::thread::sleep(delay);
                waited += delay;
                delay = (delay * 2).min(Duration::from_millis(250));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Flushes a folder's entries to disk (Unix); a no-op where unsupported.
pub fn sync_dir(dir: &Path) {
    crate::platform::sync_dir(dir);
}

/// Creates `dir` and its parents.
pub fn create_dir_all(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).with_path("create", dir)
}

/// Creates `dir` and its parents; a failure says `could not <what> '<dir>'`
/// (`create the cudnnm home`).
///
/// # Errors
/// When the folder cannot be created (read-only or full disk).
pub fn create_dir_all_as(dir: &Path, what: &str) -> Result<()> {
    fs::create_dir_all(dir).with_path(what, dir)
}

/// `fs::canonicalize` without Windows' verbatim prefix (`\\?\C:\…` →
/// `C:\…`, `\\?\UNC\server\share` → `\\server\share`), so real paths read
/// like the ones users type; `None` when the path cannot be resolved.
pub fn canonical(p: &Path) -> Option<PathBuf> {
    fs::canonicalize(p).ok().map(strip_verbatim)
}

fn strip_verbatim(c: PathBuf) -> PathBuf {
    let t = c.to_string_lossy();
    match (t.strip_prefix(r"\\?\UNC\"), t.strip_prefix(r"\\?\")) {
        (Some(rest), _) => PathBuf::from(format!(r"\\{rest}")),
        (None, Some(rest)) => PathBuf::from(rest),
        _ => c,
    }
}

/// [`canonical`], or `p` itself when it cannot be resolved (gone, no access).
pub fn canonical_or_self(p: &Path) -> PathBuf {
    canonical(p).unwrap_or_else(|| p.to_path_buf())
}

/// `p` made absolute against `cwd` with `.` and `..` resolved by name, as a
/// shell's `cd` does (links are not followed): `../cuda-12.4` from
/// `/home/me/proj` is `/home/me/cuda-12.4`, the path the user means and
/// the one `LD_LIBRARY_PATH` entries spell.
pub fn lexical_absolute(cwd: &Path, p: &Path) -> PathBuf {
    use std::path::Component;
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if matches!(out.components().next_back(), Some(Component::Normal(_))) {
                    out.pop();
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// The folder holding `path` (`.` for a bare name).
pub fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A unique sibling name for `path` with `tag`, e.g. `store/.trash-1234-8.1.0.77`.
pub fn sibling(path: &Path, tag: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    parent_of(path).join(format!(".{tag}-{}-{name}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(unix)]
    use crate::error::Kind;
    use crate::hash;

    #[test]
    fn canonical_paths_read_like_typed_ones() {
        let v = |s: &str| strip_verbatim(PathBuf::from(s));
        assert_eq!(v(r"\\?\C:\CUDA\v12.4"), PathBuf::from(r"C:\CUDA\v12.4"));
        assert_eq!(
            v(r"\\?\UNC\srv\share\cuda"),
            PathBuf::from(r"\\srv\share\cuda")
        );
        assert_eq!(
            v("/usr/local/cuda-12.4"),
            PathBuf::from("/usr/local/cuda-12.4")
        );
        let d = tempfile::tempdir().unwrap();
        assert_eq!(canonical(&d.path().join("missing")), None);
    }

    #[test]
    fn lexical_absolute_resolves_dots_by_name() {
        let cwd = Path::new("/work/tester/noproj");
        assert_eq!(
            lexical_absolute(cwd, Path::new("../cuda-12.6x")),
            PathBuf::from("/work/tester/cuda-12.6x")
        );
        assert_eq!(
            lexical_absolute(cwd, Path::new("./a/./b/../c")),
            PathBuf::from("/work/tester/noproj/a/c")
        );
        assert_eq!(
            lexical_absolute(cwd, Path::new("/usr/local/cuda/../cuda-12.4/")),
            PathBuf::from("/usr/local/cuda-12.4")
        );
        assert_eq!(
            lexical_absolute(cwd, Path::new("/../..")),
            PathBuf::from("/")
        );
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("state.toml");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    /// A new state file is readable by others under the usual umask (a pin,
    /// a lock file, the system `config.toml`); a replaced one keeps its mode.
    #[cfg(unix)]
    #[test]
    fn atomic_write_gives_new_files_the_umask_mode_and_keeps_a_replaced_ones() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(".cudnn-version");
        write_atomic(&p, b"9.12\n").unwrap();
        let umask = {
            // The process umask, read without changing it for long.
            let old = unsafe_umask(0o022);
            unsafe_umask(old);
            old
        };
        let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask, "new file mode {mode:o}");
        fs::set_permissions(&p, fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&p, b"9.27\n").unwrap();
        let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "kept mode {mode:o}");
        assert_eq!(fs::read(&p).unwrap(), b"9.27\n");
    }

    /// `umask(2)`, through the shell-free libc call the test needs.
    #[cfg(unix)]
    fn unsafe_umask(mask: u32) -> u32 {
        unsafe extern "C" {
            fn umask(mask: u32) -> u32;
        }
        // SAFETY: umask only swaps the process's file-creation mask.
        unsafe { umask(mask) }
    }

    /// A `.tmp-*` a kill left beside a state file goes once it is old; a
    /// fresh one (a write in progress) and other files stay.
    #[test]
    fn stale_temporary_files_are_swept_fresh_ones_kept() {
        let d = tempfile::tempdir().unwrap();
        let old = d.path().join(".tmp-Ab12Cd");
        let fresh = d.path().join(".tmp-Xy34Zw");
        let state = d.path().join("deployments.toml");
        for p in [&old, &fresh, &state] {
            fs::write(p, b"x").unwrap();
        }
        let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
        let ns = hour_ago
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as i64;
        set_mtime(&old, ns).unwrap();
        set_mtime(&state, ns).unwrap();
        assert_eq!(
            sweep_stale_temps(d.path(), std::time::Duration::from_secs(3600)),
            1
        );
        assert!(!old.exists());
        assert!(fresh.exists() && state.exists());
    }

    #[test]
    fn copy_hashes_what_it_writes() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        fs::write(&a, b"abc").unwrap();
        let (n, h) = copy_file_hashed(&a, &d.path().join("b")).unwrap();
        assert_eq!(n, 3);
        assert_eq!(
            h.as_str(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(
            copy_file_hashed(&a, &d.path().join("b")).is_err(),
            "never overwrites"
        );
    }

    #[cfg(unix)]
    #[test]
    fn links_are_replaced_but_real_files_are_not() {
        let d = tempfile::tempdir().unwrap();
        let (t1, t2, link) = (
            d.path().join("t1"),
            d.path().join("t2"),
            d.path().join("cur"),
        );
        fs::create_dir(&t1).unwrap();
        fs::create_dir(&t2).unwrap();
        replace_link(&t1, &link, true).unwrap();
        replace_link(&t2, &link, true).unwrap();
        assert_eq!(fs::read_link(&link).unwrap(), t2);
        let real = d.path().join("real");
        fs::create_dir(&real).unwrap();
        assert_eq!(
            replace_link(&t1, &real, true).unwrap_err().kind(),
            Kind::Conflict
        );
        assert_eq!(remove_link(&real).unwrap_err().kind(), Kind::Conflict);
        assert!(real.is_dir());
        remove_link(&link).unwrap();
        assert!(t2.is_dir(), "removing a link keeps its target");
    }

    #[test]
    fn mtime_is_set_on_read_only_files() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        fs::write(&p, b"x").unwrap();
        set_readonly(&p, true).unwrap();
        set_mtime(&p, 1_600_000_000_123_456_789).unwrap();
        let m = fs::metadata(&p).unwrap();
        let ns = m
            .modified()
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        // NTFS keeps times in 100 ns ticks.
        let want = if crate::platform::HOST_WINDOWS {
            1_600_000_000_123_456_700
        } else {
            1_600_000_000_123_456_789
        };
        assert_eq!(ns, want);
        assert!(m.permissions().readonly());
    }

    #[test]
    fn batch_atomic_write_writes_every_file() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a.toml"), d.path().join("sub/b.toml"));
        write_atomic(&a, b"old").unwrap();
        write_atomic_all(&[(&a, b"new a"), (&b, b"new b")]).unwrap();
        assert_eq!(fs::read(&a).unwrap(), b"new a");
        assert_eq!(fs::read(&b).unwrap(), b"new b");
        assert_eq!(
            fs::read_dir(d.path()).unwrap().count(),
            2,
            "no temp files left"
        );
    }

    #[test]
    fn checked_copy_hashes_the_source_and_keeps_permissions() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        fs::write(&a, vec![7u8; 3 << 20]).unwrap();
        set_readonly(&a, true).unwrap();
        let b = d.path().join(".tmp-b");
        fs::write(&b, b"stale").unwrap();
        let (n, h) = copy_file_checked(&a, &b).unwrap();
        assert_eq!(n, 3 << 20);
        assert_eq!(h, hash::sha256_file(&b).unwrap().1);
        assert!(fs::metadata(&b).unwrap().permissions().readonly());
        assert!(copy_file_checked(&d.path().join("missing"), &b).is_err());
        assert!(!b.exists(), "a failed copy leaves no file");
    }

    #[test]
    fn plain_copy_keeps_bytes_and_permissions() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        fs::write(&a, b"bytes").unwrap();
        set_readonly(&a, true).unwrap();
        let b = d.path().join("b");
        assert_eq!(copy_file(&a, &b).unwrap(), 5);
        assert_eq!(fs::read(&b).unwrap(), b"bytes");
        assert!(fs::metadata(&b).unwrap().permissions().readonly());
        assert_eq!(copy_file(&a, &b).unwrap(), 5, "replaces its own temp file");
    }

    #[test]
    fn probe_leaves_nothing_and_log_appends_lines() {
        let d = tempfile::tempdir().unwrap();
        probe_dir_writable(d.path()).unwrap();
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0);
        assert!(probe_dir_writable(&d.path().join("missing")).is_err());
        let p = d.path().join("log");
        let mut log = AppendLog::open(&p).unwrap();
        log.append("one").unwrap();
        log.append("two").unwrap();
        log.sync().unwrap();
        let mut again = AppendLog::open(&p).unwrap();
        again.append("three").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "one\ntwo\nthree\n");
        let sub = d.path().join("sub");
        fs::create_dir(&sub).unwrap();
        fs::write(sub.join("x"), b"x").unwrap();
        assert!(!remove_dir_if_empty(&sub));
        fs::remove_file(sub.join("x")).unwrap();
        assert!(remove_dir_if_empty(&sub));
    }

    #[cfg(unix)]
    #[test]
    fn links_are_written_as_given() {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("libx.so.9"), b"x").unwrap();
        symlink(Path::new("libx.so.9"), &d.path().join("libx.so")).unwrap();
        assert_eq!(
            fs::read_link(d.path().join("libx.so")).unwrap(),
            Path::new("libx.so.9")
        );
        hard_link(&d.path().join("libx.so.9"), &d.path().join("h")).unwrap();
        assert!(platform::same_file(
            &d.path().join("libx.so.9"),
            &d.path().join("h")
        ));
        assert!(!platform::same_file(
            &d.path().join("libx.so.9"),
            &d.path().join("libx.so")
        ));
        assert!(hard_link(&d.path().join("libx.so.9"), &d.path().join("h")).is_err());
    }

    #[test]
    fn remove_dir_all_clears_read_only_files() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path().join("rel");
        fs::create_dir_all(r.join("lib")).unwrap();
        fs::write(r.join("lib/x"), b"x").unwrap();
        set_readonly(&r.join("lib/x"), true).unwrap();
        remove_dir_all(&r).unwrap();
        assert!(!r.exists());
    }

    #[cfg(unix)]
    #[test]
    fn remove_dir_all_leaves_hard_linked_store_files_read_only() {
        // A backup of a hardlink deployment holds links to store files.
        let d = tempfile::tempdir().unwrap();
        let store_file = d.path().join("store-lib");
        fs::write(&store_file, b"x").unwrap();
        set_readonly(&store_file, true).unwrap();
        let b = d.path().join("backup");
        fs::create_dir_all(b.join("files/lib64")).unwrap();
        fs::hard_link(&store_file, b.join("files/lib64/libcudnn.so.9")).unwrap();
        remove_dir_all(&b).unwrap();
        assert!(!b.exists());
        assert!(
            fs::metadata(&store_file).unwrap().permissions().readonly(),
            "the store's file stays read-only"
        );
    }
}

//! A release written out as a plain folder (`cudnnm export dir`): the
//! record that marks the folder as cudnnm's ([`Marker`], `.cudnnm-export.toml`
//! in the folder, every file it wrote by size and SHA-256 or link target),
//! the check that lets a later export replace that folder and nothing else
//! ([`check_earlier`]), and the env file ([`env_file`]) that puts the folder
//! in front of the path lists as `cudnnm exec` does
//! (`docs/architecture.md#activation`), keeping what they held.
//!
//! It also writes the folder ([`write_release`]) and puts it in DEST's
//! place ([`Build`], [`put_in_place`]), and sweeps what killed runs left
//! beside DEST ([`sweep`]). DEST's folder may be one other users can write
//! (a sticky `/tmp`), and the command may run as root: every change there
//! is made through folder handles that never follow a link
//! ([`crate::fsops::at`]), and only folders this user made and marked are
//! removed.
//!
//! Putting a build in DEST's place swaps the two folders in one step where
//! the system can (`renameat2(RENAME_EXCHANGE)` on Linux); elsewhere it is
//! two renames (DEST aside as `.cudnnm-export-old-<pid>-<DEST>`, the build
//! in), and a run killed between them leaves DEST missing until the next
//! export into it, which moves the old folder back first.

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::fsops::at;
use crate::record::Entry;
use crate::store::{FileRecord, Release};

/// The name prefix of the folder an export is built in beside DEST.
pub const BUILD_PREFIX: &str = ".cudnnm-export-";

/// The file that marks a build folder as cudnnm's while it is written,
/// kept locked by the process writing it.
pub const BUILDING_FILE: &str = ".cudnnm-building";

/// The tag of the name an earlier export gets while its replacement moves
/// in (`.cudnnm-export-old-<pid>-<DEST's name>`).
pub const OLD_TAG: &str = "cudnnm-export-old";

/// The marker record's file name inside an exported folder.
pub const MARKER_FILE: &str = ".cudnnm-export.toml";

/// The env file of a Linux (or macOS) build: POSIX shell, `. cudnn.env`.
pub const ENV_FILE: &str = "cudnn.env";

/// The env file of a Windows build: a `cmd` batch file, `call cudnn.env.cmd`.
pub const ENV_FILE_CMD: &str = "cudnn.env.cmd";

/// What `export dir` wrote into a folder: the release and every file and
/// link, so that a later export may replace exactly these and nothing else.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Marker {
    /// Who wrote the folder (`cudnnm export dir`), for people reading it.
    pub written_by: String,
    /// The release exported (`9.27.0.42_cuda12`).
    pub release: String,
    /// Every file and link written, paths relative to the folder, `/`-separated.
    pub files: Vec<FileRecord>,
}

impl Marker {
    /// A marker for `release` holding `files`.
    pub fn new(release: impl Into<String>, files: Vec<FileRecord>) -> Marker {
        Marker {
            written_by: "cudnnm export dir".into(),
            release: release.into(),
            files,
        }
    }
}

/// A folder an earlier `export dir` wrote, checked to hold only its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Earlier {
    /// The release it holds.
    pub release: String,
}

/// Checks that the non-empty folder `dest` holds only what an earlier
/// `export dir` wrote there, unchanged: every file and link recorded in its
/// [`MARKER_FILE`] with the same size and SHA-256 (or link target), and no
/// other file, link or folder (a recorded file may be missing). Reads only.
///
/// # Errors
/// [`Kind::Conflict`] naming the folder when it has no marker, or naming
/// the first path that was not written by cudnnm or changed since.
pub fn check_earlier(dest: &Path) -> Result<Earlier> {
    let marker_path = dest.join(MARKER_FILE);
    let marker: Marker = match fsops::load_toml(&marker_path, |p, m| {
        Error::new(
            Kind::Conflict,
            format!("'{}' is not a marker cudnnm can read", p.display()),
        )
        .cause(m)
        .hint("give a new folder; cudnnm replaces only a folder it exported itself")
    })? {
        Some(m) => m,
        None => {
            return Err(Error::new(
                Kind::Conflict,
                format!(
                    "'{}' exists, is not empty, and was not written by cudnnm export dir",
                    dest.display()
                ),
            )
            .hint("give a new folder (cudnnm export dir replaces only a folder it wrote itself, marked by .cudnnm-export.toml)"));
        }
    };
    let recorded = |rel: &str| marker.files.iter().find(|f| f.path == rel);
    let is_recorded_dir = |rel: &str| {
        marker
            .files
            .iter()
            .any(|f| f.path.starts_with(rel) && f.path[rel.len()..].starts_with('/'))
    };
    for item in walkdir::WalkDir::new(dest).min_depth(1).sort_by_file_name() {
        let item = item.map_err(|e| {
            Error::new(
                Kind::Failure,
                format!("could not read '{}'", dest.display()),
            )
            .cause(e)
            .hint("check the folder's permissions")
        })?;
        let rel = relative(dest, item.path());
        if rel == MARKER_FILE {
            continue;
        }
        let kind = item.file_type();
        let ok = if kind.is_dir() {
            is_recorded_dir(&rel)
        } else {
            match recorded(&rel) {
                Some(f) => same(&f.entry, item.path(), kind.is_symlink()),
                None => false,
            }
        };
        if !ok {
            return Err(not_ours(dest, item.path()));
        }
    }
    Ok(Earlier {
        release: marker.release,
    })
}

/// Whether `path` (a link when `is_link`) still is what `entry` records.
fn same(entry: &Entry, path: &Path, is_link: bool) -> bool {
    match (entry, is_link) {
        (Entry::Link { target, .. }, true) => std::fs::read_link(path)
            .is_ok_and(|t| t.to_string_lossy().replace('\\', "/") == *target),
        (Entry::File(c), false) => crate::hash::sha256_file(path)
            .is_ok_and(|(size, sha)| size == c.size && sha == c.sha256),
        _ => false,
    }
}

fn relative(dest: &Path, p: &Path) -> String {
    p.strip_prefix(dest)
        .unwrap_or(p)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

fn not_ours(dest: &Path, p: &Path) -> Error {
    Error::new(
        Kind::Conflict,
        format!(
            "'{}' was not written by cudnnm export dir, or changed since",
            p.display()
        ),
    )
    .hint(format!(
        "move it out of '{}' (cudnnm replaces an earlier export only when it holds nothing else), or export into a new folder",
        dest.display()
    ))
}

/// A folder an export is being built in beside DEST
/// (`.cudnnm-export-<unique>`), marked by [`BUILDING_FILE`], which stays
/// locked while this lives, so that another run's [`sweep`] leaves it.
#[derive(Debug)]
pub struct Build {
    /// The folder, held open.
    pub dir: at::Dir,
    name: OsString,
    _busy: Option<std::fs::File>,
}

impl Build {
    /// Makes a new build folder in `parent` (mode 0700 until it is
    /// finished).
    ///
    /// # Errors
    /// When `parent` takes no new folder ([`Kind::Permission`] when it is
    /// not writable).
    pub fn begin(parent: &at::Dir) -> Result<Build> {
        let stamp = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let mut attempt = 0u32;
        loop {
            let name = OsString::from(format!(
                "{BUILD_PREFIX}{:x}-{:x}",
                std::process::id(),
                stamp.wrapping_add(u128::from(attempt))
            ));
            match parent.create_dir(&name, 0o700) {
                Ok(dir) => {
                    let busy = dir
                        .create_file(OsStr::new(BUILDING_FILE), 0o600)
                        .map_err(|e| Error::io("create", &dir.path().join(BUILDING_FILE), e))?;
                    // A file system that cannot lock: the folder's age protects it.
                    let busy = busy.try_lock().is_ok().then_some(busy);
                    return Ok(Build {
                        dir,
                        name,
                        _busy: busy,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                    attempt += 1;
                }
                Err(e) => return Err(Error::io("create a folder in", parent.path(), e)),
            }
        }
    }

    /// The build folder's name in its parent.
    pub fn name(&self) -> &OsStr {
        &self.name
    }
}

/// Writes the release's files, its receipt, the env file and the marker
/// into the folder `to` (new or empty), each through the handle of the
/// folder it goes in; returns the env file's name. Modes: folders 0755,
/// files as the store holds them (executable or not), before
/// [`crate::fsops::make_tree_shared_at`] makes them read-only.
///
/// # Errors
/// When a file cannot be read from the store or written.
pub fn write_release(
    to: &at::Dir,
    release: &Release,
    env: &[EnvVar],
    windows: bool,
) -> Result<&'static str> {
    let mut written: Vec<FileRecord> = Vec::new();
    let place = |rel: &str| -> Result<(at::Dir, OsString)> {
        let (folder, name) = match rel.rsplit_once('/') {
            Some((f, n)) => (at::dirs_in(to, f, 0o755)?, n),
            None => (at::open_dir(to.path())?, rel),
        };
        Ok((folder, OsString::from(name)))
    };
    let mode_of = |src: &Path| -> u32 {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(src)
                .map(|m| (m.permissions().mode() & 0o777) | 0o200)
                .unwrap_or(0o644)
        }
        #[cfg(not(unix))]
        {
            let _ = src;
            0o644
        }
    };
    for f in &release.receipt.files {
        let (folder, name) = place(&f.path)?;
        match f.entry.link_target() {
            Some(target) => {
                at::symlink_in(&folder, &name, Path::new(target))?;
                written.push(FileRecord::link(&f.path, target));
            }
            None => {
                let src = release.dir.join(&f.path);
                let (size, sha) = at::copy_hashed_in(&src, &folder, &name, mode_of(&src))?;
                written.push(FileRecord::file(&f.path, size, sha));
            }
        }
    }
    let receipt = release.dir.join(crate::store::RECEIPT_FILE);
    let (size, sha) =
        at::copy_hashed_in(&receipt, to, OsStr::new(crate::store::RECEIPT_FILE), 0o644)?;
    written.push(FileRecord::file(crate::store::RECEIPT_FILE, size, sha));
    let title = format!(
        "cuDNN {} for CUDA {} ({}), exported by cudnnm; the variables that make it visible",
        release.version(),
        release.cuda(),
        release.platform()
    );
    let (env_name, text) = env_file(&title, env, windows)?;
    at::write_new_in(to, OsStr::new(env_name), text.as_bytes(), 0o644)?;
    written.push(FileRecord::file(
        env_name,
        text.len() as u64,
        crate::hash::sha256_bytes(text.as_bytes()),
    ));
    let marker = toml::to_string_pretty(&Marker::new(release.id(), written))
        .expect("a marker always serializes");
    at::write_new_in(to, OsStr::new(MARKER_FILE), marker.as_bytes(), 0o644)?;
    Ok(env_name)
}

/// Puts the finished `build` (made by [`Build::begin`] in `parent`) in the
/// place of `dest`, a name in `parent`: swapped with an earlier export in
/// one step where the system can, else the earlier one renamed aside and
/// the build renamed in; an empty folder or nothing at `dest` is simply
/// replaced. The earlier export is then removed; when that fails, the new
/// export stands and the folder left comes back with the error, for a
/// warning (the next run's [`sweep`] removes it).
///
/// # Errors
/// When the build cannot be put in place (the earlier export is back in
/// place then, and the build removed).
pub fn put_in_place(
    parent: &at::Dir,
    build: Build,
    dest: &OsStr,
    earlier: bool,
) -> Result<Option<(std::path::PathBuf, Error)>> {
    let Build { dir, name, _busy } = build;
    at::remove_in(&dir, OsStr::new(BUILDING_FILE))?;
    drop(dir);
    let old = old_name(dest);
    let fail = |e: Error| {
        let _ = at::remove_tree_in(parent, &name);
        Err(e)
    };
    if !earlier {
        // An empty DEST goes first: Windows renames no folder over another.
        let _ = parent.remove_dir(dest);
        if let Err(e) = at::rename_in(parent, &name, dest) {
            return fail(e);
        }
        return Ok(None);
    }
    match at::exchange_in(parent, &name, dest) {
        // The build's name holds the earlier export now: given the name
        // a sweep knows, then removed.
        Ok(true) => {
            if at::rename_in(parent, &name, &old).is_err() {
                return Ok(at::remove_tree_in(parent, &name)
                    .err()
                    .map(|e| (parent.path().join(&name), e)));
            }
        }
        Ok(false) => {
            if let Err(e) = at::rename_in(parent, dest, &old) {
                return fail(e);
            }
            if let Err(e) = at::rename_in(parent, &name, dest) {
                let _ = at::rename_in(parent, &old, dest);
                return fail(e);
            }
        }
        Err(e) => return fail(e),
    }
    Ok(at::remove_tree_in(parent, &old)
        .err()
        .map(|e| (parent.path().join(&old), e)))
}

/// `.cudnnm-export-old-<pid>-<dest>`.
fn old_name(dest: &OsStr) -> OsString {
    let mut n = OsString::from(format!(".{OLD_TAG}-{}-", std::process::id()));
    n.push(dest);
    n
}

/// What killed and failed runs left beside `dest` in `parent`, put right:
/// when `dest` is missing and an earlier export of it was moved aside (a
/// kill between the two renames), that one is moved back; then the
/// earlier exports of `dest` moved aside, and every build folder nobody is
/// writing (its [`BUILDING_FILE`] not locked, unchanged since `started`),
/// are removed. Only folders this user owns that carry cudnnm's names and
/// marks are touched, each through folder handles that never follow a
/// link. Returns the folders that could not be removed, with why.
pub fn sweep(
    parent: &at::Dir,
    dest: &OsStr,
    started: SystemTime,
) -> Vec<(std::path::PathBuf, Error)> {
    let mut left = Vec::new();
    let Ok(entries) = parent.entries() else {
        return left;
    };
    let dest_str = dest.to_string_lossy();
    let old_head = format!(".{OLD_TAG}-");
    let ours = |name: &OsStr| {
        parent
            .open_dir(name)
            .ok()
            .filter(|d| d.owned_by_me().unwrap_or(false))
    };
    let is_old = |name: &str| {
        name.strip_prefix(old_head.as_str())
            .and_then(|rest| rest.strip_suffix(dest_str.as_ref()))
            .and_then(|pid| pid.strip_suffix('-'))
            .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
    };
    let mut olds: Vec<OsString> = entries
        .iter()
        .filter(|(n, k)| *k == at::EntryKind::Dir && is_old(&n.to_string_lossy()))
        .filter(|(n, _)| ours(n).is_some())
        .map(|(n, _)| n.clone())
        .collect();
    if parent.kind(dest).ok().flatten().is_none()
        && let Some(back) = olds.pop()
        && let Err(e) = at::rename_in(parent, &back, dest)
    {
        left.push((parent.path().join(&back), e));
    }
    for n in olds {
        if let Err(e) = at::remove_tree_in(parent, &n) {
            left.push((parent.path().join(&n), e));
        }
    }
    for (n, k) in &entries {
        let s = n.to_string_lossy();
        if *k != at::EntryKind::Dir || !s.starts_with(BUILD_PREFIX) || s.starts_with(&old_head[..])
        {
            continue;
        }
        let Some(d) = ours(n) else { continue };
        let marked = d.kind(OsStr::new(BUILDING_FILE)).ok().flatten() == Some(at::EntryKind::File)
            || d.kind(OsStr::new(MARKER_FILE)).ok().flatten() == Some(at::EntryKind::File);
        let held = d
            .open_file(OsStr::new(BUILDING_FILE))
            .is_ok_and(|f| matches!(f.try_lock(), Err(std::fs::TryLockError::WouldBlock)));
        let stale = d.modified().is_ok_and(|t| t < started);
        drop(d);
        if marked
            && !held
            && stale
            && let Err(e) = at::remove_tree_in(parent, n)
        {
            left.push((parent.path().join(n), e));
        }
    }
    left
}

/// One variable the env file sets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EnvVar {
    /// Its name.
    pub name: String,
    /// The exported folder's part of it.
    pub value: String,
    /// Whether it is a path list the value goes in front of, keeping what
    /// the variable held (`LD_LIBRARY_PATH`), rather than a value that
    /// replaces it (`CUDNN_PATH`).
    pub prepend: bool,
}

/// The variables that make a release exported at `prefix` visible, as
/// `cudnnm exec` sets them: `CUDNN_PATH`, `CUDNN_INCLUDE_DIR`,
/// `CUDNN_LIBRARY_DIR`, and the release's folders in front of the loader
/// and compiler path lists (`PATH`/`INCLUDE`/`LIB` for a Windows build,
/// `LD_LIBRARY_PATH`/`CPATH`/`LIBRARY_PATH` otherwise). `prefix` is
/// written with the build's separator.
pub fn variables(prefix: &str, windows: bool) -> Vec<EnvVar> {
    let sep = if windows { '\\' } else { '/' };
    let prefix = prefix.trim_end_matches(sep);
    let under = |d: &str| format!("{prefix}{sep}{d}");
    let set = |name: &str, value: String| EnvVar {
        name: name.into(),
        value,
        prepend: false,
    };
    let pre = |name: &str, value: String| EnvVar {
        name: name.into(),
        value,
        prepend: true,
    };
    let mut vars = vec![
        set(crate::env::CUDNN_PATH, prefix.to_string()),
        set(crate::env::CUDNN_INCLUDE_DIR, under("include")),
        set(crate::env::CUDNN_LIBRARY_DIR, under("lib")),
    ];
    if windows {
        vars.push(pre(crate::env::PATH, under("bin")));
        vars.push(pre(crate::env::INCLUDE, under("include")));
        vars.push(pre(crate::env::LIB, under("lib")));
    } else {
        vars.push(pre(crate::env::LD_LIBRARY_PATH, under("lib")));
        vars.push(pre(crate::env::CPATH, under("include")));
        vars.push(pre(crate::env::LIBRARY_PATH, under("lib")));
    }
    vars
}

/// The env file's name and text for `vars` (from [`variables`]), headed by
/// `title`: for a Linux build POSIX shell lines to `.` (source), a path list
/// written `NAME='value'"${NAME:+:$NAME}"` so that what it held stays behind
/// the new entry; for a Windows build `cmd` lines, `set "NAME=value;%NAME%"`.
///
/// # Errors
/// A value holding a line break, which `cmd` cannot set.
pub fn env_file(title: &str, vars: &[EnvVar], windows: bool) -> Result<(&'static str, String)> {
    let mut text = String::new();
    if windows {
        text.push_str(&format!("@rem {title}\n"));
        for v in vars {
            let line = crate::quote::cmd_set(&v.name, &v.value)?;
            if v.prepend {
                // `set "NAME=value;%NAME%"`: the old value expands when the line runs.
                let open = line.trim_end_matches('"');
                text.push_str(&format!("{open};%{}%\"\n", v.name));
            } else {
                text.push_str(&line);
                text.push('\n');
            }
        }
        return Ok((ENV_FILE_CMD, text));
    }
    text.push_str(&format!("# {title}\n# source it: . ./cudnn.env\n"));
    for v in vars {
        let value = String::from_utf8(crate::quote::quote_posix(v.value.as_bytes()))
            .expect("quoting keeps UTF-8");
        if v.prepend {
            text.push_str(&format!(
                "{n}={value}\"${{{n}:+:${n}}}\"; export {n}\n",
                n = v.name
            ));
        } else {
            text.push_str(&format!("{n}={value}; export {n}\n", n = v.name));
        }
    }
    Ok((ENV_FILE, text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::sha256_bytes;

    #[test]
    fn env_files_prepend_path_lists_and_set_scalars() {
        let vars = variables("/opt/cu dnn/", false);
        let (name, text) = env_file("cuDNN 9", &vars, false).unwrap();
        assert_eq!(name, "cudnn.env");
        assert!(
            text.lines().any(|l| l
                == "LD_LIBRARY_PATH='/opt/cu dnn/lib'\"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"; export LD_LIBRARY_PATH"),
            "{text}"
        );
        assert!(
            text.lines()
                .any(|l| l == "CUDNN_PATH='/opt/cu dnn'; export CUDNN_PATH")
        );
        let win = variables(r"C:\cudnn", true);
        let (name, text) = env_file("cuDNN 9", &win, true).unwrap();
        assert_eq!(name, "cudnn.env.cmd");
        assert!(
            text.lines()
                .any(|l| l == r#"set "PATH=C:\cudnn\bin;%PATH%""#),
            "{text}"
        );
        assert!(text.lines().any(|l| l == r#"set "CUDNN_PATH=C:\cudnn""#));
    }

    #[test]
    fn only_an_unchanged_earlier_export_may_be_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out");
        let w = |rel: &str, bytes: &[u8]| {
            let p = dest.join(rel);
            crate::fsops::create_dir_all(crate::fsops::parent_of(&p)).unwrap();
            crate::fsops::write_atomic(&p, bytes).unwrap();
        };
        w("lib/libcudnn.so.9", b"lib");
        w("cudnn.env", b"env");
        let files = vec![
            FileRecord::file("lib/libcudnn.so.9", 3, sha256_bytes(b"lib")),
            FileRecord::file("cudnn.env", 3, sha256_bytes(b"env")),
        ];
        // No marker: not ours.
        let e = check_earlier(&dest).unwrap_err();
        assert_eq!(e.kind(), Kind::Conflict);
        assert!(e.message().contains("was not written by cudnnm"), "{e:?}");
        fsops::save_toml(
            &dest.join(MARKER_FILE),
            &Marker::new("9.27.0.42_cuda12", files),
            "marker",
        )
        .unwrap();
        assert_eq!(check_earlier(&dest).unwrap().release, "9.27.0.42_cuda12");
        // A file of the user's, a folder of the user's, a changed byte: refused.
        w("lib/mine.so", b"user");
        assert!(
            check_earlier(&dest)
                .unwrap_err()
                .message()
                .contains("mine.so")
        );
        crate::fsops::remove_file(&dest.join("lib/mine.so")).unwrap();
        crate::fsops::create_dir_all(&dest.join("notes")).unwrap();
        assert!(
            check_earlier(&dest)
                .unwrap_err()
                .message()
                .contains("notes")
        );
        crate::fsops::remove_dir_all(&dest.join("notes")).unwrap();
        w("cudnn.env", b"eNv");
        assert!(
            check_earlier(&dest)
                .unwrap_err()
                .message()
                .contains("cudnn.env")
        );
    }
}

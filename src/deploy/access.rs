//! The preflight (`docs/breakages.md#toolkit-not-writable`): before a change moves anything, check
//! that this process may change every folder it will touch — the toolkit's
//! cuDNN folders (or the nearest existing parent of one it must create), the
//! backup and journal folders — and, on Unix, that a sticky folder will let
//! it move files it does not own. Refuse whole, never half.
//!
//! The check goes through the [`Access`] trait so tests can inject denials;
//! the real one creates and removes a probe file (the only test that agrees
//! with ACLs, read-only mounts and Windows' Program Files rules alike).

use std::io;
use std::path::{Path, PathBuf};

use super::plan::Plan;
use crate::command::CommandLine;
use crate::env::Env;
use crate::error::{Error, Kind, Result};
use crate::home::Home;
use crate::quote::quote_posix;

/// Answers whether this process may create and remove entries in a folder.
pub trait Access {
    /// `Ok(uid)` when `dir` is writable (the uid new files get: the
    /// effective user on Unix, 0 elsewhere); the OS error otherwise.
    fn dir_writable(&self, dir: &Path) -> io::Result<u32>;

    /// Why the file at `path` cannot be moved aside now, if it cannot: on
    /// Windows [`Blocked::InUse`] for a sharing violation (another program
    /// holds it open; retried for about two seconds first, as scanners let
    /// go within moments), [`Blocked::Denied`] when its ACL forbids the
    /// move. `across_volumes`: the move must copy and delete, which a DLL a
    /// program has loaded also forbids. Never on Unix, which renames and
    /// deletes open files (its folder rights are probed instead).
    fn file_blocked(&self, path: &Path, across_volumes: bool) -> Option<Blocked> {
        use crate::platform::{is_in_use, open_for_move};
        match crate::fsops::retry_if(is_in_use, || open_for_move(path, across_volumes)) {
            Err(e) if is_in_use(&e) => Some(Blocked::InUse(e)),
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Some(Blocked::Denied(e)),
            _ => None,
        }
    }
}

/// Why a file cannot be moved aside (see [`Access::file_blocked`]).
#[derive(Debug)]
pub enum Blocked {
    /// Another program holds it open (Windows: a sharing violation).
    InUse(io::Error),
    /// This user may not move it (Windows: its ACL denies delete).
    Denied(io::Error),
}

/// The real check: a probe file created and removed.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProbeAccess;

impl Access for ProbeAccess {
    fn dir_writable(&self, dir: &Path) -> io::Result<u32> {
        crate::fsops::probe_dir_writable(dir)
    }
}

/// A check that denies every folder under one of `denied`, and asks `inner`
/// about the rest (tests; `CUDNNM_TEST_DENY_WRITE` in debug builds, so a
/// release build has no use for it).
#[cfg_attr(not(debug_assertions), allow(dead_code))]
pub struct DenyAccess<A> {
    /// Folders (and everything below them) reported as not writable.
    pub denied: Vec<PathBuf>,
    /// The check for everything else.
    pub inner: A,
}

impl<A: Access> Access for DenyAccess<A> {
    fn dir_writable(&self, dir: &Path) -> io::Result<u32> {
        if self.denied.iter().any(|d| dir.starts_with(d)) {
            return Err(io::Error::from(io::ErrorKind::PermissionDenied));
        }
        self.inner.dir_writable(dir)
    }

    fn file_blocked(&self, path: &Path, across_volumes: bool) -> Option<Blocked> {
        self.inner.file_blocked(path, across_volumes)
    }
}

/// The checker for this process: the probe, plus in debug builds the
/// folders listed in `CUDNNM_TEST_DENY_WRITE` denied.
pub fn checker(env: &Env) -> Box<dyn Access> {
    #[cfg(debug_assertions)]
    {
        let denied = env.path_list(crate::env::CUDNNM_TEST_DENY_WRITE);
        if !denied.is_empty() {
            return Box::new(DenyAccess {
                denied,
                inner: ProbeAccess,
            });
        }
    }
    let _ = env;
    Box::new(ProbeAccess)
}

/// The folder to probe for `dir`: itself, or its nearest existing parent
/// when it is to be created.
fn existing(dir: &Path) -> PathBuf {
    let mut d = dir.to_path_buf();
    while std::fs::symlink_metadata(&d).is_err() {
        if !d.pop() {
            break;
        }
    }
    d
}

/// Checks write access for everything `plan` touches. `elevate` is the hint
/// for a refusal: how to run the command with rights, or per-process
/// activation instead.
///
/// # Errors
/// [`Kind::Permission`] naming the first folder (and how many more) that is
/// not writable; nothing has changed.
pub fn preflight(plan: &Plan, home: &Home, access: &dyn Access, elevate: &str) -> Result<()> {
    let mut dirs: Vec<PathBuf> = plan.toolkit_dirs();
    dirs.extend(plan.mkdirs.iter().cloned());
    dirs.push(home.backups_dir());
    dirs.push(home.journal_dir());
    let mut seen = std::collections::BTreeSet::new();
    let mut denied: Vec<(PathBuf, String)> = Vec::new();
    let mut uids = std::collections::BTreeMap::new();
    for d in dirs {
        let probe = existing(&d);
        if !seen.insert(probe.clone()) {
            continue;
        }
        match access.dir_writable(&probe) {
            Ok(uid) => {
                uids.insert(probe, uid);
            }
            Err(e) => denied.push((probe, e.to_string())),
        }
    }
    for m in &plan.moves {
        let dir = crate::fsops::parent_of(&m.from);
        let Some(uid) = uids.get(dir) else { continue };
        if crate::platform::sticky_forbids(dir, &m.from, *uid) {
            denied.push((
                m.from.clone(),
                "the folder is sticky and the file belongs to another user".into(),
            ));
        }
    }
    if denied.is_empty() {
        let busy = blocked_moves(plan, home, access, &mut denied);
        if denied.is_empty() {
            refuse_in_use(plan, busy)?;
        }
    }
    // A folder of the cudnnm home is named first: elevating would not fix
    // it, but leave more files there that the user cannot change.
    let in_home = |p: &Path| p.starts_with(home.root());
    denied.sort_by_key(|(p, _)| !in_home(p));
    let Some((first, why)) = denied.first() else {
        return Ok(());
    };
    let mut e = Error::new(
        Kind::Permission,
        format!(
            "cannot change cuDNN in '{}': no write access to {}{}",
            plan.toolkit.display(),
            describe_dir(first),
            and_more(denied.len())
        ),
    )
    .cause(why);
    for (p, why) in denied.iter().skip(1).take(4) {
        e = e.cause(format!("{}: {why}", describe_dir(p)));
    }
    let hint = if in_home(first) {
        home_hint(home, first)
    } else {
        elevate.to_string()
    };
    Err(e.cause("nothing was changed").hint(hint))
}

/// Asks about every file the change must move aside: those another
/// program holds are returned, those this user may not move are added to
/// `denied`.
fn blocked_moves<'p>(
    plan: &'p Plan,
    home: &Home,
    access: &dyn Access,
    denied: &mut Vec<(PathBuf, String)>,
) -> Vec<(&'p Path, io::Error)> {
    // A move into a backup on another volume copies, then deletes.
    let backups = existing(&home.backups_dir());
    let mut busy = Vec::new();
    for m in &plan.moves {
        let across = !crate::platform::same_volume(&m.from, &backups);
        match access.file_blocked(&m.from, across) {
            Some(Blocked::InUse(e)) => busy.push((m.from.as_path(), e)),
            Some(Blocked::Denied(e)) => denied.push((m.from.clone(), e.to_string())),
            None => {}
        }
    }
    busy
}

/// Refuses when a file the change must move aside is held open by another
/// program (Windows: a sharing violation that outlasts the retries). A DLL
/// that a program merely loaded can be renamed and passes when the backup
/// is on the toolkit's volume; a file opened without delete sharing cannot
/// be moved at all, nor a loaded DLL across volumes (copy, then delete).
/// Moving the others first would leave the toolkit half changed until the undo.
///
/// # Errors
/// [`Kind::Conflict`] naming the first such file (and how many more);
/// nothing has changed.
fn refuse_in_use(plan: &Plan, busy: Vec<(&Path, io::Error)>) -> Result<()> {
    let Some((first, why)) = busy.first() else {
        return Ok(());
    };
    let mut e = Error::new(
        Kind::Conflict,
        format!(
            "cannot change cuDNN in '{}': '{}' is in use by another program{}",
            plan.toolkit.display(),
            first.display(),
            and_more(busy.len())
        ),
    )
    .cause(why.to_string());
    for (p, _) in busy.iter().skip(1).take(4) {
        e = e.cause(format!("also in use: '{}'", p.display()));
    }
    Err(e.cause("nothing was changed").hint(
        "close the programs using it (Python, Jupyter kernels, training runs, Visual Studio, Nsight), then run the command again; `cudnnm exec` activates a release for one process without touching the toolkit",
    ))
}

/// `" (and N more)"` after the first of `count` (nothing for one).
fn and_more(count: usize) -> String {
    match count {
        0 | 1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    }
}

/// `'/tk/lib64'`, or for a folder reached through a link `'/tk/lib64' (a
/// link to '/tk/targets/x86_64-linux/lib')`: the folder whose permissions
/// matter is the one it points to.
pub fn describe_dir(p: &Path) -> String {
    let is_link = std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    match std::fs::canonicalize(p) {
        Ok(real) if is_link => {
            format!("'{}' (a link to '{}')", p.display(), real.display())
        }
        _ => format!("'{}'", p.display()),
    }
}

/// The hint when a folder of the cudnnm home itself is not writable: fix
/// the home's ownership or permissions. Running cudnnm elevated would leave
/// files in the home that the user cannot change afterwards.
fn home_hint(home: &Home, dir: &Path) -> String {
    if crate::platform::HOST_WINDOWS {
        format!(
            "give your account write access to the cudnnm home '{}' (Properties > Security), or point --home / CUDNNM_HOME at a folder of yours; running cudnnm as Administrator would leave files there that you cannot change",
            home.root().display()
        )
    } else {
        format!(
            "make the cudnnm home yours again: `sudo chown -R \"$(id -u):$(id -g)\" {}` (an earlier `sudo cudnnm` may have left '{}' owned by root), or point --home / CUDNNM_HOME at a folder of yours; running cudnnm with sudo would leave more root-owned files there",
            String::from_utf8_lossy(&quote_posix(home.root().as_os_str().as_encoded_bytes())),
            dir.display()
        )
    }
}

/// The hint for a refusal by [`preflight`]: how to run `command`
/// (`cudnnm use 9.1.0.70_cuda12`, without `--home` and `--cuda-root`) with
/// the rights the toolkit at `root` needs — keeping this cudnnm home, which
/// `sudo` would otherwise change — or to activate `release` per process
/// instead, which needs no rights over the toolkit.
pub fn elevate_hint(
    env: &Env,
    home: &Home,
    command: CommandLine,
    root: &Path,
    release: Option<&str>,
) -> String {
    let windows = env.is_windows();
    let per_process = match release {
        Some(r) => format!(
            "; or, without admin rights, activate it per process: `{}` (or `cudnnm env`)",
            CommandLine::exec(r, "COMMAND").for_host(windows)
        ),
        None => String::new(),
    };
    let command = command.cuda_root(root);
    if windows {
        format!(
            "run it from an Administrator terminal: `{}`{per_process}",
            home.reach(env, command, true).for_host(windows)
        )
    } else {
        format!(
            "run it as root, keeping this home: `{}`{per_process}",
            // `sudo` drops CUDNNM_HOME and CUDNNM_SYSTEM_HOME: both spelled out.
            home.reach(env, command, true).sudo().for_host(windows)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deploy::PlacedFrom;
    use crate::deploy::backup::BackupRecord;
    use crate::deploy::plan::{Move, PLAN_SCHEMA, Place, PlaceKind};
    use crate::record::Entry;
    use crate::toolkit::Layout;
    use std::cell::RefCell;

    /// Records every folder asked about; denies those under `deny`.
    struct Recorder {
        deny: Vec<PathBuf>,
        asked: RefCell<Vec<PathBuf>>,
    }

    impl Access for Recorder {
        fn dir_writable(&self, dir: &Path) -> io::Result<u32> {
            self.asked.borrow_mut().push(dir.to_path_buf());
            if self.deny.iter().any(|d| dir.starts_with(d)) {
                Err(io::Error::from(io::ErrorKind::PermissionDenied))
            } else {
                Ok(1000)
            }
        }
    }

    fn plan(root: &Path, home: &Home) -> Plan {
        let state = Entry::file(1, crate::hash::sha256_bytes(b"x"));
        Plan {
            schema: PLAN_SCHEMA,
            id: 1,
            action: crate::deploy::plan::Action::Use("9.1.0.70_cuda12".parse().unwrap()),
            toolkit: root.to_path_buf(),
            layout: Layout::Windows,
            backup_dir: home.backups_dir().join("1"),
            mkdirs: vec![root.join("lib/x64")],
            moves: vec![Move {
                from: root.join("bin/cudnn64_7.dll"),
                to: home.backups_dir().join("1/files/bin/cudnn64_7.dll"),
                rel: "bin/cudnn64_7.dll".into(),
                state: state.clone(),
                store_copy: None,
                mtime_ns: None,
            }],
            places: vec![
                Place {
                    dest: root.join("bin/cudnn64_9.dll"),
                    rel: "bin/cudnn64_9.dll".into(),
                    kind: PlaceKind::Copy,
                    source: PathBuf::from("/store/x"),
                    state: state.clone(),
                    from: PlacedFrom::Release("bin/cudnn64_9.dll".into()),
                    mtime_ns: None,
                    check_hash: false,
                },
                Place {
                    dest: root.join("include/cudnn.h"),
                    rel: "include/cudnn.h".into(),
                    kind: PlaceKind::Copy,
                    source: PathBuf::from("/store/y"),
                    state,
                    from: PlacedFrom::Release("include/cudnn.h".into()),
                    mtime_ns: None,
                    check_hash: false,
                },
            ],
            backup: BackupRecord {
                id: 1,
                toolkit: root.to_path_buf(),
                layout: Layout::Windows,
                cuda: "12.4".into(),
                created_at: String::new(),
                reason: String::new(),
                held: String::new(),
                deployment: None,
                reinstall: None,
                files: vec![],
            },
            next: None,
            previous: None,
            from_label: String::new(),
            to_label: String::new(),
        }
    }

    #[test]
    fn the_root_command_names_a_system_home_sudo_would_lose() {
        let env = Env::from_vars([("X", "y")], "/w", false);
        let tk = Path::new("/tk");
        let site = Home::new("/u").with_system(PathBuf::from("/site/cudnnm"));
        let h = elevate_hint(&env, &site, CommandLine::use_("9.27"), tk, Some("9.27"));
        assert!(
            h.contains(
                "`sudo cudnnm --home /u --system-home /site/cudnnm use 9.27 --cuda-root /tk`"
            ),
            "{h}"
        );
        // The per-process command runs in the user's own environment.
        assert!(h.contains("`cudnnm exec --version 9.27 -- COMMAND`"), "{h}");
        let platform = Home::new("/u").with_system(PathBuf::from("/opt/cudnnm"));
        let h = elevate_hint(&env, &platform, CommandLine::use_("9.27"), tk, None);
        assert!(
            h.contains("`sudo cudnnm --home /u use 9.27 --cuda-root /tk`"),
            "{h}"
        );
    }

    #[test]
    fn preflight_probes_every_folder_and_refuses_whole() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("Program Files/CUDA/v12.4");
        crate::fsops::create_dir_all(&root.join("bin")).unwrap();
        crate::fsops::create_dir_all(&root.join("include")).unwrap();
        let home = Home::new(d.path().join("home"));
        let p = plan(&root, &home);
        let ok = Recorder {
            deny: vec![],
            asked: RefCell::new(vec![]),
        };
        preflight(&p, &home, &ok, "run elevated").unwrap();
        let asked = ok.asked.borrow().clone();
        assert!(asked.contains(&root.join("bin")));
        assert!(asked.contains(&root.join("include")));
        assert!(
            asked.contains(&root),
            "a folder to create is probed at its existing parent"
        );
        assert!(
            asked.contains(&d.path().to_path_buf()),
            "the home's missing folders probe the nearest parent"
        );

        let deny = Recorder {
            deny: vec![root.clone()],
            asked: RefCell::new(vec![]),
        };
        let e = preflight(&p, &home, &deny, "run elevated: sudo cudnnm …").unwrap_err();
        assert_eq!(e.kind(), Kind::Permission);
        assert!(e.message().contains("no write access"), "{e}");
        assert!(e.message().contains("(and 2 more)"), "{e}");
        assert_eq!(e.hint_text(), Some("run elevated: sudo cudnnm …"));
        assert!(e.causes().iter().any(|c| c == "nothing was changed"));

        let only_bin = DenyAccess {
            denied: vec![root.join("bin")],
            inner: ProbeAccess,
        };
        let e = preflight(&p, &home, &only_bin, "x").unwrap_err();
        assert!(e.message().contains("bin"), "{e}");
        assert!(!e.message().contains("more"), "{e}");
    }

    /// Holds every file as a running program would (Windows' sharing
    /// violation, os error 32), as data on any OS.
    struct Held;

    impl Access for Held {
        fn dir_writable(&self, _dir: &Path) -> io::Result<u32> {
            Ok(0)
        }
        fn file_blocked(&self, _path: &Path, _across: bool) -> Option<Blocked> {
            Some(Blocked::InUse(io::Error::other(
                "The process cannot access the file because it is being used by another process. (os error 32)",
            )))
        }
    }

    #[test]
    fn a_file_held_open_refuses_the_change_and_names_it() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("Program Files/CUDA/v12.4");
        let home = Home::new(d.path().join("home"));
        let p = plan(&root, &home);
        let e = preflight(&p, &home, &Held, "elevate").unwrap_err();
        assert_eq!(e.kind(), Kind::Conflict);
        assert_eq!(
            e.message(),
            format!(
                "cannot change cuDNN in '{}': '{}' is in use by another program",
                root.display(),
                root.join("bin/cudnn64_7.dll").display()
            )
        );
        assert!(e.causes().iter().any(|c| c.contains("os error 32")), "{e}");
        assert!(e.causes().iter().any(|c| c == "nothing was changed"));
        assert!(
            e.hint_text()
                .unwrap()
                .starts_with("close the programs using it"),
            "{e}"
        );
        // A denied folder is named first: no use asking to close programs.
        let both = DenyAccess {
            denied: vec![d.path().to_path_buf()],
            inner: Held,
        };
        assert_eq!(
            preflight(&p, &home, &both, "elevate").unwrap_err().kind(),
            Kind::Permission
        );
    }

    /// A file whose ACL forbids moving it (Windows), as data on any OS.
    struct Locked;

    impl Access for Locked {
        fn dir_writable(&self, _dir: &Path) -> io::Result<u32> {
            Ok(0)
        }
        fn file_blocked(&self, _path: &Path, _across: bool) -> Option<Blocked> {
            Some(Blocked::Denied(io::Error::from(
                io::ErrorKind::PermissionDenied,
            )))
        }
    }

    #[test]
    fn a_file_that_may_not_be_moved_is_a_permission_refusal_with_the_elevate_hint() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("Program Files/CUDA/v12.4");
        let home = Home::new(d.path().join("home"));
        let p = plan(&root, &home);
        let e = preflight(&p, &home, &Locked, "run it from an Administrator terminal").unwrap_err();
        assert_eq!(e.kind(), Kind::Permission);
        assert!(
            e.message()
                .contains(&format!("{}", root.join("bin/cudnn64_7.dll").display())),
            "{e}"
        );
        assert_eq!(e.hint_text(), Some("run it from an Administrator terminal"));
        assert!(e.causes().iter().any(|c| c == "nothing was changed"));
    }
}

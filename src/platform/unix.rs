//! Unix implementations (Linux first; macOS builds but cuDNN no longer ships for it).

#![allow(clippy::disallowed_methods)] // the one place files change
use std::fs::Metadata;
use std::io;
use std::path::Path;

/// True for errors that mean "the file is busy for a moment". Unix has none.
pub fn is_transient_busy(_e: &io::Error) -> bool {
    false
}

/// Opens `path` as a move would: Unix renames a file whatever other
/// processes hold it open, so there is nothing to ask. Always `Ok`.
pub fn open_for_move(_path: &Path, _across_volumes: bool) -> io::Result<()> {
    Ok(())
}

/// True when `e` says another program holds the file open. Never on Unix.
pub fn is_in_use(_e: &io::Error) -> bool {
    false
}

/// True when a rename failed because source and target are on different filesystems (EXDEV).
pub fn is_cross_device(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::CrossesDevices
}

/// Creates a symbolic link to a file.
pub fn symlink_file(target: &Path, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// True when `meta` (from `symlink_metadata`) describes a link.
pub fn is_link(meta: &Metadata, _path: &Path) -> bool {
    meta.file_type().is_symlink()
}

/// Removes a link (never its target).
pub fn remove_link(path: &Path, _meta: &Metadata) -> io::Result<()> {
    std::fs::remove_file(path)
}

/// True when `a` and `b` (existing paths) are on the same filesystem, so a
/// rename or hard link between them works.
pub fn same_volume(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev(),
        _ => false,
    }
}

/// True when `a` and `b` are the same file on disk (same device and inode),
/// as hard links are. Links are not followed: a symbolic link is never the
/// same file as its target.
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::symlink_metadata(a), std::fs::symlink_metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// The identity and hard-link count of the file at `path` that `meta` (from
/// `symlink_metadata`) describes: its device, inode and `st_nlink`, from
/// `meta` alone.
pub fn file_identity(_path: &Path, meta: &Metadata) -> Option<super::FileIdentity> {
    use std::os::unix::fs::MetadataExt;
    Some(super::FileIdentity {
        volume: meta.dev(),
        index: meta.ino(),
        links: meta.nlink(),
    })
}

/// The identity of the open file `file` ([`file_identity`] of the file it
/// is, whatever its name is now): its device, inode and `st_nlink`.
pub fn handle_identity(file: &std::fs::File) -> Option<super::FileIdentity> {
    use std::os::unix::fs::MetadataExt;
    let meta = file.metadata().ok()?;
    Some(super::FileIdentity {
        volume: meta.dev(),
        index: meta.ino(),
        links: meta.nlink(),
    })
}

/// Opens an unnamed temporary file in `dir` (Linux `O_TMPFILE`): it needs
/// the same write permission as creating a file there, but has no name, so
/// nothing is left behind even if the process is killed. `Ok(None)` where
/// unsupported (other systems, or a file system without `O_TMPFILE`).
pub fn open_unnamed_temp(dir: &Path) -> io::Result<Option<std::fs::File>> {
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // __O_TMPFILE | O_DIRECTORY on these architectures.
        const O_TMPFILE: i32 = 0o20_200_000;
        match std::fs::File::options()
            .write(true)
            .mode(0o600)
            .custom_flags(O_TMPFILE)
            .open(dir)
        {
            Ok(f) => Ok(Some(f)),
            // EOPNOTSUPP (file system) or EISDIR (kernel before 3.11).
            Err(e) if matches!(e.raw_os_error(), Some(95) | Some(21)) => Ok(None),
            Err(e) => Err(e),
        }
    }
    #[cfg(not(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )))]
    {
        let _ = dir;
        Ok(None)
    }
}

/// Windows only: the raw user and machine `Path` values from the registry.
/// `None` on Unix.
pub fn registry_paths() -> Option<(Option<String>, Option<String>)> {
    None
}

/// Windows only: the product name and `major.minor.build` version. `None` on Unix.
pub fn windows_version() -> Option<(Option<String>, String)> {
    None
}

/// Whether this process may create and replace files in `dir`, from the
/// folder's owner, group and mode bits and this process's effective ids
/// (`/proc/self/status`); root may write anywhere. `None` when unknown
/// (no `/proc`, unreadable folder). ACLs and read-only mounts are not seen.
pub fn dir_writable(dir: &Path) -> Option<bool> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(dir).ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Vec<u32> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|rest| {
                rest.split_whitespace()
                    .filter_map(|x| x.parse().ok())
                    .collect()
            })
            .unwrap_or_default()
    };
    let euid = *field("Uid:").get(1)?;
    let egid = *field("Gid:").get(1)?;
    let groups = field("Groups:");
    let mode = meta.mode();
    Some(
        euid == 0
            || (meta.uid() == euid && mode & 0o200 != 0)
            || ((meta.gid() == egid || groups.contains(&meta.gid())) && mode & 0o020 != 0)
            || mode & 0o002 != 0,
    )
}

/// Windows only: the user `Path` value (`HKCU\Environment\Path`) and whether
/// it is `REG_EXPAND_SZ`. Unsupported on Unix.
pub fn user_path_value() -> io::Result<Option<(String, bool)>> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "the user PATH lives in the registry on Windows only",
    ))
}

/// Windows only: writes (or with `None` removes) the user `Path` value and
/// tells running programs (`WM_SETTINGCHANGE`). Unsupported on Unix.
pub fn set_user_path_value(_value: Option<&str>, _expand: bool) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "the user PATH lives in the registry on Windows only",
    ))
}

/// The short name of the parent process (`bash`, `zsh`, `fish`), read from
/// `/proc/<ppid>/comm` on Linux; `None` where unavailable. Used by `env` to
/// pick the shell syntax when `--shell` is not given.
pub fn parent_process_name() -> Option<String> {
    let ppid = std::os::unix::process::parent_id();
    let comm = std::fs::read_to_string(format!("/proc/{ppid}/comm")).ok()?;
    let name = comm.trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// Creates a folder link and says which kind it is (always a symbolic link on Unix).
pub fn link_dir_kind(target: &Path, link: &Path) -> io::Result<super::DirLinkKind> {
    std::os::unix::fs::symlink(target, link).map(|()| super::DirLinkKind::Symlink)
}

/// Makes `path` readable by every user (mode 0644, whatever the umask): a
/// file other users' cudnnm must read, such as the in-flight marker.
pub fn make_world_readable(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))
}

/// Makes one entry of a tree every user may read but nobody may change
/// through its mode: folders 0755, files 0555 when any execute bit is set
/// else 0444; links are left alone. Used for the system store.
pub fn make_shared_read_only(path: &Path, meta: &std::fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = if meta.is_dir() {
        0o755
    } else if meta.is_file() {
        if meta.permissions().mode() & 0o111 != 0 {
            0o555
        } else {
            0o444
        }
    } else {
        return Ok(());
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// The permissions a new state file is created with: `0666`, which the
/// process umask then narrows (`0644` under the usual `022`), as `open(2)`
/// gives any new file — so a pin, a lock file or the system home's
/// `config.toml` is readable by the users who share it.
pub fn new_file_permissions() -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::Permissions::from_mode(0o666))
}

/// `Some((uid, gid))` of the folder `root` when this process runs as root
/// (effective uid 0, from `/proc/self/status`) and the folder belongs to
/// another user: a `sudo cudnnm --home ~user/…` run, whose new files must
/// go to that user. `None` otherwise, and where `/proc` cannot tell.
pub fn foreign_owner_under_root(root: &Path) -> Option<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let euid: u32 = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    let meta = std::fs::metadata(root).ok()?;
    (euid == 0 && meta.uid() != 0).then(|| (meta.uid(), meta.gid()))
}

/// Whether a lock call failed because the file system cannot lock: `ENOSYS`
/// (Lustre without `flock`), `ENOLCK` (NFS without a lock daemon),
/// `EOPNOTSUPP` (numbers from Linux's and the BSDs' `errno.h`).
pub fn is_lock_unsupported(e: &io::Error) -> bool {
    let codes: &[i32] = if cfg!(target_os = "linux") {
        &[38, 37, 95]
    } else {
        &[78, 77, 102, 45]
    };
    e.raw_os_error().is_some_and(|c| codes.contains(&c))
}

/// This machine's host name (`/proc/sys/kernel/hostname`, else `HOSTNAME`,
/// else `localhost`).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "localhost".to_string())
}

/// When process `pid` started, in clock ticks after boot (`/proc/PID/stat`
/// field 22); `None` when it is not running or there is no `/proc`.
pub fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; fields after its ')' count from 3.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether process `pid` is known to be gone: `/proc` exists and has no
/// entry for it. `false` when that cannot be told.
pub fn process_gone(pid: u32) -> bool {
    Path::new("/proc/self").exists() && !Path::new(&format!("/proc/{pid}")).exists()
}

/// Runs `cmd` in place of this process (`execvp`), so signals and the exit
/// code reach the caller unchanged. Returns only on failure.
pub fn run_in_place(cmd: &mut std::process::Command) -> io::Result<Option<i32>> {
    use std::os::unix::process::CommandExt;
    Err(cmd.exec())
}

/// Bytes of an environment value back to an `OsString` (lossless on Unix).
pub fn os_string_from_bytes(bytes: Vec<u8>) -> std::ffi::OsString {
    use std::os::unix::ffi::OsStringExt;
    std::ffi::OsString::from_vec(bytes)
}

/// The file the toolkit lock is taken on: `None` means the toolkit folder
/// itself (Unix can lock an open folder).
pub fn toolkit_lock_file(_root: &Path) -> Option<std::path::PathBuf> {
    None
}

/// True when `dir` has the sticky bit and the user `uid` (not root) owns
/// neither `dir` nor `file` in it: the kernel then refuses to move or remove
/// `file`, even though `dir` is writable (as in `/tmp`).
pub fn sticky_forbids(dir: &Path, file: &Path, uid: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    let (Ok(dm), Ok(fm)) = (std::fs::metadata(dir), std::fs::symlink_metadata(file)) else {
        return false;
    };
    dm.mode() & 0o1000 != 0 && uid != 0 && fm.uid() != uid && dm.uid() != uid
}

/// Flushes a folder's entries (names just created or renamed) to disk.
pub fn sync_dir(dir: &Path) {
    if let Ok(f) = std::fs::File::open(dir) {
        let _ = f.sync_all();
    }
}

/// Sets or clears the write bits (owner, group, others) of `perm`; clearing
/// write for owner only would leave a group-writable store file.
pub fn set_readonly_bits(perm: &mut std::fs::Permissions, readonly: bool) {
    use std::os::unix::fs::PermissionsExt;
    let mode = perm.mode();
    perm.set_mode(if readonly {
        mode & !0o222
    } else {
        mode | 0o200
    });
}

/// The user id owning an open file (0 when it cannot be read).
pub fn file_owner(f: &std::fs::File) -> u32 {
    use std::os::unix::fs::MetadataExt;
    f.metadata().map(|m| m.uid()).unwrap_or(0)
}

/// Makes `path` executable by everyone and writable by its owner (mode 0755):
/// a freshly written cudnnm binary.
pub fn make_executable(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}

/// On Unix the system home's file modes (0755 folders, 0444 files, set as
/// it is written) already keep users to reading; nothing more to do. The
/// Windows version sets the system home's DACL.
pub fn protect_system_home(_root: &Path) -> io::Result<()> {
    Ok(())
}

/// Makes the process `cmd` starts the leader of a process group of its own
/// (`setpgid(0, 0)` in the child), so that [`kill_process_group`] stops it
/// and everything it starts: pip behind a shim (pyenv's `python3` is a
/// shell script that runs python as its child) included. A terminal's
/// Ctrl-C then reaches cudnnm alone, which stops the group itself.
pub fn own_process_group(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
}

/// Kills (`SIGKILL`) every process of the process group whose leader is
/// `leader`, a child started with [`own_process_group`]. Call it only
/// while that child has not been waited for: its id, and so the group's,
/// cannot have been reused until then.
pub fn kill_process_group(leader: u32) {
    let Ok(pgid) = libc::pid_t::try_from(leader) else {
        return;
    };
    if pgid <= 1 {
        return;
    }
    // SAFETY: kill(2) takes two integers and touches no memory of ours; a
    // negative pid names the process group.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

/// The files `/proc/PID/maps` text names, each once, in map order
/// (proc(5): `address perms offset dev inode path`; pseudo-entries such as
/// `[heap]` and anonymous maps are left out).
pub fn parse_maps(maps: &str) -> Vec<std::path::PathBuf> {
    let mut out: Vec<std::path::PathBuf> = Vec::new();
    for line in maps.lines() {
        let mut rest = line;
        for _ in 0..5 {
            rest = rest.trim_start();
            rest = rest.find(' ').map_or("", |i| &rest[i..]);
        }
        let path = rest.trim();
        if !path.starts_with('/') {
            continue;
        }
        let p = std::path::PathBuf::from(path.strip_suffix(" (deleted)").unwrap_or(path));
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// The files process `pid` maps now (`/proc/PID/maps`).
pub fn mapped_files(pid: u32) -> io::Result<Vec<std::path::PathBuf>> {
    std::fs::read_to_string(format!("/proc/{pid}/maps")).map(|t| parse_maps(&t))
}

/// Process `pid`'s environment (`/proc/PID/environ`, as it was when the
/// process started), working folder and program.
pub fn process_environment(pid: u32) -> io::Result<super::ProcessEnv> {
    use std::os::unix::ffi::OsStrExt;
    let raw = std::fs::read(format!("/proc/{pid}/environ"))?;
    let vars = raw
        .split(|b| *b == 0)
        .filter_map(|kv| {
            let i = kv.iter().position(|b| *b == b'=')?;
            Some((
                std::ffi::OsStr::from_bytes(&kv[..i]).to_os_string(),
                std::ffi::OsStr::from_bytes(&kv[i + 1..]).to_os_string(),
            ))
        })
        .collect();
    Ok(super::ProcessEnv {
        vars,
        cwd: std::fs::read_link(format!("/proc/{pid}/cwd")).ok(),
        exe: std::fs::read_link(format!("/proc/{pid}/exe")).ok(),
    })
}

/// Runs `cmd` to its end under `ptrace(2)` and returns what it had mapped
/// when it ended: each process of the run (the program, what it forks and
/// execs) stops at its exit (`PTRACE_EVENT_EXIT`), while its memory is
/// still mapped, and its `/proc/PID/maps` is read then. Signals reach the
/// program as they would without the trace. When the program ends, any
/// process it left running is let go with this process's end.
///
/// # Errors
/// When the program cannot start, or this system refuses `ptrace`
/// (`kernel.yama.ptrace_scope` 3, a seccomp profile without it).
#[cfg(target_os = "linux")]
pub fn run_and_map(cmd: &mut std::process::Command) -> io::Result<super::RunMaps> {
    use std::os::unix::process::CommandExt;
    let null = std::ptr::null_mut::<libc::c_void>();
    // SAFETY: the closure runs in the child between fork and exec and makes
    // one system call, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            let null = std::ptr::null_mut::<libc::c_void>();
            if libc::ptrace(libc::PTRACE_TRACEME, 0, null, null) == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    let main = child.id() as libc::pid_t;
    let mut run = super::RunMaps::default();
    let mut status: libc::c_int = 0;
    // SAFETY: waitpid and ptrace take plain integers and the status
    // pointer of a local; the tracee is our own child.
    unsafe {
        // The stop at exec.
        if libc::waitpid(main, &mut status, 0) != main {
            return Err(io::Error::last_os_error());
        }
        if !libc::WIFSTOPPED(status) {
            run.exit = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
            return Ok(run);
        }
        let opts = libc::PTRACE_O_TRACEEXIT
            | libc::PTRACE_O_TRACEFORK
            | libc::PTRACE_O_TRACEVFORK
            | libc::PTRACE_O_TRACECLONE
            | libc::PTRACE_O_TRACEEXEC;
        libc::ptrace(
            libc::PTRACE_SETOPTIONS,
            main,
            null,
            opts as usize as *mut libc::c_void,
        );
        libc::ptrace(libc::PTRACE_CONT, main, null, null);
        let mut known: Vec<libc::pid_t> = vec![main];
        loop {
            let pid = libc::waitpid(-1, &mut status, libc::__WALL);
            if pid == -1 {
                if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                break;
            }
            if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
                if pid == main {
                    run.exit = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
                    break;
                }
                continue;
            }
            if !libc::WIFSTOPPED(status) {
                continue;
            }
            let sig = libc::WSTOPSIG(status);
            let event = (status >> 16) & 0xffff;
            let mut deliver = 0;
            if !known.contains(&pid) {
                // A new process or thread of the run: its first stop.
                known.push(pid);
            } else if sig == libc::SIGTRAP && event == libc::PTRACE_EVENT_EXIT {
                if let Ok(files) = mapped_files(pid as u32) {
                    for f in files {
                        if !run.files.contains(&f) {
                            run.files.push(f);
                        }
                    }
                }
                if pid == main {
                    run.exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
                }
            } else if sig == libc::SIGTRAP && event != 0 {
                // fork, clone, exec: nothing to do.
            } else {
                // A signal for the program; a group-stop (no siginfo) is
                // resumed rather than delivered again.
                let mut info: libc::siginfo_t = std::mem::zeroed();
                let group_stop = libc::ptrace(
                    libc::PTRACE_GETSIGINFO,
                    pid,
                    null,
                    &mut info as *mut libc::siginfo_t as *mut libc::c_void,
                ) == -1;
                if !group_stop {
                    deliver = sig;
                }
            }
            libc::ptrace(
                libc::PTRACE_CONT,
                pid,
                null,
                deliver as usize as *mut libc::c_void,
            );
        }
    }
    Ok(run)
}

/// Not Linux: no `/proc/PID/maps` to read.
#[cfg(not(target_os = "linux"))]
pub fn run_and_map(_cmd: &mut std::process::Command) -> io::Result<super::RunMaps> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "reading what a program mapped needs Linux's /proc",
    ))
}

/// A child's standard output sent to this process's standard error (so a
/// program `doctor` runs keeps `--json` on stdout clean); inherited when
/// stderr cannot be duplicated.
pub fn stdio_to_stderr() -> std::process::Stdio {
    use std::os::fd::AsFd;
    std::io::stderr().as_fd().try_clone_to_owned().map_or_else(
        |_| std::process::Stdio::inherit(),
        std::process::Stdio::from,
    )
}

//! Windows implementations: junctions for folder links (no admin needed),
//! retries for files held by scanners, volume checks for hard links.

#![allow(clippy::disallowed_methods)] // the one place files change
use std::fs::Metadata;
use std::io;
use std::os::windows::fs::MetadataExt;
use std::path::{Component, Path, Prefix};

const ERROR_ACCESS_DENIED: i32 = 5;
const ERROR_SHARING_VIOLATION: i32 = 32;
const ERROR_LOCK_VIOLATION: i32 = 33;
const ERROR_NOT_SAME_DEVICE: i32 = 17;
const FILE_ATTRIBUTE_REPARSE_POINT: u32 = 0x400;

/// True for errors that mean "the file is busy for a moment" (a scanner or
/// indexer holding a freshly written file): sharing/lock violation, access denied.
pub fn is_transient_busy(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(ERROR_SHARING_VIOLATION) | Some(ERROR_LOCK_VIOLATION) | Some(ERROR_ACCESS_DENIED)
    )
}

/// Opens `path` with `DELETE` access, sharing everything, and closes it:
/// exactly what a rename needs. Windows lets a DLL that a program has
/// loaded be renamed (its image section does not conflict with delete
/// access), so this succeeds for it; a file some program opened without
/// delete sharing (an editor, a scanner, a copy in progress) fails with a
/// sharing violation. `across_volumes` (the move will copy, then delete —
/// and a loaded image may not be deleted or written): also asks for write
/// access, which a loaded DLL refuses with a sharing violation.
/// Links are opened themselves, not followed.
pub fn open_for_move(path: &Path, across_volumes: bool) -> io::Result<()> {
    use std::os::windows::fs::OpenOptionsExt;
    const DELETE: u32 = 0x0001_0000;
    const FILE_WRITE_DATA: u32 = 0x0002;
    const FILE_SHARE_READ_WRITE_DELETE: u32 = 0x7;
    const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
    const FILE_FLAG_BACKUP_SEMANTICS: u32 = 0x0200_0000;
    let access = if across_volumes {
        DELETE | FILE_WRITE_DATA
    } else {
        DELETE
    };
    std::fs::OpenOptions::new()
        .access_mode(access)
        .share_mode(FILE_SHARE_READ_WRITE_DELETE)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)
        .map(drop)
}

/// True when `e` says another program holds the file open (a sharing or
/// lock violation), as opposed to a missing right.
pub fn is_in_use(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(ERROR_SHARING_VIOLATION) | Some(ERROR_LOCK_VIOLATION)
    )
}

/// True when a rename failed because the paths are on different volumes.
pub fn is_cross_device(e: &io::Error) -> bool {
    e.raw_os_error() == Some(ERROR_NOT_SAME_DEVICE) || e.kind() == io::ErrorKind::CrossesDevices
}

/// Creates a symbolic link to a file (needs Developer Mode or admin on Windows).
pub fn symlink_file(target: &Path, link: &Path) -> io::Result<()> {
    std::os::windows::fs::symlink_file(target, link)
}

/// True when `meta` describes a symbolic link or a junction (any reparse point).
pub fn is_link(meta: &Metadata, _path: &Path) -> bool {
    meta.file_type().is_symlink() || meta.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0
}

/// Removes a link: folder links with `remove_dir`, file links with `remove_file`.
pub fn remove_link(path: &Path, meta: &Metadata) -> io::Result<()> {
    if meta.is_dir() {
        std::fs::remove_dir(path)
    } else {
        std::fs::remove_file(path)
    }
}

/// True when `a` and `b` are on the same volume (same drive letter or UNC share).
pub fn same_volume(a: &Path, b: &Path) -> bool {
    // The drive letter or UNC share, however it is spelled (`\\?\Z:` from
    // canonicalize, `Z:` from an existing path that cannot be canonicalized,
    // as very long ones under wine). A missing path is on no volume.
    fn volume(p: &Path) -> Option<String> {
        std::fs::symlink_metadata(p).ok()?;
        let p = std::fs::canonicalize(p)
            .or_else(|_| std::path::absolute(p))
            .ok()?;
        let Component::Prefix(x) = p.components().next()? else {
            return None;
        };
        Some(match x.kind() {
            Prefix::Disk(d) | Prefix::VerbatimDisk(d) => {
                format!("{}:", (d as char).to_ascii_lowercase())
            }
            Prefix::UNC(server, share) | Prefix::VerbatimUNC(server, share) => format!(
                r"\\{}\{}",
                server.to_string_lossy(),
                share.to_string_lossy()
            )
            .to_ascii_lowercase(),
            _ => x.as_os_str().to_string_lossy().to_ascii_lowercase(),
        })
    }
    matches!((volume(a), volume(b)), (Some(x), Some(y)) if x == y)
}

/// True when `a` and `b` are the same file on disk, as hard links are: the
/// same volume serial number and file index ([`file_identity`]). Where the
/// file system gives no index, what hard links share in the file record
/// decides: both regular files on one volume with the same size, creation
/// time and last-write time. Links are not followed.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::symlink_metadata(a), std::fs::symlink_metadata(b)) {
        (Ok(x), Ok(y)) if x.is_file() && y.is_file() => {
            match (file_identity(a, &x), file_identity(b, &y)) {
                (Some(i), Some(j)) => i.volume == j.volume && i.index == j.index,
                _ => {
                    x.len() == y.len()
                        && x.creation_time() == y.creation_time()
                        && x.last_write_time() == y.last_write_time()
                        && same_volume(a, b)
                }
            }
        }
        _ => false,
    }
}

/// Which file `path` is (not followed when it is a link) and how many hard
/// links it has: the volume serial number, the 64-bit file index and
/// `nNumberOfLinks` that `GetFileInformationByHandle` reports, read through
/// a handle opened for no access (attributes only), sharing everything.
/// `None` when the file cannot be opened (gone, or denied) or the call fails.
pub fn file_identity(path: &Path, _meta: &Metadata) -> Option<super::FileIdentity> {
    use std::os::windows::fs::OpenOptionsExt;
    use windows_sys::Win32::Storage::FileSystem::{
        FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT, FILE_SHARE_DELETE,
        FILE_SHARE_READ, FILE_SHARE_WRITE,
    };
    let file = std::fs::OpenOptions::new()
        .access_mode(0)
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)
        .ok()?;
    handle_identity(&file)
}

/// The identity of the open file `file` ([`file_identity`] of the file it
/// is, whatever its name is now), from `GetFileInformationByHandle`.
pub fn handle_identity(file: &std::fs::File) -> Option<super::FileIdentity> {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Storage::FileSystem::{
        BY_HANDLE_FILE_INFORMATION, GetFileInformationByHandle,
    };
    // SAFETY: an all-zero BY_HANDLE_FILE_INFORMATION is a valid value (plain integers).
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: the handle is open for the whole call (`file` outlives it) and
    // `info` is a writable structure of the type the function fills.
    let ok = unsafe { GetFileInformationByHandle(file.as_raw_handle(), &mut info) };
    if ok == 0 {
        return None;
    }
    Some(super::FileIdentity {
        volume: u64::from(info.dwVolumeSerialNumber),
        index: (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow),
        links: u64::from(info.nNumberOfLinks),
    })
}

/// Unnamed temporary files do not exist on Windows: always `Ok(None)` (the
/// caller probes with a named file instead).
pub fn open_unnamed_temp(_dir: &Path) -> io::Result<Option<std::fs::File>> {
    Ok(None)
}

const USER_ENV: &str = "Environment";
const MACHINE_ENV: &str = r"SYSTEM\CurrentControlSet\Control\Session Manager\Environment";

fn reg_err(e: windows_registry::Result<impl Sized>) -> io::Result<()> {
    e.map(|_| ()).map_err(|e| io::Error::other(e.to_string()))
}

/// The raw (unexpanded) user and machine `Path` values from the registry.
pub fn registry_paths() -> Option<(Option<String>, Option<String>)> {
    use windows_registry::{CURRENT_USER, LOCAL_MACHINE};
    let user = CURRENT_USER
        .open(USER_ENV)
        .and_then(|k| k.get_string("Path"))
        .ok();
    let machine = LOCAL_MACHINE
        .open(MACHINE_ENV)
        .and_then(|k| k.get_string("Path"))
        .ok();
    Some((user, machine))
}

/// The product name (`Windows 10 Pro`) and `major.minor.build` version
/// (`10.0.19045`, `6.1.7601`), from `HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion`.
pub fn windows_version() -> Option<(Option<String>, String)> {
    let k = windows_registry::LOCAL_MACHINE
        .open(r"SOFTWARE\Microsoft\Windows NT\CurrentVersion")
        .ok()?;
    let name = k.get_string("ProductName").ok();
    let build = k.get_string("CurrentBuild").unwrap_or_default();
    let mm = match (
        k.get_u32("CurrentMajorVersionNumber"),
        k.get_u32("CurrentMinorVersionNumber"),
    ) {
        (Ok(a), Ok(b)) => format!("{a}.{b}"),
        _ => k.get_string("CurrentVersion").ok()?,
    };
    Some((name, format!("{mm}.{build}")))
}

/// Unknown on Windows (access is decided by ACLs, not mode bits).
pub fn dir_writable(_dir: &Path) -> Option<bool> {
    None
}

/// The user `Path` value (`HKCU\Environment\Path`), unexpanded, and whether
/// it is `REG_EXPAND_SZ`. `None` when the value does not exist.
pub fn user_path_value() -> io::Result<Option<(String, bool)>> {
    let key = windows_registry::CURRENT_USER
        .open(USER_ENV)
        .map_err(|e| io::Error::other(e.to_string()))?;
    let ty = match key.get_type("Path") {
        Ok(t) => t,
        Err(_) => return Ok(None),
    };
    let value = key
        .get_string("Path")
        .map_err(|e| io::Error::other(e.to_string()))?;
    Ok(Some((value, ty == windows_registry::Type::ExpandString)))
}

/// Writes the user `Path` (`REG_EXPAND_SZ` when `expand`, else `REG_SZ`,
/// never through `setx`, which truncates at 1,024 characters), or removes
/// the value when `value` is `None`, then broadcasts `WM_SETTINGCHANGE`
/// "Environment" so that Explorer and new programs see it.
pub fn set_user_path_value(value: Option<&str>, expand: bool) -> io::Result<()> {
    let key = windows_registry::CURRENT_USER
        .create(USER_ENV)
        .map_err(|e| io::Error::other(e.to_string()))?;
    match value {
        None => reg_err(key.remove_value("Path"))?,
        Some(v) if expand => reg_err(key.set_expand_string("Path", v))?,
        Some(v) => reg_err(key.set_string("Path", v))?,
    }
    broadcast_environment_change();
    Ok(())
}

fn broadcast_environment_change() {
    use windows_sys::Win32::UI::WindowsAndMessaging::{
        HWND_BROADCAST, SMTO_ABORTIFHUNG, SendMessageTimeoutW, WM_SETTINGCHANGE,
    };
    let name: Vec<u16> = "Environment\0".encode_utf16().collect();
    let mut result = 0usize;
    // SAFETY: a broadcast with a NUL-terminated UTF-16 string that outlives
    // the call; the timeout keeps a hung window from blocking us.
    unsafe {
        SendMessageTimeoutW(
            HWND_BROADCAST,
            WM_SETTINGCHANGE,
            0,
            name.as_ptr() as isize,
            SMTO_ABORTIFHUNG,
            5000,
            &mut result,
        );
    }
}

/// The parent process's name. Not looked up on Windows (it would need the
/// Tool Help API); `env` falls back to PowerShell unless `--shell` says otherwise.
pub fn parent_process_name() -> Option<String> {
    None
}

/// Creates a folder link and says which kind was made: a junction (no admin
/// needed), else a directory symbolic link (Developer Mode or admin) where
/// junctions are unsupported (e.g. wine, some network shares).
pub fn link_dir_kind(target: &Path, link: &Path) -> io::Result<super::DirLinkKind> {
    match junction::create(target, link) {
        Ok(()) => Ok(super::DirLinkKind::Junction),
        Err(_) => {
            let _ = std::fs::remove_dir(link);
            std::os::windows::fs::symlink_dir(target, link).map(|()| super::DirLinkKind::Symlink)
        }
    }
}

/// Makes `path` readable by every user: on Windows a new file inherits its
/// folder's ACL, which already decides that; nothing to do.
pub fn make_world_readable(_path: &Path) -> io::Result<()> {
    Ok(())
}

/// Makes one entry of a tree read-only: files get the read-only attribute;
/// folders keep their ACL, which `%ProgramData%` gives every user read
/// access through inheritance. Used for the system store.
pub fn make_shared_read_only(path: &Path, meta: &std::fs::Metadata) -> io::Result<()> {
    if meta.is_file() {
        let mut p = meta.permissions();
        p.set_readonly(true);
        std::fs::set_permissions(path, p)?;
    }
    Ok(())
}

/// The permissions a new state file is created with: `None`, the folder's
/// inherited ACL decides (the temporary-file default is already that).
pub fn new_file_permissions() -> Option<std::fs::Permissions> {
    None
}

/// Unix only: a home's owner when root writes in it. Windows gives a new
/// file the folder's inherited ACL, so `None`.
pub fn foreign_owner_under_root(_root: &Path) -> Option<(u32, u32)> {
    None
}

/// Whether a lock call failed because the file system cannot lock
/// (`ERROR_NOT_SUPPORTED`, 50, `ERROR_INVALID_FUNCTION`, 1, from some SMB servers).
pub fn is_lock_unsupported(e: &io::Error) -> bool {
    e.raw_os_error().is_some_and(|c| c == 50 || c == 1)
}

/// This machine's name (`COMPUTERNAME`, else `localhost`).
pub fn host_name() -> String {
    std::env::var("COMPUTERNAME")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// Unknown on Windows.
pub fn process_start(_pid: u32) -> Option<u64> {
    None
}

/// Unknown on Windows: `false`.
pub fn process_gone(_pid: u32) -> bool {
    false
}

/// Runs `cmd` as a child and waits: Windows has no `exec`. Returns its exit
/// code (`None` when it has none).
pub fn run_in_place(cmd: &mut std::process::Command) -> io::Result<Option<i32>> {
    cmd.status().map(|s| s.code())
}

/// Bytes of an environment value back to an `OsString`: pieces of WTF-8 split
/// at ASCII separators; lossless for valid Unicode.
pub fn os_string_from_bytes(bytes: Vec<u8>) -> std::ffi::OsString {
    String::from_utf8_lossy(&bytes).into_owned().into()
}

/// The file the toolkit lock is taken on: a folder cannot be opened for
/// locking on Windows, so a `.cudnnm-lock` file inside it.
pub fn toolkit_lock_file(root: &Path) -> Option<std::path::PathBuf> {
    Some(root.join(".cudnnm-lock"))
}

/// Windows has no sticky bit; ACLs are checked by the write probe.
pub fn sticky_forbids(_dir: &Path, _file: &Path, _uid: u32) -> bool {
    false
}

/// Folder entries cannot be flushed on their own on Windows: a no-op.
pub fn sync_dir(_dir: &Path) {}

/// Sets or clears the read-only attribute.
pub fn set_readonly_bits(perm: &mut std::fs::Permissions, readonly: bool) {
    perm.set_readonly(readonly);
}

/// Windows files have no numeric owner here: always 0.
pub fn file_owner(_f: &std::fs::File) -> u32 {
    0
}

/// Nothing to do: Windows runs any `.exe`.
pub fn make_executable(_path: &Path) -> io::Result<()> {
    Ok(())
}

/// Gives the system home at `root` its own protected DACL,
/// [`super::acl::SYSTEM_HOME_DACL`] (SYSTEM and Administrators full
/// control, Users read and execute), instead of what it inherits from
/// `%ProgramData%`, which lets every user add files and folders (see
/// [`super::acl`]). `SetNamedSecurityInfoW` propagates the inheritable
/// ACEs to what is already below `root`.
pub fn protect_system_home(root: &Path) -> io::Result<()> {
    use std::os::windows::ffi::OsStrExt;
    use windows_sys::Win32::Foundation::{ERROR_SUCCESS, LocalFree};
    use windows_sys::Win32::Security::Authorization::{
        ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1, SE_FILE_OBJECT,
        SetNamedSecurityInfoW,
    };
    use windows_sys::Win32::Security::{
        ACL, DACL_SECURITY_INFORMATION, GetSecurityDescriptorDacl,
        PROTECTED_DACL_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR,
    };
    let wide = |s: &std::ffi::OsStr| -> Vec<u16> { s.encode_wide().chain(Some(0)).collect() };
    let sddl = wide(std::ffi::OsStr::new(&super::acl::sddl(
        &super::acl::SYSTEM_HOME_DACL,
    )));
    let name = wide(root.as_os_str());
    let mut sd: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
    // SAFETY: `sddl` is NUL-terminated; `sd` receives a LocalAlloc'd
    // descriptor freed below.
    let ok = unsafe {
        ConvertStringSecurityDescriptorToSecurityDescriptorW(
            sddl.as_ptr(),
            SDDL_REVISION_1,
            &mut sd,
            std::ptr::null_mut(),
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    let mut present = 0;
    let mut defaulted = 0;
    let mut dacl: *mut ACL = std::ptr::null_mut();
    // SAFETY: `sd` is the valid descriptor made above; `dacl` points into it.
    let got = unsafe { GetSecurityDescriptorDacl(sd, &mut present, &mut dacl, &mut defaulted) };
    let result = if got == 0 {
        Err(io::Error::last_os_error())
    } else {
        // SAFETY: `name` is NUL-terminated, `dacl` lives as long as `sd`.
        let rc = unsafe {
            SetNamedSecurityInfoW(
                name.as_ptr(),
                SE_FILE_OBJECT,
                DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                dacl,
                std::ptr::null(),
            )
        };
        if rc == ERROR_SUCCESS {
            Ok(())
        } else {
            Err(io::Error::from_raw_os_error(rc as i32))
        }
    };
    // SAFETY: `sd` came from LocalAlloc (ConvertString…) and is freed once.
    unsafe { LocalFree(sd as _) };
    result
}

/// Windows has no process groups that a kill reaches: the child starts as
/// usual, attached to the console, so a Ctrl-C in the console reaches it
/// (and whatever it starts) directly. Only the child itself is stopped by
/// [`kill_process_group`].
pub fn own_process_group(_cmd: &mut std::process::Command) {}

/// Terminates the process `leader` (`TerminateProcess`), a child not yet
/// waited for: only that process, not the programs it started (a `.bat`
/// shim's python survives `cmd.exe`; a console Ctrl-C reaches it itself).
pub fn kill_process_group(leader: u32) {
    use windows_sys::Win32::Foundation::CloseHandle;
    use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_TERMINATE, TerminateProcess};
    // SAFETY: OpenProcess takes plain values and returns a handle (null on
    // failure), which is used once and closed here.
    unsafe {
        let h = OpenProcess(PROCESS_TERMINATE, 0, leader);
        if !h.is_null() {
            TerminateProcess(h, 1);
            CloseHandle(h);
        }
    }
}

/// The path of an open file (`GetFinalPathNameByHandleW`), without the
/// verbatim prefix; `None` when Windows does not say.
fn handle_path(h: windows_sys::Win32::Foundation::HANDLE) -> Option<std::path::PathBuf> {
    use windows_sys::Win32::Storage::FileSystem::GetFinalPathNameByHandleW;
    if h.is_null() {
        return None;
    }
    let mut buf = vec![0u16; 32768];
    // SAFETY: the buffer is as long as we say; the handle is open.
    let n = unsafe { GetFinalPathNameByHandleW(h, buf.as_mut_ptr(), buf.len() as u32, 0) };
    if n == 0 || n as usize > buf.len() {
        return None;
    }
    let s = String::from_utf16_lossy(&buf[..n as usize]);
    let s = match (s.strip_prefix(r"\\?\UNC\"), s.strip_prefix(r"\\?\")) {
        (Some(rest), _) => format!(r"\\{rest}"),
        (None, Some(rest)) => rest.to_string(),
        _ => s,
    };
    Some(std::path::PathBuf::from(s))
}

/// Runs `cmd` to its end as its debugger (`DEBUG_ONLY_THIS_PROCESS`) and
/// returns every DLL loaded during the run (the loader reports each with
/// `LOAD_DLL_DEBUG_EVENT`), named by the file it was mapped from.
/// Exceptions go back to the program as they would without a debugger.
///
/// # Errors
/// When the program cannot start, or the debug loop fails.
pub fn run_and_map(cmd: &mut std::process::Command) -> io::Result<super::RunMaps> {
    use std::os::windows::process::CommandExt;
    use windows_sys::Win32::Foundation::{
        CloseHandle, DBG_CONTINUE, DBG_EXCEPTION_NOT_HANDLED, STATUS_BREAKPOINT,
    };
    use windows_sys::Win32::System::Diagnostics::Debug::{
        CREATE_PROCESS_DEBUG_EVENT, ContinueDebugEvent, DEBUG_EVENT, DebugSetProcessKillOnExit,
        EXCEPTION_DEBUG_EVENT, EXIT_PROCESS_DEBUG_EVENT, LOAD_DLL_DEBUG_EVENT, WaitForDebugEvent,
    };
    use windows_sys::Win32::System::Threading::{DEBUG_ONLY_THIS_PROCESS, INFINITE};
    cmd.creation_flags(DEBUG_ONLY_THIS_PROCESS);
    let mut child = cmd.spawn()?;
    let main = child.id();
    let mut run = super::RunMaps::default();
    // SAFETY: the debug API on the thread that created the process (this
    // one); each union field read is the one the event code names, and
    // each file handle it hands over is closed once.
    unsafe {
        DebugSetProcessKillOnExit(0);
        loop {
            let mut ev: DEBUG_EVENT = std::mem::zeroed();
            if WaitForDebugEvent(&mut ev, INFINITE) == 0 {
                return Err(io::Error::last_os_error());
            }
            let mut status = DBG_CONTINUE;
            match ev.dwDebugEventCode {
                CREATE_PROCESS_DEBUG_EVENT => {
                    let info = ev.u.CreateProcessInfo;
                    if ev.dwProcessId == main {
                        run.exe = handle_path(info.hFile);
                    }
                    if !info.hFile.is_null() {
                        CloseHandle(info.hFile);
                    }
                }
                LOAD_DLL_DEBUG_EVENT => {
                    let info = ev.u.LoadDll;
                    if let Some(p) = handle_path(info.hFile)
                        && !run.files.contains(&p)
                    {
                        run.files.push(p);
                    }
                    if !info.hFile.is_null() {
                        CloseHandle(info.hFile);
                    }
                }
                // The loader's breakpoint for a debugger is ours; every
                // other exception is the program's to handle.
                EXCEPTION_DEBUG_EVENT
                    if ev.u.Exception.ExceptionRecord.ExceptionCode != STATUS_BREAKPOINT =>
                {
                    status = DBG_EXCEPTION_NOT_HANDLED;
                }
                EXIT_PROCESS_DEBUG_EVENT if ev.dwProcessId == main => {
                    run.exit = Some(ev.u.ExitProcess.dwExitCode as i32);
                    ContinueDebugEvent(ev.dwProcessId, ev.dwThreadId, status);
                    break;
                }
                _ => {}
            }
            ContinueDebugEvent(ev.dwProcessId, ev.dwThreadId, status);
        }
    }
    let _ = child.wait();
    Ok(run)
}

/// The modules process `pid` has loaded now (its module list,
/// `CreateToolhelp32Snapshot`).
pub fn mapped_files(pid: u32) -> io::Result<Vec<std::path::PathBuf>> {
    use windows_sys::Win32::Foundation::{CloseHandle, INVALID_HANDLE_VALUE};
    use windows_sys::Win32::System::Diagnostics::ToolHelp::{
        CreateToolhelp32Snapshot, MODULEENTRY32W, Module32FirstW, Module32NextW, TH32CS_SNAPMODULE,
        TH32CS_SNAPMODULE32,
    };
    let mut out = Vec::new();
    // SAFETY: the snapshot handle is checked and closed; each entry is a
    // local the API fills, its size set first as it requires.
    unsafe {
        let snap = CreateToolhelp32Snapshot(TH32CS_SNAPMODULE | TH32CS_SNAPMODULE32, pid);
        if snap == INVALID_HANDLE_VALUE {
            return Err(io::Error::last_os_error());
        }
        let mut e: MODULEENTRY32W = std::mem::zeroed();
        e.dwSize = std::mem::size_of::<MODULEENTRY32W>() as u32;
        let mut ok = Module32FirstW(snap, &mut e);
        while ok != 0 {
            let n = e
                .szExePath
                .iter()
                .position(|c| *c == 0)
                .unwrap_or(e.szExePath.len());
            out.push(std::path::PathBuf::from(String::from_utf16_lossy(
                &e.szExePath[..n],
            )));
            ok = Module32NextW(snap, &mut e);
        }
        CloseHandle(snap);
    }
    Ok(out)
}

/// Another process's environment cannot be read on Windows without reading
/// its memory: doctor judges with its own.
pub fn process_environment(_pid: u32) -> io::Result<super::ProcessEnv> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "another process's environment is not readable on Windows",
    ))
}

/// A child's standard output sent to this process's standard error;
/// inherited when stderr cannot be duplicated.
pub fn stdio_to_stderr() -> std::process::Stdio {
    use std::os::windows::io::AsHandle;
    std::io::stderr()
        .as_handle()
        .try_clone_to_owned()
        .map_or_else(
            |_| std::process::Stdio::inherit(),
            std::process::Stdio::from,
        )
}

//! `doctor -- CMD [ARGS…]` and `doctor --pid PID`: what a program really
//! mapped, read from the process itself — `/proc/PID/maps` on Linux (at the
//! end of each process of the run, under `ptrace`), the loaded-module list
//! on Windows ([`crate::platform`]) — kept in the snapshot
//! ([`ProcessView`]) so the checks can hold it against the loader model's
//! prediction. cuDNN loads without a GPU, so this works on any machine.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::snapshot::ProcessView;
use crate::names;

/// Runs `cmd` (shown as `shown`) to its end and records the cuDNN files it
/// mapped. A program that cannot start or be traced is recorded with the
/// reason.
pub fn run(cmd: &mut Command, shown: String) -> ProcessView {
    match crate::platform::run_and_map(cmd) {
        Ok(r) => view(shown, None, r.exit, r.exe, &r.files),
        Err(e) => ProcessView {
            command: shown,
            error: Some(format!("could not run and watch it: {e}")),
            ..Default::default()
        },
    }
}

/// Records the cuDNN files the running process `pid` maps now.
pub fn watch(pid: u32) -> ProcessView {
    let shown = format!("pid {pid}");
    let exe = crate::platform::process_environment(pid)
        .ok()
        .and_then(|p| p.exe);
    match crate::platform::mapped_files(pid) {
        Ok(files) => view(shown, Some(pid), None, exe, &files),
        Err(e) => ProcessView {
            command: shown,
            pid: Some(pid),
            error: Some(format!("could not read what process {pid} maps: {e}")),
            ..Default::default()
        },
    }
}

/// The environment and working folder of the running process `pid`, so
/// that doctor judges the loader as that process sees it; `None` where the
/// OS does not tell (then doctor's own environment is used).
pub fn environment(pid: u32) -> Option<(Vec<(OsString, OsString)>, PathBuf)> {
    let p = crate::platform::process_environment(pid).ok()?;
    Some((p.vars, p.cwd?))
}

fn view(
    command: String,
    pid: Option<u32>,
    exit: Option<i32>,
    exe: Option<PathBuf>,
    files: &[PathBuf],
) -> ProcessView {
    let info = exe.as_deref().map(super::binfmt::read_dynamic);
    ProcessView {
        command,
        pid,
        exit,
        exe: exe.as_deref().map(|p| p.to_string_lossy().into_owned()),
        exe_rpath: info.as_ref().map(|i| i.rpath.clone()).unwrap_or_default(),
        exe_runpath: info.map(|i| i.runpath).unwrap_or_default(),
        mapped: files
            .iter()
            .filter(|f| is_cudnn(f))
            .map(|f| f.to_string_lossy().into_owned())
            .collect(),
        error: None,
    }
}

fn is_cudnn(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(names::is_cudnn_name)
}

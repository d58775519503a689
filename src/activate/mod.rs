//! Per-process activation (`docs/architecture.md#activation`): the environment that makes one
//! release visible to a process, and its rendering for each shell.
//!
//! An [`Activation`] is plain data: the variables to set or unset, computed
//! from an [`Env`] snapshot, so every Windows case is a unit test on Linux.
//! `exec` applies it to a child process; `env` renders it as shell code
//! ([`shell`]: each shell's syntax, and with `--use-on-cd` the hook from
//! `shims/`).
//!
//! Rules that make switching reversible:
//! - path lists (`LD_LIBRARY_PATH`/`CPATH`/`LIBRARY_PATH`, or on Windows
//!   `PATH`/`INCLUDE`/`LIB`) get the release's folder in front; any entry under
//!   `$CUDNNM_HOME/store/` or `$CUDNNM_HOME/current/` is removed first
//!   (replaced, never stacked), other entries keep their order and spelling;
//! - the first activation in an environment (no `CUDNNM_ACTIVE`) saves the
//!   user's own `CUDNN_PATH`, `CUDNN_INCLUDE_DIR`, `CUDNN_LIBRARY_DIR` in
//!   `CUDNNM_ORIG_*`; deactivation puts them back (or unsets them) and removes
//!   exactly the cudnnm entries from the path lists, so leaving a pinned
//!   folder gives back what the user had.

use std::ffi::{OsStr, OsString};
use std::path::Path;

use crate::env::{self, Env};
use crate::home::Home;
use crate::store::Release;
use crate::version::ReleaseId;

pub mod shell;

#[cfg(test)]
mod tests;

pub use shell::{
    BASH_HOOK, CMD_HOOK, FISH_HOOK, POWERSHELL_HOOK, Shell, ZSH_HOOK, assignment, hook, render,
};

/// The scalar variables an activation sets, whose user values are saved in
/// `CUDNNM_ORIG_<NAME>` while a release is active.
const SAVED_SCALARS: [&str; 3] = [
    env::CUDNN_PATH,
    env::CUDNN_INCLUDE_DIR,
    env::CUDNN_LIBRARY_DIR,
];

/// One variable to set (`Some`) or unset (`None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarChange {
    /// The variable name.
    pub name: String,
    /// Its new value; `None` removes it.
    pub value: Option<OsString>,
}

/// What activating (or deactivating) does to an environment: only real
/// changes, in a stable order (path lists, saved originals, scalars, `CUDNNM_ACTIVE`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Activation {
    /// The release id made active (`9.12.0.46_cuda12`), `None` when deactivating.
    pub release: Option<ReleaseId>,
    /// The variable changes, no-ops left out.
    pub changes: Vec<VarChange>,
}

impl Activation {
    /// Applies the changes to a command about to be spawned.
    pub fn apply(&self, cmd: &mut std::process::Command) {
        for c in &self.changes {
            match &c.value {
                Some(v) => cmd.env(&c.name, v),
                None => cmd.env_remove(&c.name),
            };
        }
    }
}

/// The path-list variables for an environment: (loader, compiler include, compiler lib).
fn path_vars(windows: bool) -> [&'static str; 3] {
    if windows {
        [env::PATH, env::INCLUDE, env::LIB]
    } else {
        [env::LD_LIBRARY_PATH, env::CPATH, env::LIBRARY_PATH]
    }
}

fn orig_name(name: &str) -> String {
    format!("{}{name}", env::CUDNNM_ORIG_PREFIX)
}

fn is_active(env: &Env) -> bool {
    env.var_os(env::CUDNNM_ACTIVE)
        .is_some_and(|v| !v.is_empty())
}

/// Keeps only the entries of `want` that differ from `env`.
fn only_changes(env: &Env, want: Vec<(String, Option<OsString>)>) -> Vec<VarChange> {
    want.into_iter()
        .filter(|(name, value)| env.var_os(name) != value.as_deref())
        .map(|(name, value)| VarChange { name, value })
        .collect()
}

/// The changes that make `release` the active one in `env`: its loader,
/// include and library folders in front of the path lists (replacing any
/// earlier cudnnm entry of `home`), `CUDNN_PATH`, `CUDNN_INCLUDE_DIR`,
/// `CUDNN_LIBRARY_DIR`, `CUDNNM_ACTIVE`, and, on the first activation, the
/// user's own values saved in `CUDNNM_ORIG_*`.
pub fn activate(env: &Env, home: &Home, release: &Release) -> Activation {
    let windows = env.is_windows();
    let [loader, include, lib] = path_vars(windows);
    let mut want: Vec<(String, Option<OsString>)> = Vec::new();
    for (name, dir) in [
        (loader, release.loader_dir()),
        (include, release.include_dir()),
        (lib, release.lib_dir()),
    ] {
        let value = edit_path_lists(env.var_os(name), Some(dir.as_os_str()), home, windows);
        want.push((name.to_string(), value));
    }
    let scalars = [
        (env::CUDNN_PATH, release.dir.clone()),
        (env::CUDNN_INCLUDE_DIR, release.include_dir()),
        (env::CUDNN_LIBRARY_DIR, release.lib_dir()),
    ];
    if !is_active(env) {
        // First activation here: remember the user's values (and drop stale saves).
        for name in SAVED_SCALARS {
            want.push((orig_name(name), env.var_os(name).map(OsStr::to_owned)));
        }
    }
    for (name, value) in scalars {
        want.push((name.to_string(), Some(value.into_os_string())));
    }
    want.push((env::CUDNNM_ACTIVE.to_string(), Some(release.id().into())));
    Activation {
        release: Some(release.release_id()),
        changes: only_changes(env, want),
    }
}

/// The changes that undo cudnnm's activation in `env`: cudnnm entries of
/// `home` removed from the path lists (a list left empty is unset), the
/// user's saved `CUDNN_*` values restored or the variables unset, and
/// `CUDNNM_ACTIVE` unset. Nothing when no release is active.
pub fn deactivate(env: &Env, home: &Home) -> Activation {
    if !is_active(env) {
        return Activation::default();
    }
    let windows = env.is_windows();
    let mut want: Vec<(String, Option<OsString>)> = Vec::new();
    for name in path_vars(windows) {
        want.push((
            name.to_string(),
            edit_path_lists(env.var_os(name), None, home, windows),
        ));
    }
    for name in SAVED_SCALARS {
        let orig = orig_name(name);
        want.push((name.to_string(), env.var_os(&orig).map(OsStr::to_owned)));
        want.push((orig, None));
    }
    want.push((env::CUDNNM_ACTIVE.to_string(), None));
    Activation {
        release: None,
        changes: only_changes(env, want),
    }
}

/// [`edit_path_list`] for `home` and, for a user home, for the system home
/// it reads too: a system release's entries are replaced like the user's own.
fn edit_path_lists(
    value: Option<&OsStr>,
    add: Option<&OsStr>,
    home: &Home,
    windows: bool,
) -> Option<OsString> {
    match home.system_root() {
        Some(system) => {
            let without = edit_path_list(value, None, system, windows);
            edit_path_list(without.as_deref(), add, home.root(), windows)
        }
        None => edit_path_list(value, add, home.root(), windows),
    }
}

/// Whether a path-list entry is a cudnnm entry: under `home/store` or
/// `home/current` (Windows: `\` or `/`, case-insensitive; Unix: exact
/// components). Repeated separators and `.` components are ignored.
pub fn is_cudnnm_entry(entry: &str, home: &Path, windows: bool) -> bool {
    let e = components(entry, windows);
    let h = components(&home.to_string_lossy(), windows);
    e.len() > h.len() && e[..h.len()] == h[..] && (e[h.len()] == "store" || e[h.len()] == "current")
}

fn components(path: &str, windows: bool) -> Vec<String> {
    let is_sep = |c: char| c == '/' || (windows && c == '\\');
    let mut out = Vec::new();
    if path.starts_with(is_sep) {
        out.push(String::new()); // the root: "/a" is not "a"
    }
    for c in path.split(is_sep).filter(|c| !c.is_empty() && *c != ".") {
        out.push(if windows {
            c.to_lowercase()
        } else {
            c.to_string()
        });
    }
    out
}

/// Edits a path list: removes every cudnnm entry of `home`, then puts `add`
/// (if any) in front. Other entries keep their order and exact bytes, empty
/// entries included. Returns `None` when nothing is left (unset rather than
/// an empty value, which some tools read as "the current folder").
pub fn edit_path_list(
    value: Option<&OsStr>,
    add: Option<&OsStr>,
    home: &Path,
    windows: bool,
) -> Option<OsString> {
    let sep = if windows { b';' } else { b':' };
    let mut out: Vec<&[u8]> = Vec::new();
    if let Some(a) = add {
        out.push(a.as_encoded_bytes());
    }
    if let Some(v) = value.filter(|v| !v.is_empty()) {
        for entry in v.as_encoded_bytes().split(|b| *b == sep) {
            if !is_cudnnm_entry(&String::from_utf8_lossy(entry), home, windows) {
                out.push(entry);
            }
        }
    }
    if out.is_empty() {
        return None;
    }
    Some(crate::platform::os_string_from_bytes(out.join(&sep)))
}

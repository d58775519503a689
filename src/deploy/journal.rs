//! The journal (`docs/architecture.md#deploying`): a change in flight, on disk before the
//! first file moves, so that a crash at any point leaves enough to finish or
//! undo it (rustup's transaction lives only in memory; a kill skips its
//! rollback).
//!
//! `journal/<id>.json` is the [`Plan`], written and fsynced (with its
//! folder) before anything changes; one that a crash left unreadable means
//! nothing had changed yet, unless its backup folder exists. `journal/<id>.log` is the
//! step log, one line per step: `plan`, `mkdir <i>`, `move <i>`, `moved`,
//! `recorded`, `place <i>`, `verified`. Each is appended with one `write`,
//! which the next process sees even after `kill -9`; none is fsynced.
//! Durability comes from three flushes instead: the plan; the folders the
//! moves changed (then every original is safe in the backup); and
//! `backup.toml` + `deployments.toml`, written before anything is placed
//! (tentative while the journal exists — undo puts the earlier record back).
//! Nothing is flushed after placing, as after `cp`.
//!
//! Recovery never trusts a per-step line alone: it checks each planned file
//! on disk. It completes a change whose log says `verified` and whose placed
//! files still check out (copies re-hashed), and undoes anything else; a
//! synced `backup.toml` tells it placing may have begun. A `verified` lost
//! to a power cut therefore only turns completion into a whole undo.
//!
//! The other changes the guard makes — removing backups, removing a release
//! from the store, a doctor fix's soname link — are journaled the same way
//! as an [`Op`] in `journal/op-<n>.json` (tagged by kind) with its own log:
//! written before the first change, each step logged, retired at the end.
//! Each op says where its point of no return is: before it, recovery undoes
//! the op; after it, recovery completes it.
//!
//! Hooks for tests: in debug builds `CUDNNM_FAULT_AFTER_STEP=K` aborts the
//! process right after the K-th step this process logs (counted across every
//! journal it writes, so one K names one moment of a whole command), and
//! `CUDNNM_TEST_PAUSE_AFTER_STEP=K` with `CUDNNM_TEST_PAUSE_FILE=F` pauses
//! there while F exists (release builds ignore both).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::plan::Plan;
use crate::env::Env;
use crate::error::{Error, IoResultExt, Kind, Result};
use crate::fsops::{self, AppendLog};
use crate::home::Home;

/// Log line: the plan is on disk.
pub const PLAN: &str = "plan";
/// Log line: every current file is in the backup.
pub const MOVED: &str = "moved";
/// Log line: every placed file checked out; recovery completes the change.
pub const VERIFIED: &str = "verified";
/// Log line: `backup.toml` and `deployments.toml` are written.
pub const RECORDED: &str = "recorded";

/// Steps this process has logged, in every journal (the fault hook counts these).
static STEPS: AtomicU64 = AtomicU64::new(0);

/// A journaled change other than a deployment's [`Plan`]: what the guard
/// does to the backups, the store or a folder doctor fixes. Written as
/// JSON tagged by `kind`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Op {
    /// Backups renamed aside, then deleted (a prune, `backups remove`).
    RemoveBackups(super::backup::removal::Removal),
    /// A release removed from the store (`uninstall`).
    Uninstall(super::uninstall::Uninstall),
    /// A soname link `doctor --fix` makes, or `--undo-fix` takes back.
    LinkFix(super::link_fix::LinkFix),
}

/// What one journal holds.
#[derive(Clone, Debug)]
pub enum Work {
    /// A change to a toolkit (`use`, `rollback`, a redeploy): `journal/<id>.json`.
    Deploy(Box<Plan>),
    /// Another change: `journal/op-<n>.json`.
    Op(Op),
}

/// Where the test-only hooks kill or pause the process.
#[derive(Clone, Debug, Default)]
pub struct FaultHook {
    /// Abort right after this step (1-based) is logged.
    pub after_step: Option<u64>,
    /// Pause right after this step (1-based) is logged…
    pub pause_after_step: Option<u64>,
    /// …creating this file and waiting while it exists (at most a minute),
    /// or until a signal asks the process to stop.
    pub pause_file: Option<PathBuf>,
}

impl FaultHook {
    /// Reads `CUDNNM_FAULT_AFTER_STEP`, `CUDNNM_TEST_PAUSE_AFTER_STEP` and
    /// `CUDNNM_TEST_PAUSE_FILE` in debug builds; always off in release builds.
    pub fn from_env(env: &Env) -> FaultHook {
        #[cfg(debug_assertions)]
        {
            let step = |k: &str| env.var(k).and_then(|v| v.trim().parse().ok());
            FaultHook {
                after_step: step(crate::env::CUDNNM_FAULT_AFTER_STEP),
                pause_after_step: step(crate::env::CUDNNM_TEST_PAUSE_AFTER_STEP),
                pause_file: env
                    .var(crate::env::CUDNNM_TEST_PAUSE_FILE)
                    .map(PathBuf::from),
            }
        }
        #[cfg(not(debug_assertions))]
        {
            let _ = env;
            FaultHook::default()
        }
    }
}

/// An open journal of a change this process is making.
#[derive(Debug)]
pub struct Journal {
    plan_path: PathBuf,
    log_path: PathBuf,
    log: AppendLog,
    fault: FaultHook,
}

fn paths(home: &Home, name: &str) -> (PathBuf, PathBuf) {
    let dir = home.journal_dir();
    (
        dir.join(format!("{name}.json")),
        dir.join(format!("{name}.log")),
    )
}

/// The prefix of an [`Op`]'s journal name (`op-<n>`).
const OP_PREFIX: &str = "op-";

impl Journal {
    /// Writes `plan` to `journal/<id>.json` durably (write, fsync, folder
    /// fsync) and logs step 1, `plan`. Nothing changes before this returns,
    /// so a plan a crash left partly written means nothing had changed.
    ///
    /// # Errors
    /// When the journal folder is not writable.
    pub fn begin(home: &Home, plan: &Plan, fault: FaultHook) -> Result<Journal> {
        let text = serde_json::to_vec_pretty(plan)
            .map_err(|e| Error::msg(format!("could not encode the journal: {e}")))?;
        Journal::begin_named(home, &plan.id.to_string(), &text, fault)
    }

    /// Writes `op` to `journal/op-<n>.json` (the next free `n`) as
    /// [`Journal::begin`] writes a plan, and logs step 1, `plan`.
    ///
    /// # Errors
    /// When the journal folder is not writable.
    pub fn begin_op(home: &Home, op: &Op, fault: FaultHook) -> Result<Journal> {
        let text = serde_json::to_vec_pretty(op)
            .map_err(|e| Error::msg(format!("could not encode the journal: {e}")))?;
        let n = op_numbers(home).last().map_or(1, |n| n + 1);
        Journal::begin_named(home, &format!("{OP_PREFIX}{n}"), &text, fault)
    }

    fn begin_named(home: &Home, name: &str, text: &[u8], fault: FaultHook) -> Result<Journal> {
        let (plan_path, log_path) = paths(home, name);
        fsops::create_dir_all(&home.journal_dir())?;
        let _ = fsops::remove_file(&log_path);
        let _ = fsops::remove_file(&plan_path);
        fsops::write_new_synced(&plan_path, text)?;
        let log = AppendLog::open(&log_path)?;
        let mut j = Journal {
            plan_path,
            log_path,
            log,
            fault,
        };
        // Not a point to stop at: the caller has no undo to run yet.
        j.log.append(PLAN)?;
        j.after_step();
        Ok(j)
    }

    /// Logs one step (one `write`, no fsync), runs the test hooks, then
    /// checks for Ctrl-C / SIGTERM: each step is a boundary where the change
    /// can stop and be undone.
    ///
    /// # Errors
    /// When the log cannot be written; [`Kind::Interrupted`] when a signal
    /// asked the process to stop (the caller undoes the change).
    pub fn step(&mut self, line: &str) -> Result<()> {
        self.log.append(line)?;
        self.after_step();
        if crate::interrupt::requested() {
            return Err(crate::interrupt::error());
        }
        Ok(())
    }

    /// Logs a step past an op's point of no return: as [`Journal::step`],
    /// without the check for Ctrl-C (what is left is completed, not undone).
    ///
    /// # Errors
    /// When the log cannot be written.
    pub fn step_committed(&mut self, line: &str) -> Result<()> {
        self.log.append(line)?;
        self.after_step();
        Ok(())
    }

    fn after_step(&mut self) {
        let all = STEPS.fetch_add(1, Ordering::SeqCst) + 1;
        if self.fault.after_step == Some(all) {
            // The test-only fault: die now, as a power cut or kill -9 would,
            // with no destructor, no undo, no unwinding.
            std::process::abort();
        }
        if self.fault.pause_after_step == Some(all)
            && let Some(f) = &self.fault.pause_file
        {
            crate::interrupt::test_pause(f);
        }
    }

    /// Removes the journal: the change is finished (or fully undone).
    ///
    /// # Errors
    /// When the files cannot be removed.
    pub fn retire(self) -> Result<()> {
        retire_paths(&self.plan_path, &self.log_path)
    }
}

/// Removes a journal's log, then its plan (so a half-retired journal is
/// still a plan that recovery can finish). Not synced here: the next
/// journal's plan write syncs this folder before that change begins, and a
/// journal that comes back after a power cut is finished again harmlessly.
fn retire_paths(plan_path: &Path, log_path: &Path) -> Result<()> {
    fsops::remove_file(log_path)?;
    fsops::remove_file(plan_path)?;
    Ok(())
}

/// A journal left behind by a process that did not finish.
#[derive(Debug)]
pub struct Pending {
    /// What it holds.
    pub work: Work,
    /// The log lines, in order (a line torn by a crash is dropped).
    pub lines: Vec<String>,
    plan_path: PathBuf,
    log_path: PathBuf,
}

impl Pending {
    /// Whether the log holds `line`.
    pub fn has(&self, line: &str) -> bool {
        self.lines.iter().any(|l| l == line)
    }

    /// Removes the journal.
    ///
    /// # Errors
    /// When the files cannot be removed.
    pub fn retire(self) -> Result<()> {
        retire_paths(&self.plan_path, &self.log_path)
    }
}

/// True when a journal file exists (cheap; no parsing, no lock).
pub fn any_pending(home: &Home) -> bool {
    std::fs::read_dir(home.journal_dir()).is_ok_and(|rd| {
        rd.flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".json"))
    })
}

/// The numbers `n` of the `op-<n>.json` journals there are, ascending.
fn op_numbers(home: &Home) -> Vec<u64> {
    let mut v: Vec<u64> = std::fs::read_dir(home.journal_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix(OP_PREFIX)?
                .strip_suffix(".json")?
                .parse()
                .ok()
        })
        .collect();
    v.sort_unstable();
    v
}

/// Every journal left in `journal/`: the deployments' plans by id, then
/// the ops in the order they were written. Call under the home lock.
/// Temporary files of an interrupted journal write are removed (the plan was
/// never in place, so nothing had changed).
///
/// # Errors
/// [`Kind::Integrity`] when a plan cannot be parsed (names the file).
pub fn pending(home: &Home) -> Result<Vec<Pending>> {
    let dir = home.journal_dir();
    let rd = match std::fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("list", &dir, e)),
    };
    let mut ids = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(".tmp-") {
            let _ = fsops::remove_file(&e.path());
            continue;
        }
        if let Some(id) = name
            .strip_suffix(".json")
            .and_then(|s| s.parse::<u64>().ok())
        {
            ids.push(id);
        } else if let Some(stem) = name.strip_suffix(".log")
            && (stem.parse::<u64>().is_ok() || stem.starts_with(OP_PREFIX))
            && !dir.join(format!("{stem}.json")).exists()
        {
            // A log whose plan is gone: the journal was retired up to its last file.
            let _ = fsops::remove_file(&e.path());
        }
    }
    ids.sort();
    let mut out = Vec::new();
    for id in ids {
        let (plan_path, log_path) = paths(home, &id.to_string());
        let bytes = std::fs::read(&plan_path).with_path("read the journal", &plan_path)?;
        let backup_dir = home.backups_dir().join(id.to_string());
        if serde_json::from_slice::<Plan>(&bytes).is_err() && !backup_dir.exists() {
            // Torn by a crash while it was written: nothing had changed yet
            // (the first change creates the backup folder, after the flush).
            retire_paths(&plan_path, &log_path)?;
            continue;
        }
        let plan: Plan = serde_json::from_slice(&bytes).map_err(|e| {
            Error::new(
                Kind::Integrity,
                format!("the journal '{}' is damaged", plan_path.display()),
            )
            .cause(e)
            .hint(format!(
                "the files it moved are in '{}'; compare them with the toolkit, then delete the journal file",
                home.backups_dir().join(id.to_string()).display()
            ))
        })?;
        out.push(read_log(Work::Deploy(Box::new(plan)), plan_path, log_path));
    }
    for n in op_numbers(home) {
        let (plan_path, log_path) = paths(home, &format!("{OP_PREFIX}{n}"));
        let bytes = std::fs::read(&plan_path).with_path("read the journal", &plan_path)?;
        match serde_json::from_slice::<Op>(&bytes) {
            Ok(op) => out.push(read_log(Work::Op(op), plan_path, log_path)),
            // Written whole and synced before the op's first change: one a
            // crash tore (or a newer cudnnm wrote) had changed nothing.
            Err(_) if !bytes.ends_with(b"}") => retire_paths(&plan_path, &log_path)?,
            Err(e) => {
                return Err(Error::new(
                    Kind::Integrity,
                    format!("the journal '{}' cannot be read", plan_path.display()),
                )
                .cause(e)
                .hint("a newer cudnnm may have written it: finish it with that version, or delete the file if no change is pending"));
            }
        }
    }
    Ok(out)
}

/// A pending journal with its log read (a line torn by a crash dropped).
fn read_log(work: Work, plan_path: PathBuf, log_path: PathBuf) -> Pending {
    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
    let complete = text.ends_with('\n');
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    if !complete && !text.is_empty() {
        lines.pop();
    }
    Pending {
        work,
        lines,
        plan_path,
        log_path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Kind;

    #[test]
    fn a_torn_plan_is_discarded_only_when_nothing_had_changed() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path());
        fsops::create_dir_all(&home.journal_dir()).unwrap();
        // Torn before its flush returned: no backup folder yet, nothing changed.
        fsops::write_new(
            &home.journal_dir().join("3.json"),
            b"{\"schema\": 1, \"id\"",
        )
        .unwrap();
        fsops::write_new(&home.journal_dir().join("3.log"), b"").unwrap();
        fsops::write_new(&home.journal_dir().join(".tmp-x"), b"").unwrap();
        assert!(any_pending(&home));
        assert!(pending(&home).unwrap().is_empty());
        assert_eq!(std::fs::read_dir(home.journal_dir()).unwrap().count(), 0);
        // Damaged after changes began (its backup folder exists): refuse, keep it.
        fsops::write_new(&home.journal_dir().join("4.json"), b"garbage").unwrap();
        fsops::create_dir_all(&home.backups_dir().join("4/files")).unwrap();
        let e = pending(&home).unwrap_err();
        assert_eq!(e.kind(), Kind::Integrity);
        assert!(e.hint_text().unwrap().contains("backups"), "{e:?}");
        assert!(home.journal_dir().join("4.json").exists());
    }

    #[test]
    fn ops_are_read_back_in_order_and_a_torn_one_is_discarded() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path());
        let op = |id: u64| {
            Op::RemoveBackups(crate::deploy::backup::removal::Removal {
                action: format!("remove backup {id}"),
                items: Vec::new(),
                all_or_none: true,
            })
        };
        let mut a = Journal::begin_op(&home, &op(1), FaultHook::default()).unwrap();
        a.step("aside 1").unwrap();
        let b = Journal::begin_op(&home, &op(2), FaultHook::default()).unwrap();
        assert!(home.journal_dir().join("op-2.json").is_file());
        // Torn while it was written: nothing had changed.
        fsops::write_new(&home.journal_dir().join("op-3.json"), b"{\"kind\": \"remo").unwrap();
        let p = pending(&home).unwrap();
        let actions: Vec<String> = p
            .iter()
            .map(|p| match &p.work {
                Work::Op(Op::RemoveBackups(r)) => r.action.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(actions, ["remove backup 1", "remove backup 2"]);
        assert!(p[0].has("aside 1") && !p[1].has("aside 1"));
        assert!(!home.journal_dir().join("op-3.json").exists());
        a.retire().unwrap();
        b.retire().unwrap();
        assert!(!any_pending(&home));
    }
}

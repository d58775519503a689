//! Crash safety of the guard's other journaled changes
//! (`docs/architecture.md#recovery`): `uninstall --force` of a release that
//! backups need, the default names and a `current/` link points at;
//! `backups remove` (all or none, a first backup and the user's own files
//! among them); `backups prune`; and doctor's soname fixes and their undo.
//! The test-only fault hook kills the process after every journal step in
//! turn; the next command must say what it recovered and leave the change
//! fully undone or fully completed — checked by the bytes: the store
//! release by hash, the backups by hash, what a rollback restores, the copy
//! a fix moved aside and what `--undo-fix` puts back.

// Unix links and processes killed by SIGABRT; the Windows layouts are data
// in the deploy tests.
#![cfg(unix)]

use crate::common;
use crate::deploy_support;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use common::{Run, Sandbox};
use deploy_support::*;

/// A starting point: the sandbox, its toolkit, and what a check compares.
struct World {
    sb: Sandbox,
    tk: PathBuf,
    /// A snapshot taken before the command (what "undone" must give back).
    before: BTreeMap<String, String>,
    /// What the command under test is given (a fix id, …).
    arg: String,
}

fn run_env(sb: &Sandbox, args: &[String], env: &[(&str, String)]) -> Run {
    let mut c = sb.command();
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    Run {
        args: args.iter().map(Into::into).collect(),
        out: common::output(&mut c),
        root: sb.root().to_path_buf(),
    }
}

fn arg(p: &Path) -> String {
    p.display().to_string()
}

/// Kills `args(world)` after step K = 1, 2, … of fresh worlds until a run
/// finishes. After each kill a journal is left; the next command (`list`,
/// which changes nothing else) says it recovered an interrupted `action…`
/// and whether it was undone or completed, and retires the journal; then
/// `check(world, completed)` asserts the bytes. The uninterrupted run is
/// checked as completed too. Returns, per step, whether it completed: undone
/// up to the change's point of no return, completed after it, both seen.
fn every_step(
    make: impl Fn() -> World,
    args: impl Fn(&World) -> Vec<String>,
    action: &str,
    check: impl Fn(&World, bool),
) -> Vec<bool> {
    let clean = make();
    run_env(&clean.sb, &args(&clean), &[]).ok();
    check(&clean, true);
    let mut outcomes = Vec::new();
    for k in 1.. {
        let w = make();
        let r = run_env(
            &w.sb,
            &args(&w),
            &[("CUDNNM_FAULT_AFTER_STEP", k.to_string())],
        );
        if r.out.status.success() {
            assert!(k > 2, "the hook never fired\n{}", r.describe());
            check(&w, true);
            break;
        }
        assert_eq!(
            r.code(),
            -1,
            "step {k}: killed by the hook\n{}",
            r.describe()
        );
        let journal = w.sb.home().join("journal");
        assert!(
            journal.read_dir().unwrap().next().is_some(),
            "step {k}: a journal is left"
        );
        let rec = w.sb.run(["list"]).ok();
        let msg = rec.stderr();
        assert!(
            msg.contains(&format!("recovered an interrupted `{action}")),
            "step {k}: recovery says what it found\n{}",
            rec.describe()
        );
        assert!(
            journal.read_dir().unwrap().next().is_none(),
            "step {k}: journal retired\n{}",
            rec.describe()
        );
        let completed = msg.contains(": completed;");
        assert!(completed || msg.contains(": undone;"), "{}", rec.describe());
        check(&w, completed);
        outcomes.push(completed);
    }
    let first = outcomes
        .iter()
        .position(|c| *c)
        .unwrap_or_else(|| panic!("some steps complete: {outcomes:?}"));
    assert!(first > 0, "the first steps are undone: {outcomes:?}");
    assert!(outcomes[first..].iter().all(|c| *c), "{outcomes:?}");
    outcomes
}

/// 9.1.0.70 and 9.12.0.46 installed; 9.12 deployed by copies, then 9.1:
/// backup 2 holds 9.12's copies by reference to the store (it needs the
/// release's files to restore). 9.12 is the default, `current/cuda-12`
/// points at it. `before`: the toolkit as 9.12 left it, by hash.
fn release_backups_need() -> World {
    let sb = Sandbox::new();
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    put_redist_linux_12(&sb.home(), "9.1.0.70");
    put_redist_linux_12(&sb.home(), "9.12.0.46");
    sb.run(["use", "9.12", "--cuda-root", &arg(&tk), "--mode", "copy"])
        .ok();
    let before = snapshot(&tk.join("targets"));
    sb.run(["use", "9.1", "--cuda-root", &arg(&tk), "--mode", "copy"])
        .ok();
    sb.run(["default", "9.12.0.46"]).ok();
    let store = sb.home().join("store/cuda-12/9.12.0.46");
    World {
        arg: serde_json::to_string(&snapshot(&store)).unwrap(),
        sb,
        tk,
        before,
    }
}

#[test]
fn a_crash_after_any_step_of_uninstall_leaves_the_release_or_removes_it_whole() {
    let outcomes = every_step(
        release_backups_need,
        |_| {
            ["uninstall", "9.12.0.46", "--force"]
                .map(String::from)
                .to_vec()
        },
        "uninstall 9.12.0.46_cuda12`",
        |w, completed| {
            let store = w.sb.home().join("store/cuda-12/9.12.0.46");
            let link = w.sb.home().join("current/cuda-12");
            let config = fs::read_to_string(w.sb.home().join("config.toml")).unwrap();
            if completed {
                assert!(!store.exists(), "the release is gone");
                assert!(fs::symlink_metadata(&link).is_err(), "its link is gone");
                assert!(!config.contains("default"), "{config}");
            } else {
                let was: BTreeMap<String, String> = serde_json::from_str(&w.arg).unwrap();
                assert_eq!(snapshot(&store), was, "the release is whole");
                assert_eq!(
                    fs::canonicalize(&link).unwrap(),
                    fs::canonicalize(&store).unwrap()
                );
                assert!(config.contains("9.12.0.46"), "{config}");
            }
            // Either way backup 2 restores 9.12's bytes exactly.
            w.sb.run(["rollback", "--to", "2"]).ok();
            assert_eq!(snapshot(&w.tk.join("targets")), w.before);
        },
    );
    // plan, kept 2 | removed, unlinked.
    assert_eq!(outcomes, [false, false, true, true]);
}

/// A toolkit that held files of the user's own (backup 1, its first), then
/// 9.1, 9.12, 9.1, 9.12, 9.1 by links: backups 1–5. `before`: the backups
/// folder by hash.
fn four_backups() -> World {
    let sb = Sandbox::new();
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    put_redist_linux_12(&sb.home(), "9.1.0.70");
    put_redist_linux_12(&sb.home(), "9.12.0.46");
    fs::write(
        tk.join("include/cudnn.h"),
        common::fixtures::version_header("7.6.5"),
    )
    .unwrap();
    fs::write(tk.join("lib64/libcudnn.so.7"), b"\x7fELF hand-copied 7.6.5").unwrap();
    for v in ["9.1", "9.12", "9.1", "9.12", "9.1"] {
        sb.run(["use", v, "--cuda-root", &arg(&tk)]).ok();
    }
    // The config's keep_backups is 5: nothing was pruned.
    let backups = sb.home().join("backups");
    assert!(backups.join("5").is_dir());
    World {
        before: snapshot(&backups),
        sb,
        tk,
        arg: String::new(),
    }
}

/// The backups folder by hash without the backups `gone`.
fn without(before: &BTreeMap<String, String>, gone: &[&str]) -> BTreeMap<String, String> {
    before
        .iter()
        .filter(|(k, _)| {
            !gone
                .iter()
                .any(|g| *k == g || k.starts_with(&format!("{g}/")))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[test]
fn a_crash_after_any_step_of_backups_remove_removes_all_or_none() {
    let outcomes = every_step(
        four_backups,
        |_| {
            ["backups", "remove", "1", "3", "--force"]
                .map(String::from)
                .to_vec()
        },
        "remove backups 1, 3`",
        |w, completed| {
            let now = snapshot(&w.sb.home().join("backups"));
            if completed {
                assert_eq!(now, without(&w.before, &["1", "3"]));
            } else {
                // The user's own files in backup 1 are there, byte for byte.
                assert_eq!(now, w.before);
            }
        },
    );
    // plan, aside 1, aside 3 | set aside.
    assert_eq!(outcomes, [false, false, false, true]);
}

#[test]
fn a_crash_after_any_step_of_backups_prune_keeps_or_removes_them_whole() {
    let outcomes = every_step(
        four_backups,
        |_| {
            ["backups", "prune", "--keep", "2"]
                .map(String::from)
                .to_vec()
        },
        "prune backups 2, 3 of '",
        |w, completed| {
            let now = snapshot(&w.sb.home().join("backups"));
            if completed {
                assert_eq!(now, without(&w.before, &["2", "3"]));
            } else {
                assert_eq!(now, w.before);
            }
        },
    );
    assert_eq!(outcomes, [false, false, false, true]);
}

/// The real 9.27 release in a toolkit with its soname chain, whose
/// `libcudnn.so.9` was copied as a file (`relink`), or is missing.
/// `before`: `lib64` by hash; `arg`: the copy's SHA-256.
fn broken_chain(relink: bool) -> World {
    let mut sb = Sandbox::new();
    let tk = crate::doctor::toolkit(&mut sb, true);
    let so9 = tk.join("lib64/libcudnn.so.9");
    fs::remove_file(&so9).unwrap();
    if relink {
        fs::copy(tk.join("lib64/libcudnn.so.9.27.0"), &so9).unwrap();
    }
    World {
        before: snapshot(&tk.join("lib64")),
        arg: if relink { sha(&so9) } else { String::new() },
        sb,
        tk,
    }
}

fn sha(p: &Path) -> String {
    cudnnm::hash::sha256_file(p).unwrap().1.to_string()
}

fn fix_args(w: &World) -> Vec<String> {
    [
        "doctor",
        "--json",
        "--no-load",
        "--cuda-root",
        &arg(&w.tk),
        "--fix",
    ]
    .map(String::from)
    .to_vec()
}

/// The ids of the fixes recorded (`doctor-fix/<id>/fix.toml`).
fn fix_ids(sb: &Sandbox) -> Vec<String> {
    fs::read_dir(sb.home().join("doctor-fix"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().join("fix.toml").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_crash_after_any_step_of_a_relink_fix_leaves_the_copy_or_the_recorded_link() {
    let outcomes = every_step(
        || broken_chain(true),
        fix_args,
        "doctor --fix: ",
        |w, completed| {
            let so9 = w.tk.join("lib64/libcudnn.so.9");
            let ids = fix_ids(&w.sb);
            if !completed {
                assert_eq!(snapshot(&w.tk.join("lib64")), w.before, "the copy is back");
                assert!(ids.is_empty(), "{ids:?}");
                return;
            }
            assert_eq!(
                fs::read_link(&so9).unwrap(),
                Path::new("libcudnn.so.9.27.0")
            );
            let [id] = ids.as_slice() else {
                panic!("one fix recorded: {ids:?}")
            };
            let record =
                fs::read_to_string(w.sb.home().join("doctor-fix").join(id).join("fix.toml"))
                    .unwrap();
            assert!(record.contains("relink-soname"), "{record}");
            // The record's undo puts the copy back, byte for byte.
            w.sb.run(["doctor", "--undo-fix", id]).ok();
            assert_eq!(sha(&so9), w.arg);
            assert_eq!(snapshot(&w.tk.join("lib64")), w.before);
        },
    );
    // plan, moved | linked.
    assert_eq!(outcomes, [false, false, true]);
}

#[test]
fn a_crash_after_any_step_of_a_missing_link_fix_leaves_no_link_or_the_recorded_one() {
    let outcomes = every_step(
        || broken_chain(false),
        fix_args,
        "doctor --fix: ",
        |w, completed| {
            let so9 = w.tk.join("lib64/libcudnn.so.9");
            let ids = fix_ids(&w.sb);
            if !completed {
                assert!(fs::symlink_metadata(&so9).is_err());
                assert!(ids.is_empty(), "{ids:?}");
                return;
            }
            assert_eq!(
                fs::read_link(&so9).unwrap(),
                Path::new("libcudnn.so.9.27.0")
            );
            let [id] = ids.as_slice() else {
                panic!("one fix recorded: {ids:?}")
            };
            w.sb.run(["doctor", "--undo-fix", id]).ok();
            assert_eq!(snapshot(&w.tk.join("lib64")), w.before);
        },
    );
    // plan | linked.
    assert_eq!(outcomes, [false, true]);
}

/// [`broken_chain`] with the relink fix applied; `arg`: its id, and
/// `before` still the copy's folder.
fn relinked() -> World {
    let mut w = broken_chain(true);
    w.sb.run(fix_args(&w)).ok();
    let ids = fix_ids(&w.sb);
    w.arg = ids.first().cloned().expect("a fix recorded");
    w
}

#[test]
fn a_crash_after_any_step_of_undo_fix_leaves_the_link_or_the_copy_back() {
    let outcomes = every_step(
        relinked,
        |w| ["doctor", "--undo-fix", &w.arg].map(String::from).to_vec(),
        "doctor --undo-fix: ",
        |w, completed| {
            let so9 = w.tk.join("lib64/libcudnn.so.9");
            if completed {
                assert_eq!(snapshot(&w.tk.join("lib64")), w.before, "the copy is back");
            } else {
                assert_eq!(
                    fs::read_link(&so9).unwrap(),
                    Path::new("libcudnn.so.9.27.0")
                );
            }
            // Running the undo again (while its record is left) finishes
            // it, byte for byte.
            if fix_ids(&w.sb).contains(&w.arg) {
                w.sb.run(["doctor", "--undo-fix", &w.arg]).ok();
            }
            assert_eq!(snapshot(&w.tk.join("lib64")), w.before);
            assert!(fix_ids(&w.sb).is_empty());
        },
    );
    // plan | unlinked.
    assert_eq!(outcomes, [false, true]);
}

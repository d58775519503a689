//! Crash safety and concurrency of `use` and `rollback` (`docs/architecture.md#deploying`):
//! the test-only fault hook kills the process after every journal step in
//! turn; `kill -9` hits a large `use` at random moments; eight `use`
//! processes race for one toolkit. After each, the next command must find
//! the journal and leave the toolkit fully old or fully new — and say which
//! — with every original byte accounted for by hash.

// These tests build toolkits with Unix links and run as processes on Linux;
// the Windows layout is exercised here as data (see deploy_support).
#![cfg(unix)]

use crate::common;
use crate::deploy_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{Run, Sandbox, fixtures};
use cudnnm::version::Platform;
use deploy_support::*;

/// What a scenario starts from and does.
struct Scenario {
    sb: Sandbox,
    /// The toolkit root.
    tk: PathBuf,
    /// The folder whose snapshot is compared (the toolkit's real files).
    watch: PathBuf,
    /// The command under test.
    args: Vec<String>,
}

fn run_env(sb: &Sandbox, args: &[String], env: &[(&str, String)]) -> Run {
    let mut c = sb.command();
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    Run {
        args: args.iter().map(Into::into).collect(),
        out,
        root: sb.root().to_path_buf(),
    }
}

/// cuDNN-named entries of a snapshot (what a change may touch).
fn cudnn_only(s: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    s.iter()
        .filter(|(k, _)| {
            let n = k.rsplit('/').next().unwrap().to_ascii_lowercase();
            n.starts_with("cudnn") || n.starts_with("libcudnn")
        })
        .map(|(k, v)| (k.rsplit('/').next().unwrap().to_string(), v.clone()))
        .collect()
}

/// A snapshot with the sandbox's own path (in link targets into its store)
/// replaced by `<sandbox>`, so snapshots of two sandboxes compare.
fn rooted(s: &Scenario, snap: BTreeMap<String, String>) -> BTreeMap<String, String> {
    let root = s.sb.root().display().to_string();
    snap.into_iter()
        .map(|(k, v)| (k, v.replace(&root, "<sandbox>")))
        .collect()
}

/// Kills `make()`'s command after step K for K = 1, 2, … until a run
/// finishes; after each kill the next command must recover to the state
/// before (undone) or after (completed), and say which. Returns the
/// outcomes in order.
fn every_step(make: impl Fn() -> Scenario, action: &str) -> Vec<&'static str> {
    // The end state of an uninterrupted run.
    let clean = make();
    run_env(&clean.sb, &clean.args, &[]).ok();
    let after_ok = rooted(&clean, snapshot(&clean.watch));
    let mut outcomes = Vec::new();
    for k in 1.. {
        let s = make();
        let before = rooted(&s, snapshot(&s.watch));
        let before_backups = s.sb.run(["backups", "--json"]).ok().json();
        let r = run_env(
            &s.sb,
            &s.args,
            &[("CUDNNM_FAULT_AFTER_STEP", k.to_string())],
        );
        if r.out.status.success() {
            assert!(k > 5, "the hook never fired\n{}", r.describe());
            assert_eq!(rooted(&s, snapshot(&s.watch)), after_ok);
            break;
        }
        assert_eq!(
            r.code(),
            -1,
            "step {k}: the hook must kill the process\n{}",
            r.describe()
        );
        let journal = s.sb.home().join("journal");
        assert!(
            journal.read_dir().unwrap().next().is_some(),
            "step {k}: a journal is left"
        );
        let rec =
            s.sb.run(["current", "--cuda-root", &s.tk.display().to_string()])
                .ok();
        let msg = rec.stderr();
        assert!(
            msg.contains(&format!("recovered an interrupted `{action}`")),
            "step {k}: recovery must say what it found\n{}",
            rec.describe()
        );
        assert!(
            journal.read_dir().unwrap().next().is_none(),
            "step {k}: journal retired"
        );
        let now = rooted(&s, snapshot(&s.watch));
        let backups = s.sb.run(["backups", "--json"]).ok().json();
        if msg.contains(": undone;") {
            assert_eq!(
                now,
                before,
                "step {k}: undone means fully old\n{}",
                rec.describe()
            );
            assert_eq!(
                backups, before_backups,
                "step {k}: the unfinished backup is gone"
            );
            outcomes.push("undone");
        } else {
            assert!(msg.contains(": completed;"), "{}", rec.describe());
            assert_eq!(
                now,
                after_ok,
                "step {k}: completed means fully new\n{}",
                rec.describe()
            );
            // Every original cuDNN file is in the new backup, byte for byte.
            let newest = backups.as_array().unwrap().last().unwrap()["dir"]
                .as_str()
                .unwrap()
                .to_string();
            let root = s.sb.root().display().to_string();
            let saved: BTreeMap<String, String> = backup_holdings(Path::new(&newest))
                .into_iter()
                .map(|(k, v)| (k, v.replace(&root, "<sandbox>")))
                .collect();
            assert_eq!(
                saved,
                cudnn_only(&before),
                "step {k}: originals kept by hash"
            );
            outcomes.push("completed");
        }
    }
    // Undone up to the verify mark, completed after it; both happen.
    let first_done = outcomes
        .iter()
        .position(|o| *o == "completed")
        .expect("some steps complete");
    assert!(first_done > 3, "{outcomes:?}");
    assert!(
        outcomes[first_done..].iter().all(|o| *o == "completed"),
        "{outcomes:?}"
    );
    outcomes
}

fn linux_from_foreign(mode: &str) -> Scenario {
    let sb = Sandbox::new();
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    put_redist_linux_12(&sb.home(), "9.1.0.70");
    std::fs::write(
        tk.join("include/cudnn.h"),
        fixtures::version_header("7.6.5"),
    )
    .unwrap();
    std::fs::write(
        tk.join("lib64/libcudnn.so.7.6.5"),
        b"\x7fELF hand-copied 7.6.5",
    )
    .unwrap();
    std::os::unix::fs::symlink("libcudnn.so.7.6.5", tk.join("lib64/libcudnn.so.7")).unwrap();
    let args = [
        "use",
        "9.1.0.70",
        "--cuda-root",
        &tk.display().to_string(),
        "--mode",
        mode,
    ]
    .map(String::from)
    .to_vec();
    Scenario {
        watch: tk.join("targets"),
        tk,
        sb,
        args,
    }
}

#[test]
fn a_crash_after_any_step_of_use_leaves_old_or_new_symlink() {
    let o = every_step(|| linux_from_foreign("symlink"), "use 9.1.0.70_cuda12");
    assert!(
        o.len() > 40,
        "every file move and placement is a step: {}",
        o.len()
    );
}

#[test]
fn a_crash_after_any_step_of_use_leaves_old_or_new_copy_windows() {
    let make = || {
        let sb = Sandbox::new();
        let tk = windows_toolkit(&sb.root().join("Program Files/CUDA/v11.2"), "11.2.152");
        put_release(
            &sb.home(),
            &fixtures::windows_zip_8_1_0_77(),
            "8.1.0.77",
            "11.2",
            Platform::WindowsX86_64,
        );
        let f7 = fixtures::windows_zip("11.2", "8.0.5.39", "cudnn-11.1-windows-x64-v8.0.5.39.zip");
        put_release(&sb.home(), &f7, "8.0.5.39", "11.1", Platform::WindowsX86_64);
        let t = tk.display().to_string();
        sb.run(["use", "8.0.5.39", "--cuda-root", &t, "--mode", "copy"])
            .ok();
        std::fs::write(tk.join("bin/cudnn64_7.dll"), b"MZ stale").unwrap();
        let args = ["use", "8.1.0.77", "--cuda-root", &t, "--mode", "copy"]
            .map(String::from)
            .to_vec();
        Scenario {
            watch: tk.clone(),
            tk,
            sb,
            args,
        }
    };
    every_step(make, "use 8.1.0.77_cuda11.2");
}

#[test]
fn a_crash_after_any_step_of_rollback_leaves_old_or_new() {
    let make = || {
        let s = linux_from_foreign("copy");
        let t = s.tk.display().to_string();
        run_env(&s.sb, &s.args, &[]).ok();
        let args = ["rollback", "--cuda-root", &t].map(String::from).to_vec();
        Scenario { args, ..s }
    };
    every_step(make, "rollback to backup 1");
}

/// A tiny xorshift: random moments without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn kill_9_at_random_moments_during_a_large_use() {
    let sb = Sandbox::new();
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    big_linux_release(&sb.home(), "9.1.0", 8);
    big_linux_release(&sb.home(), "9.2.0", 8);
    let t = tk.display().to_string();
    sb.run(["use", "9.1.0", "--cuda-root", &t, "--mode", "copy"])
        .ok();
    let states = [snapshot(&tk.join("targets")), {
        sb.run(["use", "9.2.0", "--cuda-root", &t, "--mode", "copy"])
            .ok();
        snapshot(&tk.join("targets"))
    }];
    // How long one switch takes (median of three), to spread the kills over it.
    let mut times: Vec<u64> = ["9.1.0", "9.2.0", "9.1.0"]
        .iter()
        .map(|v| {
            let start = Instant::now();
            sb.run(["use", v, "--cuda-root", &t, "--mode", "copy"]).ok();
            start.elapsed().as_micros() as u64
        })
        .collect();
    times.sort();
    let mut span = times[1].max(1000);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ span);
    let (mut killed, mut finished, mut undone, mut completed) = (0, 0, 0, 0);
    for i in 0..50 {
        let cur = snapshot(&tk.join("targets"));
        let on = if cur == states[0] { 0 } else { 1 };
        assert_eq!(cur, states[on], "round {i}: toolkit is one whole release");
        let target = if on == 0 { "9.2.0" } else { "9.1.0" };
        let mut child = sb
            .command()
            .args(["use", target, "--cuda-root", &t, "--mode", "copy"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.next() % span.max(1000)));
        let _ = child.kill(); // SIGKILL
        let status = child.wait().unwrap();
        if status.success() {
            finished += 1;
            // The machine got faster than the calibration: aim earlier.
            span = span * 9 / 10;
        } else {
            killed += 1;
        }
        let r = sb.run(["backups", "--json"]).ok();
        let after = snapshot(&tk.join("targets"));
        assert!(
            after == states[0] || after == states[1],
            "round {i}: after a kill the toolkit must hold one whole release\n{}",
            r.describe()
        );
        if r.stderr().contains("recovered") {
            if r.stderr().contains(": undone;") {
                undone += 1;
            } else {
                assert!(r.stderr().contains(": completed;"), "{}", r.describe());
                completed += 1;
            }
        }
        // Nothing lost: the newest backup holds (or the store holds) what it records.
        if let Some(b) = r.json().as_array().unwrap().last() {
            backup_holdings(Path::new(b["dir"].as_str().unwrap()));
        }
    }
    eprintln!(
        "kill -9: {killed} killed ({undone} undone, {completed} completed by recovery), {finished} finished"
    );
    assert!(
        killed >= 10,
        "most rounds should be interrupted: killed {killed}, finished {finished}"
    );
    assert!(
        undone + completed >= 5,
        "kills must land inside the transaction: {undone} undone, {completed} completed"
    );
}

#[test]
fn eight_concurrent_uses_leave_one_complete_release_and_backups_tell_the_story() {
    let sb = Sandbox::new();
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    std::fs::create_dir_all(sb.home()).unwrap();
    std::fs::write(sb.home().join("config.toml"), "keep_backups = 20\n").unwrap();
    let versions: Vec<String> = (1..=8).map(|m| format!("9.{m}.0.1")).collect();
    for v in &versions {
        put_redist_linux_12(&sb.home(), v);
    }
    let t = tk.display().to_string();
    let children: Vec<_> = versions
        .iter()
        .map(|v| {
            sb.command()
                .args(["use", v, "--cuda-root", &t])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let cur = sb.run(["current", "--cuda-root", &t, "--json"]).ok().json();
    let active = cur["toolkits"][0]["release"].as_str().unwrap().to_string();
    assert_eq!(
        cur["toolkits"][0]["drift"]["missing"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        cur["toolkits"][0]["drift"]["extra"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    // Exactly one complete release: the toolkit's cuDNN libraries are the
    // release's, name for name and byte for byte.
    let v = active.trim_end_matches("_cuda12");
    let lib = resolved_cudnn(&tk.join("lib64"));
    let release_lib = resolved_cudnn(&sb.home().join(format!("store/cuda-12/{v}/lib")));
    assert_eq!(lib, release_lib);
    let want =
        cudnnm::hash::sha256_bytes(&fixtures::elf_bytes(&format!("libcudnn.so.9 {v}"), false));
    assert_eq!(lib["libcudnn.so"], want.to_string());
    assert_eq!(
        std::fs::read_to_string(tk.join("include/cudnn_version.h")).unwrap(),
        fixtures::version_header(v)
    );
    // The backups chain: each held what the one before it deployed.
    let j = sb.run(["backups", "--json"]).ok().json();
    let b = j.as_array().unwrap();
    assert_eq!(b.len(), 8);
    assert_eq!(b[0]["held"], "no cuDNN");
    for w in b.windows(2) {
        let deployed = w[0]["reason"]
            .as_str()
            .unwrap()
            .trim_start_matches("before use ")
            .to_string();
        assert_eq!(w[1]["release"].as_str().unwrap(), deployed, "{j:#}");
    }
    let last = b[7]["reason"]
        .as_str()
        .unwrap()
        .trim_start_matches("before use ");
    assert_eq!(last, active);
}

/// Starts `args` paused after journal step `step` (the test-only pause
/// hook), waits until it is paused there, sends it `signal` with `kill`, and
/// returns its output.
fn signal_mid_change(s: &Scenario, step: u64, signal: &str) -> Run {
    signals_mid_change(s, step, &[signal])
}

/// [`signal_mid_change`] with several signals, sent one `kill` after
/// another, each more than half a second after the one before (sooner, a
/// signal counts as the one before delivered again). The process stays
/// paused through them (the pause hook's `.hold` file).
fn signals_mid_change(s: &Scenario, step: u64, signals: &[&str]) -> Run {
    let pause = s.sb.root().join("paused");
    if signals.len() > 1 {
        std::fs::write(s.sb.root().join("paused.hold"), b"").unwrap();
    }
    let mut cmd = s.sb.command();
    cmd.args(&s.args);
    let child = common::spawn_paused(cmd, step, &pause, Stdio::piped(), Stdio::piped());
    for (i, signal) in signals.iter().enumerate() {
        if i > 0 {
            std::thread::sleep(std::time::Duration::from_millis(700));
        }
        let st = std::process::Command::new("kill")
            .args([*signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
    }
    let out = child.wait_with_output().unwrap();
    Run {
        args: s.args.iter().map(Into::into).collect(),
        out,
        root: s.sb.root().to_path_buf(),
    }
}

#[test]
fn ctrl_c_in_the_middle_of_use_undoes_it_and_exits_130() {
    let s = linux_from_foreign("copy");
    let before = snapshot(&s.watch);
    let before_backups = s.sb.run(["backups", "--json"]).ok().json();
    // Steps: 1 plan, 2–4 moves, 5 moved, 6 recorded, 7… placements: paused
    // with the old files in the backup and two new files placed.
    let r = signal_mid_change(&s, 8, "-INT")
        .code_is(130)
        .stderr_has(&["error: interrupted; the toolkit is as it was\nhelp: "]);
    assert!(!r.stderr().contains("recovered"), "{}", r.describe());
    assert_eq!(snapshot(&s.watch), before, "every byte and link as before");
    assert_eq!(
        s.sb.run(["backups", "--json"]).ok().json(),
        before_backups,
        "the unfinished backup is gone"
    );
    assert!(
        s.sb.home()
            .join("journal")
            .read_dir()
            .unwrap()
            .next()
            .is_none(),
        "undone in the same process: no journal left to recover"
    );
    // The next command finds nothing to recover, and the change still works.
    let r = run_env(&s.sb, &s.args, &[]).ok();
    assert!(!r.stderr().contains("recovered"), "{}", r.describe());
    r.stderr_has(&["→ 9.1.0.70"]);
}

#[test]
fn a_second_signal_ends_at_once_saying_the_next_command_finishes_the_undo() {
    let s = linux_from_foreign("copy");
    let before = snapshot(&s.watch);
    // Two different signals, so the second is not merged into the first
    // while both are pending: Ctrl-C, then SIGTERM, 0.7 s later.
    let r = signals_mid_change(&s, 8, &["-INT", "-TERM"]).code_is(130);
    assert!(
        r.stderr().ends_with(
            "error: interrupted again; the change is left for the next cudnnm command to finish undoing\nhelp: run any cudnnm command (e.g. `cudnnm current`) to finish the undo; until then the original files are safe in the change's backup folder\n"
        ),
        "{}",
        r.describe()
    );
    // The journal stays; the next command undoes the change and says so.
    let r =
        s.sb.run(["current", "--cuda-root", &s.tk.display().to_string()])
            .ok();
    r.stderr_has(&[
        "recovered an interrupted `use 9.1.0.70_cuda12`",
        ": undone;",
    ]);
    assert_eq!(snapshot(&s.watch), before, "every byte and link as before");
}

#[test]
fn sigterm_in_the_middle_of_rollback_undoes_it_and_exits_130() {
    let s = linux_from_foreign("symlink");
    let t = s.tk.display().to_string();
    run_env(&s.sb, &s.args, &[]).ok();
    let on_9 = snapshot(&s.watch);
    let rec =
        s.sb.run(["current", "--cuda-root", &t, "--json"])
            .ok()
            .json();
    let s = Scenario {
        args: ["rollback", "--cuda-root", &t].map(String::from).to_vec(),
        ..s
    };
    signal_mid_change(&s, 3, "-TERM")
        .code_is(130)
        .stderr_has(&["error: interrupted; the toolkit is as it was"]);
    assert_eq!(snapshot(&s.watch), on_9);
    assert_eq!(
        s.sb.run(["current", "--cuda-root", &t, "--json"])
            .ok()
            .json(),
        rec,
        "the deployment record is the earlier one"
    );
    assert!(!s.sb.home().join("backups/2").exists());
}

/// A second home, with the 9.12.0.46 fixture in its store.
fn home_with_9_12() -> Sandbox {
    let b = Sandbox::new();
    put_redist_linux_12(&b.home(), "9.12.0.46");
    b
}

#[test]
fn two_homes_deploying_into_one_toolkit_take_turns() {
    let a = linux_from_foreign("symlink");
    let t = a.tk.display().to_string();
    let b = home_with_9_12();
    // Home A's use pauses mid-move (step 3: two of three files moved out).
    let pause = a.sb.root().join("paused");
    let mut cmd = a.sb.command();
    cmd.args(&a.args);
    let mut first = common::spawn_paused(cmd, 3, &pause, Stdio::null(), Stdio::null());
    let mid = snapshot(&a.watch);
    // Home B's use of the same toolkit waits for A, and says so.
    let b_err = b.root().join("b.stderr");
    let mut second = b
        .command()
        .args(["use", "9.12.0.46", "--cuda-root", &t])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&b_err).unwrap())
        .spawn()
        .unwrap();
    let waiting = format!(
        "waiting for another cudnnm process to finish changing '{}' (toolkit lock)",
        std::fs::canonicalize(&a.tk).unwrap().display()
    );
    let start = Instant::now();
    while !std::fs::read_to_string(&b_err).unwrap().contains(&waiting) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "B did not wait: {}",
            std::fs::read_to_string(&b_err).unwrap()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    assert!(second.try_wait().unwrap().is_none(), "B must still wait");
    // Meanwhile a read-only look from a third home says a change is running.
    let c = Sandbox::new();
    let cur = c.run(["current", "--cuda-root", &t]).ok().stdout();
    assert!(
        cur.contains(
            "  a change from another cudnnm home is running: `use 9.1.0.70_cuda12` (backup 1 of"
        ) && cur.contains("it holds the toolkit lock"),
        "{cur}"
    );
    assert_eq!(
        snapshot(&a.watch),
        mid,
        "B touched nothing while A was mid-change"
    );
    std::fs::remove_file(&pause).unwrap();
    assert!(first.wait().unwrap().success());
    let st = second.wait().unwrap();
    assert!(st.success(), "{}", std::fs::read_to_string(&b_err).unwrap());
    // B came second, whole: the toolkit holds 9.12.0.46, and B's backup holds
    // what A deployed (9.1.0.70's links into A's store), not a mix.
    let lib = resolved_cudnn(&a.tk.join("lib64"));
    assert_eq!(
        lib["libcudnn.so"],
        cudnnm::hash::sha256_bytes(&fixtures::elf_bytes("libcudnn.so.9 9.12.0.46", false))
            .to_string()
    );
    let jb = b.run(["backups", "--json"]).ok().json();
    assert_eq!(jb[0]["held"], "9.1.0.70 (from another cudnnm home)");
    let held = backup_holdings(Path::new(jb[0]["dir"].as_str().unwrap()));
    assert!(
        held.keys()
            .all(|n| !n.contains("7.6.5") && n != "libcudnn.so.7"),
        "A's originals went to A's backup, not B's: {held:?}"
    );
    let ja = a.sb.run(["backups", "--json"]).ok().json();
    assert_eq!(ja[0]["held"], "7.6.5 (not from cudnnm)");
    assert_eq!(ja[0]["files"], 3);
}

/// Home A's `use` killed while placing: A's journal log holds a `place`
/// line and no `verified`. Returns the backup id of that change (each
/// attempt undone before it took an id of its own: ids are never reused).
/// A runs with umask 077, as a careful admin's shell does: its marker must
/// still be readable by other users.
fn kill_a_while_placing(a: &Scenario) -> u64 {
    for k in 1..40u64 {
        let mut c = a.sb.wrapped("sh");
        c.args(["-c", "umask 077 && exec \"$0\" \"$@\""])
            .arg(common::bin())
            .args(&a.args)
            .env("CUDNNM_FAULT_AFTER_STEP", k.to_string());
        let r = Run {
            args: a.args.iter().map(Into::into).collect(),
            out: c.output().unwrap(),
            root: a.sb.root().to_path_buf(),
        };
        assert_eq!(r.code(), -1, "step {k}: killed\n{}", r.describe());
        // The attempt's id: one more than the attempts undone before it.
        let id = k;
        let log = std::fs::read_to_string(a.sb.home().join(format!("journal/{id}.log"))).unwrap();
        if log.lines().any(|l| l.starts_with("place ")) {
            assert!(!log.contains("verified"), "{log}");
            return id;
        }
        // Not placing yet: undo it and try one step later.
        a.sb.run(["current", "--cuda-root", &a.tk.display().to_string()])
            .ok()
            .stderr_has(&[": undone;"]);
    }
    panic!("A never reached a place step");
}

#[test]
fn a_home_refuses_a_toolkit_that_another_homes_crash_left_half_changed() {
    let a = linux_from_foreign("copy");
    let t = a.tk.display().to_string();
    let before = snapshot(&a.watch);
    let b = home_with_9_12();
    let id = kill_a_while_placing(&a);
    let marker = a.tk.join(cudnnm::deploy::inflight::FILE);
    let m = std::fs::read_to_string(&marker).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&marker).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644, "other users can read the marker");
    }
    let home_a = std::fs::canonicalize(a.sb.home()).unwrap();
    assert!(
        m.contains(&format!("home = \"{}\"", home_a.display())),
        "{m}"
    );
    assert!(m.contains(&format!("backup = {id}\n")), "{m}");
    let mid = snapshot(&a.watch);
    assert_ne!(mid, before, "A had placed some files");

    // B refuses (exit 8), names A's home and the command that finishes A's
    // change, and touches nothing: no file, no backup, no record.
    let r = b.run(["use", "9.12.0.46", "--cuda-root", &t]);
    assert_eq!(r.code(), 8, "{}", r.describe());
    let finish = format!(
        "cudnnm --home {} current --cuda-root {}",
        home_a.display(),
        std::fs::canonicalize(&a.tk).unwrap().display()
    );
    r.stderr_has(&[
        &format!(
            "has an unfinished change from another cudnnm home: `use 9.1.0.70_cuda12` (backup {id} of"
        ),
        &format!("finish that change first with `{finish}`"),
    ]);
    assert_eq!(snapshot(&a.watch), mid, "B changed nothing");
    assert_eq!(
        b.run(["backups", "--json"]).ok().json(),
        serde_json::json!([])
    );
    assert!(!b.home().join("deployments.toml").exists());
    // B's current shows it, with the same command.
    let cur = b.run(["current", "--cuda-root", &t]).ok().stdout();
    assert!(
        cur.contains(&format!(
            "  unfinished change `use 9.1.0.70_cuda12` (backup {id} of '{}'): finish that change first with `{finish}`",
            home_a.display()
        )),
        "{cur}"
    );
    let j = b.run(["current", "--cuda-root", &t, "--json"]).ok().json();
    let u = &j["toolkits"][0]["unfinished_change"];
    assert_eq!(
        (&u["backup"], &u["action"], &u["running"]),
        (&id.into(), &"use 9.1.0.70_cuda12".into(), &false.into()),
        "{j}"
    );
    assert!(m.ends_with('\n'), "{m:?}");
    // B's doctor says the same, with the same command.
    let f = b
        .run(["doctor", "--json", "--no-load", "--cuda-root", &t])
        .finding("toolkit-change-unfinished");
    assert_eq!(f["commands"][0], finish.as_str(), "{f}");

    // The printed command (A's home) undoes A's change and removes the marker;
    // then B's use goes ahead, and its backup holds A's originals, whole.
    let args: Vec<&str> = finish.split(' ').skip(1).collect();
    b.run(&args).ok().stderr_has(&[": undone;"]);
    assert_eq!(snapshot(&a.watch), before, "fully old again");
    assert!(!marker.exists());
    b.run(["use", "9.12.0.46", "--cuda-root", &t]).ok();
    assert!(!marker.exists(), "B's marker goes when B's change is done");
    let jb = b.run(["backups", "--json"]).ok().json();
    assert_eq!(jb[0]["held"], "7.6.5 (not from cudnnm)");
    assert_eq!(jb[0]["files"], 3);
}

#[test]
fn a_stale_in_flight_marker_is_replaced_not_obeyed() {
    // A marker whose journal is gone (a crash after the journal was retired,
    // or a home deleted since): the change goes ahead and the marker goes.
    let a = linux_from_foreign("symlink");
    let marker = a.tk.join(cudnnm::deploy::inflight::FILE);
    let gone = a.sb.root().join("deleted-home");
    std::fs::write(
        &marker,
        format!(
            "home = \"{}\"\nbackup = 4\naction = \"use 9.0.0.312_cuda12\"\n",
            gone.display()
        ),
    )
    .unwrap();
    run_env(&a.sb, &a.args, &[]).ok();
    assert!(!marker.exists());
    let cur =
        a.sb.run([
            "current",
            "--cuda-root",
            &a.tk.display().to_string(),
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(cur["toolkits"][0]["release"], "9.1.0.70_cuda12");
    // A marker torn by a crash mid-write does not parse: not obeyed, and
    // gone after the next change.
    std::fs::write(&marker, b"home = \"/ho\xff\x00").unwrap();
    a.sb.run(["rollback", "--cuda-root", &a.tk.display().to_string()])
        .ok();
    assert!(!marker.exists());
    // A folder or a link in the marker's place is refused, never written
    // through: the file a link points at keeps its bytes.
    let t = a.tk.display().to_string();
    let before = snapshot(&a.watch);
    let outside = a.sb.root().join("someone-elses.toml");
    std::fs::write(&outside, b"mine\n").unwrap();
    std::os::unix::fs::symlink(&outside, &marker).unwrap();
    run_env(&a.sb, &a.args, &[]).code_is(8).stderr_has(&[
        "is not cudnnm's marker file (a folder or a link is in its place)",
        "help: move '",
    ]);
    assert_eq!(std::fs::read(&outside).unwrap(), b"mine\n");
    std::fs::remove_file(&marker).unwrap();
    std::fs::create_dir(&marker).unwrap();
    a.sb.run(["rollback", "--cuda-root", &t]).code_is(8);
    assert_eq!(snapshot(&a.watch), before, "nothing changed");
    assert!(marker.is_dir());
}

#[test]
fn another_users_unfinished_change_is_refused_and_says_whose_it_is() {
    if !is_root() {
        // Needs a second user (nobody, through setpriv) whom root can set up;
        // a user namespace (`unshare --map-root-user`) maps only one.
        common::skip::skip(
            "needs root, to run cudnnm as a second user (nobody, through setpriv); run the tests as root, as CI does",
        );
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let a = linux_from_foreign("copy");
    kill_a_while_placing(&a);
    let mode = |p: &Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    };
    // A's home is private to A (root); the toolkit is shared with nobody.
    mode(a.sb.root(), 0o755);
    mode(&a.sb.home(), 0o700);
    assert!(
        std::process::Command::new("chmod")
            .args(["-R", "a+rwX"])
            .arg(&a.tk)
            .status()
            .unwrap()
            .success()
    );
    let mid = snapshot(&a.watch);
    let b = home_with_9_12();
    let t = a.tk.display().to_string();
    let r = run_as_nobody(&b, &["use", "9.12.0.46", "--cuda-root", &t]);
    r.code_is(8).stderr_has(&[
        "has an unfinished change from another cudnnm home: `use 9.1.0.70_cuda12`",
        "that home belongs to another user: ask them to run `cudnnm --home",
        "(or run it as that user, e.g. with sudo)",
    ]);
    // A marker nobody may read (written by an older cudnnm, or by hand) is
    // not taken for no marker.
    mode(&a.tk.join(cudnnm::deploy::inflight::FILE), 0o600);
    let r = run_as_nobody(&b, &["use", "9.12.0.46", "--cuda-root", &t]);
    r.code_is(8).stderr_has(&[
        "has an unfinished change from another user's cudnnm home",
        "belongs to another user and cannot be read here",
    ]);
    assert_eq!(snapshot(&a.watch), mid, "nobody changed nothing");
    // A's own next command finishes it.
    a.sb.run(["current", "--cuda-root", &t])
        .ok()
        .stderr_has(&[": undone;"]);
    assert!(!a.tk.join(cudnnm::deploy::inflight::FILE).exists());
}

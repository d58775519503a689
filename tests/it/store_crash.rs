//! Crash safety of `install --force` over an installed release: the
//! test-only fault hook kills the process after each step of the swap (old
//! release moved aside, new one in place, old one deleted). After each kill
//! the store holds the old release or the new one, whole, never neither;
//! the next command (a read like `list`, or another import) says what it
//! recovered and never deletes the old release.

use crate::common;
use crate::deploy_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{Run, Sandbox, fixtures};
use deploy_support::snapshot;

fn run_env(sb: &Sandbox, args: &[&std::ffi::OsStr], env: &[(&str, String)]) -> Run {
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

fn release_dir(sb: &Sandbox) -> PathBuf {
    sb.home().join("store/cuda-11.2/8.1.0.77")
}

/// The release's files by hash, without its receipt (which holds the install time).
fn files(dir: &Path) -> BTreeMap<String, String> {
    let mut s = snapshot(dir);
    s.remove("receipt.toml");
    s
}

/// Two builds of cuDNN 8.1.0.77 for CUDA 11.2 whose DLL differs; the first installed.
fn world() -> (Sandbox, PathBuf, BTreeMap<String, String>) {
    let sb = Sandbox::new();
    for d in ["old", "new", "other"] {
        std::fs::create_dir_all(sb.root().join(d)).unwrap();
    }
    let old = fixtures::windows_zip_8_1_0_77().write(&sb.root().join("old"));
    let mut f = fixtures::windows_zip_8_1_0_77();
    f.replace(
        "cudnn64_8.dll",
        &fixtures::dll_bytes("cudnn64_8.dll 8.1.0.77 rebuilt"),
    );
    let new = f.write(&sb.root().join("new"));
    sb.run(["install".as_ref(), old.as_os_str()]).ok();
    let old_files = files(&release_dir(&sb));
    (sb, new, old_files)
}

#[test]
fn a_forced_reinstall_killed_at_any_step_leaves_the_old_or_the_new_release() {
    // The end state of an uninterrupted run.
    let (clean, new, old_files) = world();
    let install_new = |sb: &Sandbox, env: &[(&str, String)]| {
        run_env(
            sb,
            &["install".as_ref(), new.as_os_str(), "--force".as_ref()],
            env,
        )
    };
    install_new(&clean, &[]).ok();
    let new_files = files(&release_dir(&clean));
    assert_ne!(new_files, old_files);
    let mut outcomes = Vec::new();
    for k in 1.. {
        let (sb, _, before) = world();
        assert_eq!(before, old_files);
        let r = install_new(&sb, &[("CUDNNM_FAULT_AFTER_STEP", k.to_string())]);
        if r.out.status.success() {
            assert!(k > 3, "the hook never fired\n{}", r.describe());
            assert_eq!(files(&release_dir(&sb)), new_files);
            break;
        }
        // Killed by the hook: SIGABRT on Unix, an abort status on Windows.
        assert!(
            r.code() == -1 || (cfg!(windows) && r.code() != 0),
            "step {k}: killed\n{}",
            r.describe()
        );
        // Odd steps: a read comes first; even steps: another import.
        let next = if k % 2 == 1 {
            sb.run(["list", "--json"]).ok()
        } else {
            let other = fixtures::windows_zip_7_1_3().write(&sb.root().join("other"));
            sb.run(["install".as_ref(), other.as_os_str()]).ok()
        };
        let now = files(&release_dir(&sb));
        let listed = sb.run(["list", "--json"]).ok().json();
        assert!(
            listed
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["id"] == "8.1.0.77_cuda11.2"),
            "step {k}: the release is listed\n{listed}"
        );
        let leftovers: Vec<String> = std::fs::read_dir(sb.home().join("store/cuda-11.2"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(leftovers, vec!["8.1.0.77"], "step {k}: nothing left aside");
        if now == old_files {
            next.stderr_has(&["recovered an interrupted `install --force`"]);
            outcomes.push("old");
        } else {
            assert_eq!(
                now,
                new_files,
                "step {k}: whole new release\n{}",
                next.describe()
            );
            outcomes.push("new");
        }
        sb.run(["verify", "--no-load"]).ok();
    }
    assert_eq!(outcomes, vec!["old", "new", "new"]);
}

#[cfg(unix)]
/// `store/.partial-*` folders.
fn partials(sb: &Sandbox) -> Vec<PathBuf> {
    std::fs::read_dir(sb.home().join("store"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".partial-"))
        .map(|e| e.path())
        .collect()
}

#[cfg(unix)]
/// Starts `install ARCHIVE`, paused with the release extracted in
/// `store/.partial-*` and not yet committed; sends it `signal`.
fn signal_mid_install(sb: &Sandbox, archive: &Path, signal: &str) -> Run {
    let pause = sb.root().join("paused");
    let mut cmd = sb.command();
    cmd.args(["install".as_ref(), archive.as_os_str()]);
    let child = common::spawn_paused(
        cmd,
        0,
        &pause,
        std::process::Stdio::piped(),
        std::process::Stdio::piped(),
    );
    assert_eq!(partials(sb).len(), 1, "extracting into a partial folder");
    let st = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let out = child.wait_with_output().unwrap();
    Run {
        args: vec!["install".into(), archive.into()],
        out,
        root: sb.root().to_path_buf(),
    }
}

#[cfg(unix)]
#[test]
fn ctrl_c_during_install_removes_its_partial_folder_and_exits_130() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.root().join("a")).unwrap();
    let zip = fixtures::windows_zip_8_1_0_77().write(&sb.root().join("a"));
    signal_mid_install(&sb, &zip, "-INT")
        .code_is(130)
        .stderr_has(&["error: interrupted; nothing was installed\nhelp: "]);
    assert!(partials(&sb).is_empty(), "{:?}", partials(&sb));
    assert!(
        sb.run(["list", "--json"])
            .ok()
            .json()
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[cfg(unix)]
#[test]
fn a_partial_folder_a_kill_left_is_reported_with_its_size_until_the_next_install() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.root().join("a")).unwrap();
    let zip = fixtures::windows_zip_8_1_0_77().write(&sb.root().join("a"));
    signal_mid_install(&sb, &zip, "-KILL").code_is(-1);
    let left = partials(&sb);
    assert_eq!(left.len(), 1);
    let bytes: u64 = walkdir::WalkDir::new(&left[0])
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert!(bytes > 0);
    let said = format!(
        "warning: an interrupted install left '{}' ({}); the next `cudnnm install` removes it, or delete that folder",
        left[0].display(),
        cudnnm::store::human_size(bytes)
    );
    sb.run(["list"]).ok().stderr_has(&[&said]);
    sb.run(["verify", "--no-load"]).ok().stderr_has(&[&said]);
    let d = sb.run(["doctor", "--json"]).json();
    let f = d["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "store-partial-left")
        .unwrap_or_else(|| panic!("{d}"))
        .clone();
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains(&left[0].display().to_string()),
        "{f}"
    );
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains(&cudnnm::store::human_size(bytes)),
        "{f}"
    );
    // The next install sweeps it and says nothing more about it.
    sb.run(["install".as_ref(), zip.as_os_str()]).ok();
    assert!(partials(&sb).is_empty());
    let r = sb.run(["list"]).ok();
    assert!(
        !r.stderr().contains("interrupted install"),
        "{}",
        r.describe()
    );
}

#[cfg(unix)]
#[test]
fn ctrl_c_while_a_real_wheel_is_being_extracted_removes_its_partial_folder() {
    // The real 68 MB cuDNN 9.27 wheel: extraction runs long enough to be
    // interrupted in the middle of writing a library, as in the field.
    let wheel = common::real_wheel("nvidia_cudnn_jit_cu12-9.27.0.42");
    let sb = Sandbox::new();
    let child = sb
        .command()
        .args(["install".as_ref(), wheel.as_os_str()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let written = loop {
        let bytes: u64 = walkdir::WalkDir::new(sb.home().join("store"))
            .into_iter()
            .flatten()
            .filter(|e| e.path().to_string_lossy().contains("/.partial-"))
            .filter(|e| e.file_type().is_file())
            .map(|e| e.metadata().map(|m| m.len()).unwrap_or(0))
            .sum();
        if bytes > 1 << 20 {
            break bytes;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "the extraction never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    let st = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let out = child.wait_with_output().unwrap();
    let r = Run {
        args: vec!["install".into(), wheel.clone().into()],
        out,
        root: sb.root().to_path_buf(),
    };
    let r = r
        .code_is(130)
        .stderr_has(&["error: interrupted; nothing was installed"]);
    assert!(written > 1 << 20);
    assert!(partials(&sb).is_empty(), "{}", r.describe());
    // Nothing else is left in the store either.
    let left: Vec<_> = std::fs::read_dir(sb.home().join("store"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// One interruption delivered twice within moments (`timeout -s INT`
/// signals cudnnm and then its process group; a terminal's Ctrl-C can
/// reach a process twice the same way) is one signal: the import stops
/// and removes its partial folder, as for a single Ctrl-C, instead of
/// ending at once and leaving the folder.
#[cfg(unix)]
#[test]
fn two_signals_within_moments_during_a_real_wheel_import_count_as_one() {
    let wheel = common::real_wheel("nvidia_cudnn_jit_cu12-9.27.0.42");
    for gap in [10, 50] {
        let sb = Sandbox::new();
        let child = sb
            .command()
            .args(["install".as_ref(), wheel.as_os_str()])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        loop {
            let bytes: u64 = walkdir::WalkDir::new(sb.home().join("store"))
                .into_iter()
                .flatten()
                .filter(|e| e.path().to_string_lossy().contains("/.partial-"))
                .filter(|e| e.file_type().is_file())
                .map(|e| e.metadata().map(|m| m.len()).unwrap_or(0))
                .sum();
            if bytes > 1 << 20 {
                break;
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(60),
                "the extraction never started"
            );
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        common::signal("-INT", child.id());
        std::thread::sleep(std::time::Duration::from_millis(gap));
        common::signal("-INT", child.id());
        let out = child.wait_with_output().unwrap();
        let r = Run {
            args: vec!["install".into(), wheel.clone().into()],
            out,
            root: sb.root().to_path_buf(),
        };
        let r = r
            .code_is(130)
            .stderr_has(&["error: interrupted; nothing was installed"]);
        assert!(
            !r.stderr().contains("interrupted again"),
            "{gap} ms apart\n{}",
            r.describe()
        );
        assert!(partials(&sb).is_empty(), "{gap} ms apart\n{}", r.describe());
    }
}

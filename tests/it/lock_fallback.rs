//! The home lock on a file system that cannot lock (Lustre without `flock`,
//! NFS with `nolock`), with the failure injected
//! (`CUDNNM_TEST_LOCK_UNSUPPORTED`): a second process waits on the exclusive
//! lock file `lock.held` while its holder lives, names the holder, and takes
//! the file over once that process is killed.

#![cfg(target_os = "linux")]

use crate::common;

use std::time::Duration;

use common::Sandbox;

/// Field 22 of `/proc/PID/stat`: when the process started.
fn start_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 1..];
    rest.split_whitespace().nth(19).unwrap().parse().unwrap()
}

/// A live process of this host (`sleep 60`) recorded as the holder of the
/// lock file `held`; returns the process and its host name.
fn live_holder(held: &std::path::Path) -> (std::process::Child, String) {
    let holder = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let pid = holder.id();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string();
    std::fs::write(
        held,
        format!(
            "host = \"{host}\"\npid = {pid}\nsince = 0\nstarted = {}\n",
            start_ticks(pid)
        ),
    )
    .unwrap();
    (holder, host)
}

#[test]
fn a_waiter_takes_over_the_lock_file_of_a_killed_process() {
    let mut sb = Sandbox::new();
    sb.set_env("CUDNNM_TEST_LOCK_UNSUPPORTED", "1");
    let dir = sb.root().join("archives");
    std::fs::create_dir_all(&dir).unwrap();
    let archive = common::fixtures::redist_linux("9.1.0.70", "12").write(&dir);

    // Another process of this host holds the lock file.
    std::fs::create_dir_all(sb.home()).unwrap();
    let held = sb.home().join("lock.held");
    let (mut holder, host) = live_holder(&held);
    let pid = holder.id();

    let mut waiter = sb
        .command()
        .arg("install")
        .arg(&archive)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        waiter.try_wait().unwrap().is_none(),
        "cudnnm did not wait for a live holder"
    );
    assert!(!sb.home().join("store/cuda-12/9.1.0.70").exists());

    holder.kill().unwrap();
    holder.wait().unwrap();
    let out = waiter.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "waiting for another cudnnm process to finish (host '{host}', pid {pid}, for "
        )),
        "{stderr}"
    );
    assert!(
        sb.home()
            .join("store/cuda-12/9.1.0.70/receipt.toml")
            .is_file()
    );
    assert!(!held.exists(), "the lock file was not removed");

    // Two cudnnm processes at once through the fallback: both finish.
    let a = common::fixtures::redist_linux("9.2.0.82", "12").write(&dir);
    let b = common::fixtures::redist_linux("9.3.0.75", "12").write(&dir);
    let first = sb.command().arg("install").arg(&a).spawn().unwrap();
    let second = sb.command().arg("install").arg(&b).output().unwrap();
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success() && second.status.success());
    assert_eq!(
        sb.run(["list", "--json"])
            .ok()
            .json()
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert!(!held.exists());
}

/// The toolkit lock through the same fallback: `use` waits on the toolkit's
/// `.cudnnm-lock.held` while another live process of this host holds it,
/// then deploys once that process is killed, and leaves no lock file behind.
#[test]
fn use_waits_on_the_toolkit_lock_file_of_a_live_holder() {
    let mut sb = Sandbox::new();
    sb.set_env("CUDNNM_TEST_LOCK_UNSUPPORTED", "1");
    crate::deploy_support::put_redist_linux_12(&sb.home(), "9.1.0.70");
    let tk = crate::deploy_support::linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");

    let held = tk.join(".cudnnm-lock.held");
    let (mut holder, _host) = live_holder(&held);

    let waiter = sb
        .command()
        .args(["use", "9.1.0.70", "--cuda-root"])
        .arg(&tk)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        !tk.join("lib64/libcudnn.so.9").exists(),
        "cudnnm changed the toolkit while another process held its lock file"
    );

    holder.kill().unwrap();
    holder.wait().unwrap();
    let out = waiter.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("toolkit lock"), "{stderr}");
    assert!(
        std::fs::symlink_metadata(tk.join("lib64/libcudnn.so.9")).is_ok(),
        "{stderr}"
    );
    assert!(!held.exists(), "the toolkit lock file was not removed");
}

//! `doctor --fix` redeploys a drifted release for real: the real cuDNN
//! 9.12.0.46 build imported with `cudnnm install`, deployed with `use` in
//! each mode, then edited and trimmed by hand in the toolkit. `doctor`
//! reports `deployment-drift`; `--fix` runs a `use` transaction of the
//! recorded release by the recorded mode; `verify` is clean; and `rollback`
//! puts the drifted bytes back exactly, because the fix backed them up like
//! any change.

// These tests build toolkits with Unix links and run as processes on Linux.
#![cfg(unix)]

use crate::common;
use crate::deploy_support;

use std::fs;
use std::path::{Path, PathBuf};

use common::{Run, Sandbox, real_wheel};
use cudnnm::hash::sha256_file;
use deploy_support::linux_toolkit;

/// `path` as doctor quotes it in the commands it prints (POSIX sh).
fn q(path: &str) -> String {
    cudnnm::quote::sh_quote(path)
}

fn sha(p: &Path) -> String {
    sha256_file(p).unwrap().1.to_string()
}

fn finding_ids(r: &Run) -> Vec<String> {
    r.json()["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("no findings array\n{}", r.describe()))
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

fn doctor(sb: &Sandbox, tk: &str, extra: &[&str]) -> Run {
    let mut args = vec!["doctor", "--json", "--no-load", "--cuda-root", tk];
    args.extend_from_slice(extra);
    sb.run(args)
}

/// The real 9.12.0.46 release deployed by `mode` into a sandbox CUDA 12.4
/// toolkit; the toolkit root (as `use` records it) and the store release folder.
fn deployed(sb: &Sandbox, mode: &str) -> (PathBuf, PathBuf) {
    let tk = linux_toolkit(&sb.root().join("cuda-12.4 (sandbox)"), "12.4.1");
    sb.run([
        "install".as_ref(),
        real_wheel("nvidia_cudnn_jit_cu12-9.12.0.46").as_os_str(),
    ])
    .ok();
    let t = tk.display().to_string();
    sb.run(["use", "9.12.0.46", "--cuda-root", &t, "--mode", mode])
        .ok()
        .stderr_has(&[&format!("({mode}, backup 1)")]);
    (
        fs::canonicalize(&tk).unwrap(),
        sb.home().join("store/cuda-12/9.12.0.46+jit"),
    )
}

fn drift_is_fixed_and_the_fix_rolls_back(mode: &str) {
    let sb = Sandbox::new();
    let (tk, release) = deployed(&sb, mode);
    let t = tk.display().to_string();
    let q = q(&t);
    sb.run(["verify"]).ok();

    // Drift: cudnn.h replaced by an edited copy, cudnn_backend.h deleted.
    let h = tk.join("include/cudnn.h");
    let mut edited = fs::read(release.join("include/cudnn.h")).unwrap();
    edited.extend_from_slice(b"\n/* edited by hand in the toolkit */\n");
    fs::remove_file(&h).unwrap();
    fs::write(&h, &edited).unwrap();
    let edited_sha = sha(&h);
    fs::remove_file(tk.join("include/cudnn_backend.h")).unwrap();

    let r = doctor(&sb, &t, &[]).code_is(7);
    assert!(
        finding_ids(&r).contains(&"deployment-drift".to_string()),
        "{}",
        r.describe()
    );
    let drift = r.finding("deployment-drift");
    assert_eq!(drift["seen"].as_array().unwrap().len(), 2, "{drift}");
    assert_eq!(
        drift["commands"][0],
        format!("cudnnm use 9.12.0.46_cuda12+jit --cuda-root {q} --mode {mode}")
    );
    sb.run(["verify"]).code_is(7);

    let r = doctor(&sb, &t, &["--fix"]).stderr_has(&[&format!(
        "fix applied [deployment-drift]: deployed cuDNN 9.12.0.46_cuda12+jit again into '{t}' ({mode}); the files found there are in backup 2"
    )]);
    assert!(
        !finding_ids(&r).contains(&"deployment-drift".to_string()),
        "the report after --fix is taken again\n{}",
        r.describe()
    );
    sb.run(["verify"]).ok();
    assert_eq!(sha(&h), sha(&release.join("include/cudnn.h")));
    assert!(tk.join("include/cudnn_backend.h").exists());
    let link = fs::symlink_metadata(&h).unwrap().file_type().is_symlink();
    assert_eq!(link, mode == "symlink", "placed by the recorded mode");
    let backups = sb.run(["backups", "--json"]).ok().json();
    assert_eq!(
        backups.as_array().map(Vec::len),
        Some(2),
        "the fix is one change with one backup: {backups}"
    );

    // `rollback` undoes the fix: the drifted bytes come back exactly.
    sb.run(["rollback", "--cuda-root", &t])
        .ok()
        .stderr_has(&["restored backup 2"]);
    let m = fs::symlink_metadata(&h).unwrap();
    assert!(m.is_file(), "the edited copy, not a link");
    assert_eq!(sha(&h), edited_sha);
    assert!(!tk.join("include/cudnn_backend.h").exists());
    // The restored edit is the user's, recorded as such: verify agrees with
    // `current` and names it rather than calling it drift.
    let v = sb.run(["verify"]).ok();
    assert!(
        v.stdout()
            .contains("include/cudnn.h: restored by rollback from backup 2"),
        "{}",
        v.describe()
    );
    // And the fix can be rolled back in turn: the redeployed state returns.
    sb.run(["rollback", "--cuda-root", &t]).ok();
    sb.run(["verify"]).ok();
    assert_eq!(sha(&h), sha(&release.join("include/cudnn.h")));
}

#[test]
fn drift_in_a_copy_deployment_is_fixed_and_the_fix_rolls_back() {
    drift_is_fixed_and_the_fix_rolls_back("copy");
}

#[test]
fn drift_in_a_symlink_deployment_is_fixed_and_the_fix_rolls_back() {
    drift_is_fixed_and_the_fix_rolls_back("symlink");
}

#[test]
fn drift_in_a_hardlink_deployment_is_fixed_and_the_fix_rolls_back() {
    drift_is_fixed_and_the_fix_rolls_back("hardlink");
}

#[test]
fn a_drift_repaired_by_hand_before_the_fix_runs_is_left_alone() {
    // The fix checks its premise again: when the toolkit matches its record
    // by the time it runs, nothing changes and no backup is made.
    let sb = Sandbox::new();
    let (tk, _) = deployed(&sb, "copy");
    let env = cudnnm::env::Env::from_vars(Vec::<(String, String)>::new(), "/", false);
    let home = cudnnm::home::Home::new(sb.home());
    // As `doctor --fix` runs it: under the home lock, through the change guard.
    let redeploy = |release: &str| {
        let lock = home.lock(|| {}).unwrap();
        let change =
            cudnnm::deploy::Guard::begin(lock, &home, &env, &cudnnm::deploy::Silent).unwrap();
        change.redeploy(&tk, release)
    };
    let r = redeploy("9.12.0.46_cuda12+jit").unwrap();
    assert!(
        matches!(r, cudnnm::deploy::Redeployed::AlreadyClean),
        "{r:?}"
    );
    let backups = sb.run(["backups", "--json"]).ok().json();
    assert_eq!(backups.as_array().map(Vec::len), Some(1), "{backups}");
    let e = redeploy("9.27.0.42_cuda12+jit").unwrap_err();
    assert_eq!(e.kind(), cudnnm::error::Kind::Conflict);
    assert!(
        e.message()
            .contains("now records cuDNN 9.12.0.46_cuda12+jit"),
        "{e}"
    );
}

/// A fixture jit wheel of 9.27.0.42 (the release the tester used), written
/// under the sandbox and installed; its path.
fn install_jit_9_27(sb: &Sandbox) -> PathBuf {
    let w = common::fixtures::wheel("nvidia_cudnn_jit_cu12", "9.27.0.42", false).write(sb.root());
    sb.run(["install".as_ref(), w.as_os_str()]).ok();
    w
}

/// A sandbox CUDA 12.4 toolkit named `name`, canonical.
fn toolkit(sb: &Sandbox, name: &str) -> PathBuf {
    let tk = linux_toolkit(&sb.root().join(name), "12.4.1");
    fs::canonicalize(tk).unwrap()
}

/// Appends a line to the toolkit's `include/cudnn.h` (replacing the file,
/// so a link deployment's store file is untouched); its new SHA-256.
fn edit_header_copy(tk: &Path) -> String {
    let h = tk.join("include/cudnn.h");
    let mut bytes = fs::read(&h).unwrap();
    bytes.extend_from_slice(b"\n/* edited by hand */\n");
    fs::remove_file(&h).unwrap();
    fs::write(&h, &bytes).unwrap();
    sha(&h)
}

#[test]
fn fix_with_cuda_root_changes_only_the_named_toolkit() {
    let sb = Sandbox::new();
    install_jit_9_27(&sb);
    let a = toolkit(&sb, "cuda-a");
    let b = toolkit(&sb, "cuda-b");
    let (ta, tb) = (a.display().to_string(), b.display().to_string());
    for t in [&ta, &tb] {
        sb.run(["use", "9.27.0.42", "--cuda-root", t, "--mode", "copy"])
            .ok();
    }
    let release = sb.home().join("store/cuda-12/9.27.0.42+jit");
    edit_header_copy(&a);
    let b_sha = edit_header_copy(&b);
    let b_before = common::listing(&b);

    let r = doctor(&sb, &ta, &["--fix"])
        .code_is(7)
        .stderr_has(&[
            &format!("fix applied [deployment-drift]: deployed cuDNN 9.27.0.42_cuda12+jit again into '{ta}' (copy)"),
            &format!("fix skipped [deployment-drift]: not applied: '{tb}' is not in a toolkit named with --cuda-root"),
        ]);
    // A is repaired; B is still reported, with its fix not counted as applicable.
    assert_eq!(
        sha(&a.join("include/cudnn.h")),
        sha(&release.join("include/cudnn.h"))
    );
    assert_eq!(
        sha(&b.join("include/cudnn.h")),
        b_sha,
        "B's bytes unchanged"
    );
    assert_eq!(common::listing(&b), b_before, "nothing else in B changed");
    let drift: Vec<serde_json::Value> = r.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "deployment-drift")
        .cloned()
        .collect();
    assert_eq!(drift.len(), 1, "only B drifts now: {drift:?}");
    assert!(
        drift[0]["title"].as_str().unwrap().contains(&tb),
        "{drift:?}"
    );
    assert!(drift[0].get("auto_fix").is_none(), "{drift:?}");
    assert_eq!(
        drift[0]["held_back"],
        format!("not applied: '{tb}' is not in a toolkit named with --cuda-root")
    );
    // Only one backup was made, by the fix of A (plus the two `use`s).
    let backups = sb.run(["backups", "--json"]).ok().json();
    assert_eq!(backups.as_array().map(Vec::len), Some(3), "{backups}");
}

#[test]
fn a_toolkit_taken_over_by_another_home_is_not_redeployed() {
    let sb = Sandbox::new();
    install_jit_9_27(&sb);
    let tk = toolkit(&sb, "cuda-shared");
    let t = tk.display().to_string();
    let q = q(&t);
    sb.run(["use", "9.27.0.42", "--cuda-root", &t, "--mode", "copy"])
        .ok();
    // Another home deploys cuDNN 9.1.0.70 into the same toolkit.
    let other = Sandbox::new();
    let w = common::fixtures::wheel("nvidia_cudnn_cu12", "9.1.0.70", false).write(other.root());
    other.run(["install".as_ref(), w.as_os_str()]).ok();
    other
        .run(["use", "9.1.0.70", "--cuda-root", &t, "--mode", "copy"])
        .ok();
    let before = common::listing(&tk);
    let header = sha(&tk.join("include/cudnn_version.h"));

    let r = doctor(&sb, &t, &["--fix"]).stderr_has(&[&format!(
        "fix skipped [deployment-drift]: '{t}' now holds cuDNN 9.1.0 (not this home's record of 9.27.0.42_cuda12+jit); redeploying would undo that change — run `cudnnm use 9.27.0.42_cuda12+jit --cuda-root"
    )]);
    assert!(!r.stderr().contains("fix applied"), "{}", r.describe());
    assert_eq!(common::listing(&tk), before, "the other home's files stay");
    assert_eq!(sha(&tk.join("include/cudnn_version.h")), header);
    let f = r.finding("deployment-drift");
    assert_eq!(
        f["title"],
        format!("{t} now holds cuDNN 9.1.0 (not this home's record of 9.27.0.42_cuda12+jit)")
    );
    assert_eq!(f["severity"], "warning");
    assert!(f.get("auto_fix").is_none(), "{f}");
    assert_eq!(
        f["commands"][0],
        format!("cudnnm use 9.27.0.42_cuda12+jit --cuda-root {q} --mode copy")
    );
}

/// `sb` deploys the jit 9.27 by copy into a toolkit `cuda-shared`, then a
/// second home (returned, so it lives as long as the test) deploys its
/// 9.1.0.70 there: the toolkit's path is returned too.
fn switched_by_another_home(sb: &Sandbox) -> (Sandbox, String) {
    install_jit_9_27(sb);
    let tk = toolkit(sb, "cuda-shared");
    let t = tk.display().to_string();
    sb.run(["use", "9.27.0.42", "--cuda-root", &t, "--mode", "copy"])
        .ok();
    let other = Sandbox::new();
    let w = common::fixtures::wheel("nvidia_cudnn_cu12", "9.1.0.70", false).write(other.root());
    other.run(["install".as_ref(), w.as_os_str()]).ok();
    other
        .run(["use", "9.1.0.70", "--cuda-root", &t, "--mode", "copy"])
        .ok();
    (other, t)
}

/// `verify` in a home whose deployment another home replaced since: the
/// toolkit holds the other home's release, which is not this home's error
/// (exit 0), said as doctor says it, with no redeploy suggested over it.
#[test]
fn verify_says_a_toolkit_now_holds_another_homes_release() {
    let sb = Sandbox::new();
    let (_other, t) = switched_by_another_home(&sb);
    let r = sb.run(["verify", "--no-load"]).ok();
    let out = r.stdout();
    assert!(
        out.contains(&format!(
            "  replaced  9.27.0.42_cuda12+jit  in {t}: the toolkit now holds cuDNN 9.1.0"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "help: '{t}' now holds cuDNN 9.1.0 (not this home's record of 9.27.0.42_cuda12+jit): another cudnnm home, or you, deployed it since"
        )),
        "{out}"
    );
    assert!(out.contains("not an error of this home"), "{out}");
    assert!(!out.contains("deploys 9.27.0.42_cuda12+jit again"), "{out}");
    let j = sb.run(["verify", "--no-load", "--json"]).ok().json();
    assert_eq!(j["healthy"], true, "{j}");
    assert_eq!(j["deployments"][0]["now_holds"], "9.1.0", "{j}");
}

/// An edit made through a link deployment lands in the store: doctor names
/// the damaged store release (not drift, which a redeploy cannot fix), with
/// the commands that repair it from the jit wheel's own requirement; verify
/// says the same; and that sequence works.
fn edit_through_a_link_deployment_is_store_damage(mode: &str) {
    let sb = Sandbox::new();
    let wheel = install_jit_9_27(&sb);
    let tk = toolkit(&sb, "cuda-linked");
    let t = tk.display().to_string();
    let q = q(&t);
    sb.run(["use", "9.27.0.42", "--cuda-root", &t, "--mode", mode])
        .ok();
    let release = sb.home().join("store/cuda-12/9.27.0.42+jit");
    let store_h = release.join("include/cudnn_version.h");
    let size = fs::metadata(&store_h).unwrap().len();
    // `echo >> TOOLKIT/include/cudnn_version.h`
    let mut h = fs::OpenOptions::new()
        .append(true)
        .open(tk.join("include/cudnn_version.h"))
        .unwrap();
    std::io::Write::write_all(&mut h, b"\n").unwrap();
    drop(h);
    assert_eq!(
        fs::metadata(&store_h).unwrap().len(),
        size + 1,
        "written through"
    );

    let r = doctor(&sb, &t, &[]).code_is(7);
    let ids = finding_ids(&r);
    assert!(
        !ids.contains(&"deployment-drift".to_string()),
        "{}",
        r.describe()
    );
    let f = r.finding("store-release-damaged");
    assert_eq!(
        f["title"],
        "the store release 9.27.0.42_cuda12+jit changed: 1 file(s) differ from its receipt"
    );
    assert_eq!(
        f["seen"],
        serde_json::json!([
            format!(
                "{}: include/cudnn_version.h: {} bytes, expected {size}",
                release.display(),
                size + 1
            ),
            format!("linked from {t} ({mode} deployment): the change shows there too"),
        ])
    );
    assert!(f.get("auto_fix").is_none(), "{f}");
    // A symlink deployment leads to the store, which the reinstall repairs;
    // a hardlink one holds the changed inodes, so it is deployed again.
    let mut commands =
        vec!["cudnnm install pip:nvidia-cudnn-jit-cu12==9.27.0.42 --force".to_string()];
    if mode == "hardlink" {
        commands.push(format!(
            "cudnnm use 9.27.0.42_cuda12+jit --cuda-root {q} --mode {mode}"
        ));
    }
    assert_eq!(f["commands"], serde_json::json!(commands));

    // --fix changes nothing and does not offer the skipped fix again.
    let r = sb
        .run(["doctor", "--no-load", "--fix", "--cuda-root", &t])
        .code_is(7)
        .stderr_has(&["fix skipped [store-release-damaged]: the store release 9.27.0.42_cuda12+jit itself changed; redeploying cannot repair it"]);
    assert!(!r.stderr().contains("fix applied"), "{}", r.describe());
    assert!(!r.stdout().contains("can be applied"), "{}", r.describe());
    assert_eq!(fs::metadata(&store_h).unwrap().len(), size + 1);

    // verify: the same repair, naming the jit package.
    let v = sb.run(["verify", "--no-load"]).code_is(7);
    let said = commands
        .iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", then ");
    assert!(v.stdout().contains(&format!("{said}.")), "{}", v.describe());
    assert!(!v.stdout().contains("rollback"), "{}", v.describe());
    assert!(
        !v.stdout().contains("nvidia-cudnn-cu12"),
        "{}",
        v.describe()
    );
    if mode == "hardlink" {
        // The toolkit's files are the store's: no `use` (a no-op) offered for them.
        assert!(
            v.stdout().contains("these files are the store's own (hardlink deployment): release 9.27.0.42_cuda12+jit itself changed"),
            "{}",
            v.describe()
        );
        assert!(
            !v.stdout().contains("deploys 9.27.0.42_cuda12+jit again"),
            "{}",
            v.describe()
        );
    }

    // Other bytes for the deployed release are refused, the store unchanged.
    let dir = sb.root().join("other");
    fs::create_dir_all(&dir).unwrap();
    let other = common::fixtures::wheel("nvidia_cudnn_jit_cu12", "9.27.0.42", false)
        .replace("License.txt", b"another build's license text")
        .write(&dir);
    sb.run(["install".as_ref(), other.as_os_str(), "--force".as_ref()])
        .code_is(8)
        .stderr_has(&[
            &format!("error: cuDNN 9.27.0.42_cuda12+jit is deployed in {t}; these files are not the ones its receipt records"),
            "help: switch that toolkit to another release first",
        ]);
    assert_eq!(fs::metadata(&store_h).unwrap().len(), size + 1);

    // The sequence works (the local wheel standing in for the download),
    // with the toolkit left deployed throughout.
    sb.run(["install".as_ref(), wheel.as_os_str(), "--force".as_ref()])
        .ok()
        .stderr_has(&[&format!(
            "repaired in place: the imported files are the ones its receipt records (deployed in {t})"
        )]);
    if mode == "hardlink" {
        sb.run([
            "use",
            "9.27.0.42_cuda12+jit",
            "--cuda-root",
            &t,
            "--mode",
            mode,
        ])
        .ok();
    }
    sb.run(["verify", "--no-load"]).ok();
    assert_eq!(fs::metadata(&store_h).unwrap().len(), size);
    let r = doctor(&sb, &t, &[]);
    assert!(
        !finding_ids(&r).contains(&"store-release-damaged".to_string()),
        "{}",
        r.describe()
    );
}

#[test]
fn an_edit_through_a_hardlink_deployment_is_store_damage() {
    edit_through_a_link_deployment_is_store_damage("hardlink");
}

#[test]
fn an_edit_through_a_symlink_deployment_is_store_damage() {
    edit_through_a_link_deployment_is_store_damage("symlink");
}

/// What `sh` makes of a printed command line: `cudnnm` is a shell function
/// that prints each argument it gets on its own line.
fn sh_words(cmd: &str) -> Vec<String> {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("cudnnm() {{ printf '%s\\n' \"$@\"; }}; {cmd}"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{cmd}: {out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The output of a shell line run by `sh -c`, with LD_LIBRARY_PATH unset.
fn sh_output(line: &str) -> String {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(line)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    assert!(out.status.success(), "{line}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn printed_commands_survive_a_shell_for_a_path_with_quotes_dollar_spaces_and_accents() {
    let sb = Sandbox::new();
    install_jit_9_27(&sb);
    let tk = toolkit(&sb, "we ird 'q\" é$x/cuda-12");
    let t = tk.display().to_string();
    assert!(t.contains("we ird 'q\" é$x"), "{t}");
    sb.run(["use", "9.27.0.42", "--cuda-root", &t, "--mode", "copy"])
        .ok();
    edit_header_copy(&tk);

    let r = doctor(&sb, &t, &[]).code_is(7);
    let findings = r.json()["findings"].as_array().unwrap().clone();
    let commands: Vec<String> = findings
        .iter()
        .flat_map(|f| f["commands"].as_array().unwrap().clone())
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    // The redeploy: every argument arrives as printed.
    let redeploy = findings
        .iter()
        .find(|f| f["id"] == "deployment-drift")
        .unwrap()["commands"][0]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        sh_words(&redeploy),
        [
            "use",
            "9.27.0.42_cuda12+jit",
            "--cuda-root",
            &t,
            "--mode",
            "copy"
        ]
    );
    // The loader-path lines: the folder arrives intact.
    let lib = format!("{t}/lib64");
    let export = commands
        .iter()
        .find(|c| c.starts_with("export LD_LIBRARY_PATH="))
        .unwrap_or_else(|| panic!("{}", r.describe()));
    assert_eq!(
        sh_output(&format!("{export}; printf '%s' \"$LD_LIBRARY_PATH\"")),
        lib
    );
    let ldconfig = commands
        .iter()
        .find(|c| c.ends_with("| sudo tee /etc/ld.so.conf.d/cudnn.conf && sudo ldconfig"))
        .unwrap_or_else(|| panic!("{}", r.describe()));
    let echo = ldconfig.split(" | sudo tee").next().unwrap();
    assert_eq!(sh_output(echo), format!("{lib}\n"));

    // And the printed redeploy, run as printed by sh, repairs the toolkit.
    let bin_dir = common::bin().parent().unwrap().to_path_buf();
    let run = std::process::Command::new("sh")
        .arg("-c")
        .arg(&redeploy)
        .env("CUDNNM_HOME", sb.home())
        .env("HOME", sb.root())
        .env(
            "PATH",
            format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap()),
        )
        .output()
        .unwrap();
    assert!(run.status.success(), "{redeploy}: {run:?}");
    sb.run(["verify", "--no-load"]).ok();
}

#[test]
fn after_uninstall_force_verify_names_the_package_the_release_came_from() {
    // The release is gone from the store, but the deployment record kept its
    // source: the reinstall hint names the jit wheel it was imported from,
    // not the catalog's other package of the same release id. A symlink
    // deployment's links dangle now: that is a failure.
    let sb = Sandbox::new();
    let (tk, _) = deployed(&sb, "symlink");
    sb.run(["uninstall", "9.12.0.46", "--force"])
        .ok()
        .stderr_has(&[&format!(
            "cuDNN 9.12.0.46_cuda12+jit stays deployed in '{}' (symlink): its links there will dangle",
            tk.display()
        )]);
    let r = sb.run(["verify", "--no-load"]).code_is(7);
    let out = format!("{}{}", r.stdout(), r.stderr());
    assert!(
        out.contains("9.12.0.46_cuda12+jit is not in the store any more")
            && out.contains("cudnnm install pip:nvidia-cudnn-jit-cu12==9.12.0.46 --force"),
        "{}",
        r.describe()
    );
    assert!(!out.contains("nvidia-cudnn-cu12=="), "{}", r.describe());
}

#[test]
fn a_fix_planned_during_another_homes_change_is_checked_again_under_the_lock() {
    // Home B deployed 9.12; home A's `use 9.27` is mid-change when B's
    // `doctor --fix` looks, so B sees drift and plans a redeploy, then waits
    // for the toolkit lock. A finishes. B must not undo A's finished change.
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let b = Sandbox::new();
    let (tk, _) = deployed(&b, "symlink");
    let t = tk.display().to_string();
    let a = Sandbox::new();
    for v in ["9.12.0.46", "9.27.0.42"] {
        a.run([
            "install".as_ref(),
            real_wheel(&format!("nvidia_cudnn_jit_cu12-{v}")).as_os_str(),
        ])
        .ok();
    }
    let pause = a.root().join("paused");
    let mut cmd = a.command();
    cmd.args(["use", "9.27.0.42", "--cuda-root", &t]);
    let mut first = common::spawn_paused(cmd, 12, &pause, Stdio::null(), Stdio::null());
    let b_err = b.root().join("fix.stderr");
    let fix = b
        .command()
        .args(["doctor", "--fix", "--no-load", "--cuda-root", &t])
        .stdout(Stdio::piped())
        .stderr(fs::File::create(&b_err).unwrap())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !fs::read_to_string(&b_err)
        .unwrap()
        .contains("(toolkit lock)")
    {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "B's fix did not wait for the lock: {}",
            fs::read_to_string(&b_err).unwrap()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    fs::remove_file(&pause).unwrap();
    assert!(first.wait().unwrap().success());
    let out = fix.wait_with_output().unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        fs::read_to_string(&b_err).unwrap()
    );
    assert!(!all.contains("fix applied"), "{all}");
    assert!(
        all.contains(&format!(
            "'{t}' now holds cuDNN 9.27.0 (not this home's record of 9.12.0.46_cuda12+jit)"
        )),
        "{all}"
    );
    // A's change stands, whole.
    let cur = a.run(["current", "--cuda-root", &t, "--json"]).ok().json();
    assert_eq!(cur["toolkits"][0]["release"], "9.27.0.42_cuda12+jit");
    assert!(
        cur["toolkits"][0]["drift"].as_object().is_some_and(|d| d
            .values()
            .all(|v| v.as_array().is_none_or(|a| a.is_empty()))),
        "{cur}"
    );
    a.run(["verify", "--no-load"]).ok();
}

/// The id `--fix` printed in its `undo with `cudnnm doctor --undo-fix ID`` line.
fn undo_id(r: &Run) -> String {
    let err = r.stderr();
    err.split("cudnnm doctor --undo-fix ")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .unwrap_or_else(|| panic!("no undo id\n{}", r.describe()))
        .to_string()
}

/// `soname-link-missing` in a folder of the user's own: `--fix` makes the
/// link (to the file the finding names), the library then loads by its
/// soname and the finding is gone; `--undo-fix` removes exactly that link.
/// Where the folder may not be written, nothing changes and the `ln -s`
/// stays the advice.
#[test]
fn fix_makes_a_missing_soname_link_and_undo_fix_removes_exactly_it() {
    let mut sb = Sandbox::new();
    let tk = crate::doctor::toolkit(&mut sb, true);
    let lib = tk.join("lib64");
    let link = lib.join("libcudnn.so.9");
    fs::remove_file(&link).unwrap();
    let before = common::listing(&tk);
    let ids = |r: &Run| crate::doctor::ids(r);

    let r = crate::doctor::doctor(&sb, &tk, &[]).code_is(7);
    let f = r.finding("soname-link-missing");
    assert_eq!(
        f["auto_fix"],
        serde_json::json!({
            "action": "make-soname-link",
            "dir": lib.display().to_string(),
            "link": "libcudnn.so.9",
            "target": "libcudnn.so.9.27.0",
        }),
        "{}",
        r.describe()
    );
    assert_eq!(
        f["commands"][0],
        format!(
            "ln -s libcudnn.so.9.27.0 {}",
            q(&link.display().to_string())
        )
    );

    let r = crate::doctor::doctor(&sb, &tk, &["--fix"]).ok().stderr_has(&[&format!(
        "fix applied [soname-link-missing]: made the missing link {}/libcudnn.so.9 -> libcudnn.so.9.27.0",
        lib.display()
    )]);
    assert_eq!(
        fs::read_link(&link).unwrap(),
        Path::new("libcudnn.so.9.27.0")
    );
    assert!(
        !ids(&r).contains(&"soname-link-missing".to_string()),
        "{}",
        r.describe()
    );
    // Loaded by its soname in a child process, the library answers 9.27.0.
    assert_eq!(
        r.json()["summary"]["active_cudnn"][0]["version"],
        "9.27.0",
        "{}",
        r.describe()
    );
    let fix_dir = sb.home().join("doctor-fix").join(undo_id(&r));
    let record = fs::read_to_string(fix_dir.join("fix.toml")).unwrap();
    assert!(
        record.contains("action = \"make-soname-link\"")
            && record.contains("target = \"libcudnn.so.9.27.0\""),
        "{record}"
    );

    sb.run(["doctor", "--undo-fix", &undo_id(&r)])
        .ok()
        .stderr_has(&[&format!(
            "removed the link {} -> libcudnn.so.9.27.0 that doctor made",
            link.display()
        )]);
    assert!(fs::symlink_metadata(&link).is_err(), "the link is gone");
    assert_eq!(common::listing(&tk), before, "nothing else changed");
    assert!(!fix_dir.exists());
    let r = crate::doctor::doctor(&sb, &tk, &[]).code_is(7);
    assert_eq!(
        ids(&r)
            .iter()
            .filter(|i| *i == "soname-link-missing")
            .count(),
        1,
        "{}",
        r.describe()
    );

    // A folder this user may not write: nothing is made, the advice stays.
    if !deploy_support::is_root() {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&lib, fs::Permissions::from_mode(0o555)).unwrap();
        let r = crate::doctor::doctor(&sb, &tk, &["--fix"]).code_is(7);
        fs::set_permissions(&lib, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(
            r.stderr().contains(&format!(
                "fix skipped [soname-link-missing]: '{}' is not writable by this user",
                lib.display()
            )),
            "{}",
            r.describe()
        );
        assert!(!r.stderr().contains("fix applied"), "{}", r.describe());
        assert!(fs::symlink_metadata(&link).is_err());
        assert_eq!(
            r.finding("soname-link-missing")["commands"][0],
            format!(
                "ln -s libcudnn.so.9.27.0 {}",
                q(&link.display().to_string())
            )
        );
    }
}

/// `uninstall --force` of a release deployed by copies or hard links: the
/// warning says the files stay and keep working (not that links dangle);
/// `verify` calls the deployment orphaned but whole (exit 0, with how to
/// reinstall it or switch); `current` sees no drift; and the next `use`
/// backs those files up as the release's (known by the deployment
/// record's hashes), not as the user's, and `rollback` puts them back.
fn uninstalled_release_deployed_by(mode: &str) {
    let sb = Sandbox::new();
    let (tk, _) = deployed(&sb, mode);
    install_jit_9_27(&sb);
    let t = tk.display().to_string();
    let q = q(&t);
    let lib = tk.join("lib64/libcudnn.so.9");
    let lib_sha = sha(&lib);
    let before = common::listing(&tk);

    let r = sb.run(["uninstall", "9.12.0.46", "--force"]).ok();
    let what = if mode == "copy" {
        "its copies"
    } else {
        "its hard-linked files (and their bytes on disk)"
    };
    let r = r.stderr_has(&[&format!(
        "cuDNN 9.12.0.46_cuda12+jit stays deployed in '{t}' ({mode}): {what} there stay and keep working"
    )]);
    assert!(!r.stderr().contains("dangle"), "{}", r.describe());
    assert_eq!(common::listing(&tk), before, "the toolkit is untouched");
    assert_eq!(sha(&lib), lib_sha);

    let v = sb.run(["verify", "--no-load"]).ok();
    let out = v.stdout();
    let files = out
        .lines()
        .find(|l| l.starts_with("  orphaned  9.12.0.46_cuda12+jit  in "))
        .unwrap_or_else(|| panic!("{}", v.describe()));
    assert!(
        files.ends_with(
            "the release is not in the store any more; the 20 files placed here match their record and keep working"
        ) && files.contains(&t),
        "{}",
        v.describe()
    );
    assert!(!out.contains("CHANGED"), "{}", v.describe());
    assert!(
        out.contains("`cudnnm install pip:nvidia-cudnn-jit-cu12==9.12.0.46 --force`")
            && out.contains(&format!(
                "`cudnnm use 9.27.0.42_cuda12+jit --cuda-root {q}`"
            )),
        "{}",
        v.describe()
    );
    let j = sb.run(["verify", "--no-load", "--json"]).ok().json();
    assert_eq!(j["healthy"], true, "{j}");
    assert_eq!(j["deployments"][0]["orphaned"], true, "{j}");
    assert!(j["deployments"][0].get("error").is_none(), "{j}");

    let cur = sb.run(["current", "--cuda-root", &t]).ok();
    assert!(cur.stdout().contains("files match"), "{}", cur.describe());

    sb.run(["use", "9.27.0.42", "--cuda-root", &t, "--mode", mode])
        .ok()
        .stderr_has(&[&format!("({mode}, backup 2)")]);
    let backups = sb.run(["backups", "--json"]).ok().json();
    let b2 = backups
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == 2)
        .unwrap_or_else(|| panic!("{backups}"));
    assert_eq!(b2["held"], "9.12.0.46", "{b2}");
    assert_eq!(b2["release"], "9.12.0.46_cuda12+jit", "{b2}");
    assert_eq!(b2["files"], 20, "{b2}");
    assert_eq!(b2["users_files"], serde_json::json!([]), "{b2}");
    assert_eq!(b2["users_bytes"], 0, "{b2}");
    let text = sb.run(["backups"]).ok();
    assert!(!text.stdout().contains("yours"), "{}", text.describe());

    // Undoable: the release's files come back from the backup.
    sb.run(["rollback", "--cuda-root", &t]).ok();
    assert_eq!(sha(&lib), lib_sha);
    assert_eq!(common::listing(&tk), before);
}

#[test]
fn uninstall_force_of_a_copy_deployment_leaves_it_whole_and_the_next_use_backs_it_up_as_the_release()
 {
    uninstalled_release_deployed_by("copy");
}

#[test]
fn uninstall_force_of_a_hardlink_deployment_leaves_it_whole_and_the_next_use_backs_it_up_as_the_release()
 {
    uninstalled_release_deployed_by("hardlink");
}

/// `current` in a home whose deployment another home replaced since judges
/// the toolkit as `verify` does (one function): replaced by cuDNN 9.1.0,
/// not drift, with the command that puts this home's release back.
#[test]
fn current_agrees_with_verify_about_a_toolkit_another_home_switched() {
    let sb = Sandbox::new();
    let (_other, t) = switched_by_another_home(&sb);

    let v = sb.run(["verify", "--no-load", "--json"]).ok().json();
    assert_eq!(v["deployments"][0]["now_holds"], "9.1.0", "{v}");
    let cur = sb.run(["current", "--cuda-root", &t, "--json"]).ok().json();
    assert_eq!(cur["toolkits"][0]["now_holds"], "9.1.0", "{cur}");
    assert_eq!(
        cur["toolkits"][0]["release"], "9.27.0.42_cuda12+jit",
        "{cur}"
    );
    let r = sb.run(["current", "--cuda-root", &t]).ok();
    let line = r
        .stdout()
        .lines()
        .find(|l| l.starts_with(&format!("'{t}' (CUDA 12.4.1): ")))
        .unwrap_or_else(|| panic!("{}", r.describe()))
        .to_string();
    assert!(!line.contains("drift"), "{line}");
    assert!(
        line.contains(
            "replaced: the toolkit now holds cuDNN 9.1.0 (deployed since by another cudnnm home, or by you); this home's record is out of date, not an error of this home"
        ),
        "{line}"
    );
    assert!(
        line.contains(&format!(
            "(`cudnnm use 9.27.0.42_cuda12+jit --cuda-root {} --mode copy` puts 9.27.0.42_cuda12+jit back)",
            q(&t)
        )),
        "{line}"
    );

    // Real drift in a toolkit nobody replaced is still drift.
    let own = toolkit(&sb, "cuda-own");
    let o = own.display().to_string();
    sb.run(["use", "9.27.0.42", "--cuda-root", &o, "--mode", "copy"])
        .ok();
    edit_header_copy(&own);
    let cur = sb.run(["current", "--cuda-root", &o, "--json"]).ok().json();
    assert!(cur["toolkits"][0].get("now_holds").is_none(), "{cur}");
    assert_eq!(
        cur["toolkits"][0]["drift"]["changed"],
        serde_json::json!([own.join("include/cudnn.h")]),
        "{cur}"
    );
}

//! Disk a user can get back: `backups remove` / `prune`, `uninstall --force`
//! sharing the bytes backups need, `cache`, and `du` — measured on real files
//! (bytes and sizes on disk, each hard-linked file once).
#![cfg(unix)]

use std::collections::{BTreeMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::common::Sandbox;
use crate::deploy_support::*;

fn arg(p: &Path) -> String {
    p.display().to_string()
}

/// Bytes under `root` as the disk holds them: every regular file once per
/// inode (hard links once), links not followed.
pub fn unique_bytes(root: &Path) -> u64 {
    let mut seen = HashSet::new();
    walkdir::WalkDir::new(root)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.metadata().unwrap())
        .filter(|m| seen.insert((m.dev(), m.ino())))
        .map(|m| m.len())
        .sum()
}

/// Every file under `root` by relative path: its bytes (links: their target).
fn contents(root: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(root)
        .min_depth(1)
        .into_iter()
        .flatten()
        .filter(|e| !e.file_type().is_dir())
        .map(|e| {
            let rel = e.path().strip_prefix(root).unwrap().display().to_string();
            let v = if e.path_is_symlink() {
                std::fs::read_link(e.path())
                    .unwrap()
                    .display()
                    .to_string()
                    .into_bytes()
            } else {
                std::fs::read(e.path()).unwrap()
            };
            (rel, v)
        })
        .collect()
}

/// A CUDA 12.4 toolkit holding cuDNN 9.1.0.70 copied in by hand (byte for
/// byte the store release's files: release bytes, not the user's), and
/// 9.1.0.70 and 9.12.0.46 in the store.
fn hand_installed_9_1(sb: &Sandbox) -> PathBuf {
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    let r91 = put_redist_linux_12(&sb.home(), "9.1.0.70");
    put_redist_linux_12(&sb.home(), "9.12.0.46");
    for (from, to) in [("include", "include"), ("lib", "lib64")] {
        for e in std::fs::read_dir(r91.join(from)).unwrap().flatten() {
            let dest = tk.join(to).join(e.file_name());
            if e.file_type().unwrap().is_symlink() {
                std::os::unix::fs::symlink(std::fs::read_link(e.path()).unwrap(), dest).unwrap();
            } else {
                std::fs::write(dest, std::fs::read(e.path()).unwrap()).unwrap();
            }
        }
    }
    tk
}

fn ids(sb: &Sandbox) -> Vec<u64> {
    sb.run(["backups", "--json"])
        .ok()
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_u64().unwrap())
        .collect()
}

#[test]
fn backups_remove_checks_every_id_first_refuses_firsts_and_yours_and_says_what_it_frees() {
    let sb = Sandbox::new();
    let tk = hand_installed_9_1(&sb);
    let t = arg(&tk);
    for v in ["9.12", "9.1", "9.12"] {
        sb.run(["use", v, "--cuda-root", &t, "--mode", "copy"]).ok();
    }
    assert_eq!(ids(&sb), vec![1, 2, 3]);
    let backups = sb.home().join("backups");
    let before = contents(&backups);
    // Backup 1 holds the hand-copied files themselves; backup 2 only its
    // record (9.12's copies by reference to the store).
    let own_1 = unique_bytes(&backups.join("1"));
    let own_2 = unique_bytes(&backups.join("2"));
    assert!(own_1 > before["1/backup.toml"].len() as u64, "{own_1}");
    assert_eq!(own_2, before["2/backup.toml"].len() as u64);

    // One bad id: nothing changes, with either spelling.
    sb.run(["backups", "remove", "2", "999"])
        .code_is(3)
        .stderr_has(&["error: there is no backup 999; nothing was removed"]);
    sb.run(["backups", "--remove", "2", "999"]).code_is(3);
    sb.run(["backups", "remove", "2", "x"]).code_is(2);
    assert_eq!(contents(&backups), before);
    // The first backup only with --force.
    let real_tk = std::fs::canonicalize(&tk).unwrap();
    sb.run(["backups", "remove", "2", "1"]).code_is(8).stderr_has(&[&format!(
        "error: backup 1 is the first backup of '{}': the state it was in before cudnnm changed it; nothing was removed",
        real_tk.display()
    )]);
    assert_eq!(contents(&backups), before);

    let home_before = unique_bytes(&sb.home());
    let r = sb
        .run(["--json", "backups", "remove", "1", "2", "--force"])
        .ok()
        .json();
    assert_eq!(r[0]["id"], 1);
    assert_eq!(r[0]["freed"], own_1, "{r}");
    assert_eq!(r[1]["id"], 2);
    assert_eq!(
        r[1]["freed"], own_2,
        "backup 2 keeps 9.12's copies by reference"
    );
    // What it said it freed is what the disk got back.
    assert_eq!(home_before - unique_bytes(&sb.home()), own_1 + own_2);
    assert_eq!(ids(&sb), vec![3]);
    assert!(!backups.join("1").exists() && !backups.join("2").exists());

    // The text form names the backup, its toolkit and the bytes freed.
    sb.run(["use", "9.1", "--cuda-root", &t, "--mode", "copy"])
        .ok();
    let own_4 = unique_bytes(&backups.join("4"));
    sb.run(["backups", "remove", "4"])
        .ok()
        .stderr_has(&[&format!(
            "removed backup 4 of '{}' ({} freed)",
            real_tk.display(),
            cudnnm::store::human_size(own_4)
        )]);
}

#[test]
fn a_removed_backups_id_is_never_handed_out_again() {
    let sb = Sandbox::new();
    let tk = hand_installed_9_1(&sb);
    let t = arg(&tk);
    sb.run(["use", "9.12", "--cuda-root", &t]).ok();
    sb.run(["use", "9.1", "--cuda-root", &t]).ok();
    assert_eq!(ids(&sb), vec![1, 2]);
    sb.run(["backups", "remove", "2"])
        .ok()
        .stderr_has(&["removed backup 2 of "]);
    // The next change gets 3: `rollback --to 2` can never mean another backup.
    sb.run(["use", "9.12", "--cuda-root", &t])
        .ok()
        .stderr_has(&["(symlink, backup 3)"]);
    assert_eq!(ids(&sb), vec![1, 3]);
    sb.run(["rollback", "--to", "2", "--cuda-root", &t])
        .code_is(3)
        .stderr_has(&["error: there is no backup 2"]);
    // Also when the newest is removed right after its change.
    sb.run(["backups", "remove", "3"]).ok();
    sb.run(["use", "9.1", "--cuda-root", &t])
        .ok()
        .stderr_has(&["(symlink, backup 4)"]);
    assert_eq!(
        std::fs::read_to_string(sb.home().join("backups/.last-id")).unwrap(),
        "4\n"
    );
    // A home from before the counter (no `.last-id`) counts from its folders.
    std::fs::remove_file(sb.home().join("backups/.last-id")).unwrap();
    sb.run(["use", "9.12", "--cuda-root", &t])
        .ok()
        .stderr_has(&["(symlink, backup 5)"]);
    assert_eq!(ids(&sb), vec![1, 4, 5]);
}

#[test]
fn files_of_yours_are_named_and_kept_unless_forced_and_prune_never_deletes_them() {
    let sb = Sandbox::new();
    let tk = hand_installed_9_1(&sb);
    let t = arg(&tk);
    sb.run(["use", "9.12", "--cuda-root", &t, "--mode", "copy"])
        .ok();
    // The user patches the deployed header; the next switch keeps it in backup 2.
    let mut patched = std::fs::read(tk.join("include/cudnn.h")).unwrap();
    patched.extend_from_slice(b"\n#define MY_PATCH 1\n");
    std::fs::write(tk.join("include/cudnn.h"), &patched).unwrap();
    std::fs::write(tk.join("lib64/libcudnn_myplugin.so.9"), b"\x7fELF mine").unwrap();
    sb.run(["use", "9.1", "--cuda-root", &t, "--mode", "copy"])
        .ok()
        .stderr_has(&["kept until `cudnnm backups remove 2 --force` deletes them"]);
    for v in ["9.12", "9.1", "9.12", "9.1"] {
        sb.run(["use", v, "--cuda-root", &t, "--mode", "copy"]).ok();
    }
    assert_eq!(ids(&sb), vec![1, 2, 3, 4, 5, 6]);
    let kept = sb.home().join("backups/2/files/include/cudnn.h");
    sb.run(["backups", "remove", "3", "2"])
        .code_is(8)
        .stderr_has(&[&format!(
            "error: backup 2 keeps files of yours that no cuDNN release holds: include/cudnn.h, lib64/libcudnn_myplugin.so.9 (in '{}'); nothing was removed",
            sb.home().join("backups/2/files").display()
        )]);
    assert_eq!(ids(&sb), vec![1, 2, 3, 4, 5, 6]);
    // The newest backup goes only by its id.
    sb.run(["backups", "prune", "--keep", "0"])
        .code_is(2)
        .stderr_has(&["help: keep at least 1"]);
    assert_eq!(ids(&sb), vec![1, 2, 3, 4, 5, 6]);
    // Prune keeps the first, the newest one and backup 2 (yours).
    sb.run(["backups", "prune", "--keep", "1"])
        .ok()
        .stderr_has(&[
            "removed backup 3 of ",
            "removed backup 5 of ",
            "removed 3 backups, ",
        ]);
    assert_eq!(ids(&sb), vec![1, 2, 6]);
    assert_eq!(std::fs::read(&kept).unwrap(), patched);
    sb.run(["backups", "prune"])
        .ok()
        .stderr_has(&["no backups to remove"]);
    // Named, with --force: deleted, and said so.
    sb.run(["backups", "remove", "2", "--force"])
        .ok()
        .stderr_has(&[
            "removed backup 2 of ",
            "and the files of yours it kept: include/cudnn.h, lib64/libcudnn_myplugin.so.9",
        ]);
    assert!(!kept.exists());
    assert_eq!(ids(&sb), vec![1, 6]);
}

/// Size in the stderr line `removed cuDNN … (SIZE freed…`.
fn freed_said(stderr: &str) -> String {
    let at = stderr.find("removed cuDNN ").expect(stderr);
    let rest = &stderr[at..];
    let open = rest.find('(').unwrap();
    let end = rest.find(" freed").unwrap();
    rest[open + 1..end].to_string()
}

#[test]
fn uninstall_force_keeps_one_copy_for_every_backup_that_needs_it_and_says_the_real_bytes_freed() {
    let sb = Sandbox::new();
    let a = linux_toolkit(&sb.root().join("cuda-a"), "12.4.1");
    let b = linux_toolkit(&sb.root().join("cuda-b"), "12.4.1");
    put_redist_linux_12(&sb.home(), "9.1.0.70");
    let r912 = big_linux_release(&sb.home(), "9.12.0.46", 4);
    let release_bytes = unique_bytes(&r912);
    assert!(release_bytes > 12 << 20);
    let mut on_912 = Vec::new();
    for tk in [&a, &b] {
        sb.run(["use", "9.12", "--cuda-root", &arg(tk), "--mode", "copy"])
            .ok();
        on_912.push(snapshot(&tk.join("targets")));
    }
    for tk in [&a, &b] {
        sb.run(["use", "9.1", "--cuda-root", &arg(tk), "--mode", "copy"])
            .ok();
    }
    // Backups 3 and 4 hold 9.12's copies by reference to the store.
    let records = || -> u64 {
        ["3", "4"]
            .iter()
            .map(|i| {
                std::fs::metadata(sb.home().join("backups").join(i).join("backup.toml"))
                    .unwrap()
                    .len()
            })
            .sum()
    };
    let refused = sb.run(["uninstall", "9.12.0.46"]).code_is(8).stderr();
    let (home_before, records_before) = (unique_bytes(&sb.home()), records());
    let r = sb.run(["uninstall", "9.12.0.46", "--force"]).ok();
    // The two backup.toml lose their references to the store (shorter).
    let home_after = unique_bytes(&sb.home()) + records_before - records();
    let r = r.stderr_has(&[
        "in backup 3 (of '",
        "in backup 4 (of '",
        "so it can still be restored",
    ]);
    assert!(!r.stderr().contains("copied"), "{}", r.describe());
    // One copy for both backups: the home shrank (records aside) by what it said.
    assert!(home_after < home_before, "{home_before} -> {home_after}");
    assert_eq!(
        freed_said(&r.stderr()),
        cudnnm::store::human_size(home_before - home_after),
        "{}",
        r.describe()
    );
    assert!(home_before - home_after < release_bytes);
    // The libraries are one file in both backups.
    let lib = "files/lib64/libcudnn_graph.so.9.12.0";
    let (x, y) = (
        std::fs::metadata(sb.home().join("backups/3").join(lib)).unwrap(),
        std::fs::metadata(sb.home().join("backups/4").join(lib)).unwrap(),
    );
    assert_eq!((x.dev(), x.ino()), (y.dev(), y.ino()));
    assert_eq!(x.len(), 4 << 20);
    // The refusal named the bytes that stay: one copy, not one per backup.
    let kept = unique_bytes(&sb.home().join("backups/3/files"));
    assert!(
        refused.contains(&format!(
            "those files ({}) then stay in the backups",
            cudnnm::store::human_size(kept)
        )),
        "{refused}"
    );
    // And both restore 9.12 byte for byte.
    for (i, tk) in [&a, &b].iter().enumerate() {
        sb.run(["rollback", "--to", &(3 + i).to_string()]).ok();
        assert_eq!(snapshot(&tk.join("targets")), on_912[i]);
    }
}

#[test]
fn du_shows_where_the_space_goes_counting_each_hard_linked_file_once() {
    let sb = Sandbox::new();
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    let t = arg(&tk);
    big_linux_release(&sb.home(), "9.1.0.70", 1);
    let r912 = big_linux_release(&sb.home(), "9.12.0.46", 2);
    // A hard-link deployment of 9.12, then a switch: backup 2 holds the
    // toolkit's hard links to 9.12's store files.
    sb.run(["use", "9.12", "--cuda-root", &t, "--mode", "hardlink"])
        .ok();
    sb.run(["use", "9.1", "--cuda-root", &t, "--mode", "copy"])
        .ok();
    let j = sb.run(["du", "--json"]).ok().json();
    assert_eq!(j["total"], unique_bytes(&sb.home()), "{j}");
    let sum: u64 = ["store", "backups_total", "downloads", "other"]
        .iter()
        .map(|k| j[k].as_u64().unwrap())
        .sum();
    assert_eq!(sum, j["total"].as_u64().unwrap());
    assert_eq!(j["store"], unique_bytes(&sb.home().join("store")));
    let rel = j["releases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["release"] == "9.12.0.46_cuda12")
        .unwrap()
        .clone();
    assert_eq!(rel["bytes"], unique_bytes(&r912));
    // Its files (three 2 MiB libraries, headers) are also backup 2's:
    // uninstall would free only its receipt.
    let receipt = std::fs::metadata(r912.join("receipt.toml")).unwrap().len();
    assert_eq!(rel["own"], receipt);
    let shared = rel["bytes"].as_u64().unwrap() - receipt;
    assert!(shared > 3 * (2 << 20));
    let b2 = j["backups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == 2)
        .unwrap()
        .clone();
    assert_eq!(b2["shared"], shared, "{j}");
    assert_eq!(
        b2["own"],
        std::fs::metadata(sb.home().join("backups/2/backup.toml"))
            .unwrap()
            .len()
    );
    // The backups' total does not count those bytes a second time.
    assert_eq!(
        j["backups_total"],
        unique_bytes(&sb.home().join("backups")) - shared
    );
    sb.run(["du"])
        .ok()
        .stdout_has(&["9.12.0.46_cuda12", "total", "shared 6.0 MiB"]);
}

/// After the newest backup is removed, `rollback` falls to an older one; when
/// a file that backup holds was changed since, the rollback names the backup
/// and the file, changes nothing, and leads on: the next older backup that
/// is whole, or removing the damaged one. `current` names the backup that
/// is left, not the removed one.
#[test]
fn a_rollback_to_a_damaged_backup_names_it_and_leads_to_one_that_is_whole() {
    let sb = Sandbox::new();
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    let t = arg(&tk);
    put_redist_linux_12(&sb.home(), "9.1.0.70");
    put_redist_linux_12(&sb.home(), "9.12.0.46");
    sb.run(["use", "9.1", "--cuda-root", &t, "--mode", "copy"])
        .ok();
    // A header of yours: the next change keeps its bytes in backup 2.
    let header = tk.join("include/cudnn_version.h");
    let mut mine = std::fs::read(&header).unwrap();
    mine.extend_from_slice(b"// patched\n");
    std::fs::write(&header, &mine).unwrap();
    sb.run(["use", "9.12", "--cuda-root", &t]).ok();
    sb.run(["use", "9.1", "--cuda-root", &t]).ok();
    assert_eq!(ids(&sb), vec![1, 2, 3]);
    sb.run(["backups", "remove", "3"]).ok();
    sb.run(["current", "--cuda-root", &t]).ok().stdout_has(&[
        "9.1.0.70_cuda12, symlink",
        "(backup 3 was removed; `rollback` restores backup 2)",
    ]);
    let cur = sb.run(["--json", "current", "--cuda-root", &t]).ok().json();
    assert_eq!(cur["toolkits"][0]["backup"], 2);
    assert_eq!(cur["toolkits"][0]["backup_removed"], 3);
    // Backup 2's copy of the header changes (same size, other bytes).
    let kept = sb.home().join("backups/2/files/include/cudnn_version.h");
    let mut bytes = std::fs::read(&kept).unwrap();
    assert_eq!(bytes, mine);
    let last = bytes.len() - 2;
    bytes[last] ^= 0x20;
    let mut perm = std::fs::metadata(&kept).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perm.set_readonly(false);
    std::fs::set_permissions(&kept, perm).unwrap();
    std::fs::write(&kept, &bytes).unwrap();
    let before = snapshot(&tk);
    let real_tk = std::fs::canonicalize(&tk).unwrap();
    for _ in 0..2 {
        let r = sb.run(["rollback", "--cuda-root", &t]).code_is(4).stderr_has(&[
            &format!(
                "error: backup 2 of '{}' is damaged and cannot be restored: '{}' (include/cudnn_version.h) no longer holds what was recorded when the backup was made (its SHA-256 changed)",
                real_tk.display(),
                kept.display()
            ),
            "help: roll back to backup 1, the next older one that is whole (it holds no cuDNN), with `cudnnm rollback --to 1`; or remove the damaged backup with `cudnnm backups remove 2 --force` (the files it holds go with it)",
        ]);
        assert!(!r.stderr().contains("cudnnm verify"), "{}", r.describe());
        assert_eq!(snapshot(&tk), before, "the toolkit is as it was");
    }
    // Either way on works as printed.
    sb.run(["rollback", "--to", "1"])
        .ok()
        .stderr_has(&["9.1.0.70 → (none)"]);
    sb.run(["rollback", "--cuda-root", &t]).ok();
    sb.run(["backups", "remove", "2", "--force"]).ok();
    sb.run(["current", "--cuda-root", &t])
        .ok()
        .stdout_has(&["9.1.0.70_cuda12"]);
}

/// 9.12.0.46 deployed by links in a second toolkit, the default with its
/// `current/cuda-12` link, and needed by backup 2 of the first toolkit
/// (9.12's copies, kept by reference to the store): three blockers.
fn release_needed_three_ways(sb: &Sandbox) -> (PathBuf, PathBuf) {
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    let other = linux_toolkit(&sb.root().join("cuda-12.8"), "12.8.0");
    put_redist_linux_12(&sb.home(), "9.1.0.70");
    put_redist_linux_12(&sb.home(), "9.12.0.46");
    for v in ["9.12", "9.1"] {
        sb.run(["use", v, "--cuda-root", &arg(&tk), "--mode", "copy"])
            .ok();
    }
    sb.run(["use", "9.12", "--cuda-root", &arg(&other)]).ok();
    sb.run(["default", "9.12.0.46"]).ok();
    (
        std::fs::canonicalize(tk).unwrap(),
        std::fs::canonicalize(other).unwrap(),
    )
}

#[test]
fn uninstall_names_every_blocker_at_once_with_the_command_that_clears_each() {
    let sb = Sandbox::new();
    let (tk, other) = release_needed_three_ways(&sb);
    let link = sb.home().join("current/cuda-12");
    let r = sb.run(["uninstall", "9.12.0.46"]).code_is(8);
    let err = r.stderr();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines[..4],
        [
            "error: cuDNN 9.12.0.46_cuda12 is still needed in 3 ways; nothing was removed"
                .to_string(),
            format!(
                "caused by: cuDNN 9.12.0.46_cuda12 is deployed in {} (symlink) — switch it: `cudnnm use OTHER --cuda-root {}` or `cudnnm rollback --cuda-root {}` (the backup that switch takes then needs this release's files too)",
                other.display(),
                other.display(),
                other.display()
            ),
            format!(
                "caused by: it is the default (config.toml: default = \"9.12.0.46_cuda12\"), and what '{}' points at — make another release the default: `cudnnm default OTHER`; installed: 9.1.0.70_cuda12",
                link.display()
            ),
            format!(
                "caused by: it holds files that 1 backup needs to restore: backup 2 of '{}' (29 files) — remove them first to free it all: `cudnnm backups remove 2`",
                tk.display()
            ),
        ],
        "{}",
        r.describe()
    );
    assert!(
        lines[4].starts_with("help: clear each as shown, then run `cudnnm uninstall 9.12.0.46_cuda12` again; or pass --force: its links there will dangle; the default is cleared and the link removed; those files ("),
        "{}",
        r.describe()
    );
    assert!(
        sb.home()
            .join("store/cuda-12/9.12.0.46/receipt.toml")
            .is_file()
    );

    // Each command as printed clears its blocker; the switch's backup (4)
    // holds the links it replaced, which lead into the release: removing
    // it too, the whole release goes.
    let release_bytes = unique_bytes(&sb.home().join("store/cuda-12/9.12.0.46"));
    sb.run(["use", "9.1", "--cuda-root", &arg(&other)]).ok();
    sb.run(["default", "9.1.0.70"]).ok();
    sb.run(["backups", "remove", "2"]).ok();
    sb.run(["uninstall", "9.12.0.46"]).code_is(8).stderr_has(&[
        "error: cuDNN 9.12.0.46_cuda12 holds files that 1 backup needs to restore: backup 4 of",
        "or remove those backups first (`cudnnm backups remove 4`) and the whole release is freed",
    ]);
    sb.run(["backups", "remove", "4"]).ok();
    let home_before = unique_bytes(&sb.home());
    let done = sb.run(["--json", "uninstall", "9.12.0.46"]).ok().json();
    assert_eq!(done["release"], "9.12.0.46_cuda12");
    assert_eq!(done["freed"], release_bytes, "{done}");
    assert_eq!(done["shared"], 0, "{done}");
    assert_eq!(home_before - unique_bytes(&sb.home()), release_bytes);
}

#[test]
fn uninstall_force_says_where_the_rest_stays_and_the_command_that_frees_it() {
    let sb = Sandbox::new();
    let (tk, other) = release_needed_three_ways(&sb);
    // The records it rewrites aside (backup 2's loses its references to
    // the store, config.toml its default): the files on disk.
    let files = || {
        let mut seen = HashSet::new();
        walkdir::WalkDir::new(sb.home())
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
            .filter(|e| !e.path().ends_with("backups/2/backup.toml"))
            .filter(|e| !e.path().ends_with("config.toml"))
            .map(|e| e.metadata().unwrap())
            .filter(|m| seen.insert((m.dev(), m.ino())))
            .map(|m| m.len())
            .sum::<u64>()
    };
    let home_before = files();
    let done = sb
        .run(["--json", "uninstall", "9.12.0.46", "--force"])
        .ok()
        .json();
    // What it said it freed is what the disk got back.
    let freed = done["freed"].as_u64().unwrap();
    assert_eq!(home_before - files(), freed, "{done}");
    assert_eq!(done["kept"][0]["backup"], 2, "{done}");
    assert_eq!(done["stays_deployed"][0]["toolkit"], arg(&other), "{done}");
    assert_eq!(done["stays_deployed"][0]["mode"], "symlink");
    assert_eq!(done["default_cleared"], "9.12.0.46_cuda12");
    let shared = done["shared"].as_u64().unwrap();
    assert!(shared > 0, "{done}");
    let stays = &done["stays_in"][0];
    assert_eq!(stays["in"], "backups", "{done}");
    assert_eq!(stays["ids"], serde_json::json!([2]));
    assert_eq!(stays["command"], "cudnnm backups remove 2");
    // The choice it offers gives back what it says.
    let frees = stays["frees"].as_u64().unwrap();
    assert!(frees >= shared, "{done}");
    let before = unique_bytes(&sb.home());
    let r = sb.run(["backups", "remove", "2"]).ok();
    assert_eq!(before - unique_bytes(&sb.home()), frees, "{}", r.describe());
    let _ = tk;
}

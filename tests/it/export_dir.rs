//! `export dir` where permissions get in the way: an earlier export that
//! cannot be removed (the new one stands, with a warning; the next run
//! removes the leftover), and an empty DEST of the user's in a folder they
//! may not write (filled in place). These run cudnnm as `nobody`, so they
//! need root (root ignores permission bits).
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use cudnnm::store::{FileRecord, Receipt};

use crate::common::Sandbox;
use crate::deploy_support::{is_root, run_as_nobody};
use crate::pin_support::fake_release;

/// A store release 9.1.0.70 for CUDA 12 holding `include/cudnn.h` and
/// `lib/libcudnn.so.9`; returns its folder.
fn release_with_files(home: &Path) -> PathBuf {
    let dir = fake_release(home, "9.1.0.70", "12");
    let mut receipt =
        Receipt::parse(&fs::read_to_string(dir.join("receipt.toml")).unwrap(), &dir).unwrap();
    for (path, bytes) in [
        ("include/cudnn.h", &b"#define CUDNN_MAJOR 9\n"[..]),
        ("lib/libcudnn.so.9", b"\x7fELF fake"),
    ] {
        fs::write(dir.join(path), bytes).unwrap();
        receipt.files.push(FileRecord::file(
            path,
            bytes.len() as u64,
            cudnnm::hash::sha256_bytes(bytes),
        ));
    }
    fs::write(dir.join("receipt.toml"), receipt.to_toml()).unwrap();
    dir
}

fn chown(path: &Path, owner: &str) {
    let ok = std::process::Command::new("chown")
        .arg(owner)
        .arg(path)
        .status()
        .unwrap()
        .success();
    assert!(ok, "chown {owner} {}", path.display());
}

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// The names in `dir` that start with `.cudnnm-export`, sorted.
fn leftovers(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".cudnnm-export"))
        .collect();
    names.sort();
    names
}

/// An earlier export the user made read-only is still replaced (cudnnm
/// wrote it, so it makes it writable to remove it); one it cannot remove
/// at all (a folder in it owned by another user) leaves the new export in
/// place with exit 0 and a warning naming the folder and how to remove it,
/// and the next export into the same parent removes that leftover — and
/// nothing else that only looks like one.
#[test]
fn export_dir_an_earlier_export_that_cannot_be_removed_is_a_warning_then_swept() {
    if !is_root() {
        crate::common::skip::skip("needs root, to run cudnnm as nobody (setpriv)");
        return;
    }
    let sb = Sandbox::new();
    release_with_files(&sb.home());
    let parent = sb.work().join("exp-w");
    fs::create_dir_all(&parent).unwrap();
    chown(&parent, "65534:65534");
    let dest = parent.join("c");
    let d = dest.to_str().unwrap();
    run_as_nobody(&sb, &["export", "dir", d, "9.1"]).ok();

    // The user's `chmod a-w lib`: cudnnm's own folder, made writable and removed.
    chmod(&dest.join("lib"), 0o555);
    run_as_nobody(&sb, &["export", "dir", d, "9.1"])
        .ok()
        .stderr_has(&["replacing the earlier export of 9.1.0.70_cuda12"]);
    assert_eq!(leftovers(&parent), Vec::<String>::new());

    // A folder in it that nobody may not change: the new export stands.
    chown(&dest.join("lib"), "0:0");
    chmod(&dest.join("lib"), 0o755);
    let r = run_as_nobody(&sb, &["export", "dir", d, "9.1"])
        .ok()
        .stderr_has(&[
            "warning: could not remove the earlier export, moved aside to '",
            "ermission denied",
            &format!("the next `cudnnm export dir` to '{d}' removes it, or: chmod -R u+w '"),
            "&& rm -rf '",
        ]);
    let left = leftovers(&parent);
    assert_eq!(left.len(), 1, "{left:?}\n{}", r.describe());
    assert!(
        left[0].starts_with(".cudnnm-export-old-") && left[0].ends_with("-c"),
        "{left:?}"
    );
    assert!(
        r.stderr()
            .contains(&parent.join(&left[0]).display().to_string())
    );
    assert!(dest.join(".cudnnm-export.toml").is_file());
    assert!(dest.join("lib/libcudnn.so.9").is_file());

    // Names that only look like a leftover of DEST's stay.
    let decoys = [
        ".cudnnm-export-old-12-other",
        ".cudnnm-export-old-x1-c",
        ".cudnnm-export-old--c",
        ".cudnnm-export-old-12-cc",
    ];
    for n in decoys {
        fs::create_dir_all(parent.join(n).join("lib")).unwrap();
    }
    fs::write(parent.join(".cudnnm-export-old-13-c"), b"a file").unwrap();

    // The leftover, its lib/ back with the user and still read-only: swept.
    let old_lib = parent.join(&left[0]).join("lib");
    chown(&old_lib, "65534:65534");
    chmod(&old_lib, 0o555);
    run_as_nobody(&sb, &["export", "dir", d, "9.1"]).ok();
    let mut expected: Vec<String> = decoys.iter().map(|s| s.to_string()).collect();
    expected.push(".cudnnm-export-old-13-c".into());
    expected.sort();
    assert_eq!(leftovers(&parent), expected);
}

/// An empty DEST of the user's inside a folder they may not write is
/// filled in place; a failed fill leaves it empty; a DEST that does not
/// exist or holds an earlier export there is refused, saying why.
#[test]
fn export_dir_an_empty_dest_in_an_unwritable_parent_is_filled_in_place() {
    if !is_root() {
        crate::common::skip::skip("needs root, to run cudnnm as nobody (setpriv)");
        return;
    }
    let sb = Sandbox::new();
    let rel = release_with_files(&sb.home());
    let parent = sb.work().join("t4");
    fs::create_dir_all(&parent).unwrap();
    chmod(&parent, 0o755); // root's: nobody may not write here
    let dest = parent.join("exp");
    fs::create_dir_all(&dest).unwrap();
    chown(&dest, "65534:65534");
    let d = dest.to_str().unwrap();

    // A store file nobody cannot read: the fill fails and DEST stays empty.
    let lib = rel.join("lib/libcudnn.so.9");
    chmod(&lib, 0o000);
    let r = run_as_nobody(&sb, &["export", "dir", d, "9.1"]).code_is(5);
    assert_eq!(fs::read_dir(&dest).unwrap().count(), 0, "{}", r.describe());
    chmod(&lib, 0o444);

    run_as_nobody(&sb, &["export", "dir", d, "9.1"]).ok();
    assert_eq!(
        fs::read(dest.join("lib/libcudnn.so.9")).unwrap(),
        b"\x7fELF fake"
    );
    assert!(dest.join(".cudnnm-export.toml").is_file());
    assert!(dest.join("cudnn.env").is_file());
    assert_eq!(leftovers(&dest), vec![".cudnnm-export.toml".to_string()]);
    assert_eq!(leftovers(&parent), Vec::<String>::new());

    // Its own earlier export there, and a new DEST there: refused, saying why.
    let other = parent.join("new");
    for (target, also) in [(d, "empty '"), (other.to_str().unwrap(), "")] {
        let r = run_as_nobody(&sb, &["export", "dir", target, "9.1"])
            .code_is(5)
            .stderr_has(&[
                &format!(
                    "error: could not export to '{target}': its folder '{}' is not writable, and the export is built beside it",
                    parent.display()
                ),
                "help: choose a DEST in a folder you may write to, or an empty folder of yours (cudnnm fills that in place)",
                also,
            ]);
        assert_eq!(
            r.stderr()
                .lines()
                .filter(|l| l.starts_with("help:"))
                .count(),
            1
        );
    }
    assert!(!other.exists());
    assert!(dest.join(".cudnnm-export.toml").is_file());
}

/// What killed runs leave beside DEST is put right by the next export: an
/// earlier export moved aside by a kill between the two renames (DEST
/// missing) is moved back and replaced, and a marked build folder nobody
/// writes is removed; a build folder whose marker another run holds locked,
/// and a folder that only carries the name, stay.
#[test]
fn export_dir_puts_right_what_a_killed_run_left() {
    let sb = Sandbox::new();
    release_with_files(&sb.home());
    let parent = sb.root().join("out");
    let dest = parent.join("c");
    let d = dest.to_str().unwrap();
    sb.run(["export", "dir", d, "9.1"]).ok();
    // Killed between the renames: the earlier export aside, DEST missing.
    fs::rename(&dest, parent.join(".cudnnm-export-old-4242-c")).unwrap();
    // Killed while building: a marked build folder.
    let stale = parent.join(".cudnnm-export-1-2");
    fs::create_dir_all(stale.join("lib")).unwrap();
    fs::write(stale.join(".cudnnm-building"), b"").unwrap();
    fs::write(stale.join("lib/libcudnn.so.9"), b"half").unwrap();
    // Another run still building: its marker locked.
    let busy = parent.join(".cudnnm-export-3-4");
    fs::create_dir(&busy).unwrap();
    let held = fs::File::create(busy.join(".cudnnm-building")).unwrap();
    held.try_lock().unwrap();
    // A folder of the user's that only carries the name.
    let mine = parent.join(".cudnnm-export-5-6");
    fs::create_dir(&mine).unwrap();
    fs::write(mine.join("notes"), b"mine").unwrap();

    let r = sb.run(["export", "dir", d, "9.1"]).ok();
    assert!(
        r.stderr()
            .contains("replacing the earlier export of 9.1.0.70_cuda12"),
        "{}",
        r.describe()
    );
    assert_eq!(
        fs::read(dest.join("lib/libcudnn.so.9")).unwrap(),
        b"\x7fELF fake"
    );
    assert!(dest.join(".cudnnm-export.toml").is_file());
    assert_eq!(
        leftovers(&parent),
        [".cudnnm-export-3-4", ".cudnnm-export-5-6"]
    );
    assert_eq!(fs::read(mine.join("notes")).unwrap(), b"mine");
    drop(held);
}

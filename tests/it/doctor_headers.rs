//! `compiler-header-mismatch`: the first `cudnn.h` on the compiler's search
//! path against the real cuDNN 9.27 library the loader takes; and
//! `pin-unreadable`, a pin file that is no version spec.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::symlink;

use crate::common::Sandbox;
use crate::doctor_wheels::wheel_files;

/// A cuDNN 7 header as Debian's packages install it: `inc/cudnn.h` →
/// `etc/alternatives/libcudnn` → `x86_64-linux-gnu/cudnn_v7.h`.
fn debian_v7(sb: &Sandbox) -> std::path::PathBuf {
    let r = sb.root().join("sys");
    fs::create_dir_all(r.join("x86_64-linux-gnu")).unwrap();
    fs::create_dir_all(r.join("etc/alternatives")).unwrap();
    fs::create_dir_all(r.join("inc")).unwrap();
    fs::write(
        r.join("x86_64-linux-gnu/cudnn_v7.h"),
        "#define CUDNN_MAJOR 7\n#define CUDNN_MINOR 6\n#define CUDNN_PATCHLEVEL 5\n",
    )
    .unwrap();
    symlink(
        r.join("x86_64-linux-gnu/cudnn_v7.h"),
        r.join("etc/alternatives/libcudnn"),
    )
    .unwrap();
    symlink("../etc/alternatives/libcudnn", r.join("inc/cudnn.h")).unwrap();
    r
}

#[test]
fn a_stale_header_first_on_cpath_is_named_with_its_links() {
    let w = wheel_files("9.27.0.42", true);
    let mut sb = Sandbox::new();
    let r = debian_v7(&sb);
    sb.set_env("LD_LIBRARY_PATH", w.join("lib"));
    sb.set_env("CPATH", r.join("inc"));
    sb.set_env("C_INCLUDE_PATH", w.join("include"));
    let run = sb.run(["doctor", "--json", "--cuda-root", "/nonexistent"]);
    let f = run.finding("compiler-header-mismatch");
    assert_eq!(f["severity"], "warning");
    let title = f["title"].as_str().unwrap();
    assert!(
        title.contains("cuDNN 7.6.5") && title.contains("cuDNN 9.27.0"),
        "{title}"
    );
    let seen: Vec<&str> = f["seen"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    let inc = r.join("inc/cudnn.h");
    assert_eq!(
        seen[0],
        format!(
            "{} (CPATH) -> {} -> {}: cuDNN 7.6.5",
            inc.display(),
            r.join("inc/../etc/alternatives/libcudnn").display(),
            r.join("x86_64-linux-gnu/cudnn_v7.h").display()
        )
    );
    let wh = w.join("include/cudnn_version.h");
    assert!(
        seen.contains(&format!("{} (C_INCLUDE_PATH): cuDNN 9.27.0", wh.display()).as_str()),
        "{seen:?}"
    );
    assert!(
        f["why"]
            .as_str()
            .unwrap()
            .contains("pytorch/pytorch/issues/41593")
    );
    // The links are the package manager's: doctor --fix leaves them alone.
    assert!(fs::symlink_metadata(&inc).unwrap().file_type().is_symlink());
}

#[test]
fn headers_of_the_loaded_release_first_are_healthy() {
    let w = wheel_files("9.27.0.42", true);
    let mut sb = Sandbox::new();
    let r = debian_v7(&sb);
    sb.set_env("LD_LIBRARY_PATH", w.join("lib"));
    // The stale header is still there, but after the right one.
    sb.set_env(
        "CPATH",
        format!(
            "{}:{}",
            w.join("include").display(),
            r.join("inc").display()
        ),
    );
    let run = sb.run(["doctor", "--json", "--cuda-root", "/nonexistent"]);
    let j = run.json();
    let ids: Vec<&str> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(
        !ids.contains(&"compiler-header-mismatch"),
        "{}",
        run.describe()
    );
}

#[test]
fn an_unreadable_pin_is_an_error() {
    let sb = Sandbox::new();
    fs::write(sb.work().join(".cudnn-version"), "latest-and-greatest\n").unwrap();
    let run = sb.run(["doctor", "--json", "--cuda-root", "/nonexistent"]);
    let f = run.finding("pin-unreadable");
    assert_eq!(f["severity"], "error");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains("it is not a cuDNN version spec (19 characters, not shown)"),
        "{}",
        run.describe()
    );
    // A valid pin gives no such finding.
    fs::write(sb.work().join(".cudnn-version"), "9.27\n").unwrap();
    let run = sb.run(["doctor", "--json", "--cuda-root", "/nonexistent"]);
    let j = run.json();
    assert!(
        j["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["id"] != "pin-unreadable"),
        "{}",
        run.describe()
    );
}

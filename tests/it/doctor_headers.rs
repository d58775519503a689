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

/// The `CUDNN_MAJOR.MINOR.PATCHLEVEL` a real preprocessor run of
/// `#include <cudnn.h>` sees (`cc -E -dM`), with `args` and the sandbox's
/// environment (its `CPATH`).
fn compiled_version(sb: &Sandbox, args: &[&str]) -> Option<String> {
    let cc = crate::common::skip::need_program("cc", "gcc")?;
    let src = sb.root().join("probe.c");
    fs::write(&src, "#include <cudnn.h>\n").unwrap();
    let out = sb
        .wrapped(cc.to_str().unwrap())
        .args(["-E", "-dM"])
        .args(args)
        .arg(&src)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let m = |name: &str| -> String {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("#define {name} ")))
            .unwrap_or("?")
            .trim()
            .to_string()
    };
    Some(format!(
        "{}.{}.{}",
        m("CUDNN_MAJOR"),
        m("CUDNN_MINOR"),
        m("CUDNN_PATCHLEVEL")
    ))
}

/// nvcc adds its own toolkit's include with `-I`, which comes before
/// `CPATH`; a compiler without it takes `CPATH` first. What doctor says
/// each finds first is what the preprocessor really includes: with the
/// toolkit's `-I` (as nvcc passes it) the toolkit's 9.27 headers, with
/// `CPATH` alone the stale 7.6.5 ones.
#[test]
fn nvcc_puts_its_toolkit_include_before_cpath_as_a_real_compile_does() {
    let mut sb = Sandbox::new();
    let tk = crate::doctor::toolkit(&mut sb, false);
    // What a CUDA toolkit's include holds and cudnn.h includes.
    for h in ["cuda_runtime_api.h", "library_types.h"] {
        fs::write(tk.join("include").join(h), "/* CUDA toolkit header */\n").unwrap();
    }
    fs::create_dir_all(tk.join("bin")).unwrap();
    let nvcc = tk.join("bin/nvcc");
    fs::write(
        &nvcc,
        "#!/bin/sh\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n",
    )
    .unwrap();
    fs::set_permissions(&nvcc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    sb.set_env(
        "PATH",
        format!(
            "{}:{}",
            tk.join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        ),
    );
    let r = debian_v7(&sb);
    sb.set_env("CPATH", r.join("inc"));
    let run = sb.run(["doctor", "--json"]);
    let f = run.finding("compiler-header-mismatch");
    let seen: Vec<String> = f["seen"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    let said = |prefix: &str| -> String {
        let l = seen
            .iter()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no '{prefix}' line: {}", run.describe()));
        l.rsplit_once("(cuDNN ")
            .unwrap()
            .1
            .split(')')
            .next()
            .unwrap()
            .to_string()
    };
    let nvcc_view = said("nvcc finds ");
    let host_view = said("a compiler without that -I ");
    let inc = format!("-I{}", tk.join("include").display());
    let Some(with_i) = compiled_version(&sb, &[&inc]) else {
        return;
    };
    let without = compiled_version(&sb, &[]).unwrap();
    assert_eq!(
        (nvcc_view.as_str(), host_view.as_str()),
        (with_i.as_str(), without.as_str())
    );
    assert_eq!((with_i.as_str(), without.as_str()), ("9.27.0", "7.6.5"));
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains("cuDNN 7.6.5 headers first"),
        "{}",
        run.describe()
    );
}

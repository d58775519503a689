//! Tests that need something this machine may lack (a shell, wine, root).
//! On a developer's machine such a test says plainly that it did not run and
//! why, and passes; in CI (`CI=true`, which `.ci/run` sets after installing
//! everything the tests need) the same gap is a failure, so coverage is not
//! lost there. Stable Rust's test harness has no "skipped" outcome: a skipped
//! test is counted as passed, and the `skipped:` line is what tells them apart.

use std::io::Write;
use std::path::PathBuf;

/// Whether the tests run in CI: `CI` is set to anything but `false`/`0`
/// (`.ci/run` sets `CI=true`, as GitHub Actions and most CI services do).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Reports that the calling test does not run here because of `reason`
/// (what is missing and how to get it). Outside CI it writes
/// `skipped: TEST: REASON` straight to the stderr handle, which the test
/// harness does not capture (it captures `println!`/`eprintln!` only), so the
/// line shows in `cargo test`'s output; the caller then returns. Under CI it
/// panics with the same reason.
#[track_caller]
pub fn skip(reason: &str) {
    // The harness names each test's thread after the test.
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("this test");
    if in_ci() {
        panic!(
            "{test} cannot run: {reason} (with CI=true every test must run; .ci/run installs what they need)"
        );
    }
    let _ = writeln!(std::io::stderr(), "skipped: {test}: {reason}");
}

/// The full path of the program `name` as found on this process's `PATH`,
/// if there is one.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

/// The program `name` from `PATH`; when it is missing, [`skip`] with the
/// Debian package that provides it (`apt-get install PACKAGE`) and `None`.
#[track_caller]
pub fn need_program(name: &str, package: &str) -> Option<PathBuf> {
    let found = find_program(name);
    if found.is_none() {
        skip(&format!(
            "{name} is not installed (apt-get install {package})"
        ));
    }
    found
}

#[cfg(unix)]
fn is_executable(p: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &std::path::Path) -> bool {
    p.is_file()
}

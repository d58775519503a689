//! `doctor --fix` and the user PATH in the registry (`HKCU\Environment`),
//! under wine's registry. A test binary of its own: it changes the prefix's
//! user PATH (restoring it at the end), which other tests must not see.
#![allow(clippy::disallowed_methods)] // tests build their fixtures with std::fs
#![cfg(windows)]

// The support modules of the main integration binary (tests/it).
#[path = "it/common/mod.rs"]
mod common;
#[path = "it/deploy_support.rs"]
mod deploy_support;

use std::path::Path;

use common::{Sandbox, fixtures};
use windows_registry::{CURRENT_USER, Type};

/// The user `Path` value and whether it is `REG_EXPAND_SZ`.
fn user_path() -> Option<(String, bool)> {
    let k = CURRENT_USER.open("Environment").ok()?;
    let ty = k.get_type("Path").ok()?;
    Some((k.get_string("Path").ok()?, ty == Type::ExpandString))
}

fn set_user_path(v: Option<&(String, bool)>) {
    let k = CURRENT_USER.create("Environment").unwrap();
    match v {
        None => {
            let _ = k.remove_value("Path");
        }
        Some((s, true)) => k.set_expand_string("Path", s).unwrap(),
        Some((s, false)) => k.set_string("Path", s).unwrap(),
    }
}

/// Puts the prefix's user PATH back however the test ends.
struct Restore(Option<(String, bool)>);

impl Drop for Restore {
    fn drop(&mut self) {
        set_user_path(self.0.as_ref());
    }
}

#[test]
fn fix_puts_the_toolkit_bin_on_the_user_path_keeping_its_type_and_undo_restores_it() {
    let _restore = Restore(user_path());
    let before = (
        r"%USERPROFILE%\bin;C:\Tools\x;%SystemRoot%\foo".to_string(),
        true,
    );
    set_user_path(Some(&before));

    let mut sb = Sandbox::new();
    let tk = deploy_support::windows_toolkit(
        &sb.root().join(r"NVIDIA GPU Computing Toolkit\CUDA\v11.2"),
        "11.2.152",
    );
    let zip = fixtures::windows_zip_8_1_0_77().write(sb.root());
    sb.run([Path::new("install"), &zip]).ok();
    let root = tk.display().to_string();
    sb.run(["use", "8.1.0.77", "--cuda-root", &root]).ok();
    // The process PATH lacks the toolkit's bin, as after a manual install.
    sb.set_env("PATH", r"C:\windows\system32;C:\windows");
    let bin = tk.join("bin").display().to_string();

    let seen = sb.run(["doctor", "--cuda-root", &root, "--no-load", "--json"]);
    let f = seen.finding("toolkit-not-on-loader-path");
    assert_eq!(f["auto_fix"]["dir"].as_str(), Some(bin.as_str()), "{f}");

    let fixed = sb.run(["doctor", "--fix", "--cuda-root", &root, "--no-load"]);
    let out = fixed.stdout() + &fixed.stderr();
    assert!(
        out.contains(&format!(
            "added {bin} to your user PATH; open a new terminal"
        )),
        "{}",
        fixed.describe()
    );
    // This process keeps its PATH, so the finding stays; it is not offered
    // again as a fix to apply.
    assert!(
        out.contains("(`cudnnm doctor --fix` leaves this to you: added"),
        "{out}"
    );
    assert!(!out.contains("can be applied with"), "{out}");
    let (value, expand) = user_path().unwrap();
    assert_eq!(
        value,
        format!("{bin};{}", before.0),
        "other entries kept, unexpanded"
    );
    assert!(expand, "REG_EXPAND_SZ kept: %USERPROFILE% still expands");

    // This process (and every terminal already open) keeps its old PATH:
    // doctor says so instead of claiming the fix failed.
    let stale = sb
        .run(["doctor", "--cuda-root", &root, "--no-load", "--json"])
        .finding("process-path-stale");
    assert_eq!(stale["severity"], "warning", "{stale}");
    assert!(
        stale["why"].as_str().unwrap().contains("keep the old PATH"),
        "{stale}"
    );

    // A second --fix finds it there and changes nothing.
    let again = sb.run(["doctor", "--fix", "--cuda-root", &root, "--no-load"]);
    assert_eq!(user_path().unwrap().0, value, "{}", again.describe());

    let id = out
        .split("cudnnm doctor --undo-fix ")
        .nth(1)
        .and_then(|s| s.split('`').next())
        .unwrap_or_else(|| panic!("no undo id in: {out}"))
        .to_string();
    sb.run(["doctor", "--undo-fix", &id]).ok();
    assert_eq!(user_path(), Some(before), "undo restores value and type");

    // A plain REG_SZ Path stays REG_SZ.
    let plain = (r"C:\Tools\x".to_string(), false);
    set_user_path(Some(&plain));
    let fixed = sb.run(["doctor", "--fix", "--cuda-root", &root, "--no-load"]);
    assert_eq!(
        user_path(),
        Some((format!("{bin};{}", plain.0), false)),
        "{}",
        fixed.describe()
    );
}

//! Activation: what changes, for each platform, and that switching and
//! deactivating give back what the user had.

use super::*;
use crate::store::{Receipt, Source};
use crate::version::Platform;
use std::path::PathBuf;

fn release(dir: &str, platform: Platform) -> Release {
    Release {
        dir: PathBuf::from(dir),
        receipt: Receipt {
            schema: 1,
            version: "9.12.0.46".parse().unwrap(),
            cuda: "12".parse().unwrap(),
            platform,
            flavour: None,
            header_version: "9.12.0".parse().unwrap(),
            installed_at: String::new(),
            source: Source {
                kind: crate::shape::Shape::Wheel,
                name: "x".into(),
                sha256: None,
                size: 0,
                from: crate::store::Provenance::Local,
                dist: None,
            },
            files: vec![],
        },
    }
}

fn get<'a>(a: &'a Activation, name: &str) -> Option<Option<&'a str>> {
    a.changes
        .iter()
        .find(|c| c.name == name)
        .map(|c| c.value.as_deref().map(|v| v.to_str().unwrap()))
}

/// `env` with the changes applied.
fn applied(env: &Env, a: &Activation) -> Env {
    let mut vars: std::collections::BTreeMap<String, String> = env
        .vars()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .collect();
    for c in &a.changes {
        let key = vars
            .keys()
            .find(|k| {
                if env.is_windows() {
                    k.eq_ignore_ascii_case(&c.name)
                } else {
                    **k == c.name
                }
            })
            .cloned();
        if let Some(k) = key {
            vars.remove(&k);
        }
        if let Some(v) = &c.value {
            vars.insert(c.name.clone(), v.to_string_lossy().into_owned());
        }
    }
    Env::from_vars(vars, env.cwd(), env.is_windows())
}

#[test]
fn cudnnm_entries_are_recognised_per_platform() {
    let h = Path::new("/home/u/.local/share/cudnnm");
    assert!(is_cudnnm_entry(
        "/home/u/.local/share/cudnnm/store/cuda-12/9.12.0.46/lib",
        h,
        false
    ));
    assert!(is_cudnnm_entry(
        "/home/u/.local/share/cudnnm//current/cuda-12/lib/",
        h,
        false
    ));
    assert!(is_cudnnm_entry(
        "/home/u/.local/share/cudnnm/./store",
        h,
        false
    ));
    assert!(!is_cudnnm_entry("/home/u/.local/share/cudnnm", h, false));
    assert!(!is_cudnnm_entry(
        "/home/u/.local/share/cudnnm/backups/1",
        h,
        false
    ));
    assert!(
        !is_cudnnm_entry("/home/u/.local/share/CUDNNM/store/x", h, false),
        "Unix is case-sensitive"
    );
    assert!(
        !is_cudnnm_entry("home/u/.local/share/cudnnm/store/x", h, false),
        "relative is not absolute"
    );
    assert!(!is_cudnnm_entry("/usr/local/cuda/lib64", h, false));
    let w = Path::new(r"C:\Users\Ann Lee\AppData\Local\cudnnm\data");
    assert!(is_cudnnm_entry(
        r"c:\users\ann lee\appdata\local\CUDNNM\data\Store\cuda-12\9.12.0.46\bin",
        w,
        true
    ));
    assert!(is_cudnnm_entry(
        r"C:/Users/Ann Lee/AppData/Local/cudnnm/data/current/cuda-12/bin",
        w,
        true
    ));
    assert!(!is_cudnnm_entry(
        r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4\bin",
        w,
        true
    ));
}

#[test]
fn path_lists_replace_never_stack_and_keep_order() {
    let h = Path::new("/h");
    let edit = |v: Option<&str>, add: Option<&str>| {
        edit_path_list(v.map(OsStr::new), add.map(OsStr::new), h, false)
            .map(|v| v.into_string().unwrap())
    };
    assert_eq!(
        edit(None, Some("/h/store/a/lib")).as_deref(),
        Some("/h/store/a/lib")
    );
    assert_eq!(
        edit(Some(""), Some("/h/store/a/lib")).as_deref(),
        Some("/h/store/a/lib"),
        "no trailing ':'"
    );
    assert_eq!(
        edit(
            Some("/opt/x:/h/store/a/lib:/usr/lib:/h/current/cuda-12/lib"),
            Some("/h/store/b/lib")
        )
        .as_deref(),
        Some("/h/store/b/lib:/opt/x:/usr/lib")
    );
    // Empty entries are the user's (they mean "current folder") and stay.
    assert_eq!(
        edit(Some("/a::/b:"), Some("/h/store/b/lib")).as_deref(),
        Some("/h/store/b/lib:/a::/b:")
    );
    assert_eq!(edit(Some("/h/store/a/lib"), None), None, "only ours: unset");
    assert_eq!(
        edit(Some("/opt/x:/h/store/a/lib"), None).as_deref(),
        Some("/opt/x")
    );
    let w = Path::new(r"C:\h");
    let got = edit_path_list(
        Some(OsStr::new(
            r"C:\Windows\system32;c:\H\store\cuda-12\9.1.0\bin;C:\Program Files\x",
        )),
        Some(OsStr::new(r"C:\h\store\cuda-12\9.12.0.46\bin")),
        w,
        true,
    );
    assert_eq!(
        got.unwrap(),
        r"C:\h\store\cuda-12\9.12.0.46\bin;C:\Windows\system32;C:\Program Files\x"
    );
}

#[test]
fn activate_then_switch_then_deactivate_restores_the_user_values() {
    let home = Home::new("/h");
    let user = Env::from_vars(
        [
            ("LD_LIBRARY_PATH", "/opt/a:/opt/b"),
            ("CUDNN_PATH", "/usr/local/cudnn"),
            ("PATH", "/usr/bin"),
        ],
        "/w",
        false,
    );
    let a = activate(
        &user,
        &home,
        &release("/h/store/cuda-12/9.12.0.46", Platform::LinuxX86_64),
    );
    assert_eq!(
        a.release.as_ref().map(ToString::to_string).as_deref(),
        Some("9.12.0.46_cuda12")
    );
    assert_eq!(
        get(&a, "LD_LIBRARY_PATH"),
        Some(Some(
            j("/h/store/cuda-12/9.12.0.46", "lib", ":/opt/a:/opt/b").as_str()
        ))
    );
    assert_eq!(
        get(&a, "CPATH"),
        Some(Some(
            j("/h/store/cuda-12/9.12.0.46", "include", "").as_str()
        ))
    );
    assert_eq!(
        get(&a, "LIBRARY_PATH"),
        Some(Some(j("/h/store/cuda-12/9.12.0.46", "lib", "").as_str()))
    );
    assert_eq!(
        get(&a, "CUDNN_PATH"),
        Some(Some("/h/store/cuda-12/9.12.0.46"))
    );
    assert_eq!(
        get(&a, "CUDNN_INCLUDE_DIR"),
        Some(Some(
            j("/h/store/cuda-12/9.12.0.46", "include", "").as_str()
        ))
    );
    assert_eq!(
        get(&a, "CUDNN_LIBRARY_DIR"),
        Some(Some(j("/h/store/cuda-12/9.12.0.46", "lib", "").as_str()))
    );
    assert_eq!(
        get(&a, "CUDNNM_ORIG_CUDNN_PATH"),
        Some(Some("/usr/local/cudnn"))
    );
    assert_eq!(
        get(&a, "CUDNNM_ORIG_CUDNN_INCLUDE_DIR"),
        None,
        "unset stays unset: nothing to save"
    );
    assert_eq!(get(&a, "CUDNNM_ACTIVE"), Some(Some("9.12.0.46_cuda12")));
    assert_eq!(get(&a, "PATH"), None, "PATH is not touched on Linux");
    let e1 = applied(&user, &a);

    // Switching: replaced, not stacked; the saved originals are not overwritten.
    let b = activate(
        &e1,
        &home,
        &release("/h/store/cuda-12/9.27.0.42", Platform::LinuxX86_64),
    );
    assert_eq!(
        get(&b, "LD_LIBRARY_PATH"),
        Some(Some(
            j("/h/store/cuda-12/9.27.0.42", "lib", ":/opt/a:/opt/b").as_str()
        ))
    );
    assert_eq!(get(&b, "CUDNNM_ORIG_CUDNN_PATH"), None);
    let e2 = applied(&e1, &b);
    // Re-activating the same release changes nothing.
    assert!(
        activate(
            &e2,
            &home,
            &release("/h/store/cuda-12/9.27.0.42", Platform::LinuxX86_64)
        )
        .changes
        .is_empty()
    );

    let d = deactivate(&e2, &home);
    let e3 = applied(&e2, &d);
    let mut back: Vec<(String, String)> = e3
        .vars()
        .map(|(k, v)| (k.to_string_lossy().into(), v.to_string_lossy().into()))
        .collect();
    let mut orig: Vec<(String, String)> = user
        .vars()
        .map(|(k, v)| (k.to_string_lossy().into(), v.to_string_lossy().into()))
        .collect();
    back.sort();
    orig.sort();
    assert_eq!(
        back, orig,
        "deactivation gives back exactly the user's environment"
    );
    assert!(
        deactivate(&user, &home).changes.is_empty(),
        "nothing active: nothing to undo"
    );
}

#[test]
fn windows_activation_uses_bin_path_include_lib() {
    let home = Home::new(r"C:\Users\me\AppData\Local\cudnnm\data");
    let env = Env::from_vars(
        [
            (
                "Path",
                r"C:\Windows;C:\Users\me\AppData\Local\cudnnm\data\current\cuda-12\bin",
            ),
            ("LIB", r"C:\VS\lib"),
        ],
        r"C:\work",
        true,
    );
    let r = release(
        r"C:\Users\me\AppData\Local\cudnnm\data\store\cuda-12\9.12.0.46",
        Platform::WindowsX86_64,
    );
    let a = activate(&env, &home, &r);
    let dir = r.dir.display().to_string();
    assert_eq!(
        get(&a, "PATH"),
        Some(Some(j(&dir, "bin", ";C:\\Windows").as_str()))
    );
    assert_eq!(
        get(&a, "INCLUDE"),
        Some(Some(j(&dir, "include", "").as_str()))
    );
    assert_eq!(
        get(&a, "LIB"),
        Some(Some(j(&dir, "lib", ";C:\\VS\\lib").as_str()))
    );
    assert_eq!(get(&a, "LD_LIBRARY_PATH"), None);
}

/// `dir` joined with `sub` as this host joins paths, then `rest`: the
/// activation values are the host's paths (`\` on Windows, `/` elsewhere).
fn j(dir: &str, sub: &str, rest: &str) -> String {
    format!("{}{rest}", Path::new(dir).join(sub).display())
}

#[test]
fn a_system_release_is_replaced_and_removed_like_the_users_own() {
    let home = Home::new("/home/u/cudnnm").with_system(PathBuf::from("/opt/cudnnm"));
    let env = Env::from_vars([("LD_LIBRARY_PATH", "/usr/lib/x")], "/", false);
    let sys = release("/opt/cudnnm/store/cuda-12/9.12.0.46", Platform::LinuxX86_64);
    let on_system = applied(&env, &activate(&env, &home, &sys));
    assert_eq!(
        on_system.var("LD_LIBRARY_PATH").unwrap(),
        j("/opt/cudnnm/store/cuda-12/9.12.0.46", "lib", ":/usr/lib/x")
    );
    let own = release(
        "/home/u/cudnnm/store/cuda-12/9.27.0.42",
        Platform::LinuxX86_64,
    );
    let switched = applied(&on_system, &activate(&on_system, &home, &own));
    assert_eq!(
        switched.var("LD_LIBRARY_PATH").unwrap(),
        j(
            "/home/u/cudnnm/store/cuda-12/9.27.0.42",
            "lib",
            ":/usr/lib/x"
        )
    );
    let back = applied(&on_system, &deactivate(&on_system, &home));
    assert_eq!(back.var("LD_LIBRARY_PATH").unwrap(), "/usr/lib/x");
    assert_eq!(back.var("CPATH"), None);
}

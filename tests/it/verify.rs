//! `cudnnm verify`: a store release of the real cuDNN 9.27 build and its
//! deployment into a sandbox toolkit, intact and then changed every way
//! (modified, missing, extra; a library reporting another version than its
//! receipt). The release and deployment records are written here the way
//! the importer and `use` write them.
//!
//! The sandbox release and toolkit use Unix links and the real Linux
//! libraries, so those tests and their helpers are `#[cfg(unix)]`; the
//! empty-home test runs on every OS.

use crate::common;
#[cfg(unix)]
use crate::deploy_support;
#[cfg(unix)]
use crate::doctor_wheels;

#[cfg(unix)]
use std::{fs, path::PathBuf};

use common::Sandbox;
#[cfg(unix)]
use {
    common::Run,
    cudnnm::deploy::{Deployment, Deployments, Mode, PlacedFile},
    cudnnm::hash::sha256_file,
    cudnnm::store::{FileRecord, Receipt, Source},
    doctor_wheels::wheel_files,
};

#[cfg(unix)]
struct World {
    sb: Sandbox,
    release: PathBuf,
    toolkit: PathBuf,
}

/// The store release `cuda-12/9.27.0.42` (wheel files plus the `libcudnn.so`
/// development link), deployed into `cuda-12.4` by `mode`.
#[cfg(unix)]
fn world(mode: Mode) -> World {
    let sb = Sandbox::new();
    let w = wheel_files("9.27.0.42", true);
    let release = sb.home().join("store/cuda-12/9.27.0.42");
    let mut files = Vec::new();
    for sub in ["include", "lib"] {
        fs::create_dir_all(release.join(sub)).unwrap();
        for e in fs::read_dir(w.join(sub)).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let dest = release.join(sub).join(&name);
            fs::hard_link(e.path(), &dest).unwrap();
            let (size, sha) = sha256_file(&dest).unwrap();
            files.push(FileRecord {
                path: format!("{sub}/{name}"),
                size,
                sha256: Some(sha),
                link: None,
            });
        }
    }
    std::os::unix::fs::symlink("libcudnn.so.9", release.join("lib/libcudnn.so")).unwrap();
    files.push(FileRecord {
        path: "lib/libcudnn.so".into(),
        size: 0,
        sha256: None,
        link: Some("libcudnn.so.9".into()),
    });
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let receipt = Receipt {
        schema: 1,
        version: "9.27.0.42".parse().unwrap(),
        cuda: "12".parse().unwrap(),
        platform: "linux-x86_64".parse().unwrap(),
        header_version: "9.27.0".parse().unwrap(),
        installed_at: "2026-11-29T21:00:00Z".into(),
        source: Source {
            kind: "wheel".into(),
            name: "nvidia_cudnn_jit_cu12-9.27.0.42-py3-none-manylinux_2_27_x86_64.whl".into(),
            sha256: None,
            size: 0,
            url: None,
        },
        files: files.clone(),
    };
    fs::write(release.join("receipt.toml"), receipt.to_toml()).unwrap();

    let toolkit = sb.root().join("cuda-12.4");
    fs::create_dir_all(toolkit.join("include")).unwrap();
    fs::create_dir_all(toolkit.join("lib64")).unwrap();
    fs::write(
        toolkit.join("version.json"),
        r#"{"cuda":{"name":"CUDA SDK","version":"12.4.1"}}"#,
    )
    .unwrap();
    let mut placed = Vec::new();
    for f in &files {
        let (sub, name) = f.path.split_once('/').unwrap();
        let dest = toolkit
            .join(if sub == "lib" { "lib64" } else { "include" })
            .join(name);
        let src = release.join(&f.path);
        let (link, sha) = match (&f.link, mode) {
            (Some(l), _) => {
                std::os::unix::fs::symlink(l, &dest).unwrap();
                (Some(l.clone()), None)
            }
            (None, Mode::Symlink) => {
                std::os::unix::fs::symlink(&src, &dest).unwrap();
                (Some(src.to_string_lossy().into_owned()), None)
            }
            (None, _) => {
                fs::copy(&src, &dest).unwrap();
                (None, f.sha256.clone())
            }
        };
        placed.push(PlacedFile {
            path: dest,
            from: f.path.clone(),
            sha256: sha,
            link,
            size: f.size,
            mtime_ns: None,
        });
    }
    let d = Deployments {
        entries: vec![Deployment {
            toolkit: toolkit.clone(),
            release: "9.27.0.42_cuda12".into(),
            mode,
            deployed_at: "2026-11-29T21:01:00Z".into(),
            backup: None,
            source: None,
            files: placed,
        }],
    };
    fs::write(
        sb.home().join("deployments.toml"),
        toml::to_string(&d).unwrap(),
    )
    .unwrap();
    World {
        sb,
        release,
        toolkit,
    }
}

#[cfg(unix)]
fn verify(w: &World) -> Run {
    w.sb.run(["verify", "--json"])
}

#[cfg(unix)]
fn check<'a>(j: &'a serde_json::Value, kind: &str) -> &'a serde_json::Value {
    &j[kind][0]
}

#[cfg(unix)]
#[test]
fn intact_store_and_deployment_verify_and_the_library_agrees_with_its_receipt() {
    let w = world(Mode::Symlink);
    let r = verify(&w).ok();
    let j = r.json();
    assert_eq!(j["healthy"], true, "{}", r.describe());
    assert_eq!(check(&j, "releases")["release"], "9.27.0.42_cuda12");
    let lib = &check(&j, "deployments")["library"];
    assert_eq!(lib["reported"], "9.27.0", "{}", r.describe());
    assert_eq!(lib["ok"], true);
    let t = w.sb.run(["verify"]).ok();
    assert!(
        t.stdout().contains("Everything matches its record."),
        "{}",
        t.describe()
    );
    assert!(
        t.stdout().contains("libcudnn.so.9 reports 9.27.0"),
        "{}",
        t.describe()
    );
}

#[cfg(unix)]
#[test]
fn store_changes_are_reported_per_release() {
    let w = world(Mode::Symlink);
    // Modified (replaced, not written through: the bytes are shared with other tests).
    let h = w.release.join("include/cudnn_version.h");
    fs::remove_file(&h).unwrap();
    fs::write(&h, "#define CUDNN_MAJOR 9\n").unwrap();
    fs::remove_file(w.release.join("include/cudnn_ops.h")).unwrap();
    fs::write(w.release.join("lib/libcudnn_stray.so.9"), b"x").unwrap();
    let r = verify(&w).code_is(7);
    let j = r.json();
    let c = check(&j, "releases");
    assert!(
        c["modified"][0]
            .as_str()
            .unwrap()
            .starts_with("include/cudnn_version.h: "),
        "{}",
        r.describe()
    );
    assert_eq!(c["missing"], serde_json::json!(["include/cudnn_ops.h"]));
    assert_eq!(c["extra"], serde_json::json!(["lib/libcudnn_stray.so.9"]));
    let t = w.sb.run(["verify"]).code_is(7);
    assert!(
        t.stdout().contains("CHANGED") && t.stdout().contains("missing:  include/cudnn_ops.h"),
        "{}",
        t.describe()
    );
}

#[cfg(unix)]
#[test]
fn deployment_changes_are_reported_per_toolkit() {
    let w = world(Mode::Symlink);
    fs::remove_file(w.toolkit.join("include/cudnn_adv.h")).unwrap();
    let so = w.toolkit.join("lib64/libcudnn_graph.so.9");
    fs::remove_file(&so).unwrap();
    fs::copy(w.release.join("lib/libcudnn_graph.so.9"), &so).unwrap();
    fs::write(w.toolkit.join("lib64/libcudnn_ops.so.9"), b"stray").unwrap();
    let r = verify(&w).code_is(7);
    let j = r.json();
    let c = check(&j, "deployments");
    assert_eq!(
        c["missing"].as_array().unwrap().len(),
        1,
        "{}",
        r.describe()
    );
    assert!(
        c["modified"][0]
            .as_str()
            .unwrap()
            .contains("a regular file, expected a link"),
        "{}",
        r.describe()
    );
    assert!(
        c["extra"][0]
            .as_str()
            .unwrap()
            .ends_with("lib64/libcudnn_ops.so.9"),
        "{}",
        r.describe()
    );
    assert_eq!(
        check(&j, "releases")["missing"],
        serde_json::json!([]),
        "the store is untouched"
    );
    // doctor sees the same drift, cheaply (no hashing), and offers the redeploy.
    let d =
        w.sb.run([
            "doctor",
            "--json",
            "--cuda-root",
            w.toolkit.to_str().unwrap(),
        ])
        .code_is(7);
    let f = d.finding("deployment-drift");
    assert_eq!(f["auto_fix"]["action"], "redeploy");
    assert!(
        f["commands"][0]
            .as_str()
            .unwrap()
            .starts_with("cudnnm use 9.27.0.42_cuda12 --cuda-root"),
        "{}",
        d.describe()
    );
}

#[cfg(unix)]
#[test]
fn copied_files_are_rehashed() {
    let w = world(Mode::Copy);
    verify(&w).ok();
    let h = w.toolkit.join("include/cudnn_graph.h");
    let mut bytes = fs::read(&h).unwrap();
    bytes[0] ^= 0x20;
    fs::write(&h, bytes).unwrap();
    let r = verify(&w).code_is(7);
    let m = r.json()["deployments"][0]["modified"][0]
        .as_str()
        .unwrap()
        .to_string();
    assert!(m.contains("SHA-256"), "{}", r.describe());
}

#[cfg(unix)]
#[test]
fn a_library_that_reports_another_version_than_its_receipt() {
    let w = world(Mode::Symlink);
    let p = w.release.join("receipt.toml");
    let text = fs::read_to_string(&p)
        .unwrap()
        .replace("header_version = \"9.27.0\"", "header_version = \"9.12.0\"");
    fs::write(&p, text).unwrap();
    let r = verify(&w).code_is(7);
    let lib = &r.json()["deployments"][0]["library"];
    assert_eq!(
        (lib["expected"].as_str(), lib["reported"].as_str()),
        (Some("9.12.0"), Some("9.27.0")),
        "{}",
        r.describe()
    );
    // --no-load skips that comparison.
    w.sb.run(["verify", "--no-load"]).ok();
}

#[test]
fn empty_home_verifies() {
    let sb = Sandbox::new();
    let r = sb.run(["verify", "--json"]).ok();
    assert_eq!(r.json()["healthy"], true);
}

#[cfg(unix)]
#[test]
fn a_change_restored_by_rollback_is_one_truth_for_current_verify_doctor_and_use() {
    // The tester's sequence: deploy by copy, edit include/cudnn.h, switch to
    // another release, roll back. The edit comes back (from backup 2).
    use cudnnm::version::Platform;
    use deploy_support::{linux_toolkit, put_release};
    let sb = Sandbox::new();
    for v in ["9.12.0.46", "9.10.2.21"] {
        put_release(
            &sb.home(),
            &common::fixtures::redist_linux(v, "12"),
            v,
            "12",
            Platform::LinuxX86_64,
        );
    }
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    let t = tk.to_str().unwrap();
    sb.run([
        "use",
        "9.12.0.46_cuda12",
        "--cuda-root",
        t,
        "--mode",
        "copy",
    ])
    .ok();
    let h = tk.join("include/cudnn.h");
    let mut perm = fs::metadata(&h).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perm.set_readonly(false);
    fs::set_permissions(&h, perm).unwrap();
    let mut edited = fs::read(&h).unwrap();
    edited.extend_from_slice(b"/* my change */\n");
    fs::write(&h, &edited).unwrap();
    sb.run([
        "use",
        "9.10.2.21_cuda12",
        "--cuda-root",
        t,
        "--mode",
        "copy",
    ])
    .ok();
    sb.run(["rollback", "--cuda-root", t]).ok();
    assert_eq!(
        fs::read(&h).unwrap(),
        edited,
        "the rollback restored the edit"
    );

    // current: the release, and one file that is not its copy.
    let cur = sb.run(["current", "--cuda-root", t]).ok();
    assert!(
        cur.stdout().contains(
            "files match the record; 1 file is not the release's copy (restored by rollback)"
        ),
        "{}",
        cur.describe()
    );
    // verify (the fixture libraries do not load: --no-load): the same truth; healthy (the file is what the record says), with
    // the file listed and help on keeping or dropping the change.
    let r = sb.run(["verify", "--json", "--no-load"]).ok();
    let d = &r.json()["deployments"][0];
    assert_eq!(d["modified"], serde_json::json!([]), "{}", r.describe());
    let restored = d["restored"][0].as_str().unwrap();
    assert!(
        restored.contains("include/cudnn.h: restored by rollback from backup 2")
            && restored.contains("the release's include/cudnn.h is"),
        "{}",
        r.describe()
    );
    let use_cmd = format!(
        "cudnnm use 9.12.0.46_cuda12 --cuda-root {} --mode copy",
        cudnnm::doctor::finding::sh_quote(t)
    );
    let help = d["help"][0].as_str().unwrap();
    assert!(
        help.contains("To keep it, nothing needs doing") && help.contains(&use_cmd),
        "{}",
        r.describe()
    );
    let text = sb.run(["verify", "--no-load"]).ok();
    assert!(
        text.stdout().contains("1 is not the release's copy")
            && text.stdout().contains("restored: ")
            && text.stdout().contains("help: 1 file in"),
        "{}",
        text.describe()
    );
    // doctor: a note, not drift to "fix" by replacing the change.
    let doc = sb.run(["doctor", "--json", "--no-load", "--cuda-root", t]);
    assert!([0, 7].contains(&doc.code()), "{}", doc.describe());
    let f = doc.finding("deployment-drift");
    assert_eq!(f["severity"], "info", "{}", doc.describe());
    assert!(f.get("auto_fix").is_none(), "{}", doc.describe());

    // Dropping the change: `use` of the same release is no longer a no-op.
    let u = sb
        .run([
            "use",
            "9.12.0.46_cuda12",
            "--cuda-root",
            t,
            "--mode",
            "copy",
        ])
        .ok();
    assert!(!u.stderr().contains("nothing changed"), "{}", u.describe());
    assert_ne!(fs::read(&h).unwrap(), edited);
    let cur = sb.run(["current", "--cuda-root", t]).ok();
    assert!(
        cur.stdout().contains(", files match (backup"),
        "{}",
        cur.describe()
    );
    let r = sb.run(["verify", "--json", "--no-load"]).ok();
    assert!(r.json()["deployments"][0].get("restored").is_none());
    // …and keeping it after all: the change is in a backup.
    sb.run(["rollback", "--cuda-root", t]).ok();
    assert_eq!(fs::read(&h).unwrap(), edited);
}

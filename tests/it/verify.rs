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
    cudnnm::deploy::{Deployment, Deployments, Mode, PlacedFile, PlacedFrom},
    cudnnm::hash::sha256_file,
    cudnnm::record::Entry,
    cudnnm::shape::Shape,
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
            files.push(FileRecord::file(format!("{sub}/{name}"), size, sha));
        }
    }
    std::os::unix::fs::symlink("libcudnn.so.9", release.join("lib/libcudnn.so")).unwrap();
    files.push(FileRecord::link("lib/libcudnn.so", "libcudnn.so.9"));
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let receipt = Receipt {
        schema: 1,
        version: "9.27.0.42".parse().unwrap(),
        cuda: "12".parse().unwrap(),
        platform: "linux-x86_64".parse().unwrap(),
        flavour: None,
        header_version: "9.27.0".parse().unwrap(),
        installed_at: "2026-11-29T21:00:00Z".into(),
        source: Source {
            kind: Shape::Wheel,
            name: "nvidia_cudnn_jit_cu12-9.27.0.42-py3-none-manylinux_2_27_x86_64.whl".into(),
            sha256: None,
            size: 0,
            from: cudnnm::store::Provenance::Local,
            dist: None,
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
        let entry = match (f.entry.link_target(), mode) {
            (Some(l), _) => {
                std::os::unix::fs::symlink(l, &dest).unwrap();
                Entry::link(l)
            }
            (None, Mode::Symlink) => {
                std::os::unix::fs::symlink(&src, &dest).unwrap();
                Entry::link(src.to_string_lossy())
            }
            (None, _) => {
                fs::copy(&src, &dest).unwrap();
                f.entry.clone()
            }
        };
        placed.push(PlacedFile {
            path: dest,
            from: PlacedFrom::Release(f.path.clone()),
            entry,
            mtime_ns: None,
        });
    }
    let d = Deployments {
        entries: vec![Deployment {
            toolkit: toolkit.clone(),
            release: "9.27.0.42_cuda12".parse().unwrap(),
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
        cudnnm::quote::sh_quote(t)
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

/// Where `tests/fixtures/home-0.1/make/make-home.sh` built the fixture: the
/// prefix of every absolute path its records and links hold.
#[cfg(unix)]
const FIXTURE_ROOT: &str = "/tmp/cudnnm-fixture-0.1";

/// A sandbox holding the fixture `tests/fixtures/<name>`, made in the
/// folder `made_in`: the tree is copied into the sandbox root with what git
/// does not keep put back from `tree.txt` (every folder; each file's mode
/// and modification time). Relocation replaces the text `made_in` by the
/// sandbox root in every file holding it and at the start of every link
/// target; returns which files and links those were (sorted), so that the
/// caller checks the fixture grew no absolute path unnoticed.
#[cfg(unix)]
fn fixture_home(name: &str, made_in: &str) -> (Sandbox, Vec<String>) {
    use std::os::unix::fs::PermissionsExt;
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let sb = Sandbox::new();
    let root = sb.root().to_str().unwrap().to_string();
    // The root goes into TOML and JSON strings unescaped.
    assert!(!root.contains(['"', '\\']), "{root}");
    let mut substituted = Vec::new();
    let tree = fs::read_to_string(src.join("tree.txt")).unwrap();
    let mut modes = Vec::new();
    for line in tree.lines() {
        let parts: Vec<&str> = line.splitn(4, ' ').collect();
        let (mode, rel) = match parts[..] {
            ["d", mode, rel] => {
                fs::create_dir_all(sb.root().join(rel)).unwrap();
                (mode, rel)
            }
            ["f", mode, mtime, rel] => {
                let bytes = fs::read(src.join("root").join(rel)).unwrap();
                let dest = sb.root().join(rel);
                let text = String::from_utf8_lossy(&bytes);
                if text.contains(made_in) {
                    fs::write(&dest, text.replace(made_in, &root)).unwrap();
                    substituted.push(rel.to_string());
                } else {
                    fs::write(&dest, &bytes).unwrap();
                }
                let t =
                    std::time::UNIX_EPOCH + std::time::Duration::from_nanos(mtime.parse().unwrap());
                fs::File::options()
                    .write(true)
                    .open(&dest)
                    .unwrap()
                    .set_modified(t)
                    .unwrap();
                (mode, rel)
            }
            _ => panic!("bad tree.txt line {line:?}"),
        };
        modes.push((sb.root().join(rel), u32::from_str_radix(mode, 8).unwrap()));
    }
    for e in walkdir::WalkDir::new(src.join("root")).min_depth(1) {
        let e = e.unwrap();
        if !e.path_is_symlink() {
            continue;
        }
        let rel = e.path().strip_prefix(src.join("root")).unwrap();
        let target = fs::read_link(e.path()).unwrap();
        let t = target.to_str().unwrap();
        let t = match t.strip_prefix(made_in) {
            Some(rest) => {
                substituted.push(format!("{} -> {made_in}…", rel.display()));
                format!("{root}{rest}")
            }
            None => t.to_string(),
        };
        std::os::unix::fs::symlink(t, sb.root().join(rel)).unwrap();
    }
    // Files first, then folders (a read-only folder takes no new entries).
    modes.reverse();
    for (p, mode) in modes {
        fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
    }
    substituted.sort();
    (sb, substituted)
}

/// A sandbox holding the fixture `tests/fixtures/home-0.1`: a home written
/// by cudnnm 0.1 (commit 5d40b1e) and two sandbox toolkits (see its
/// README), relocated by [`fixture_home`], which must have changed exactly
/// the files and links that hold the folder it was made in.
#[cfg(unix)]
fn home_0_1() -> Sandbox {
    let (sb, substituted) = fixture_home("home-0.1", FIXTURE_ROOT);
    let links = |dir: &str, names: &[&str]| -> Vec<String> {
        names
            .iter()
            .map(|n| format!("home/backups/{dir}/files/{n} -> {FIXTURE_ROOT}…"))
            .collect()
    };
    let headers_and_libs = [
        "include/cudnn.h",
        "include/cudnn_ops.h",
        "include/cudnn_version.h",
        "lib64/libcudnn.so.9.2.1",
        "lib64/libcudnn_ops.so.9.2.1",
    ];
    let mut want: Vec<String> = (1..=6)
        .map(|i| format!("home/backups/{i}/backup.toml"))
        .collect();
    want.extend(links("5", &headers_and_libs));
    want.extend(links("6", &headers_and_libs));
    want.extend([
        format!("home/current/cuda-12 -> {FIXTURE_ROOT}…"),
        "home/deployments.toml".to_string(),
        "home/journal/6.json".to_string(),
        "toolkits/cuda-12.4/.cudnnm-inflight.toml".to_string(),
    ]);
    want.sort();
    assert_eq!(substituted, want);
    sb
}

#[cfg(unix)]
#[test]
fn a_home_written_by_cudnnm_0_1_is_recovered_verified_and_rolled_back() {
    let sb = home_0_1();
    let home = sb.home();
    let store = |v: &str, rel: &str| home.join("store/cuda-12").join(v).join(rel);
    let a = sb.root().join("toolkits/cuda-12.4");
    let b = sb.root().join("toolkits/cuda-12.8");
    let (a_arg, b_arg) = (a.to_str().unwrap(), b.to_str().unwrap());
    let deployed = [
        ("include", "cudnn.h"),
        ("include", "cudnn_ops.h"),
        ("include", "cudnn_version.h"),
        ("lib", "libcudnn.so.9.2.1"),
        ("lib", "libcudnn_ops.so.9.2.1"),
    ];
    let in_toolkit = |tk: &PathBuf, dir: &str, name: &str| {
        tk.join(if dir == "lib" { "lib64" } else { dir }).join(name)
    };

    // The `use` that 0.1 was killed in (journal 6, after 4 of 9 files were
    // placed) is undone first: cuda-12.4 holds its 9.2.1.18 links again,
    // and id 6 is free for the next backup.
    let r = sb.run(["current", "--json", "--cuda-root", a_arg]).ok();
    let rec = &r.json()["recovered"];
    assert_eq!(rec[0]["action"], "use 9.1.0.70_cuda12", "{}", r.describe());
    assert_eq!(rec[0]["resolution"], "undone");
    assert_eq!(rec[0]["holds"], "9.2.1.18");
    assert!(!home.join("journal/6.json").exists());
    assert!(!home.join("backups/6").exists());
    assert!(!a.join(".cudnnm-inflight.toml").exists());
    for (dir, name) in deployed {
        assert_eq!(
            fs::read_link(in_toolkit(&a, dir, name)).unwrap(),
            store("9.2.1.18", &format!("{dir}/{name}")),
            "{}",
            common::listing(sb.root())
        );
    }
    assert_eq!(
        fs::read_link(a.join("lib64/libcudnn.so.9")).unwrap(),
        PathBuf::from("libcudnn.so.9.2.1")
    );

    // Every record reads and matches: both releases, both toolkits; the
    // header a rollback restored from backup 4 is named as such.
    let r = sb.run(["verify", "--json", "--no-load"]).ok();
    let j = r.json();
    assert_eq!(j["healthy"], true, "{}", r.describe());
    let ids: Vec<&str> = j["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["release"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["9.1.0.70_cuda12", "9.2.1.18_cuda12"]);
    let deps = j["deployments"].as_array().unwrap();
    assert_eq!(deps.len(), 2, "{}", r.describe());
    let dep_b = deps.iter().find(|d| d["path"] == b_arg).unwrap();
    assert_eq!(dep_b["release"], "9.1.0.70_cuda12");
    assert_eq!(dep_b["files"], 9);
    let restored = dep_b["restored"][0].as_str().unwrap();
    assert!(
        restored.ends_with(
            "include/cudnn.h: restored by rollback from backup 4; 93 bytes, the release's include/cudnn.h is 68 bytes"
        ),
        "{restored}"
    );
    let dep_a = deps.iter().find(|d| d["path"] == a_arg).unwrap();
    assert_eq!(dep_a["release"], "9.2.1.18_cuda12");

    // Rolling cuda-12.4 back restores backup 2: the copies of 9.1.0.70 that
    // 0.1 recorded by their store files, made again from the store.
    sb.run(["rollback", "--cuda-root", a_arg]).ok().stderr_has(&[&format!(
        "cuDNN 9.2.1.18 → 9.1.0.70 in '{a_arg}' (restored backup 2; copy, backup 6 holds what was replaced)"
    )]);
    for (dir, name) in [
        ("include", "cudnn.h"),
        ("include", "cudnn_version.h"),
        ("lib", "libcudnn.so.9.1.0"),
    ] {
        let p = in_toolkit(&a, dir, name);
        assert!(!fs::symlink_metadata(&p).unwrap().is_symlink());
        assert_eq!(
            fs::read(&p).unwrap(),
            fs::read(store("9.1.0.70", &format!("{dir}/{name}"))).unwrap()
        );
    }
    assert_eq!(
        fs::read_to_string(a.join("include/cudnn.h")).unwrap(),
        "/* cudnn.h fixture for cuDNN 9.1.0.70 */\n#include \"cudnn_version.h\"\n"
    );
    assert_eq!(
        fs::read_link(a.join("lib64/libcudnn.so.9")).unwrap(),
        PathBuf::from("libcudnn.so.9.1.0")
    );

    // Backup 1 holds what the user had before cudnnm: it comes back byte
    // for byte, and nothing else stays.
    sb.run(["rollback", "--to", "1"]).ok();
    assert_eq!(
        fs::read_to_string(a.join("include/cudnn.h")).unwrap(),
        "/* cudnn.h the user copied in, cuDNN 8.9.7 */\n"
    );
    let mytool = fs::read(a.join("lib64/libcudnn_mytool.so")).unwrap();
    assert!(mytool.starts_with(b"\x7fELF"));
    assert!(mytool.ends_with(b"libcudnn_mytool.so: the user's own library"));
    let mut names: Vec<String> = fs::read_dir(a.join("lib64"))
        .unwrap()
        .chain(fs::read_dir(a.join("include")).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "cuda.h",
            "cudnn.h",
            "cudnn_version.h",
            "libcudart.so.12",
            "libcudnn.so.8",
            "libcudnn_mytool.so"
        ]
    );

    // Rolling cuda-12.8 back restores backup 5: links into 9.2.1.18.
    sb.run(["rollback", "--cuda-root", b_arg]).ok().stderr_has(&[&format!(
        "cuDNN 9.1.0.70 → 9.2.1.18 in '{b_arg}' (restored backup 5; symlink, backup 8 holds what was replaced)"
    )]);
    for (dir, name) in deployed {
        assert_eq!(
            fs::read_link(in_toolkit(&b, dir, name)).unwrap(),
            store("9.2.1.18", &format!("{dir}/{name}"))
        );
    }
    // The edited header went into backup 8 with its bytes.
    assert!(
        fs::read_to_string(home.join("backups/8/files/include/cudnn.h"))
            .unwrap()
            .ends_with("/* edited by the user */\n")
    );
    let r = sb.run(["verify", "--json", "--no-load"]).ok();
    let j = r.json();
    assert_eq!(j["healthy"], true, "{}", r.describe());
    let deps = j["deployments"].as_array().unwrap();
    assert_eq!(deps.len(), 1, "{}", r.describe());
    assert_eq!(deps[0]["release"], "9.2.1.18_cuda12");
    assert_eq!(deps[0]["path"], b_arg);
}

/// A home the build before typed receipt sources wrote (commit 458425d),
/// holding a release from each kind of source a receipt records as text
/// (`tests/fixtures/home-sources`): a download URL, `pip:NAME==VERSION`,
/// and a pip requirement `install pip:` no longer accepts. Today's binary
/// reads the receipts, verifies, knows the pip release as installed from
/// its requirement, and rolls the toolkit back to it.
#[cfg(unix)]
#[test]
fn a_home_with_every_kind_of_source_is_verified_and_rolled_back() {
    let made_in = "/tmp/cudnnm-fixture-sources";
    let (mut sb, substituted) = fixture_home("home-sources", made_in);
    let lib = "toolkits/cuda-12.4/targets/x86_64-linux";
    let mut want: Vec<String> = vec![
        "home/backups/1/backup.toml".into(),
        "home/backups/2/backup.toml".into(),
        "home/deployments.toml".into(),
    ];
    for l in [
        "include/cudnn.h",
        "include/cudnn_ops.h",
        "include/cudnn_version.h",
        "lib/libcudnn.so.9.3.0",
        "lib/libcudnn_ops.so.9.3.0",
    ] {
        want.push(format!("{lib}/{l} -> {made_in}…"));
    }
    want.sort();
    assert_eq!(substituted, want);
    let home = sb.home();
    let receipt =
        |rel: &str| fs::read_to_string(home.join("store").join(rel).join("receipt.toml")).unwrap();
    let before: Vec<String> = ["cuda-12/9.1.0.70", "cuda-11/9.2.1.18", "cuda-12/9.3.0.75"]
        .iter()
        .map(|r| receipt(r))
        .collect();
    assert!(before[1].contains("url = \"pip:nvidia-cudnn-cu11>=9.2\""));

    let r = sb.run(["verify", "--json", "--no-load"]).ok();
    let j = r.json();
    assert_eq!(j["healthy"], true, "{}", r.describe());
    let ids: Vec<&str> = j["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["release"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["9.1.0.70_cuda12", "9.2.1.18_cuda11", "9.3.0.75_cuda12"]
    );
    let deps = j["deployments"].as_array().unwrap();
    assert_eq!(deps.len(), 1, "{}", r.describe());
    assert_eq!(deps[0]["release"], "9.3.0.75_cuda12");

    // `list` shows where each came from, as recorded.
    sb.run(["list"]).ok().stdout_has(&[
        "pip:nvidia-cudnn-cu12==9.1.0.70",
        "pip:nvidia-cudnn-cu11>=9.2",
        "http://127.0.0.1:38517/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-9.3.0.75_cuda12-archive.tar.xz",
    ]);
    // The pip release is known by its requirement: no pip run (there is no Python).
    sb.set_env("CUDNNM_PYTHON", sb.root().join("no-python"));
    sb.run(["install", "pip:nvidia-cudnn-cu12==9.1.0.70"])
        .ok()
        .stderr_has(&[
            "cuDNN 9.1.0.70_cuda12 is already installed",
            "pip:nvidia-cudnn-cu12==9.1.0.70",
        ]);

    // Rolling back restores backup 2: the copies of the pip release.
    let a = sb.root().join("toolkits/cuda-12.4");
    let a_arg = a.to_str().unwrap();
    sb.run(["rollback", "--cuda-root", a_arg])
        .ok()
        .stderr_has(&[&format!(
            "cuDNN 9.3.0.75 → 9.1.0.70 in '{a_arg}' (restored backup 2"
        )]);
    for rel in ["include/cudnn_version.h", "lib/libcudnn.so.9"] {
        let p = a.join(rel.replace("lib/", "lib64/"));
        assert!(!fs::symlink_metadata(&p).unwrap().is_symlink(), "{rel}");
        assert_eq!(
            fs::read(&p).unwrap(),
            fs::read(home.join("store/cuda-12/9.1.0.70").join(rel)).unwrap(),
            "{rel}"
        );
    }
    let r = sb.run(["verify", "--json", "--no-load"]).ok();
    assert_eq!(r.json()["healthy"], true, "{}", r.describe());
    assert_eq!(r.json()["deployments"][0]["release"], "9.1.0.70_cuda12");
    // The receipts' sources read back as they were written.
    for (rel, old) in ["cuda-12/9.1.0.70", "cuda-11/9.2.1.18", "cuda-12/9.3.0.75"]
        .iter()
        .zip(&before)
    {
        let url = |t: &str| {
            t.lines()
                .find(|l| l.starts_with("url = "))
                .map(str::to_string)
        };
        assert_eq!(url(&receipt(rel)), url(old), "{rel}");
    }
}

/// The `cudnnm toolkits forget …` command of a `help:` line, run as printed
/// (its arguments hold no spaces).
#[cfg(unix)]
fn run_forget_help(sb: &Sandbox, text: &str) -> Run {
    let help = text
        .lines()
        .find(|l| l.starts_with("help: ") && l.contains("`cudnnm toolkits forget "))
        .unwrap();
    let start = help.find("`cudnnm toolkits forget ").unwrap() + 1;
    let cmd = &help[start..start + help[start..].find('`').unwrap()];
    let args: Vec<String> = cmd
        .split_whitespace()
        .skip(1)
        .map(|a| a.trim_matches('\'').to_string())
        .collect();
    sb.run(&args)
}

#[cfg(unix)]
#[test]
fn a_deleted_toolkit_is_reported_not_a_failure_and_forgetting_it_keeps_its_backups() {
    use deploy_support::{linux_toolkit, put_redist_linux_12};
    let sb = Sandbox::new();
    put_redist_linux_12(&sb.home(), "9.1.0.70");
    put_redist_linux_12(&sb.home(), "9.12.0.46");
    let gone = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    let kept = linux_toolkit(&sb.root().join("cuda-12.8"), "12.8.0");
    let (g, k) = (gone.display().to_string(), kept.display().to_string());
    sb.run(["use", "9.12", "--cuda-root", &g]).ok();
    sb.run(["use", "9.1", "--cuda-root", &g]).ok();
    sb.run(["use", "9.12", "--cuda-root", &k]).ok();
    let real = fs::canonicalize(&gone).unwrap();
    let r = real.display().to_string();
    fs::remove_dir_all(&gone).unwrap();

    // verify: said, not exit 7, with the command that forgets it.
    let v = sb.run(["verify", "--no-load"]).ok().stdout_has(&[
        &format!("  gone      9.1.0.70_cuda12  in {r}: the toolkit folder no longer exists (deleted or moved)"),
        "Everything this home placed matches its record, except 1 toolkit folder that no longer exists.",
        &format!("help: the toolkit folder '{r}' is gone (deleted or moved), with the 9.1.0.70_cuda12 this home deployed there: nothing in the store or the backups is damaged. `cudnnm toolkits forget {r}` forgets it; backups 1, 2 of it stay (`cudnnm backups` lists them)."),
    ]);
    let j = sb.run(["verify", "--no-load", "--json"]).ok().json();
    assert_eq!(j["healthy"], true, "{j}");
    let dep = j["deployments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["path"] == r.as_str())
        .unwrap();
    assert_eq!(dep["toolkit_gone"], true, "{j}");
    // `toolkits` and `doctor` say the same; its backups are still listed by its root.
    sb.run(["toolkits"]).ok().stderr_has(&[&format!(
        "warning: cuDNN 9.1.0.70_cuda12 is recorded in '{r}', whose folder is gone; `cudnnm toolkits forget {r}` forgets it (its backups stay)"
    )]);
    let doctor = sb.run(["doctor", "--json", "--no-load"]).json();
    let f = doctor["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "deployment-drift" && f["title"].as_str().unwrap().contains(&r))
        .unwrap_or_else(|| panic!("{doctor}"))
        .clone();
    assert_eq!(f["severity"], "warning", "{f}");
    let ids = |args: &[&str]| -> Vec<u64> {
        sb.run(args)
            .ok()
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["id"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(ids(&["backups", "--json", "--cuda-root", &r]), vec![1, 2]);

    // The toolkit that still exists is not forgotten: that would orphan its files.
    let before = fs::read_to_string(sb.home().join("deployments.toml")).unwrap();
    sb.run(["toolkits", "forget", &k]).code_is(8).stderr_has(&[
        "error: the toolkit '",
        "' still exists, with cuDNN 9.12.0.46_cuda12 deployed by this home",
        "help: cudnnm forgets only a toolkit whose folder is gone; to take this home's cuDNN out of it, restore what was there before cudnnm: `cudnnm rollback --to 3`",
    ]);
    assert_eq!(
        fs::read_to_string(sb.home().join("deployments.toml")).unwrap(),
        before
    );

    // The printed command forgets the gone one; its backups stay.
    run_forget_help(&sb, &v.stdout()).ok().stderr_has(&[&format!(
        "forgot the toolkit '{r}' (its folder is gone): cuDNN 9.1.0.70_cuda12 is no longer recorded there; backups 1, 2 of it stay"
    )]);
    assert!(
        !fs::read_to_string(sb.home().join("deployments.toml"))
            .unwrap()
            .contains(&r)
    );
    sb.run(["verify", "--no-load"])
        .ok()
        .stdout_has(&["deployments: 1\n", "Everything matches its record."]);
    assert_eq!(ids(&["backups", "--json"]), vec![1, 2, 3]);
    assert!(sb.home().join("backups/1/backup.toml").is_file());
    // Forgotten once is forgotten.
    sb.run(["toolkits", "forget", &r])
        .code_is(3)
        .stderr_has(&[&format!(
            "error: this home has no deployment recorded in '{r}'"
        )]);
}

//! Tests of the planner: mapping, scanning, the use plan and its journal form.

use super::*;
use crate::hash;
use crate::shape::Shape;
use crate::store::{FileRecord, Receipt, Release, Source};
use crate::toolkit::{Layout, Toolkit};
use crate::version::{CudaVariant, Platform, Version};
#[cfg(unix)]
use {crate::fsops, crate::home::Home, crate::store::Store};

fn receipt(version: &str, cuda: &str, platform: Platform, files: Vec<FileRecord>) -> Receipt {
    let v: Version = version.parse().unwrap();
    Receipt {
        schema: 1,
        header_version: v.triple(),
        version: v,
        cuda: cuda.parse::<CudaVariant>().unwrap(),
        platform,
        flavour: None,
        installed_at: "2026-01-01T00:00:00Z".into(),
        source: Source {
            kind: Shape::Folder,
            name: "x".into(),
            sha256: None,
            size: 0,
            from: crate::store::Provenance::Local,
            dist: None,
        },
        files,
    }
}

fn file(path: &str, bytes: &[u8]) -> FileRecord {
    FileRecord::file(path, bytes.len() as u64, hash::sha256_bytes(bytes))
}

fn link(path: &str, target: &str) -> FileRecord {
    FileRecord::link(path, target)
}

fn toolkit(root: &Path, layout: Layout) -> Toolkit {
    Toolkit {
        root: root.to_path_buf(),
        cuda: "12.4".parse().unwrap(),
        layout,
        found_by: "test".into(),
    }
}

#[test]
fn windows_release_maps_into_windows_layout_and_licenses_stay() {
    let rel = Release {
        dir: PathBuf::from("/store/cuda-11.2/8.1.0.77"),
        receipt: receipt(
            "8.1.0.77",
            "11.2",
            Platform::WindowsX86_64,
            vec![
                file("bin/cudnn64_8.dll", b"dll"),
                file("bin/x64/cudnn_ops_infer64_8.dll", b"dll2"),
                file("include/cudnn.h", b"h"),
                file("lib/x64/cudnn.lib", b"lib"),
                file("lib/cudnn64_8.lib", b"lib2"),
                file("NVIDIA_SLA_cuDNN_Support.txt", b"license"),
                file("include/other.h", b"not cudnn"),
            ],
        ),
    };
    let tk = toolkit(Path::new("/P F/CUDA/v11.2"), Layout::Windows);
    let t = release_targets(&rel, &tk).unwrap();
    let dests: Vec<String> = t.iter().map(|t| rel_path(&tk.root, &t.dest)).collect();
    assert_eq!(
        dests,
        vec![
            "bin/cudnn64_8.dll",
            "bin/cudnn_ops_infer64_8.dll",
            "include/cudnn.h",
            "lib/x64/cudnn.lib",
            "lib/x64/cudnn64_8.lib"
        ]
    );
    let linux = toolkit(Path::new("/usr/local/cuda-11.2"), Layout::Linux);
    assert_eq!(
        release_targets(&rel, &linux).unwrap_err().kind(),
        Kind::Conflict
    );
}

#[test]
fn linux_chains_stay_links_and_duplicates_are_refused() {
    let mut r = receipt(
        "9.1.0.70",
        "12",
        Platform::LinuxX86_64,
        vec![
            file("lib/libcudnn.so.9.1.0", b"elf"),
            link("lib/libcudnn.so.9", "libcudnn.so.9.1.0"),
            link("lib/libcudnn.so", "libcudnn.so.9"),
            file("include/cudnn_version.h", b"#define CUDNN_MAJOR 9"),
        ],
    );
    let rel = Release {
        dir: PathBuf::from("/s"),
        receipt: r.clone(),
    };
    let tk = toolkit(Path::new("/tk"), Layout::Linux);
    let t = release_targets(&rel, &tk).unwrap();
    let so = t.iter().find(|t| t.from == "lib/libcudnn.so").unwrap();
    assert_eq!(so.state.link_target(), Some("libcudnn.so.9"));
    assert_eq!(so.dest, Path::new("/tk/lib64/libcudnn.so"));
    r.files.push(file("lib/stubs/libcudnn.so.9.1.0", b"dup"));
    let rel = Release {
        dir: PathBuf::from("/s"),
        receipt: r,
    };
    assert_eq!(
        release_targets(&rel, &tk).unwrap_err().kind(),
        Kind::Integrity
    );
}

#[cfg(unix)]
#[test]
fn scan_finds_every_cudnn_file_and_plan_backs_them_up() {
    let d = tempfile::tempdir().unwrap();
    let home = Home::new(d.path().join("home"));
    let store = Store::new(&home);
    let root = d.path().join("tk (x86) ü");
    fsops::create_dir_all(&root.join("include")).unwrap();
    fsops::create_dir_all(&root.join("targets/x86_64-linux/lib")).unwrap();
    fsops::symlink(Path::new("targets/x86_64-linux/lib"), &root.join("lib64")).unwrap();
    fsops::write_atomic(
        &root.join("include/cudnn.h"),
        b"#define CUDNN_MAJOR 7\n#define CUDNN_MINOR 6\n#define CUDNN_PATCHLEVEL 5\n",
    )
    .unwrap();
    fsops::write_atomic(&root.join("include/cuda.h"), b"x").unwrap();
    fsops::write_atomic(&root.join("lib64/libcudnn.so.7.6.5"), b"old").unwrap();
    fsops::symlink(
        Path::new("libcudnn.so.7.6.5"),
        &root.join("lib64/libcudnn.so.7"),
    )
    .unwrap();
    fsops::symlink(Path::new("gone"), &root.join("lib64/libcudnn_dangling.so")).unwrap();
    fsops::create_dir_all(&root.join("lib64/cudnn_samples")).unwrap();
    let tk = toolkit(&root, Layout::Linux);
    let found = scan_toolkit(&tk, None, &store).unwrap();
    let rels: Vec<&str> = found.iter().map(|f| f.rel.as_str()).collect();
    assert_eq!(
        rels,
        vec![
            "include/cudnn.h",
            "lib64/libcudnn.so.7",
            "lib64/libcudnn.so.7.6.5",
            "lib64/libcudnn_dangling.so"
        ]
    );
    assert_eq!(found[1].state.link_target(), Some("libcudnn.so.7.6.5"));
    assert_eq!(found[2].state.sha256(), Some(&hash::sha256_bytes(b"old")));

    let rdir = d.path().join("store/cuda-12/9.1.0.70");
    fsops::create_dir_all(&rdir.join("lib")).unwrap();
    fsops::write_atomic(&rdir.join("lib/libcudnn.so.9"), b"new").unwrap();
    fsops::symlink(Path::new("libcudnn.so.9"), &rdir.join("lib/libcudnn.so")).unwrap();
    let rel = Release {
        dir: rdir.clone(),
        receipt: receipt(
            "9.1.0.70",
            "12",
            Platform::LinuxX86_64,
            vec![
                file("lib/libcudnn.so.9", b"new"),
                link("lib/libcudnn.so", "libcudnn.so.9"),
            ],
        ),
    };
    let plan = plan_use(&home, &store, &tk, &rel, Mode::Symlink, None, 7).unwrap();
    assert_eq!(plan.moves.len(), 4);
    assert_eq!(
        plan.moves[2].to,
        home.backups_dir().join("7/files/lib64/libcudnn.so.7.6.5")
    );
    assert_eq!(plan.from_label, "7.6.5 (not from cudnnm)");
    assert_eq!(plan.to_label, "9.1.0.70");
    let so9 = plan
        .places
        .iter()
        .find(|p| p.rel == "lib64/libcudnn.so.9")
        .unwrap();
    assert_eq!(so9.kind, PlaceKind::Link);
    assert_eq!(so9.source, rdir.join("lib/libcudnn.so.9"));
    assert_eq!(so9.state.sha256(), Some(&hash::sha256_bytes(b"new")));
    assert!(plan.mkdirs.is_empty());
    assert_eq!(plan.step_count(), 1 + 4 + 2 + 2 + 1);
    assert!(!plan.copies());
    let copy = plan_use(&home, &store, &tk, &rel, Mode::Copy, None, 7).unwrap();
    assert_eq!(copy.places[0].kind, PlaceKind::Copy);
    assert_eq!(
        copy.places[1].kind,
        PlaceKind::Link,
        "chain links stay links in copy mode"
    );
    assert!(copy.copies());
    assert_eq!(
        copy.places[0].mtime_ns,
        mtime_ns(&std::fs::metadata(rdir.join("lib/libcudnn.so.9")).unwrap()),
        "a copy keeps its source's modification time"
    );
    // A journal roundtrip keeps the plan whole.
    let json = serde_json::to_string(&plan).unwrap();
    assert_eq!(serde_json::from_str::<Plan>(&json).unwrap(), plan);
    // A store file that is gone is named before anything is planned.
    fsops::remove_file(&rdir.join("lib/libcudnn.so.9")).unwrap();
    let e = plan_use(&home, &store, &tk, &rel, Mode::Symlink, None, 7).unwrap_err();
    assert_eq!(e.kind(), Kind::Integrity);
    assert!(
        e.message().ends_with("lib/libcudnn.so.9' is missing"),
        "{e:?}"
    );
}

#[test]
fn missing_folders_are_created_parents_first() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let v = missing_dirs(root, [root.join("lib/x64"), root.join("bin")]);
    assert_eq!(
        v,
        vec![root.join("bin"), root.join("lib"), root.join("lib/x64")]
    );
    assert!(join_rel(root, "../x").is_err());
    assert!(join_rel(root, "lib64/x").is_ok());
}

#[test]
fn actions_read_the_text_journals_hold() {
    for text in ["use 9.27.0.42_cuda12", "rollback to backup 3"] {
        let a: Action = text.parse().unwrap();
        assert_eq!(a.to_string(), text);
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(json, format!("\"{text}\""));
    }
    assert_eq!(
        "rollback to backup 3".parse::<Action>().unwrap(),
        Action::Rollback(3)
    );
    assert!("install 9.1".parse::<Action>().is_err());
}

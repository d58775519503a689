//! Tests of backups: ids, listing, pruning, whose files, materializing.
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::removal::{self, Removed};
use super::*;
use crate::error::{Kind, Result};
use crate::fsops;
use crate::home::Home;
use crate::record::Entry;
use crate::toolkit::Layout;
use crate::version::ReleaseId;

/// A prune as the guard runs it; the ids removed.
fn prune(home: &Home, root: &Path, keep: u32) -> Result<Vec<u64>> {
    let r = removal::prune(home, root, keep)?;
    let done = removal::execute(home, &r, crate::deploy::journal::FaultHook::default())?;
    Ok(done.into_iter().map(|r| r.id).collect())
}

/// `backups remove` as the guard runs it.
fn remove_checked(home: &Home, ids: &[u64], force: bool) -> Result<Vec<Removed>> {
    let r = removal::named(home, ids, force)?;
    removal::execute(home, &r, crate::deploy::journal::FaultHook::default())
}

/// Every backup of `refs` materialized with `link` making the hard links.
#[cfg(unix)]
fn materialize_with(
    refs: &[Referring],
    release: &Path,
    id: &ReleaseId,
    progress: &dyn crate::progress::Progress,
    link: &dyn Fn(&Path, &Path) -> Result<()>,
) -> Result<Vec<Materialized>> {
    let mut m = Materializer::new(release, id, progress, link);
    refs.iter().map(|r| m.backup(r)).collect()
}

#[test]
fn ids_count_past_the_last_handed_out_and_every_folder() {
    let d = tempfile::tempdir().unwrap();
    let home = Home::new(d.path());
    assert_eq!(next_id(&home).unwrap(), 1, "a new home");
    let dir = home.backups_dir();
    fsops::create_dir_all(&dir.join("2")).unwrap();
    assert_eq!(next_id(&home).unwrap(), 3, "a home from before the counter");
    reserve_id(&home, 3).unwrap();
    assert_eq!(
        next_id(&home).unwrap(),
        4,
        "3 was handed out, its folder not made yet"
    );
    fsops::create_dir_all(&dir.join(".trash-9")).unwrap();
    assert_eq!(
        next_id(&home).unwrap(),
        10,
        "a backup being deleted keeps its id"
    );
    fsops::remove_dir_all(&dir.join(".trash-9")).unwrap();
    reserve_id(&home, 10).unwrap();
    fsops::remove_dir_all(&dir.join("2")).unwrap();
    assert_eq!(next_id(&home).unwrap(), 11, "removed: never again");
    // A counter that cannot be read is not trusted, nor fatal.
    fsops::write_atomic(&dir.join(LAST_ID_FILE), b"x").unwrap();
    assert_eq!(next_id(&home).unwrap(), 1);
}

fn record(id: u64, toolkit: &str) -> BackupRecord {
    BackupRecord {
        id,
        toolkit: PathBuf::from(toolkit),
        layout: Layout::Linux,
        cuda: "12.4".into(),
        created_at: "2026-01-01T00:00:00Z".into(),
        reason: format!("before use {id}"),
        held: "no cuDNN".into(),
        deployment: None,
        reinstall: None,
        files: vec![BackupFile {
            path: "lib64/libcudnn.so.9".into(),
            entry: Entry::file(3, crate::hash::sha256_bytes(b"abc")),
            store: None,
            mtime_ns: None,
            // Backup 3 holds a file of the user's own (bytes no
            // release in this empty store has); the others hold release bytes.
            from_release: id != 3,
        }],
    }
}

#[test]
fn ids_listing_and_pruning_keep_first_and_newest() {
    let d = tempfile::tempdir().unwrap();
    let home = Home::new(d.path());
    assert_eq!(next_id(&home).unwrap(), 1);
    for id in 1..=8 {
        let tk = if id == 4 { "/other" } else { "/tk" };
        let dir = home.backups_dir().join(id.to_string());
        fsops::create_dir_all(&dir.join("files")).unwrap();
        record(id, tk).save(&dir).unwrap();
    }
    fsops::create_dir_all(&home.backups_dir().join("9")).unwrap(); // in flight: not listed
    fsops::create_dir_all(&home.backups_dir().join(".trash-2")).unwrap();
    assert_eq!(next_id(&home).unwrap(), 10);
    assert_eq!(list(&home).unwrap().len(), 8);
    assert_eq!(for_toolkit(&home, Path::new("/tk")).unwrap().len(), 7);
    assert_eq!(load(&home, 4).unwrap().record.toolkit, Path::new("/other"));
    assert_eq!(load(&home, 42).unwrap_err().kind(), Kind::NotFound);
    assert_eq!(load(&home, 3).unwrap().record.size(), 3);
    let removed = prune(&home, Path::new("/tk"), 3).unwrap();
    assert_eq!(removed, vec![2, 5], "backup 3 holds the user's file");
    let left: Vec<u64> = list(&home).unwrap().iter().map(|b| b.record.id).collect();
    assert_eq!(left, vec![1, 3, 4, 6, 7, 8]);
    removal::sweep_trash(&home);
    assert!(!home.backups_dir().join(".trash-2").exists());
    assert_eq!(prune(&home, Path::new("/tk"), 0).unwrap(), vec![6, 7]);
    let bytes = ReleaseBytes::default();
    assert_eq!(
        load(&home, 3).unwrap().record.users_files(&bytes),
        vec!["lib64/libcudnn.so.9".to_string()]
    );
    assert!(
        load(&home, 8)
            .unwrap()
            .record
            .users_files(&bytes)
            .is_empty()
    );
    // Only naming it, with force, removes it.
    assert_eq!(
        remove_checked(&home, &[3], false).unwrap_err().kind(),
        Kind::Conflict
    );
    assert_eq!(remove_checked(&home, &[3], true).unwrap()[0].id, 3);
    assert_eq!(
        remove_checked(&home, &[3], true).unwrap_err().kind(),
        Kind::NotFound
    );
    let left: Vec<u64> = list(&home).unwrap().iter().map(|b| b.record.id).collect();
    assert_eq!(left, vec![1, 4, 8]);
    assert_eq!(parse_id("#3").unwrap(), 3);
    assert_eq!(parse_id("x").unwrap_err().kind(), Kind::Usage);
}

/// A copy the recorded deployment placed from its release counts as the
/// release's once that release is uninstalled (its record knows the
/// bytes); a file a rollback restored, a changed copy, a symlink
/// deployment's file, and any file while the release is installed
/// (its receipt decides) do not.
#[test]
fn files_a_deployment_of_an_uninstalled_release_placed_are_not_the_users() {
    use crate::deploy::{Deployment, Mode, PlacedFile, PlacedFrom};
    let sha = crate::hash::sha256_bytes;
    let release: ReleaseId = "9.12.0.46_cuda12".parse().unwrap();
    let placed = |rel: &str, from: PlacedFrom, bytes: &[u8]| PlacedFile {
        path: Path::new("/tk").join(rel),
        from,
        entry: Entry::file(bytes.len() as u64, sha(bytes)),
        mtime_ns: None,
    };
    let mut rec = record(2, "/tk");
    rec.deployment = Some(Deployment {
        toolkit: PathBuf::from("/tk"),
        release: release.clone(),
        mode: Mode::Copy,
        deployed_at: "x".into(),
        backup: Some(1),
        source: None,
        files: vec![
            placed(
                "lib64/libcudnn.so.9",
                PlacedFrom::Release("lib/libcudnn.so.9".into()),
                b"lib",
            ),
            placed(
                "include/cudnn.h",
                PlacedFrom::Backup {
                    id: 1,
                    path: "include/cudnn.h".into(),
                },
                b"edit",
            ),
            placed(
                "include/cudnn_version.h",
                PlacedFrom::Release("include/cudnn_version.h".into()),
                b"v",
            ),
        ],
    });
    let file = |path: &str, bytes: &[u8]| BackupFile {
        path: path.into(),
        entry: Entry::file(bytes.len() as u64, sha(bytes)),
        store: None,
        mtime_ns: None,
        from_release: false,
    };
    rec.files = vec![
        file("lib64/libcudnn.so.9", b"lib"),
        file("include/cudnn.h", b"edit"),
        // Changed since it was placed: the user's.
        file("include/cudnn_version.h", b"changed"),
    ];
    let gone = ReleaseBytes::default();
    assert_eq!(
        rec.users_files(&gone),
        vec![
            "include/cudnn.h".to_string(),
            "include/cudnn_version.h".to_string()
        ]
    );
    // Installed: the receipt's bytes decide, not the record.
    let installed = ReleaseBytes {
        hashes: HashSet::new(),
        installed: [release].into_iter().collect(),
    };
    assert_eq!(rec.users_files(&installed).len(), 3);
    // A symlink deployment placed no bytes of its own.
    rec.deployment.as_mut().unwrap().mode = Mode::Symlink;
    assert_eq!(rec.users_files(&gone).len(), 3);
}

#[cfg(unix)]
#[test]
fn without_hard_links_into_the_store_backups_share_the_first_copy() {
    use std::os::unix::fs::MetadataExt;
    let d = tempfile::tempdir().unwrap();
    let home = Home::new(d.path());
    let release = home.store_dir().join("cuda-12/9.12.0.46");
    let lib = release.join("lib/libcudnn.so.9");
    fsops::create_dir_all(fsops::parent_of(&lib)).unwrap();
    fsops::write_atomic(&lib, b"library bytes").unwrap();
    let sha = crate::hash::sha256_bytes(b"library bytes");
    let refs: Vec<Referring> = [1u64, 2]
        .iter()
        .map(|&id| {
            let mut rec = record(id, "/tk");
            rec.files[0].store = Some(lib.clone());
            rec.files[0].entry = Entry::file(13, sha.clone());
            rec.files[0].from_release = false;
            let dir = home.backups_dir().join(id.to_string());
            fsops::create_dir_all(&dir.join("files")).unwrap();
            rec.save(&dir).unwrap();
            Referring {
                backup: Backup { dir, record: rec },
                files: vec!["lib64/libcudnn.so.9".into()],
                bytes: 13,
                sources: vec![lib.clone()],
            }
        })
        .collect();
    // No hard link into the store can be made (another volume, say).
    let no_store_links = |s: &Path, t: &Path| {
        if s.starts_with(home.store_dir()) {
            Err(crate::error::Error::msg("no hard links here"))
        } else {
            fsops::hard_link(s, t)
        }
    };
    let id: ReleaseId = "9.12.0.46_cuda12".parse().unwrap();
    let done = materialize_with(
        &refs,
        &release,
        &id,
        &crate::progress::NoProgress,
        &no_store_links,
    )
    .unwrap();
    assert_eq!(
        done.iter().map(|m| (m.files, m.copied)).collect::<Vec<_>>(),
        vec![(1, 13), (1, 0)],
        "one copy, then a link to it"
    );
    let f = |id: u64| {
        home.backups_dir()
            .join(format!("{id}/files/lib64/libcudnn.so.9"))
    };
    let (a, b) = (
        std::fs::metadata(f(1)).unwrap(),
        std::fs::metadata(f(2)).unwrap(),
    );
    assert_eq!(a.ino(), b.ino());
    assert_ne!(a.ino(), std::fs::metadata(&lib).unwrap().ino());
    assert_eq!(std::fs::read(f(2)).unwrap(), b"library bytes");
    let rec = load(&home, 2).unwrap().record;
    assert_eq!(rec.files[0].store, None);
    assert!(rec.files[0].from_release);
}

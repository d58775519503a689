//! Cases for `files/deployments.rs`: deployments that drifted, store
//! releases that are damaged or changed.

use super::*;

// --- cudnn-only-in-site-packages, soname-link-copied-as-file,
// toolkit-not-writable (docs/breakages.md) ----------------------------------

#[test]
fn deployed_files_changed() {
    let mut k = Kit::healthy_linux();
    let placed = |path: &str, link: Option<&str>, state: FileState| PlacedState {
        path: format!("{TK12}/{path}"),
        from: path.replace("lib64", "lib"),
        expected_link: link.map(str::to_owned),
        expected_size: None,
        restored: None,
        state,
        store_file: false,
    };
    k.s.deployments.push(DeploymentState {
        toolkit: TK12.into(),
        release: id("9.1.0.70_cuda12"),
        mode: Some(crate::deploy::Mode::Symlink),
        extra: vec![],
        toolkit_gone: false,
        files: vec![
            placed(
                "lib64/libcudnn.so.9",
                Some("libcudnn.so.9.1.0"),
                FileState::Link {
                    target: "libcudnn.so.9.1.0".into(),
                },
            ),
            placed(
                "include/cudnn.h",
                Some("/h/store/cudnn.h"),
                FileState::Link {
                    target: "/h/store/cudnn.h".into(),
                },
            ),
        ],
    });
    k.absent(FindingId::DeploymentDrift);
    // A stale copy beside the deployment (say in targets/x86_64-linux/lib)
    // is drift too, fixed by deploying again (which backs it up).
    let stale = format!("{TK12}/targets/x86_64-linux/lib/libcudnn_graph.so.9");
    k.s.deployments[0].extra = vec![stale.clone()];
    let f = k.expect(FindingId::DeploymentDrift);
    assert!(
        f.title.contains("1 cuDNN file(s) in")
            && f.title
                .contains("were not placed by its deployment of 9.1.0.70_cuda12"),
        "{f:?}"
    );
    assert_eq!(
        f.seen,
        vec![format!(
            "{stale}: a cuDNN file the deployment did not place"
        )]
    );
    assert!(f.auto_fix.is_some(), "{f:?}");
    k.s.deployments[0].extra.clear();
    k.s.deployments[0].files[0].state = FileState::File { size: 1000 };
    k.s.deployments[0].files[1].state = FileState::Missing;
    let f = k.expect(FindingId::DeploymentDrift);
    assert_eq!(f.seen.len(), 2);
    assert_eq!(
        f.auto_fix,
        Some(AutoFix::Redeploy {
            toolkit: TK12.into(),
            release: "9.1.0.70_cuda12".into()
        })
    );
    // While another home's change there is unfinished, `use` would refuse:
    // the redeploy is held back, not attempted.
    let tk = k.s.toolkits.iter_mut().find(|t| t.root == TK12).unwrap();
    tk.unfinished_change = Some(crate::doctor::snapshot::UnfinishedChange {
        home: "/home/b/.cudnnm".into(),
        backup: 2,
        action: "use 9.27.0.42_cuda12".into(),
        finish: "cudnnm --home /home/b/.cudnnm current".into(),
        running: false,
        own_home: false,
    });
    let f = k.expect(FindingId::DeploymentDrift);
    assert_eq!(f.auto_fix, None);
    assert!(
        f.held_back
            .as_deref()
            .is_some_and(|h| h.contains("unfinished change from another cudnnm home")),
        "{f:?}"
    );
}

#[test]
fn an_edit_through_a_hardlink_is_the_store_release_not_drift() {
    let mut k = Kit::healthy_linux();
    k.s.deployments.push(DeploymentState {
        toolkit: TK12.into(),
        release: id("9.1.0.70_cuda12"),
        mode: Some(crate::deploy::Mode::Hardlink),
        extra: vec![],
        toolkit_gone: false,
        files: vec![PlacedState {
            path: format!("{TK12}/include/cudnn_version.h"),
            from: "include/cudnn_version.h".into(),
            expected_link: None,
            expected_size: Some(286),
            restored: None,
            state: FileState::File { size: 287 },
            store_file: true,
        }],
    });
    k.s.store_changed
        .push(crate::doctor::snapshot::ChangedRelease {
            release: id("9.1.0.70_cuda12"),
            dir: "/h/store/cuda-12/9.1.0.70".into(),
            files: vec!["include/cudnn_version.h: 287 bytes, expected 286".into()],
            reinstall: "pip:nvidia-cudnn-jit-cu12==9.1.0.70".into(),
            reinstall_is_file: false,
        });
    k.absent(FindingId::DeploymentDrift);
    let f = k.expect(FindingId::StoreReleaseDamaged);
    assert_eq!(f.auto_fix, None);
    assert_eq!(
        f.seen,
        vec![
            "/h/store/cuda-12/9.1.0.70: include/cudnn_version.h: 287 bytes, expected 286"
                .to_string(),
            format!("linked from {TK12} (hardlink deployment): the change shows there too"),
        ]
    );
    assert_eq!(
        f.commands,
        vec![
            "cudnnm install pip:nvidia-cudnn-jit-cu12==9.1.0.70 --force".to_string(),
            format!("cudnnm use 9.1.0.70_cuda12 --cuda-root {TK12} --mode hardlink"),
        ]
    );
    // The same size change in a copy (not the store's file) is drift.
    k.s.deployments[0].files[0].store_file = false;
    k.s.store_changed.clear();
    let f = k.expect(FindingId::DeploymentDrift);
    assert_eq!(f.severity, Severity::Error);
    assert!(f.auto_fix.is_some());
    // A toolkit whose own files all say another release than the record
    // (another home deployed 9.1.0 over this home's 9.27.0.42): no redeploy.
    k.s.deployments[0].release = id("9.27.0.42_cuda12");
    let f = k.expect(FindingId::DeploymentDrift);
    assert_eq!(
        f.title,
        format!("{TK12} now holds cuDNN 9.1.0 (not this home's record of 9.27.0.42_cuda12)")
    );
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.auto_fix, None);
    assert!(
        f.held_back
            .as_deref()
            .is_some_and(|h| h.contains("redeploying would undo that change")),
        "{f:?}"
    );
}

#[test]
fn a_change_a_rollback_restored_is_a_note_not_drift() {
    // `use` (copy), edit cudnn.h, `use` another, `rollback`: the record holds
    // the edit (restored from backup 2), which is what is there.
    let mut k = Kit::healthy_linux();
    k.s.deployments.push(DeploymentState {
        toolkit: TK12.into(),
        release: id("9.1.0.70_cuda12"),
        mode: Some(crate::deploy::Mode::Copy),
        extra: vec![],
        toolkit_gone: false,
        files: vec![PlacedState {
            path: format!("{TK12}/include/cudnn.h"),
            from: "backup 2: include/cudnn.h".into(),
            expected_link: None,
            expected_size: Some(3119),
            restored: Some("restored by rollback from backup 2".into()),
            state: FileState::File { size: 3119 },
            store_file: false,
        }],
    });
    let f = k.expect(FindingId::DeploymentDrift);
    assert_eq!(f.severity, Severity::Info, "{f:?}");
    assert!(
        f.title.contains("not release 9.1.0.70_cuda12's copy"),
        "{f:?}"
    );
    assert_eq!(f.auto_fix, None, "--fix must not replace the user's change");
    assert_eq!(
        f.commands,
        vec![format!(
            "cudnnm use 9.1.0.70_cuda12 --cuda-root {TK12} --mode copy"
        )]
    );
    // Changed since the rollback: drift again, an error.
    k.s.deployments[0].files[0].state = FileState::File { size: 10 };
    assert_eq!(
        k.expect(FindingId::DeploymentDrift).severity,
        Severity::Error
    );
}

// --- the store -------------------------------------------------------------

#[test]
fn store_release_damaged() {
    let mut k = Kit::healthy_linux();
    k.absent(FindingId::StoreReleaseDamaged);
    k.s.store_damaged.push(DamagedRelease {
        dir: "/h/store/cuda-12/9.12.0.46".into(),
        release: Some(id("9.12.0.46_cuda12")),
        error: "could not read the receipt '/h/store/cuda-12/9.12.0.46/receipt.toml': expected `=`"
            .into(),
        unreadable: false,
    });
    k.s.deployments.push(DeploymentState {
        toolkit: TK12.into(),
        release: id("9.12.0.46_cuda12"),
        mode: Some(crate::deploy::Mode::Symlink),
        extra: vec![],
        toolkit_gone: false,
        files: vec![],
    });
    let f = k.expect(FindingId::StoreReleaseDamaged);
    assert_eq!(f.severity, Severity::Error);
    assert!(f.title.contains("9.12.0.46_cuda12"), "{f:?}");
    assert!(f.seen[0].contains("expected `=`"), "{f:?}");
    assert!(f.seen[1].contains(TK12), "the deployment is named: {f:?}");
    // The catalog has it: the command reinstalls exactly that release.
    assert_eq!(f.commands, vec!["cudnnm install 9.12.0.46_cuda12 --force"]);
    // A release the catalog does not know: words, not a command that fails.
    k.s.store_damaged[0].release = Some(id("9.12.0.46_cuda11"));
    let f = k.expect(FindingId::StoreReleaseDamaged);
    assert!(f.commands.is_empty(), "{f:?}");
    assert!(f.fix.unwrap().contains("archive or wheel it came from"));
}

#[test]
fn a_receipt_denied_to_this_user_is_a_permission_warning() {
    let mut k = Kit::healthy_linux();
    k.s.store_damaged.push(DamagedRelease {
        dir: "/h/store/cuda-12/9.12.0.46".into(),
        release: Some(id("9.12.0.46_cuda12")),
        error: "could not read '/h/store/cuda-12/9.12.0.46/receipt.toml': Permission denied (os error 13)".into(),
        unreadable: true,
    });
    let f = k.expect(FindingId::StoreReleaseUnreadable);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.commands, vec!["chmod -R u+rX /h/store/cuda-12/9.12.0.46"]);
    assert!(!f.why.contains("install --force"), "{f:?}");
    k.absent(FindingId::StoreReleaseDamaged);
    Kit::healthy_linux().absent(FindingId::StoreReleaseUnreadable);
}

//! Cases for `files/`: architecture, complete sets and folders, soname
//! chains, header against library, CUDA fit, load failures.

use super::*;

// --- os-not-64-bit (docs/breakages.md) -------------------------------------

#[test]
fn wrong_architecture() {
    let mut k = Kit::healthy_linux();
    k.file(&format!("{TK12}/lib64/libcudnn_ops.so.9.1.0"))
        .machine = Some("aarch64".into());
    let f = k.expect(FindingId::WrongArchitecture);
    assert!(f.title.contains("aarch64"), "{f:?}");
    Kit::healthy_linux().absent(FindingId::WrongArchitecture);
}

// --- build-for-other-cuda, cudnn-from-another-cuda (docs/breakages.md) -----

#[test]
fn cudnn_build_does_not_fit_the_toolkit() {
    // An 8.x build for 11.2 in a CUDA 8.0 toolkit.
    let mut k = Kit::windows();
    let tk80 = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v8.0";
    k.toolkit(tk80, "8.0");
    k.windows_set(
        &format!(r"{tk80}\bin"),
        &format!(r"{tk80}\include"),
        &format!(r"{tk80}\lib\x64"),
        "8.1.0.77",
    );
    k.s.path.insert(0, format!(r"{tk80}\bin"));
    k.s.deployments.push(DeploymentState {
        toolkit: tk80.into(),
        release: id("8.1.0.77_cuda11.2"),
        mode: Some(crate::deploy::Mode::Hardlink),
        extra: vec![],
        toolkit_gone: false,
        files: vec![],
    });
    let f = k.expect(FindingId::CudnnCudaMismatch);
    assert!(f.seen.iter().any(|s| s.contains("11.2")), "{f:?}");
    // Without a record, the published CUDA range still rules it out.
    k.s.deployments.clear();
    k.expect(FindingId::CudnnCudaMismatch);
    // Linux: a library built with CUDA 11.8 inside a 12.4 toolkit.
    let mut k = Kit::healthy_linux();
    k.file(&format!("{TK12}/lib64/libcudnn.so.9.1.0"))
        .cudart_version = Some(11080);
    k.expect(FindingId::CudnnCudaMismatch);
    // Minor-version compatibility: a 12.9 build fits a 12.4 toolkit.
    let mut k = Kit::healthy_linux();
    k.file(&format!("{TK12}/lib64/libcudnn.so.9.1.0"))
        .cudart_version = Some(12090);
    k.absent(FindingId::CudnnCudaMismatch);
}

#[test]
fn cudnn_loaded_from_another_cuda_install() {
    // cudnn-from-another-cuda: LD_LIBRARY_PATH brings a CUDA 11 build ahead of the 12.4 toolkit's.
    let mut k = Kit::healthy_linux();
    k.linux_set(
        "/opt/cuda-11.8/lib64",
        "/opt/cuda-11.8/include",
        "9.0.0",
        true,
    );
    k.file("/opt/cuda-11.8/lib64/libcudnn.so.9.0.0")
        .cudart_version = Some(11080);
    k.s.ld_library_path.insert(0, "/opt/cuda-11.8/lib64".into());
    let f = k.expect(FindingId::CudnnCudaMismatch);
    assert!(
        f.title.contains("CUDA 11.8") && f.title.contains("12.4"),
        "{f:?}"
    );
}

// --- file-missing-from-set (docs/breakages.md) -----------------------------

#[test]
fn missing_library_of_the_set() {
    let mut k = Kit::healthy_windows();
    k.remove("cudnn_cnn_infer64_8.dll");
    let f = k.expect(FindingId::MissingLibrary);
    assert!(f.title.contains("cudnn_cnn_infer64_8.dll"), "{f:?}");
    assert!(f.why.contains("Error code 126"), "{f:?}");
    let mut k = Kit::healthy_linux();
    k.remove("libcudnn_graph.so.9.1.0")
        .remove("libcudnn_graph.so.9");
    let f = k.expect(FindingId::MissingLibrary);
    assert!(
        f.why
            .contains("libcudnn_graph.so.9: cannot open shared object file"),
        "{f:?}"
    );
    // The JIT subset (cudnn, graph, runtime-compiled engines) is complete.
    let mut k = Kit::healthy_linux();
    for st in ["adv", "cnn", "ops", "heuristic", "engines_precompiled"] {
        k.remove(&format!("libcudnn_{st}.so.9.1.0"))
            .remove(&format!("libcudnn_{st}.so.9"));
    }
    k.absent(FindingId::MissingLibrary);
}

#[test]
fn missing_header() {
    let mut k = Kit::healthy_windows();
    k.remove(r"\cudnn.h");
    let f = k.expect(FindingId::MissingHeader);
    assert!(f.why.contains("C1083"), "{f:?}");
    let mut k = Kit::healthy_linux();
    k.remove("/cudnn_version.h");
    let f = k.expect(FindingId::MissingHeader);
    assert!(f.why.contains("cudnn_version.h: No such file"), "{f:?}");
    Kit::healthy_linux().absent(FindingId::MissingHeader);
}

#[test]
fn missing_link_library() {
    let mut k = Kit::healthy_windows();
    k.remove(r"\cudnn.lib");
    assert!(
        k.expect(FindingId::MissingLinkLibrary)
            .why
            .contains("LNK1181")
    );
    let mut k = Kit::healthy_linux();
    k.remove("/libcudnn.so");
    let f = k.expect(FindingId::MissingLinkLibrary);
    assert_eq!(f.severity, Severity::Warning, "only builds need it: {f:?}");
    assert!(f.why.contains("cannot find -lcudnn"), "{f:?}");
    assert!(f.commands[0].starts_with("ln -s libcudnn.so.9"), "{f:?}");
    Kit::healthy_windows().absent(FindingId::MissingLinkLibrary);
}

// --- lib-not-in-x64, archive-layout-changed-8-3 (docs/breakages.md) --------

#[test]
fn import_libraries_in_lib_instead_of_lib_x64() {
    let mut k = Kit::healthy_windows();
    k.remove(r"\lib\x64\cudnn.lib")
        .remove(r"\lib\x64\cudnn64_8.lib");
    k.file(&format!(r"{TK112}\lib\cudnn.lib"));
    k.file(&format!(r"{TK112}\lib\cudnn64_8.lib"));
    let f = k.expect(FindingId::LibNotInX64);
    assert!(f.commands[0].starts_with("move "), "{f:?}");
    k.absent(FindingId::MissingLinkLibrary);
    k.absent(FindingId::FileInWrongFolder);
    Kit::healthy_windows().absent(FindingId::LibNotInX64);
}

#[test]
fn a_windows_layout_toolkit_is_checked_as_windows_on_linux() {
    // A Windows toolkit tree (a copy, a mounted drive) examined on Linux: its
    // layout, not the host, decides the file set and the folders.
    let mut k = Kit::linux();
    let root = "/mnt/c/CUDA/v11.2";
    k.s.toolkits.push(ToolkitInfo {
        root: root.into(),
        cuda: Some(v("11.2.2")),
        layout: ToolkitLayout::Windows,
        found_by: "--cuda-root".into(),
        writable: None,
        unfinished_change: None,
    });
    let mut stems = vec!["cudnn"];
    stems.extend(crate::names::sublib_stems(8));
    for st in stems {
        let f = k.file(&format!("{root}/bin/{st}64_8.dll"));
        f.machine = Some("x86_64".into());
        f.file_version = Some(v("8.1.0.77"));
    }
    k.header(&format!("{root}/include/cudnn_version.h"), "8.1.0");
    k.file(&format!("{root}/include/cudnn.h"));
    k.file(&format!("{root}/lib/x64/cudnn.lib"));
    k.file(&format!("{root}/lib/x64/cudnn64_8.lib"));
    for id in [
        FindingId::MissingLibrary,
        FindingId::MissingHeader,
        FindingId::MissingLinkLibrary,
        FindingId::LibNotInX64,
        FindingId::FileInWrongFolder,
    ] {
        k.absent(id);
    }
    // A stray import library in `lib`: the Windows mistake, found on Linux too.
    k.file(&format!("{root}/lib/cudnn.lib"));
    let f = k.expect(FindingId::LibNotInX64);
    assert_eq!(
        f.title,
        format!("cuDNN import libraries are in {root}/lib, not {root}/lib/x64"),
        "paths keep the host's spelling: {f:?}"
    );
    assert_eq!(
        f.commands,
        vec![format!("mv {root}/lib/cudnn*.lib {root}/lib/x64/")]
    );
    k.absent(FindingId::FileInWrongFolder);
    // A missing DLL is named as the DLL, in bin.
    k.remove("/bin/cudnn_cnn_infer64_8.dll");
    let f = k.expect(FindingId::MissingLibrary);
    assert!(
        f.title.contains("cudnn_cnn_infer64_8.dll") && !f.title.contains(".so"),
        "{f:?}"
    );
    assert!(
        f.seen[0].starts_with(&format!("missing from {root}/bin:")),
        "{f:?}"
    );
}

#[test]
fn files_in_the_wrong_toolkit_folder() {
    let mut k = Kit::healthy_windows();
    k.file(&format!(r"{TK112}\lib\x64\cudnn_ops_train64_8.dll"));
    let f = k.expect(FindingId::FileInWrongFolder);
    assert!(f.seen[0].ends_with(r"v11.2\bin"), "{f:?}");
    // archive-layout-changed-8-3: the 8.3+ archive's `lib` copied as the toolkit's `lib`.
    let mut k = Kit::healthy_linux();
    k.file(&format!("{TK12}/lib/libcudnn_adv.so.9"));
    k.expect(FindingId::FileInWrongFolder);
    Kit::healthy_linux().absent(FindingId::FileInWrongFolder);
}

// --- header-library-mismatch (docs/breakages.md) ---------------------------

#[test]
fn header_and_library_disagree() {
    // header-library-mismatch: the header says 7.x, the library is 5.1 (partial copy).
    let mut k = Kit::linux();
    k.toolkit("/usr/local/cuda-8.0", "8.0");
    k.header("/usr/local/cuda-8.0/include/cudnn.h", "7.0.5");
    k.file("/usr/local/cuda-8.0/lib64/libcudnn.so.5.1.10");
    k.link(
        "/usr/local/cuda-8.0/lib64/libcudnn.so.5",
        "libcudnn.so.5.1.10",
    );
    k.s.ld_library_path = vec!["/usr/local/cuda-8.0/lib64".into()];
    let f = k.expect(FindingId::HeaderLibraryMismatch);
    assert!(f.seen[0].contains("cuDNN 5"), "{f:?}");
    // #10: the headers say 9.12.0, the loaded library 9.1.0.
    let mut k = Kit::healthy_linux();
    k.header(&format!("{TK12}/include/cudnn_version.h"), "9.12.0");
    let f = k.expect(FindingId::HeaderLibraryMismatch);
    assert!(f.seen[0].contains("loaded library"), "{f:?}");
    Kit::healthy_linux().absent(FindingId::HeaderLibraryMismatch);
}

// --- dll-load-failed-zlibwapi, dependency-unresolved (docs/breakages.md) ---

#[test]
fn library_that_does_not_load() {
    let mut k = Kit::healthy_linux();
    k.file(&format!("{TK12}/lib64/libcudnn.so.9.1.0"))
        .load_error = Some("libz.so.1: cannot open shared object file".into());
    let f = k.expect(FindingId::LibraryLoadFailed);
    assert!(f.seen[1].contains("libz.so.1"), "{f:?}");
    Kit::healthy_linux().absent(FindingId::LibraryLoadFailed);
}

// --- cudnn-only-in-site-packages, soname-link-copied-as-file,
// toolkit-not-writable (docs/breakages.md) ----------------------------------

#[test]
fn soname_chain_broken_by_a_copy() {
    // soname-link-copied-as-file: libcudnn.so.9 is a regular file where a link was expected.
    let mut k = Kit::healthy_linux();
    let f = k.file(&format!("{TK12}/lib64/libcudnn.so.9"));
    f.size = 1000;
    let f = k.expect(FindingId::BrokenSonameChain);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(
        f.auto_fix,
        Some(AutoFix::RelinkSoname {
            dir: format!("{TK12}/lib64"),
            link: "libcudnn.so.9".into(),
            target: "libcudnn.so.9.1.0".into()
        })
    );
    // The development link copied: a warning.
    let mut k = Kit::healthy_linux();
    k.file(&format!("{TK12}/lib64/libcudnn.so"));
    k.file(&format!("{TK12}/lib64/libcudnn.so.9")).size = 1000;
    assert!(
        k.all(FindingId::BrokenSonameChain)
            .iter()
            .any(|f| f.severity == Severity::Warning)
    );
    // A dangling link.
    let mut k = Kit::healthy_linux();
    k.file(&format!("{TK12}/lib64/libcudnn_adv.so.9")).dangling = true;
    k.s.files.last_mut().unwrap().link_target = Some("libcudnn_adv.so.9.0.0".into());
    k.expect(FindingId::BrokenSonameChain);
    // Wheels hold only libX.so.M files: no chain expected.
    let mut k = Kit::linux();
    k.linux_set(
        "/w/nvidia/cudnn/lib",
        "/w/nvidia/cudnn/include",
        "9.1.0",
        false,
    );
    k.absent(FindingId::BrokenSonameChain);
    Kit::healthy_linux().absent(FindingId::BrokenSonameChain);
}

/// `soname-link-missing`: `--fix` makes the link in a folder of the user's
/// own; a toolkit known not to be writable and a system package's folder
/// keep their command and say why `--fix` leaves them; a conda package's
/// folder is changed through conda, not by doctor.
#[test]
fn a_missing_soname_link_is_fixed_only_where_it_is_safe() {
    let lib = format!("{TK12}/lib64");
    let mut k = Kit::healthy_linux();
    k.remove("/lib64/libcudnn.so.9");
    let f = k.expect(FindingId::SonameLinkMissing);
    assert_eq!(
        f.auto_fix,
        Some(AutoFix::MakeSonameLink {
            dir: lib.clone(),
            link: "libcudnn.so.9".into(),
            target: "libcudnn.so.9.1.0".into()
        }),
        "{f:?}"
    );
    assert_eq!(f.held_back, None);

    k.s.toolkits[0].writable = Some(false);
    let f = k.expect(FindingId::SonameLinkMissing);
    assert_eq!(f.auto_fix, None, "{f:?}");
    assert_eq!(
        f.held_back.as_deref(),
        Some(format!("'{lib}' is not writable by this user").as_str())
    );
    assert_eq!(
        f.commands,
        vec![format!("ln -s libcudnn.so.9.1.0 {lib}/libcudnn.so.9")]
    );

    for origin in [InstallKind::System, InstallKind::Conda] {
        let mut k = Kit::healthy_linux();
        k.remove("/lib64/libcudnn.so.9");
        for f in &mut k.s.files {
            f.origin = origin;
        }
        let f = k.expect(FindingId::SonameLinkMissing);
        assert_eq!(f.auto_fix, None, "{origin:?}: {f:?}");
        if origin == InstallKind::System {
            assert_eq!(f.commands, vec!["sudo ldconfig".to_string()]);
            assert!(f.held_back.is_some(), "{f:?}");
        }
    }
}

/// A symlink deployment whose store release was uninstalled (by the user,
/// or by an administrator from the system store): the finding says so and
/// deploys a release that is installed, not "recreate the chain".
#[test]
fn a_link_into_an_uninstalled_store_release_says_so() {
    let mut k = Kit::healthy_linux();
    let gone = "/opt/cudnnm/store/cuda-12/9.27.0.42/lib/libcudnn_adv.so.9";
    k.file(&format!("{TK12}/lib64/libcudnn_adv.so.9")).dangling = true;
    k.s.files.last_mut().unwrap().link_target = Some(gone.into());
    k.s.store_releases = Some(vec![id("9.12.0.46_cuda12"), id("8.9.7.29_cuda11")]);
    let f = k.expect(FindingId::BrokenSonameChain);
    assert!(
        f.seen
            .iter()
            .any(|l| l.contains("the cudnnm store '/opt/cudnnm/store'")
                && l.contains("no longer holds cuDNN 9.27.0.42_cuda12")),
        "{f:?}"
    );
    assert_eq!(
        f.commands,
        vec![format!("cudnnm use 9.12.0.46_cuda12 --cuda-root {TK12}")],
        "{f:?}"
    );
    assert!(!f.fix.as_deref().unwrap_or("").contains("cp -P"), "{f:?}");
}

// --- suggestions name only releases that exist -----------------------------

#[test]
fn a_build_for_another_cuda_suggests_one_that_exists_for_the_toolkit() {
    // cuDNN 9.12 (built for CUDA 12) deployed into a CUDA 11.8 toolkit: the
    // catalog has no 9.12 build for CUDA 11, so not `install 9.12 --cuda 11`
    // but the newest 9.x that has one.
    let mut k = Kit::linux();
    let tk = "/usr/local/cuda-11.8";
    k.toolkit(tk, "11.8");
    k.linux_set(
        &format!("{tk}/lib64"),
        &format!("{tk}/include"),
        "9.12.0",
        true,
    );
    k.file(&format!("{tk}/lib64/libcudnn.so.9.12.0"))
        .cudart_version = Some(12090);
    k.s.ld_library_path = vec![format!("{tk}/lib64")];
    let f = k.expect(FindingId::CudnnCudaMismatch);
    assert_eq!(
        f.commands,
        vec![
            "cudnnm install 9.10.2.21_cuda11".to_string(),
            format!("cudnnm use 9.10.2.21_cuda11 --cuda-root {tk}"),
        ],
        "{f:?}"
    );
    assert!(
        f.fix
            .as_deref()
            .unwrap()
            .contains("no cuDNN 9.12.0 built for CUDA 11.8"),
        "{f:?}"
    );
}

#[test]
fn a_library_the_loader_may_not_read_or_map_says_so_and_not_reinstall() {
    let lib = "/usr/local/cuda-12.4/lib64/libcudnn_graph.so.9";
    let mut k = Kit::healthy_linux();
    let f = k.s.files.iter_mut().find(|f| f.path == lib).unwrap();
    f.unreadable = true;
    // libcudnn.so.9 then fails to load naming it: explained, not "reinstall".
    let main =
        k.s.files
            .iter_mut()
            .find(|f| f.path.ends_with("/libcudnn.so.9"))
            .unwrap();
    main.load_error = Some(format!(
        "{lib}: cannot open shared object file: Permission denied"
    ));
    let f = k.expect(FindingId::LibraryUnreadable);
    assert_eq!(f.severity, Severity::Error);
    assert!(f.why.contains("Permission denied"), "{f:?}");
    assert!(f.commands[0].starts_with("chmod a+r "), "{f:?}");
    k.absent(FindingId::LibraryLoadFailed);

    let mut k = Kit::healthy_linux();
    let f = k.s.files.iter_mut().find(|f| f.path == lib).unwrap();
    f.noexec_mount = Some("/usr/local".into());
    let f = k.expect(FindingId::LibraryOnNoexecMount);
    assert!(f.why.contains("failed to map segment"), "{f:?}");
    assert_eq!(f.commands, vec!["sudo mount -o remount,exec /usr/local"]);

    // Windows: an ACL without read/execute is error 5 and an icacls grant.
    let mut k = Kit::healthy_windows();
    let f =
        k.s.files
            .iter_mut()
            .find(|f| f.path.ends_with(r"\cudnn64_8.dll"))
            .unwrap();
    f.unreadable = true;
    let f = k.expect(FindingId::LibraryUnreadable);
    assert!(f.why.contains("error 5"), "{f:?}");
    assert!(f.commands[0].starts_with("icacls "), "{f:?}");

    // Healthy neighbours.
    Kit::healthy_linux().absent(FindingId::LibraryUnreadable);
    Kit::healthy_linux().absent(FindingId::LibraryOnNoexecMount);
    Kit::healthy_windows().absent(FindingId::LibraryUnreadable);
}

#[test]
fn a_windows_dll_renamed_to_another_major_is_said_plainly() {
    // cudnn64_8.dll renamed to cudnn64_5.dll for an old program: its file version says 8.1.0.77.
    let mut k = Kit::healthy_windows();
    let bin = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.2\bin";
    let f = k.file(&format!(r"{bin}\cudnn64_5.dll"));
    f.machine = Some("x86_64".into());
    f.file_version = Some(v("8.1.0.77"));
    let f = k.expect(FindingId::LibraryRenamed);
    assert_eq!(
        f.title,
        "cudnn64_5.dll is renamed: this file is cuDNN 8.1.0.77"
    );
    assert!(f.commands[0].starts_with("del "), "{f:?}");
    k.absent(FindingId::MissingLibrary);
    Kit::healthy_windows().absent(FindingId::LibraryRenamed);
    Kit::healthy_linux().absent(FindingId::LibraryRenamed);
    Kit::healthy_linux().absent(FindingId::NotACudnnLibrary);
}

#[test]
fn one_cause_over_several_files_is_one_finding() {
    // A whole set copied from an Arm machine: one finding for the folder.
    let mut k = Kit::healthy_linux();
    for f in
        k.s.files
            .iter_mut()
            .filter(|f| f.path.starts_with(&format!("{TK12}/lib64/")))
    {
        f.machine = Some("aarch64".into());
    }
    let all = k.all(FindingId::WrongArchitecture);
    assert_eq!(all.len(), 1, "{}", k.dump());
    assert!(
        all[0].title.contains(&format!(
            "cuDNN libraries in {TK12}/lib64 are built for aarch64"
        )),
        "{:?}",
        all[0]
    );
    assert!(all[0].seen.len() > 2, "each file named: {:?}", all[0]);
}

#[test]
fn a_missing_cudnn_8_library_is_not_fixed_with_cudnn_9() {
    // cuDNN 9 whole in the toolkit, and a lone cuDNN 8 main library.
    let mut k = Kit::healthy_linux();
    k.file(&format!("{TK12}/lib64/libcudnn.so.8")).machine = Some("x86_64".into());
    let f = k
        .all(FindingId::MissingLibrary)
        .into_iter()
        .find(|f| f.title.contains("cuDNN 8"))
        .unwrap_or_else(|| panic!("{}", k.dump()));
    assert!(
        f.commands.iter().all(|c| !c.contains(" 9.")),
        "a cuDNN 9 release does not provide libcudnn_ops_infer.so.8: {f:?}"
    );
    assert!(f.commands.iter().any(|c| c.contains("8.9.7.29")), "{f:?}");
}

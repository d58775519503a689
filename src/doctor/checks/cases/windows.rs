//! Cases for `windows.rs`: Visual C++ runtime, UCRT, registry `PATH`.

use super::*;

// --- vc-runtime-missing (docs/breakages.md) --------------------------------

#[test]
fn visual_cpp_runtime_missing() {
    let mut k = Kit::healthy_windows();
    k.s.dirs.iter_mut().for_each(|d| {
        d.names
            .retain(|n| n != "vcruntime140_1.dll" && n != "msvcp140_1.dll")
    });
    let f = k.expect(FindingId::VcRuntimeMissing);
    assert!(
        f.title.contains("vcruntime140_1.dll") && f.why.contains("not a cuDNN problem"),
        "{f:?}"
    );
    Kit::healthy_windows().absent(FindingId::VcRuntimeMissing);
}

#[test]
fn universal_c_runtime_missing_on_windows_7() {
    let mut k = Kit::healthy_windows();
    k.s.os.version = Some("6.1.7601".into());
    k.s.dirs
        .iter_mut()
        .for_each(|d| d.names.retain(|n| n != "ucrtbase.dll"));
    let f = k.expect(FindingId::UcrtMissing);
    assert!(f.fix.as_deref().unwrap().contains("KB2999226"), "{f:?}");
    // The cuDNN DLLs import the UCRT: on Windows 7 that import is unresolved too.
    k.expect(FindingId::DependencyUnresolved);
    k.name_in(r"C:\Windows\System32", "api-ms-win-crt-runtime-l1-1-0.dll");
    k.absent(FindingId::UcrtMissing);
    let mut k = Kit::healthy_windows();
    k.s.dirs
        .iter_mut()
        .for_each(|d| d.names.retain(|n| n != "ucrtbase.dll"));
    k.absent(FindingId::UcrtMissing);
}

// --- user-and-machine-path-differ (docs/breakages.md) ----------------------

#[test]
fn registry_path_changed_after_the_process_started() {
    let mut k = Kit::healthy_windows();
    k.s.path.retain(|p| !p.ends_with(r"v11.2\bin"));
    let f = k.expect(FindingId::ProcessPathStale);
    assert!(f.title.contains("machine"), "{f:?}");
    Kit::healthy_windows().absent(FindingId::ProcessPathStale);
}

#[test]
fn user_and_machine_path_lead_to_different_copies() {
    let mut k = Kit::healthy_windows();
    let old = r"C:\cudnn7\cuda\bin";
    k.file(&format!(r"{old}\cudnn64_7.dll")).file_version = Some(v("7.6.5"));
    k.s.registry = Some(RegistryPaths {
        user: Some(r"%CUDA_PATH%\bin".to_string()),
        machine: Some(format!(r"{old};C:\Windows\System32")),
    });
    k.s.path.push(old.into());
    let f = k.expect(FindingId::UserMachinePathDiffer);
    assert_eq!(f.severity, Severity::Warning);
    // User-only: a note.
    let mut k = Kit::healthy_windows();
    k.s.registry = Some(RegistryPaths {
        user: Some(bin112()),
        machine: Some(r"C:\Windows\System32".into()),
    });
    assert_eq!(
        k.expect(FindingId::UserMachinePathDiffer).severity,
        Severity::Info
    );
    Kit::healthy_windows().absent(FindingId::UserMachinePathDiffer);
}

#[test]
fn path_set_for_this_process_only() {
    let mut k = Kit::healthy_windows();
    k.s.registry = Some(RegistryPaths {
        user: None,
        machine: Some(r"C:\Windows\System32".into()),
    });
    assert_eq!(
        k.expect(FindingId::PathNotPersistent).severity,
        Severity::Info
    );
    Kit::healthy_windows().absent(FindingId::PathNotPersistent);
}

#[test]
fn a_dll_set_of_two_releases_in_one_folder_is_named_file_by_file() {
    // sub-libraries-mixed as Windows snapshot data: 8.9.7's inference DLLs
    // copied over an 8.1.0.77 set; each DLL's file version says its release.
    let mut k = Kit::healthy_windows();
    let bin = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.2\bin";
    for n in ["cudnn_ops_infer64_8.dll", "cudnn_cnn_infer64_8.dll"] {
        k.file(&format!(r"{bin}\{n}")).file_version = Some("8.9.7.29".parse().unwrap());
    }
    let all = k.all(FindingId::SubLibrariesMixed);
    assert_eq!(all.len(), 1, "{}", k.dump());
    let f = &all[0];
    assert_eq!(f.severity, Severity::Error);
    assert!(
        f.title
            .ends_with("holds cuDNN 8 libraries of 2 releases (8.1.0 and 8.9.7)"),
        "{}",
        f.title
    );
    let seen = f.seen.join("\n");
    assert!(seen.contains("cuDNN 8.9.7: cudnn_ops_infer64_8.dll (file version), cudnn_cnn_infer64_8.dll (file version)") || seen.contains("cuDNN 8.9.7: cudnn_cnn_infer64_8.dll (file version), cudnn_ops_infer64_8.dll (file version)"), "{seen}");
    assert!(
        seen.contains("cuDNN 8.1.0: cudnn64_8.dll (file version)"),
        "{seen}"
    );
    // The healthy neighbour: one release's set.
    Kit::healthy_windows().absent(FindingId::SubLibrariesMixed);
}

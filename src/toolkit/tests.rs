#![allow(clippy::disallowed_methods)] // tests build their fixtures directly
//! Toolkits as data: layouts, version files, discovery and selection in
//! sandboxes, Windows toolkits included.

use super::discover::cuda_path_var_version;
use super::*;
use crate::env::Env;
use std::fs;

fn v(s: &str) -> Version {
    s.parse().unwrap()
}

#[test]
fn version_files_parse() {
    let json = r#"{"cuda": {"name": "CUDA SDK", "version": "11.5.2"}, "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "11.5.117"}}"#;
    assert_eq!(parse_version_json(json), Some(v("11.5.2")));
    assert_eq!(
        parse_version_json(r#"{"cuda": {"version": "11.8.20220929"}}"#),
        Some(v("11.8")),
        "runfile date patches are dropped"
    );
    assert_eq!(parse_version_json(r#"{"cudart": {}}"#), None);
    assert_eq!(parse_version_json("not json"), None);
    assert_eq!(
        parse_version_txt("CUDA Version 8.0.61\n"),
        Some(v("8.0.61"))
    );
    assert_eq!(
        parse_version_txt("CUDA Version 10.1.243"),
        Some(v("10.1.243"))
    );
    assert_eq!(parse_version_txt("garbage"), None);
    assert_eq!(
        parse_cuda_h("/* x */\n#define CUDA_VERSION 11020\n"),
        Some(v("11.2"))
    );
    assert_eq!(parse_cuda_h("#define CUDA_VERSION 9000"), Some(v("9.0")));
    assert_eq!(
        parse_nvcc_output(
            "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 11.2, V11.2.152\n"
        ),
        Some(v("11.2.152"))
    );
    assert_eq!(
        parse_nvcc_output("Cuda compilation tools, release 9.0"),
        Some(v("9.0"))
    );
}

fn make_linux_toolkit(root: &Path, version_json: &str) {
    #[cfg(unix)]
    {
        fs::create_dir_all(root.join("targets/x86_64-linux/lib")).unwrap();
        fs::create_dir_all(root.join("targets/x86_64-linux/include")).unwrap();
        std::os::unix::fs::symlink("targets/x86_64-linux/lib", root.join("lib64")).unwrap();
        std::os::unix::fs::symlink("targets/x86_64-linux/include", root.join("include")).unwrap();
    }
    // No links without privileges on Windows: plain folders, and no
    // `targets/` (real folders there would be cuDNN folders too).
    #[cfg(not(unix))]
    {
        fs::create_dir_all(root.join("lib64")).unwrap();
        fs::create_dir_all(root.join("include")).unwrap();
    }
    fs::write(
        root.join("version.json"),
        format!(r#"{{"cuda": {{"name": "CUDA SDK", "version": "{version_json}"}}}}"#),
    )
    .unwrap();
}

fn make_windows_toolkit(root: &Path, version_txt: Option<&str>) {
    fs::create_dir_all(root.join("bin")).unwrap();
    fs::create_dir_all(root.join("include")).unwrap();
    fs::create_dir_all(root.join("lib/x64")).unwrap();
    match version_txt {
        Some(t) => fs::write(root.join("version.txt"), format!("CUDA Version {t}\n")).unwrap(),
        None => fs::write(root.join("include/cuda.h"), "#define CUDA_VERSION 11020\n").unwrap(),
    }
}

#[test]
fn layouts_are_data_and_dirs_follow_them() {
    let d = tempfile::tempdir().unwrap();
    let w = d
        .path()
        .join("NVIDIA GPU Computing Toolkit (x86)/CUDA/v8.0 ünï");
    make_windows_toolkit(&w, Some("8.0.61"));
    let t = Toolkit::at(&w, "--cuda-root", false).unwrap();
    assert_eq!(t.layout, Layout::Windows, "content wins over the host");
    assert_eq!(t.cuda, v("8.0.61"));
    assert_eq!(
        t.cudnn_dirs(),
        vec![
            t.root.join("bin"),
            t.root.join("include"),
            t.root.join("lib/x64")
        ]
    );
    let l = d.path().join("cuda-12.4");
    make_linux_toolkit(&l, "12.4.1");
    let t = Toolkit::at(&l, "x", true).unwrap();
    assert_eq!(t.layout, Layout::Linux);
    assert_eq!(t.cuda_short(), "12.4");
    assert_eq!(
        t.cudnn_dirs(),
        vec![t.root.join("include"), t.root.join("lib64")]
    );
    assert!(Layout::Windows.is_cudnn_name("CUDNN64_8.DLL"));
    assert!(!Layout::Linux.is_cudnn_name("CUDNN64_8.DLL"));
    assert!(Layout::Linux.is_cudnn_name("libcudnn.so.9"));
    assert!(!Layout::Linux.is_cudnn_name("libcublas.so.12"));
    assert!(!Layout::Linux.is_cudnn_name("cudnn_frontend.h"));
    assert!(!Layout::Windows.is_cudnn_name("cudnn_samples.txt"));
    let empty = d.path().join("empty");
    fs::create_dir_all(&empty).unwrap();
    let e = Toolkit::at(&empty, "x", false).unwrap_err();
    assert_eq!(e.kind(), Kind::NotFound);
    assert!(e.message().contains("empty"), "{e}");
    let e = Toolkit::at(&d.path().join("missing"), "x", false).unwrap_err();
    assert_eq!(e.kind(), Kind::NotFound);
}

#[test]
fn cuda_h_is_read_when_no_version_file() {
    let d = tempfile::tempdir().unwrap();
    make_windows_toolkit(d.path(), None);
    assert_eq!(read_cuda_version(d.path()).unwrap(), v("11.2"));
}

#[cfg(unix)]
#[test]
fn discovery_from_env_and_default_folders_dedupes_links() {
    let d = tempfile::tempdir().unwrap();
    let local = d.path().join("local");
    make_linux_toolkit(&local.join("cuda-12.4"), "12.4.1");
    make_linux_toolkit(&local.join("cuda-11.8"), "11.8.89");
    fs::create_dir_all(local.join("cuda-broken")).unwrap();
    std::os::unix::fs::symlink(local.join("cuda-12.4"), local.join("cuda")).unwrap();
    let bin = d.path().join("nvcc-bin");
    fs::create_dir_all(&bin).unwrap();
    fs::create_dir_all(local.join("cuda-11.8/bin")).unwrap();
    fs::write(local.join("cuda-11.8/bin/nvcc"), "").unwrap();
    std::os::unix::fs::symlink(local.join("cuda-11.8/bin/nvcc"), bin.join("nvcc")).unwrap();
    let defaults = DefaultFolders {
        roots: vec![local.join("cuda")],
        scans: vec![(local.clone(), "cuda-".into())],
    };
    let env = Env::from_vars(
        [
            ("CUDA_HOME", local.join("cuda").into_os_string()),
            ("PATH", bin.clone().into_os_string()),
        ],
        "/",
        false,
    );
    let found = discover_with(&env, &defaults);
    let roots: Vec<_> = found
        .iter()
        .map(|t| t.root.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(roots, vec!["cuda-12.4", "cuda-11.8"]);
    assert!(found[0].found_by.contains("CUDA_HOME"));
    assert!(found[0].found_by.contains("default folder"));
    assert_eq!(found[1].found_by, "nvcc on PATH, default folder");
    // Selection: CUDA_HOME wins; --cuda 11.8 finds the scanned one.
    let t = select_with(&env, &Selector::default(), &defaults).unwrap();
    assert_eq!(t.cuda_short(), "12.4");
    let t = select_with(
        &env,
        &Selector {
            cuda: Some("11.8"),
            ..Default::default()
        },
        &defaults,
    )
    .unwrap();
    assert_eq!(t.cuda, v("11.8.89"));
    let e = select_with(
        &env,
        &Selector {
            cuda: Some("10.2"),
            ..Default::default()
        },
        &defaults,
    )
    .unwrap_err();
    assert_eq!(e.kind(), Kind::NotFound);
    assert!(e.to_string().contains("cuda-12.4"), "{e}");
    // Without preferred sources, two toolkits are ambiguous.
    let bare = Env::from_vars(Vec::<(String, String)>::new(), "/", false);
    let scan_only = DefaultFolders {
        roots: vec![],
        scans: defaults.scans.clone(),
    };
    let e = select_with(&bare, &Selector::default(), &scan_only).unwrap_err();
    assert_eq!(e.kind(), Kind::Usage);
    assert!(e.message().contains("2 CUDA toolkits"), "{e}");
}

#[test]
fn no_toolkit_found_shows_the_variables_that_name_none() {
    let env = Env::from_vars([("CUDA_PATH", r#""C:\nope""#), ("PATH", "")], r"C:\", true);
    let e = select_with(&env, &Selector::default(), &DefaultFolders::default()).unwrap_err();
    assert_eq!(e.kind(), Kind::NotFound);
    assert_eq!(e.message(), "no CUDA toolkit found");
    assert!(
        e.causes()
            .iter()
            .any(|c| c.starts_with(r#"CUDA_PATH='"C:\nope"': "#)),
        "{e}"
    );
    assert!(e.hint_text().unwrap().contains("without quotes"), "{e}");
}

#[test]
fn cuda_path_variables_are_read_strictly_by_name() {
    for (name, want) in [
        ("CUDA_PATH_V11_2", Some("11.2")),
        ("cuda_path_v12_4", Some("12.4")), // Windows names ignore case
        ("CUDA_PATH_V11_2_OLD", None),
        ("CUDA_PATH_V11", None),
        ("CUDA_PATH_VX_Y", None),
        ("CUDA_PATHS", None),
        ("CUDA_PATH_V", None),
        ("CUDA_ROOT", None),
    ] {
        assert_eq!(cuda_path_var_version(name), want.map(v), "{name}");
    }
    // Decoys that merely start with CUDA name no toolkit; the real
    // variables do, each under its own name.
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("v11.2");
    let b = d.path().join("v12.4");
    let decoy = d.path().join("decoy");
    make_windows_toolkit(&a, None);
    make_windows_toolkit(&b, None);
    make_windows_toolkit(&decoy, None);
    let env = Env::from_vars(
        [
            ("CUDA_PATH_V11_2", a.clone().into_os_string()),
            ("CUDA_PATH_V12_4", b.clone().into_os_string()),
            ("CUDA_PATH_V12_4_OLD", decoy.clone().into_os_string()),
            ("CUDA_ROOT", decoy.clone().into_os_string()),
            ("CUDAPATH", decoy.into_os_string()),
        ],
        r"C:\",
        true,
    );
    let found = discover_with(&env, &DefaultFolders::default());
    let by: Vec<(PathBuf, &str)> = found
        .iter()
        .map(|t| (t.root.clone(), t.found_by.as_str()))
        .collect();
    assert_eq!(
        by,
        vec![
            (canonical(&b), "CUDA_PATH_V12_4"),
            (canonical(&a), "CUDA_PATH_V11_2")
        ]
    );
}

#[cfg(unix)]
#[test]
fn named_discovery_keeps_each_sources_spelling() {
    let d = tempfile::tempdir().unwrap();
    let real = d.path().join("cuda-12.4");
    make_linux_toolkit(&real, "12.4.1");
    fs::create_dir_all(real.join("bin")).unwrap();
    fs::write(real.join("bin/nvcc"), "").unwrap();
    let link = d.path().join("cuda");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let env = Env::from_vars(
        [
            ("PATH", link.join("bin").into_os_string()),
            ("CUDA_PATH", real.clone().into_os_string()),
        ],
        "/",
        false,
    );
    let none = DefaultFolders::default();
    let found = discover_named_with(&env, &none);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].toolkit.root, canonical(&real));
    assert_eq!(found[0].toolkit.found_by, "CUDA_PATH, nvcc on PATH");
    assert_eq!(
        found[0].names,
        vec![real.clone(), link.clone()],
        "nvcc's PATH entry names the toolkit through the link"
    );
    let plain = discover_with(&env, &none);
    assert_eq!(plain.len(), 1);
    assert_eq!(plain[0].root, found[0].toolkit.root);
}

#[test]
fn windows_env_variables_name_toolkits() {
    let d = tempfile::tempdir().unwrap();
    let pf = d.path().join("Program Files");
    let cuda = pf.join("NVIDIA GPU Computing Toolkit/CUDA");
    make_windows_toolkit(&cuda.join("v11.2"), None);
    make_windows_toolkit(&cuda.join("v8.0"), Some("8.0.61"));
    let other = d.path().join("D drive/CUDA 10.2 (custom)");
    make_windows_toolkit(&other, Some("10.2.89"));
    let env = Env::from_vars(
        [
            ("ProgramFiles", pf.clone().into_os_string()),
            ("cuda_path_v10_2", other.clone().into_os_string()),
        ],
        r"C:\work",
        true,
    );
    let defaults = DefaultFolders::for_env(&env);
    let found = discover_with(&env, &defaults);
    let versions: Vec<String> = found.iter().map(|t| t.cuda_short()).collect();
    assert_eq!(versions, vec!["10.2", "11.2", "8.0"]);
    assert!(found.iter().all(|t| t.layout == Layout::Windows));
    assert_eq!(found[0].found_by, "cuda_path_v10_2");
    let pick = |c: &str| {
        select_with(
            &env,
            &Selector {
                cuda: Some(c),
                ..Default::default()
            },
            &defaults,
        )
    };
    assert_eq!(pick("10.2").unwrap().root, canonical(&other));
    assert_eq!(pick("8.0").unwrap().cuda, v("8.0.61"));
    assert_eq!(pick("9.0").unwrap_err().kind(), Kind::NotFound);
    assert_eq!(pick("x").unwrap_err().kind(), Kind::Usage);
}

#[cfg(unix)]
#[test]
fn without_a_named_toolkit_the_known_ones_decide_by_count_then_by_fit() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("sandbox-12.4");
    let b = d.path().join("sandbox-11.8");
    make_linux_toolkit(&a, "12.4.1");
    make_linux_toolkit(&b, "11.8.89");
    let bare = Env::from_vars(Vec::<(String, String)>::new(), "/", false);
    let none = DefaultFolders::default();
    let known_a = vec![Toolkit::at(&a, "deployments.toml", false).unwrap()];
    // One known toolkit: that one, saying why.
    let t = select_with(
        &bare,
        &Selector {
            known: &known_a,
            ..Default::default()
        },
        &none,
    )
    .unwrap();
    assert_eq!(t.root, fs::canonicalize(&a).unwrap());
    assert_eq!(
        t.found_by,
        "the only toolkit found or known to this home (found by deployments.toml)"
    );
    // Two: the one a wanted build fits, else both listed with how to pick.
    let known = vec![
        Toolkit::at(&a, "deployments.toml", false).unwrap(),
        Toolkit::at(&b, "backups", false).unwrap(),
    ];
    let wants = ["11".parse::<crate::version::CudaVariant>().unwrap()];
    let t = select_with(
        &bare,
        &Selector {
            known: &known,
            wants: &wants,
            wants_label: "cuDNN 8.9 (from --version)",
            ..Default::default()
        },
        &none,
    )
    .unwrap();
    assert_eq!(t.cuda_short(), "11.8");
    assert_eq!(
        t.found_by,
        "the only one of 2 toolkits whose CUDA 11.8 fits cuDNN 8.9 (from --version) (found by backups)"
    );
    let e = select_with(
        &bare,
        &Selector {
            known: &known,
            ..Default::default()
        },
        &none,
    )
    .unwrap_err();
    assert_eq!(e.kind(), Kind::Usage);
    assert!(e.message().starts_with("2 CUDA toolkits found"), "{e}");
    assert!(e.message().contains("sandbox-11.8' (CUDA 11.8)"), "{e}");
    assert!(
        e.hint_text().unwrap().starts_with(
            "pick one with --cuda X.Y (`--cuda 12.4`, `--cuda 11.8`) or --cuda-root PATH"
        ),
        "{:?}",
        e.hint_text()
    );
    // CUDA_PATH naming a folder that is no toolkit is passed over, and said.
    let misnamed = Env::from_vars([("CUDA_PATH", "/nonexistent")], "/", false);
    let e = select_with(
        &misnamed,
        &Selector {
            known: &known,
            ..Default::default()
        },
        &none,
    )
    .unwrap_err();
    assert_eq!(e.kind(), Kind::Usage);
    assert!(
        e.message().starts_with(
            "CUDA_PATH names '/nonexistent', which is not a CUDA toolkit; of the 2 CUDA toolkits found, none is named by --cuda-root or --cuda: '"
        ),
        "{e}"
    );
    assert_eq!(
        e.causes(),
        ["CUDA_PATH='/nonexistent': CUDA toolkit folder '/nonexistent' does not exist"]
    );
    assert!(
        e.hint_text().unwrap().starts_with(
            "point the variable at one of them (or unset it), or pick one with --cuda X.Y"
        ),
        "{:?}",
        e.hint_text()
    );
    let t = select_with(
        &misnamed,
        &Selector {
            known: &known_a,
            ..Default::default()
        },
        &none,
    )
    .unwrap();
    assert_eq!(
        t.found_by,
        "the only toolkit found or known to this home (found by deployments.toml); CUDA_PATH names '/nonexistent', which is not a CUDA toolkit, passed over"
    );
    // --cuda 12 (a major) picks the one 12.x toolkit; 11.8 by backups counts too.
    let t = select_with(
        &bare,
        &Selector {
            cuda: Some("12"),
            known: &known,
            ..Default::default()
        },
        &none,
    )
    .unwrap();
    assert_eq!(t.cuda_short(), "12.4");
    assert_eq!(
        t.found_by,
        "the only CUDA 12.x toolkit found (found by deployments.toml)"
    );
    let t = select_with(
        &bare,
        &Selector {
            cuda: Some("11.8"),
            known: &known,
            ..Default::default()
        },
        &none,
    )
    .unwrap();
    assert_eq!(t.root, fs::canonicalize(&b).unwrap());
    // Two 12.x toolkits: --cuda 12 lists them.
    let c = d.path().join("sandbox-12.6");
    make_linux_toolkit(&c, "12.6.0");
    let mut three = known.clone();
    three.push(Toolkit::at(&c, "deployments.toml", false).unwrap());
    let e = select_with(
        &bare,
        &Selector {
            cuda: Some("12"),
            known: &three,
            ..Default::default()
        },
        &none,
    )
    .unwrap_err();
    assert_eq!(e.kind(), Kind::Usage);
    assert!(
        e.message().starts_with("--cuda 12 names 2 toolkits:"),
        "{e}"
    );
    assert!(e.message().contains("(CUDA 12.6)"), "{e}");
}

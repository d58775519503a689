//! `cudnnm export lmod` / `export tcl` loaded by the real engines: Lmod
//! (Debian's `lmod`) and Environment Modules (Debian's
//! `environment-modules`, unpacked beside it since the two packages
//! conflict; `.ci/run` puts it in place and names its `modulecmd.tcl` in
//! `CUDNNM_TEST_MODULECMD`). In a real bash, `module load` makes Python's
//! ctypes find `libcudnn.so.9` by soname, switching changes the version the
//! library reports, unloading gives back `LD_LIBRARY_PATH` and `CPATH`
//! exactly, and a second cuDNN module is refused.

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::Sandbox;

/// Lmod's bash set-up file, from Debian's `lmod` package.
const LMOD_INIT: &str = "/usr/share/lmod/lmod/init/bash";

const PROBE: &str = "import ctypes; lib = ctypes.CDLL('libcudnn.so.9'); \
lib.cudnnGetVersion.restype = ctypes.c_size_t; print(lib.cudnnGetVersion())";

/// The `module` function of each engine, as a bash prelude.
fn prelude(engine: &str) -> Option<String> {
    match engine {
        "lmod" => {
            if !Path::new(LMOD_INIT).is_file() {
                common::skip::skip("Lmod is not installed (apt-get install lmod)");
                return None;
            }
            Some(format!("source {LMOD_INIT}\n"))
        }
        _ => {
            let cmd = std::env::var_os("CUDNNM_TEST_MODULECMD").map(PathBuf::from);
            let Some(cmd) = cmd.filter(|c| c.is_file()) else {
                common::skip::skip(
                    "Environment Modules is not unpacked (apt-get download environment-modules; dpkg -x it; set CUDNNM_TEST_MODULECMD to its usr/lib/modulecmd.tcl, as .ci/run does)",
                );
                return None;
            };
            common::skip::need_program("tclsh", "tcl8.6")?;
            Some(format!(
                "module() {{ eval \"$(tclsh '{}' bash \"$@\")\"; }}\n",
                cmd.display()
            ))
        }
    }
}

/// Runs `script` after `prelude` in a clean bash; the lines `KEY=VALUE` it
/// prints, and the whole output for messages.
fn bash(prelude: &str, script: &str) -> (BTreeMap<String, String>, String) {
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("{prelude}{script}"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", std::env::temp_dir())
        .output()
        .unwrap();
    let text = format!(
        "{}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let vars = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    (vars, text)
}

/// A system store holding the two real cuDNN builds, 9.27.0.42 the system default.
fn system_store() -> Sandbox {
    let sb = Sandbox::new();
    for w in [
        "nvidia_cudnn_jit_cu12-9.12.0.46",
        "nvidia_cudnn_jit_cu12-9.27.0.42",
    ] {
        sb.run([
            "install".as_ref(),
            "--system".as_ref(),
            common::real_wheel(w).as_os_str(),
        ])
        .ok();
    }
    sb.run(["default", "--system", "9.27.0.42_cuda12"]).ok();
    sb
}

fn engine_loads_switches_unloads_and_refuses_a_second(engine: &str) {
    let Some(prelude) = prelude(engine) else {
        return;
    };
    if common::skip::need_program("python3", "python3").is_none() {
        return;
    }
    let sb = system_store();
    let dir = sb.root().join("modulefiles");
    sb.run([
        "export".as_ref(),
        engine.as_ref(),
        "--system".as_ref(),
        dir.as_os_str(),
    ])
    .ok();
    let script = format!(
        r#"export LD_LIBRARY_PATH=/site/lib:/usr/local/lib CPATH=/site/include
BEFORE_LD="$LD_LIBRARY_PATH" BEFORE_CPATH="$CPATH"
module use '{dir}'
module load cudnn/9.27.0.42-cuda12-jit && echo LOADED=$(python3 -c "{PROBE}")
echo CUDNN_PATH=$CUDNN_PATH
module switch cudnn cudnn/9.12.0.46-cuda12-jit && echo SWITCHED=$(python3 -c "{PROBE}")
LMOD_DISABLE_SAME_NAME_AUTOSWAP=yes module load cudnn/9.27.0.42-cuda12-jit
echo SECOND=$?
echo STILL=$(python3 -c "{PROBE}")
module unload cudnn
echo AFTER_LD="$LD_LIBRARY_PATH" AFTER_CPATH="$CPATH"
[ "$LD_LIBRARY_PATH" = "$BEFORE_LD" ] && [ "$CPATH" = "$BEFORE_CPATH" ] && echo RESTORED=yes
module load cudnn && echo DEFAULT=$(python3 -c "{PROBE}")
"#,
        dir = dir.display()
    );
    let (v, text) = bash(&prelude, &script);
    let get = |k: &str| v.get(k).map(String::as_str);
    assert_eq!(get("LOADED"), Some("92700"), "{text}");
    assert_eq!(
        get("CUDNN_PATH"),
        Some(
            sb.system()
                .join("store/cuda-12/9.27.0.42+jit")
                .to_str()
                .unwrap()
        ),
        "{text}"
    );
    assert_eq!(get("SWITCHED"), Some("91200"), "{text}");
    assert_eq!(
        get("SECOND"),
        Some("1"),
        "a second cuDNN module was not refused\n{text}"
    );
    assert_eq!(get("STILL"), Some("91200"), "{text}");
    assert_eq!(get("RESTORED"), Some("yes"), "{text}");
    assert_eq!(get("DEFAULT"), Some("92700"), "{text}");
}

#[test]
fn lmod_loads_switches_unloads_and_refuses_a_second_cudnn() {
    engine_loads_switches_unloads_and_refuses_a_second("lmod");
}

#[test]
fn environment_modules_loads_switches_unloads_and_refuses_a_second_cudnn() {
    engine_loads_switches_unloads_and_refuses_a_second("tcl");
}

/// Re-exporting changes nothing; after a release goes, its modulefile goes
/// too, and the site's own files in the folder stay untouched.
#[test]
fn export_is_idempotent_and_removes_only_its_own_stale_files() {
    let sb = Sandbox::new();
    let dir = sb.root().join("archives");
    std::fs::create_dir_all(&dir).unwrap();
    for v in ["9.1.0.70", "9.2.0.82"] {
        let a = common::fixtures::redist_linux(v, "12").write(&dir);
        sb.run(["install".as_ref(), "--system".as_ref(), a.as_os_str()])
            .ok();
    }
    let mods = sb.root().join("mods");
    let cudnn = mods.join("cudnn");
    std::fs::create_dir_all(&cudnn).unwrap();
    std::fs::write(cudnn.join("site-note.lua"), "-- the site's own\n").unwrap();
    std::fs::write(cudnn.join(".modulerc.lua"), "-- the site's own rc\n").unwrap();
    let export = |extra: &[&str]| {
        let mut args: Vec<std::ffi::OsString> = vec![
            "export".into(),
            "lmod".into(),
            "--system".into(),
            mods.clone().into(),
        ];
        args.extend(extra.iter().map(Into::into));
        args.push("--json".into());
        sb.run(args).ok().json()
    };
    let first = export(&["--cuda-module", "cuda/{major}"]);
    assert_eq!(first["written"].as_array().unwrap().len(), 2, "{first}");
    let text = std::fs::read_to_string(cudnn.join("9.1.0.70-cuda12.lua")).unwrap();
    assert!(text.contains("prereq(\"cuda/12\")"), "{text}");
    let again = export(&["--cuda-module", "cuda/{major}"]);
    assert_eq!(again["written"].as_array().unwrap().len(), 0, "{again}");
    assert_eq!(again["unchanged"].as_array().unwrap().len(), 2, "{again}");

    sb.run(["uninstall", "--system", "9.1.0.70"]).ok();
    let later = export(&[]);
    assert_eq!(
        later["removed"],
        serde_json::json!([cudnn.join("9.1.0.70-cuda12.lua").display().to_string()])
    );
    let mut left: Vec<String> = std::fs::read_dir(&cudnn)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [".modulerc.lua", "9.2.0.82-cuda12.lua", "site-note.lua"]
    );
    assert_eq!(
        std::fs::read_to_string(cudnn.join("site-note.lua")).unwrap(),
        "-- the site's own\n"
    );

    // A file of the site's where a modulefile goes is never overwritten.
    std::fs::write(cudnn.join("9.1.0.70-cuda12.lua"), "-- mine\n").unwrap();
    let a = common::fixtures::redist_linux("9.1.0.70", "12").write(&dir);
    sb.run(["install".as_ref(), "--system".as_ref(), a.as_os_str()])
        .ok();
    sb.run([
        "export".as_ref(),
        "lmod".as_ref(),
        "--system".as_ref(),
        mods.as_os_str(),
    ])
    .code_is(8)
    .stderr_has(&["was not written by cudnnm"]);
    assert_eq!(
        std::fs::read_to_string(cudnn.join("9.1.0.70-cuda12.lua")).unwrap(),
        "-- mine\n"
    );
}

/// `export dir`: a real release written out, the store's copy removed, and
/// the library loaded from the exported folder alone, with the variables
/// its `cudnn.env` names.
#[test]
fn an_exported_folder_loads_on_its_own() {
    if common::skip::need_program("python3", "python3").is_none() {
        return;
    }
    let sb = Sandbox::new();
    let wheel = common::real_wheel("nvidia_cudnn_jit_cu12-9.27.0.42");
    sb.run(["install".as_ref(), wheel.as_os_str()]).ok();
    let dest = sb.root().join("image/opt/cudnn");
    sb.run([
        "export".as_ref(),
        "dir".as_ref(),
        dest.as_os_str(),
        "9.27".as_ref(),
    ])
    .ok();
    // The soname chain is kept as links.
    assert_eq!(
        std::fs::read_link(dest.join("lib/libcudnn.so")).unwrap(),
        Path::new("libcudnn.so.9")
    );
    sb.run(["uninstall", "9.27.0.42"]).ok();
    assert!(!sb.home().join("store/cuda-12/9.27.0.42").exists());

    // Sourced in a real shell whose LD_LIBRARY_PATH is already set: the
    // folder goes in front and the old entries stay behind it, as `exec` does.
    let lib = dest.join("lib").display().to_string();
    let script = format!(
        ". '{}'; printf '%s\\n' \"$LD_LIBRARY_PATH\" \"$CUDNN_PATH\"; python3 -c \"$PROBE\"",
        dest.join("cudnn.env").display()
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &script])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("LD_LIBRARY_PATH", "/site/lib:/other lib")
        .env("PROBE", PROBE)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{lib}:/site/lib:/other lib\n{}\n92700\n", dest.display()),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Into its own earlier output: replaced, also after the store copy came back.
    sb.run([
        "export".as_ref(),
        "dir".as_ref(),
        dest.as_os_str(),
        "9.27".as_ref(),
    ])
    .code_is(3);
    sb.run(["install".as_ref(), wheel.as_os_str()]).ok();
    let before = common::listing(&dest);
    sb.run([
        "export".as_ref(),
        "dir".as_ref(),
        dest.as_os_str(),
        "9.27".as_ref(),
    ])
    .ok()
    .stderr_has(&["replacing the earlier export of 9.27.0.42_cuda12+jit"]);
    assert_eq!(common::listing(&dest), before);
    // A file of the user's in it: refused, and every byte stays.
    std::fs::write(dest.join("lib/libmine.so"), b"mine").unwrap();
    sb.run([
        "export".as_ref(),
        "dir".as_ref(),
        dest.as_os_str(),
        "9.27".as_ref(),
    ])
    .code_is(8)
    .stderr_has(&["libmine.so", "was not written by cudnnm export dir"]);
    assert_eq!(std::fs::read(dest.join("lib/libmine.so")).unwrap(), b"mine");
    std::fs::remove_file(dest.join("lib/libmine.so")).unwrap();
    // A file it wrote, edited since: refused too, the edit kept.
    let env_file = dest.join("cudnn.env");
    set_writable(&env_file);
    std::fs::write(&env_file, b"CUDNN_PATH=/mine\n").unwrap();
    sb.run([
        "export".as_ref(),
        "dir".as_ref(),
        dest.as_os_str(),
        "9.27".as_ref(),
    ])
    .code_is(8)
    .stderr_has(&["cudnn.env"]);
    assert_eq!(std::fs::read(&env_file).unwrap(), b"CUDNN_PATH=/mine\n");
    // A folder it did not write: refused, not even with its own marker.
    let other = sb.root().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), b"n").unwrap();
    sb.run([
        "export".as_ref(),
        "dir".as_ref(),
        other.as_os_str(),
        "9.27".as_ref(),
    ])
    .code_is(8)
    .stderr_has(&["was not written by cudnnm export dir"]);
    assert_eq!(std::fs::read(other.join("notes.txt")).unwrap(), b"n");
    // Never inside the home, where the copy would pass for a store release.
    let inside = sb.home().join("store/cuda-12/9.99.0.1");
    sb.run([
        "export".as_ref(),
        "dir".as_ref(),
        inside.as_os_str(),
        "9.27".as_ref(),
    ])
    .code_is(2)
    .stderr_has(&["is inside the cudnnm home"]);
    assert!(!inside.exists());
    sb.run(["verify", "--no-load"]).ok();
}

fn set_writable(p: &Path) {
    let mut perm = std::fs::metadata(p).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perm.set_readonly(false);
    std::fs::set_permissions(p, perm).unwrap();
}

#[test]
fn spack_block_lists_the_system_releases() {
    let sb = Sandbox::new();
    let dir = sb.root().join("archives");
    std::fs::create_dir_all(&dir).unwrap();
    let a = common::fixtures::redist_linux("9.1.0.70", "12").write(&dir);
    sb.run(["install".as_ref(), "--system".as_ref(), a.as_os_str()])
        .ok();
    let out = sb.run(["export", "spack", "--system"]).ok().stdout();
    let prefix = sb.system().join("store/cuda-12/9.1.0.70");
    assert!(out.contains("    buildable: false\n"), "{out}");
    assert!(out.contains("    - spec: cudnn@9.1.0.70-12\n"), "{out}");
    assert!(
        out.contains(&format!("      prefix: \"{}\"\n", prefix.display())),
        "{out}"
    );
    // The user's own export has none of the system's.
    assert!(!sb.run(["export", "spack"]).ok().stdout().contains("spec:"));
}

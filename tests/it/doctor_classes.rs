//! Doctor on real files, one class of breakage each, with a healthy
//! neighbour that must not trigger it: a folder whose cuDNN 9 libraries come
//! from two releases (the real 9.12.0.46 and 9.27.0.42 wheels), a real
//! library without its soname link, a pin that is not installed, and the
//! GPU and driver as a stand-in `nvidia-smi` reports them
//! (`CUDA_VISIBLE_DEVICES`, a driver version with a leading zero).

// Real Linux libraries, symlinks and a shell-script nvidia-smi.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::common::{Run, Sandbox, real_wheel};
use crate::doctor::{doctor, ids, imported, toolkit, toolkit_with};

const PASCAL: &str = "0, GPU-0a0a0a0a-1111-2222-3333-444455556666, NVIDIA GeForce GTX 1080, 6.1";
const TURING: &str = "1, GPU-0c0c0c0c-1111-2222-3333-444455556666, NVIDIA GeForce RTX 2080 Ti, 7.5";

fn count(r: &Run, id: &str) -> usize {
    ids(r).iter().filter(|i| *i == id).count()
}

/// Replaces `lib64/NAME` of `tk` by the file of the imported real `version`.
fn swap_in(tk: &Path, version: &str, name: &str) {
    let dest = tk.join("lib64").join(name);
    fs::remove_file(&dest).unwrap();
    fs::hard_link(imported(version).join("lib").join(name), &dest).unwrap();
}

#[test]
fn a_folder_with_libraries_of_two_releases_names_each_files_release() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    // The 9.27 main library over 9.12's graph and engine libraries.
    swap_in(&tk, "9.12.0.46", "libcudnn_graph.so.9");
    swap_in(&tk, "9.12.0.46", "libcudnn_engines_runtime_compiled.so.9");
    let r = doctor(&sb, &tk, &[]).code_is(7);
    assert_eq!(count(&r, "sub-libraries-mixed"), 1, "{}", r.describe());
    let f = r.finding("sub-libraries-mixed");
    assert_eq!(f["severity"], "error");
    let lines: Vec<&str> = f["seen"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let line = |v: &str| {
        lines
            .iter()
            .find(|l| l.starts_with(v))
            .copied()
            .unwrap_or("")
    };
    assert!(
        line("cuDNN 9.12.0: ").contains("libcudnn_graph.so.9 (release marker in the file)"),
        "{}",
        r.describe()
    );
    assert_eq!(
        line("cuDNN 9.27.0: "),
        "cuDNN 9.27.0: libcudnn.so.9 (graph library it asks for)",
        "{}",
        r.describe()
    );
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains("2 releases (9.12.0 and 9.27.0)"),
        "{}",
        r.describe()
    );
    // The summary gives the main library's own release, not the graph's answer.
    assert_eq!(
        r.json()["summary"]["active_cudnn"][0]["version"],
        "9.27.0",
        "{}",
        r.describe()
    );

    // The engine library has no version of its own; it links against the
    // 9.12 graph library beside it and every cuDNN symbol it needs is there.
    assert!(
        line("cuDNN 9.12.0: ").contains(
            "libcudnn_engines_runtime_compiled.so.9 (links against a library of that release here"
        ),
        "{}",
        r.describe()
    );

    // 9.27's engine library beside 9.12's main and graph libraries: it needs
    // graph symbols 9.12 does not define ("undefined symbol" at run time).
    let mut sb = Sandbox::new();
    let tk = toolkit_with(&mut sb, false, "9.12.0.46", "cuda-12.4");
    swap_in(&tk, "9.27.0.42", "libcudnn_engines_runtime_compiled.so.9");
    let r = doctor(&sb, &tk, &[]).code_is(7);
    assert_eq!(count(&r, "sub-libraries-mixed"), 1, "{}", r.describe());
    let f = r.finding("sub-libraries-mixed");
    let seen = f["seen"].to_string();
    assert!(
        seen.contains("cuDNN 9.12.0: libcudnn.so.9")
            && seen.contains("libcudnn_engines_runtime_compiled.so.9 needs 51 cuDNN symbols no library of this folder defines"),
        "{}",
        r.describe()
    );

    // Healthy neighbours: each real release whole.
    for v in ["9.27.0.42", "9.12.0.46"] {
        let mut sb = Sandbox::new();
        let tk = toolkit_with(&mut sb, false, v, "cuda-12.4");
        let r = doctor(&sb, &tk, &[]).ok();
        assert_eq!(count(&r, "sub-libraries-mixed"), 0, "{v}: {}", r.describe());
    }
}

#[test]
fn a_real_library_without_its_soname_link_is_one_finding_with_a_working_fix() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, true);
    // Only libcudnn.so.9.27.0 (the real file) is left; the link is gone.
    fs::remove_file(tk.join("lib64/libcudnn.so.9")).unwrap();
    let r = doctor(&sb, &tk, &[]).code_is(7);
    assert_eq!(count(&r, "soname-link-missing"), 1, "{}", r.describe());
    assert_eq!(
        count(&r, "missing-library"),
        0,
        "one cause, one finding: {}",
        r.describe()
    );
    let f = r.finding("soname-link-missing");
    let cmd = f["commands"][0].as_str().unwrap().to_string();
    let link = tk.join("lib64/libcudnn.so.9");
    assert_eq!(
        cmd,
        format!("ln -s libcudnn.so.9.27.0 {}", link.display()),
        "{}",
        r.describe()
    );
    // The printed command, run by a real shell, is the fix.
    let out = sb.wrapped("sh").args(["-c", &cmd]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        fs::read_link(&link).unwrap(),
        Path::new("libcudnn.so.9.27.0")
    );
    let r = doctor(&sb, &tk, &[]).ok();
    assert_eq!(count(&r, "soname-link-missing"), 0, "{}", r.describe());
    assert_eq!(r.json()["summary"]["active_cudnn"][0]["version"], "9.27.0");

    // Neighbour: a wheel folder holds only libX.so.9 files, no versioned
    // real names: nothing is missing.
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    let r = doctor(&sb, &tk, &[]).ok();
    assert_eq!(count(&r, "soname-link-missing"), 0, "{}", r.describe());
}

#[test]
fn a_pin_that_is_not_installed_says_so_with_the_catalogs_install_command() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    sb.run([
        "install".to_string(),
        real_wheel("nvidia_cudnn_jit_cu12-9.27.0.42")
            .display()
            .to_string(),
    ])
    .ok();
    fs::write(sb.work().join(".cudnn-version"), "9.12\n").unwrap();
    let r = doctor(&sb, &tk, &[]).code_is(7);
    assert_eq!(count(&r, "pin-not-installed"), 1, "{}", r.describe());
    let f = r.finding("pin-not-installed");
    let pin = sb.work().join(".cudnn-version");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains(&format!("{}:1", pin.display())),
        "{}",
        r.describe()
    );
    assert!(
        f["seen"]
            .to_string()
            .contains("installed: 9.27.0.42_cuda12")
    );
    // The newest 9.12 the catalog has: NVIDIA's archive (redistrib_9.12.0.json).
    assert_eq!(
        f["commands"][0],
        "cudnnm install 9.12.0.46_cuda12",
        "{}",
        r.describe()
    );
    // `cudnnm exec` really fails here, as the finding says.
    let e = sb.run(["exec", "--", "true"]);
    assert!(
        e.code() != 0 && e.stderr().contains("not installed"),
        "{}",
        e.describe()
    );

    // Neighbour: the pinned release installed (the real 9.12 wheel).
    sb.run([
        "install".to_string(),
        real_wheel("nvidia_cudnn_jit_cu12-9.12.0.46")
            .display()
            .to_string(),
    ])
    .ok();
    let r = doctor(&sb, &tk, &[]).ok();
    assert_eq!(count(&r, "pin-not-installed"), 0, "{}", r.describe());
    sb.run(["exec", "--", "true"]).ok();
}

/// A stand-in `nvidia-smi` first on PATH (there is no `libcuda.so.1`
/// behind it, so doctor also reports the runtime-compiled engines'
/// unresolved driver library: these tests look at the GPU findings only): `gpus` for the GPU query,
/// `driver` (one line per GPU) for the driver query.
fn smi(sb: &mut Sandbox, gpus: &[&str], driver: &str) {
    let bin = sb.root().join("gpu-bin");
    fs::create_dir_all(&bin).unwrap();
    let body: String = gpus.iter().map(|l| format!("{l}\n")).collect();
    let drv: String = gpus.iter().map(|_| format!("{driver}\n")).collect();
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in\n  *driver_version*) printf '%s' '{drv}' ;;\n  *) cat <<'EOF'\n{body}EOF\n ;;\nesac\n"
    );
    fs::write(bin.join("nvidia-smi"), script).unwrap();
    fs::set_permissions(bin.join("nvidia-smi"), fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    sb.set_env("PATH", path);
}

#[test]
fn doctor_judges_the_gpus_cuda_would_use_and_lists_every_one() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    smi(&mut sb, &[PASCAL, TURING], "550.54.15");
    let r = doctor(&sb, &tk, &[]);
    assert_eq!(count(&r, "gpu-too-old"), 1, "{}", r.describe());
    assert!(
        r.finding("gpu-too-old")["title"]
            .as_str()
            .unwrap()
            .starts_with(
                "NVIDIA GeForce GTX 1080 (compute capability 6.1) cannot run cuDNN 9.27.0"
            ),
        "{}",
        r.describe()
    );
    // Only the Turing card visible to CUDA, as install/use read it.
    sb.set_env("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
    sb.set_env("CUDA_VISIBLE_DEVICES", "1");
    let r = doctor(&sb, &tk, &[]);
    assert_eq!(count(&r, "gpu-too-old"), 0, "{}", r.describe());
    let gpus = r.json()["summary"]["gpus"].to_string();
    assert!(
        gpus.contains("GPU 0: NVIDIA GeForce GTX 1080 (compute capability 6.1, not used: CUDA_VISIBLE_DEVICES hides it)")
            && gpus.contains("GPU 1: NVIDIA GeForce RTX 2080 Ti (compute capability 7.5)"),
        "{}",
        r.describe()
    );
    assert!(!gpus.contains("CUDA_DEVICE_ORDER"), "{}", r.describe());
    // Without PCI_BUS_ID, index 1 is CUDA's second-fastest card: the list
    // says the two numberings differ and how to make them agree.
    sb.set_env("CUDA_DEVICE_ORDER", "");
    let r = doctor(&sb, &tk, &[]);
    let gpus = r.json()["summary"]["gpus"].to_string();
    assert!(
        gpus.contains("CUDA_VISIBLE_DEVICES=1 counts GPUs in CUDA's order, fastest first, not the PCI-bus order of the indices above; set CUDA_DEVICE_ORDER=PCI_BUS_ID to make them the same"),
        "{}",
        r.describe()
    );
    sb.set_env("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
    // And `use` agrees: the Turing card runs 9.27.
    sb.run([
        "install".to_string(),
        real_wheel("nvidia_cudnn_jit_cu12-9.27.0.42")
            .display()
            .to_string(),
    ])
    .ok();
    sb.run([
        "use",
        "9.27.0.42",
        "--cuda-root",
        tk.to_str().unwrap(),
        "--force",
    ])
    .ok();
}

#[test]
fn the_driver_version_is_kept_as_reported_and_compared_numerically() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    // CUDA 12.4.1 needs 550.54.15 on Linux; 535.104.05 runs it through
    // minor-version compatibility only.
    smi(&mut sb, &[TURING], "535.104.05");
    let r = doctor(&sb, &tk, &[]);
    assert_eq!(
        r.json()["summary"]["driver"],
        "535.104.05",
        "{}",
        r.describe()
    );
    let f = r.finding("driver-minor-compat-only");
    assert_eq!(
        f["title"],
        "driver 535.104.05 is older than CUDA 12.4 needs (550.54.15 or newer)",
        "{}",
        r.describe()
    );
    // Neighbour: a newer driver whose last field is smaller as text.
    smi(&mut sb, &[TURING], "550.107.02");
    let r = doctor(&sb, &tk, &[]);
    assert_eq!(r.json()["summary"]["driver"], "550.107.02");
    assert_eq!(
        count(&r, "driver-minor-compat-only") + count(&r, "driver-too-old"),
        0,
        "{}",
        r.describe()
    );
}

#[test]
fn printed_commands_keep_the_home_the_user_gave_and_work_when_run() {
    let mut sb = Sandbox::new();
    let tk = crate::doctor::empty_toolkit(&sb, "cuda-12.4");
    crate::doctor::add_ld_path(&mut sb, &tk.join("lib64"));
    // A home given by flag only: a bare `cudnnm …` would use another one.
    let home = sb.root().join("other-home");
    let bin_dir = crate::common::bin().parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |args: &[&str]| {
        let mut c = sb.command();
        c.env_remove("CUDNNM_HOME")
            .arg("--home")
            .arg(&home)
            .args(args);
        crate::common::output(&mut c)
    };
    let wheel = real_wheel("nvidia_cudnn_jit_cu12-9.27.0.42");
    assert!(run(&["install", wheel.to_str().unwrap()]).status.success());
    let t = tk.to_str().unwrap();
    assert!(
        run(&["use", "9.27.0.42", "--cuda-root", t])
            .status
            .success()
    );
    // Someone deletes a deployed sub-library.
    fs::remove_file(tk.join("lib64/libcudnn_graph.so.9")).unwrap();
    let out = run(&["doctor", "--json", "--cuda-root", t]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "missing-library")
        .unwrap_or_else(|| panic!("{j:#}"))
        .clone();
    let cmd = f["commands"][0].as_str().unwrap().to_string();
    assert!(
        cmd.starts_with(&format!(
            "cudnnm --home {} use 9.27.0.42_cuda12+jit --cuda-root {t}",
            home.display()
        )),
        "{cmd}"
    );
    // Pasted into a shell that has no CUDNNM_HOME, it repairs the toolkit.
    let mut sh = sb.wrapped("sh");
    sh.env_remove("CUDNNM_HOME")
        .env("PATH", &path)
        .args(["-c", &cmd]);
    let o = crate::common::output(&mut sh);
    assert!(o.status.success(), "{cmd}: {o:?}");
    assert!(tk.join("lib64/libcudnn_graph.so.9").exists());
    let out = run(&["doctor", "--json", "--cuda-root", t]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        !j["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["id"] == "missing-library"),
        "{j:#}"
    );

    // Neighbour: with CUDNNM_HOME set, commands stay bare (the shell has it).
    let mut c = sb.command();
    c.env("CUDNNM_HOME", &home)
        .args(["doctor", "--json", "--cuda-root", t]);
    fs::remove_file(tk.join("lib64/libcudnn_graph.so.9")).unwrap();
    let j: serde_json::Value =
        serde_json::from_slice(&crate::common::output(&mut c).stdout).unwrap();
    let f = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "missing-library")
        .unwrap()
        .clone();
    assert!(
        f["commands"][0]
            .as_str()
            .unwrap()
            .starts_with("cudnnm use 9.27.0.42_cuda12"),
        "{f}"
    );
}

#[test]
fn an_empty_sub_library_is_one_finding_that_names_it() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    // A truncated download: libcudnn_graph.so.9 is 0 bytes.
    let g = tk.join("lib64/libcudnn_graph.so.9");
    fs::remove_file(&g).unwrap();
    fs::write(&g, b"").unwrap();
    let r = doctor(&sb, &tk, &[]).code_is(7);
    let errors: Vec<String> = r.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(errors, ["not-a-cudnn-library"], "{}", r.describe());
    let f = r.finding("not-a-cudnn-library");
    assert_eq!(
        f["title"],
        "libcudnn_graph.so.9 is not a cuDNN library: it is empty (0 bytes): a truncated copy or download"
    );
    // Neighbour: the real file.
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    let r = doctor(&sb, &tk, &[]).ok();
    assert_eq!(count(&r, "not-a-cudnn-library"), 0, "{}", r.describe());
}

#[test]
fn a_chain_that_ends_in_nothing_is_reported_once_at_its_end() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, true);
    // libcudnn.so -> libcudnn.so.9 -> libcudnn.so.9.27.0 (deleted).
    fs::remove_file(tk.join("lib64/libcudnn.so.9.27.0")).unwrap();
    let r = doctor(&sb, &tk, &[]).code_is(7);
    assert_eq!(count(&r, "broken-soname-chain"), 1, "{}", r.describe());
    assert!(
        r.finding("broken-soname-chain")["title"]
            .as_str()
            .unwrap()
            .starts_with("libcudnn.so.9 is a link to a file that does not exist"),
        "{}",
        r.describe()
    );
    // Neighbour: the chain whole.
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, true);
    let r = doctor(&sb, &tk, &[]).ok();
    assert_eq!(count(&r, "broken-soname-chain"), 0, "{}", r.describe());
}

#[test]
fn stale_headers_in_the_loaded_copys_own_toolkit_are_one_finding_without_a_no_op_hint() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    let h = tk.join("include/cudnn_version.h");
    fs::remove_file(&h).unwrap();
    fs::copy(
        crate::doctor_wheels::wheel_files("9.12.0.46", false).join("include/cudnn_version.h"),
        &h,
    )
    .unwrap();
    let r = doctor(&sb, &tk, &[]).code_is(7);
    assert_eq!(count(&r, "header-library-mismatch"), 1, "{}", r.describe());
    // Not also "put this same include folder first on CPATH", which changes nothing.
    assert_eq!(count(&r, "compiler-header-mismatch"), 0, "{}", r.describe());
    // Neighbour: a stale header in another folder on CPATH is still reported,
    // with the toolkit's include folder (which holds the right cudnn.h) as the fix.
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    let stale = sb.root().join("stale-include");
    fs::create_dir_all(&stale).unwrap();
    for n in ["cudnn.h", "cudnn_version.h"] {
        fs::copy(
            crate::doctor_wheels::wheel_files("9.12.0.46", false)
                .join("include")
                .join(n),
            stale.join(n),
        )
        .unwrap();
    }
    sb.set_env("CPATH", &stale);
    let r = doctor(&sb, &tk, &[]);
    let f = r.finding("compiler-header-mismatch");
    assert_eq!(
        f["commands"][0],
        format!(
            "export CPATH=\"{}${{CPATH:+:$CPATH}}\"",
            tk.join("include").display()
        ),
        "{}",
        r.describe()
    );
}

#[test]
fn a_leftover_versioned_file_no_link_reaches_is_not_a_mix_but_a_link_to_it_is() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, true);
    let lib = tk.join("lib64");
    // 9.12's main library left behind under its real name; the chain leads to 9.27.0.
    fs::hard_link(
        imported("9.12.0.46").join("lib/libcudnn.so.9"),
        lib.join("libcudnn.so.9.12.0"),
    )
    .unwrap();
    let r = doctor(&sb, &tk, &[]).ok();
    for id in ["sub-libraries-mixed", "header-library-mismatch"] {
        assert_eq!(count(&r, id), 0, "{id}: {}", r.describe());
    }
    // The link moved to the old file: now the loader runs 9.12's main
    // library with 9.27's graph library.
    fs::remove_file(lib.join("libcudnn.so.9")).unwrap();
    std::os::unix::fs::symlink("libcudnn.so.9.12.0", lib.join("libcudnn.so.9")).unwrap();
    let r = doctor(&sb, &tk, &[]).code_is(7);
    assert_eq!(count(&r, "sub-libraries-mixed"), 1, "{}", r.describe());
    assert!(
        r.finding("sub-libraries-mixed")["title"]
            .as_str()
            .unwrap()
            .ends_with("2 releases (9.12.0 and 9.27.0)"),
        "{}",
        r.describe()
    );
}

#[test]
fn an_installed_pinned_default_release_too_new_for_the_gpu_is_gpu_too_old_and_not_found_names_it() {
    let mut sb = Sandbox::new();
    let tk = crate::deploy_support::linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    smi(&mut sb, &[PASCAL], "550.54.15");
    let w = real_wheel("nvidia_cudnn_jit_cu12-9.27.0.42");
    sb.run(["install", w.to_str().unwrap(), "--force"]).ok();
    sb.run(["pin", "9.27"]).ok();
    sb.run(["default", "9.27"]).ok();
    let r = doctor(&sb, &tk, &["--no-load"]);
    assert_eq!(count(&r, "gpu-too-old"), 1, "{}", r.describe());
    let f = r.finding("gpu-too-old");
    let seen = f["seen"].to_string();
    assert!(
        seen.contains("cuDNN 9.27.0.42 for CUDA 12: pinned as `9.27`")
            && seen.contains("cuDNN 9.27.0.42 for CUDA 12: the default (`9.27"),
        "{}",
        r.describe()
    );
    // The advice install/use give: the newest release that runs on Pascal.
    assert_eq!(
        f["commands"][0],
        "cudnnm install 9.10.2.21_cuda12",
        "{}",
        r.describe()
    );
    // Not "no cuDNN on this machine": the store holds 9.27; the install
    // suggestion runs on this GPU.
    let n = r.finding("cudnn-not-found");
    assert!(
        !n["title"].as_str().unwrap().contains("on this machine")
            && n["seen"].to_string().contains("9.27.0.42_cuda12"),
        "{}",
        r.describe()
    );
    assert!(
        n["commands"]
            .to_string()
            .contains("cudnnm install 9.10.2.21_cuda12")
            && !n["commands"].to_string().contains("9.28"),
        "{}",
        r.describe()
    );

    // Neighbour: a Turing card runs the installed release, so not-found
    // names the command that activates it, and no gpu-too-old.
    smi(&mut sb, &[TURING], "550.54.15");
    let r = doctor(&sb, &tk, &["--no-load"]);
    assert_eq!(count(&r, "gpu-too-old"), 0, "{}", r.describe());
    let n = r.finding("cudnn-not-found");
    assert!(
        n["seen"]
            .to_string()
            .contains("installed in the cudnnm store: 9.27.0.42_cuda12"),
        "{}",
        r.describe()
    );
    assert_eq!(
        n["commands"][0],
        format!(
            "cudnnm use 9.27.0.42_cuda12+jit --cuda-root {}",
            tk.display()
        ),
        "{}",
        r.describe()
    );
}

#[test]
fn this_homes_interrupted_change_is_toolkit_change_unfinished_not_drift() {
    let sb = Sandbox::new();
    let tk = crate::deploy_support::linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    let tk = fs::canonicalize(tk).unwrap();
    let w = real_wheel("nvidia_cudnn_jit_cu12-9.27.0.42");
    sb.run(["install", w.to_str().unwrap()]).ok();
    sb.run([
        "use",
        "9.27",
        "--cuda-root",
        tk.to_str().unwrap(),
        "--mode",
        "copy",
    ])
    .ok();
    // What a kill -9 part-way through a switch leaves: this home's marker
    // and journal, and a toolkit file that no longer matches the record.
    let home = fs::canonicalize(sb.home()).unwrap();
    fs::create_dir_all(home.join("journal")).unwrap();
    fs::write(home.join("journal/7.json"), "{}").unwrap();
    fs::write(
        tk.join(".cudnnm-inflight.toml"),
        format!(
            "home = {:?}\nbackup = 7\naction = \"use 9.12.0.46_cuda12\"\n",
            home.display().to_string()
        ),
    )
    .unwrap();
    fs::write(tk.join("include/cudnn_version.h"), "half-copied").unwrap();
    let r = doctor(&sb, &tk, &["--no-load"]);
    assert_eq!(
        count(&r, "toolkit-change-unfinished"),
        1,
        "{}",
        r.describe()
    );
    let f = r.finding("toolkit-change-unfinished");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains("from this cudnnm home")
            && f["commands"][0]
                .as_str()
                .unwrap()
                .ends_with(&format!("current --cuda-root {}", tk.display())),
        "{}",
        r.describe()
    );
    assert_eq!(count(&r, "deployment-drift"), 0, "{}", r.describe());
    assert_eq!(count(&r, "cudnn-not-found"), 0, "{}", r.describe());

    // Neighbour: without the marker, the changed header is drift.
    fs::remove_file(tk.join(".cudnnm-inflight.toml")).unwrap();
    let r = doctor(&sb, &tk, &["--no-load"]);
    assert_eq!(
        count(&r, "toolkit-change-unfinished"),
        0,
        "{}",
        r.describe()
    );
    assert_eq!(count(&r, "deployment-drift"), 1, "{}", r.describe());
}

/// `use`, `install` and `doctor` give one answer to "the newest release
/// that runs on this GPU": the catalog's 9.10.2.21, said to be in the
/// catalog, even with an older release that runs (8.9.7.29) installed —
/// which `use` names besides, as installed.
#[test]
fn use_install_and_doctor_name_the_same_newest_release_that_runs_on_the_gpu() {
    let mut sb = Sandbox::new();
    let tk = crate::deploy_support::linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    let t = tk.display().to_string();
    smi(&mut sb, &[PASCAL], "550.54.15");
    let old = crate::common::fixtures::redist_linux("8.9.7.29", "12").write(&sb.work());
    sb.run(["install", old.to_str().unwrap()]).ok();
    let w = real_wheel("nvidia_cudnn_jit_cu12-9.27.0.42");
    sb.run(["install", w.to_str().unwrap(), "--force"]).ok();
    let newest = "the newest release that runs on it is cuDNN 9.10.2.21 for CUDA 12 (in the catalog: `cudnnm install 9.10.2.21_cuda12`)";
    let r = sb
        .run(["use", "9.27", "--cuda-root", &t])
        .code_is(8)
        .stderr_has(&[&format!(
            "help: {newest}; the newest installed one that does is cuDNN 8.9.7.29 for CUDA 12 (installed: `cudnnm use 8.9.7.29`); or pass --force to deploy this one anyway"
        )]);
    assert!(
        !r.stderr()
            .contains("newest release that runs on it is cuDNN 8.9"),
        "{}",
        r.describe()
    );
    let w912 = real_wheel("nvidia_cudnn_jit_cu12-9.12.0.46");
    sb.run(["install", w912.to_str().unwrap()])
        .code_is(8)
        .stderr_has(&[&format!("help: {newest}; the newest installed one")]);
    sb.run(["default", "9.27.0.42"]).ok();
    let r = doctor(&sb, &tk, &["--no-load"]);
    let f = r.finding("gpu-too-old");
    assert!(
        f["fix"].as_str().unwrap().starts_with(
            "Use cuDNN 9.10.2.21_cuda12, the newest release that runs on this GPU (in the catalog), in place of 9.27.0.42"
        ),
        "{}",
        r.describe()
    );
    assert_eq!(
        f["commands"][0],
        "cudnnm install 9.10.2.21_cuda12",
        "{}",
        r.describe()
    );
}

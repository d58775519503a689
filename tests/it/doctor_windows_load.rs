//! Doctor's Windows DLL search against Windows' own loader: stand-in DLLs
//! built with mingw-w64 in the layouts that break (an older toolkit's `bin`
//! first on PATH; a cuDNN built for another CUDA than the toolkit it sits
//! in), loaded for real by a small program under wine (`LoadLibrary`, then
//! the modules the process holds), and diagnosed by doctor from a Windows
//! snapshot of the same files (their import tables read by doctor's own
//! reader). Where doctor and the loader disagree, the test fails.

#![cfg(target_os = "linux")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Run, Sandbox, skip};
use crate::doctor::ids;

/// wine's loader (`WINE`, the Debian package's path, or on PATH).
fn wine() -> Option<PathBuf> {
    if let Some(w) = std::env::var_os("WINE") {
        return Some(PathBuf::from(w));
    }
    let debian = Path::new("/usr/lib/wine/wine64");
    if debian.exists() {
        return Some(debian.to_path_buf());
    }
    skip::find_program("wine64")
        .or_else(|| skip::find_program("wine"))
        .or_else(|| {
            skip::skip("wine is not installed (apt-get install -y wine64): the real load is Windows' loader under wine");
            None
        })
}

/// Builds `src` (C) into `out` with mingw-w64, with extra arguments.
pub(crate) fn mingw(out: &Path, src: &str, extra: &[&str]) -> Option<()> {
    let cc = skip::need_program("x86_64-w64-mingw32-gcc", "gcc-mingw-w64-x86-64")?;
    fs::create_dir_all(out.parent().unwrap()).unwrap();
    let c = out.with_extension("c");
    fs::write(&c, src).unwrap();
    let shared = out.extension().is_some_and(|e| e == "dll");
    let mut cmd = Command::new(cc);
    if shared {
        cmd.arg("-shared");
    }
    let o = cmd.arg("-o").arg(out).arg(&c).args(extra).output().unwrap();
    assert!(o.status.success(), "{o:?}");
    fs::remove_file(&c).unwrap();
    Some(())
}

/// A stand-in CUDA library `name` exporting `cublasLtCreate`.
pub(crate) fn cublas(dir: &Path, name: &str) -> Option<()> {
    mingw(
        &dir.join(name),
        "__declspec(dllexport) int cublasLtCreate(void **h) { return 0; }\n",
        &[],
    )
}

/// A stand-in `cudnn64_9.dll` in `dir` that imports `cublasLtCreate` from
/// `import` (a DLL of that name in `lib_dir`), as a cuDNN build for that
/// CUDA does.
pub(crate) fn cudnn(dir: &Path, import: &str, lib_dir: &Path) -> Option<()> {
    mingw(
        &dir.join("cudnn64_9.dll"),
        "__declspec(dllimport) int cublasLtCreate(void **h);\n__declspec(dllexport) unsigned long long cudnnGetVersion(void) { void *h; cublasLtCreate(&h); return 90100; }\n",
        &[&format!("-L{}", lib_dir.display()), &format!("-l:{import}")],
    )
}

/// The path wine gives a Linux path (`Z:\tmp\…`).
pub(crate) fn win(p: &Path) -> String {
    format!("Z:{}", p.display()).replace('/', "\\")
}

/// Loads `name` with `LoadLibraryA` under wine, with `path` ahead of the
/// PATH; the modules the process then holds, or the error code.
pub(crate) fn wine_load(
    sb: &Sandbox,
    path: &[&Path],
    name: &str,
) -> Option<Result<Vec<String>, u32>> {
    let wine = wine()?;
    let exe = sb.root().join("loadlib.exe");
    if !exe.exists() {
        mingw(
            &exe,
            "#include <windows.h>\n#include <psapi.h>\n#include <stdio.h>\nint main(int argc, char **argv) {\n  HMODULE m = LoadLibraryA(argv[1]);\n  if (!m) { printf(\"error %lu\\n\", GetLastError()); return 0; }\n  HMODULE mods[1024]; DWORD need;\n  EnumProcessModules(GetCurrentProcess(), mods, sizeof mods, &need);\n  for (unsigned i = 0; i < need / sizeof(HMODULE); i++) { char p[MAX_PATH]; GetModuleFileNameA(mods[i], p, MAX_PATH); printf(\"%s\\n\", p); }\n  return 0;\n}\n",
            &["-lpsapi"],
        )?;
    }
    let winepath: Vec<String> = path.iter().map(|p| win(p)).collect();
    let out = Command::new(wine)
        .arg(&exe)
        .arg(name)
        .env("WINEDEBUG", "-all")
        .env("WINEPATH", winepath.join(";"))
        .current_dir(sb.root())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
    Some(match text.strip_prefix("error ") {
        Some(code) => Err(code.trim().parse().unwrap()),
        None => Ok(text.lines().map(str::to_owned).collect()),
    })
}

/// A Windows snapshot of the folders `path` names (each a folder of this
/// machine seen as wine sees it): their DLL names, each cuDNN DLL with the
/// imports doctor's own reader finds in it; the toolkits as (root, CUDA).
pub(crate) fn snapshot(
    path: &[&Path],
    toolkits: &[(&Path, &str)],
    cuda_path: &Path,
) -> serde_json::Value {
    let mut dirs = vec![serde_json::json!({
        "path": r"C:\windows\system32",
        "names": ["KERNEL32.dll", "msvcrt.dll", "vcruntime140.dll", "vcruntime140_1.dll", "msvcp140.dll", "msvcp140_1.dll"]
    })];
    let mut files = Vec::new();
    for d in path {
        let mut names = Vec::new();
        for e in fs::read_dir(d).unwrap().flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if !n.ends_with(".dll") {
                continue;
            }
            if n.starts_with("cudnn") {
                let info = cudnnm::doctor::binfmt::read(&e.path());
                let root = win(d.parent().unwrap());
                files.push(serde_json::json!({
                    "path": format!(r"{}\{n}", win(d)), "root": root, "kind": "shared",
                    "size": e.metadata().unwrap().len(), "machine": info.machine, "needed": info.needed,
                }));
            }
            names.push(n);
        }
        dirs.push(serde_json::json!({"path": win(d), "names": names}));
    }
    let mut entries: Vec<String> = path.iter().map(|p| win(p)).collect();
    entries.push(r"C:\windows\system32".into());
    serde_json::json!({
        "schema": 1,
        "os": {"family": "windows", "name": "Windows 10 Pro", "version": "10.0.19045", "arch": "x86_64", "bits": 64},
        "cwd": r"C:\users\me",
        "env": {"CUDA_PATH": win(cuda_path), "SystemRoot": r"C:\windows"},
        "path": entries,
        "system_dirs": [r"C:\windows\system32", r"C:\windows"],
        "toolkits": toolkits.iter().map(|(r, c)| serde_json::json!({"root": win(r), "cuda": c, "layout": "windows", "found_by": "CUDA_PATH"})).collect::<Vec<_>>(),
        "dirs": dirs,
        "files": files,
    })
}

pub(crate) fn diagnose(sb: &Sandbox, snap: &serde_json::Value) -> Run {
    fs::write(
        sb.work().join("win.json"),
        serde_json::to_vec(snap).unwrap(),
    )
    .unwrap();
    sb.run(["doctor", "--json", "--snapshot", "win.json"])
}

/// PATH lists CUDA 12.1's `bin` before the 12.4 toolkit `CUDA_PATH` names,
/// and cuDNN sits in a folder of its own: its `cublasLt64_12.dll` import
/// loads from 12.1, for Windows' loader and for doctor alike.
#[test]
fn an_older_toolkit_first_on_path_supplies_the_cuda_dlls_cudnn_imports() {
    let sb = Sandbox::new();
    let (old, new, own) = (
        sb.root().join("CUDA/v12.1"),
        sb.root().join("CUDA/v12.4"),
        sb.root().join("cudnn"),
    );
    let (ob, nb, ib) = (old.join("bin"), new.join("bin"), own.join("bin"));
    if cublas(&ob, "cublasLt64_12.dll").is_none() {
        return;
    }
    cublas(&nb, "cublasLt64_12.dll").unwrap();
    cudnn(&ib, "cublasLt64_12.dll", &nb).unwrap();
    let order: [&Path; 3] = [&ob, &nb, &ib];
    let Some(real) = wine_load(&sb, &order, "cudnn64_9.dll") else {
        return;
    };
    let modules = real.expect("loads");
    let cublas_loaded = modules
        .iter()
        .find(|m| m.to_ascii_lowercase().ends_with("cublaslt64_12.dll"))
        .unwrap()
        .clone();
    assert!(
        cublas_loaded.eq_ignore_ascii_case(&format!(r"{}\cublasLt64_12.dll", win(&ob))),
        "{modules:?}"
    );
    let r = diagnose(
        &sb,
        &snapshot(&order, &[(&old, "12.1.1"), (&new, "12.4.1")], &new),
    );
    let f = r.finding("older-toolkit-first-on-path");
    assert_eq!(f["severity"], "warning", "{}", r.describe());
    let line = f["seen"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str())
        .find(|l| l.starts_with("cublasLt64_12.dll loads from "))
        .unwrap_or_else(|| panic!("{}", r.describe()));
    let said = line["cublasLt64_12.dll loads from ".len()..]
        .split(';')
        .next()
        .unwrap();
    assert!(
        said.eq_ignore_ascii_case(&cublas_loaded),
        "{line} / {cublas_loaded}"
    );
    // With the named toolkit first, both take its own copy: no finding.
    let order: [&Path; 3] = [&nb, &ob, &ib];
    let modules = wine_load(&sb, &order, "cudnn64_9.dll").unwrap().unwrap();
    assert!(
        modules
            .iter()
            .any(|m| m.eq_ignore_ascii_case(&format!(r"{}\cublasLt64_12.dll", win(&nb)))),
        "{modules:?}"
    );
    let r = diagnose(
        &sb,
        &snapshot(&order, &[(&old, "12.1.1"), (&new, "12.4.1")], &new),
    );
    assert!(
        !ids(&r).contains(&"older-toolkit-first-on-path".to_string()),
        "{}",
        r.describe()
    );
}

/// A cuDNN built for CUDA 11 (it imports `cublasLt64_11.dll`) copied into a
/// CUDA 12.4 toolkit: Windows refuses to load it (error 126); doctor says
/// why once — the build does not fit, read from its imports, with the
/// missing `cublasLt64_11.dll` tied to that — not a missing dependency
/// per file.
#[test]
fn a_cudnn_built_for_another_cuda_is_one_finding_read_from_its_imports() {
    let sb = Sandbox::new();
    let tk = sb.root().join("CUDA/v12.4");
    let bin = tk.join("bin");
    let elsewhere = sb.root().join("cuda11-libs");
    if cublas(&elsewhere, "cublasLt64_11.dll").is_none() {
        return;
    }
    cublas(&bin, "cublasLt64_12.dll").unwrap();
    cudnn(&bin, "cublasLt64_11.dll", &elsewhere).unwrap();
    let order: [&Path; 1] = [&bin];
    let Some(real) = wine_load(&sb, &order, "cudnn64_9.dll") else {
        return;
    };
    assert_eq!(real, Err(126), "the module cannot be found");
    let r = diagnose(&sb, &snapshot(&order, &[(&tk, "12.4.1")], &tk));
    let f = r.finding("cudnn-cuda-mismatch");
    assert_eq!(f["severity"], "error", "{}", r.describe());
    let seen = f["seen"].to_string();
    assert!(
        seen.contains("cudnn64_9.dll imports cublasLt64_11.dll, a library of CUDA 11"),
        "{}",
        r.describe()
    );
    assert!(
        seen.contains("cublasLt64_11.dll, which 1 of its library imports, is not found"),
        "{}",
        r.describe()
    );
    assert!(
        !ids(&r).contains(&"dependency-unresolved".to_string()),
        "one cause, one finding: {}",
        r.describe()
    );
    assert_eq!(r.code(), 7);
}

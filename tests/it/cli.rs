//! The command line itself: the names users of nvm, fnm and rustup type
//! (`ls`, `ls-remote`, `rm`, `which`), help with examples and exit codes,
//! colour, and completions driven through a real bash.

use crate::common;
use crate::deploy_support::*;

use common::{Sandbox, fixtures};
use cudnnm::version::Platform;

#[test]
fn ls_ls_remote_and_rm_are_list_list_remote_and_uninstall() {
    let sb = Sandbox::new();
    put_redist_linux_12(&sb.home(), "9.1.0.70");
    put_redist_linux_12(&sb.home(), "9.12.0.46");
    let list = sb.run(["list", "--json"]).ok().stdout();
    assert_eq!(sb.run(["ls", "--json"]).ok().stdout(), list);
    assert!(list.contains("9.1.0.70_cuda12"), "{list}");
    let remote = ["--platform", "linux-x86_64", "--cuda", "12", "--json"];
    let a = sb
        .run(["list", "--remote"].iter().chain(&remote))
        .ok()
        .stdout();
    let b = sb.run(["ls-remote"].iter().chain(&remote)).ok().stdout();
    assert_eq!(a, b);
    assert!(b.contains("\"installed\": true"), "{b}");
    sb.run(["rm", "9.1.0.70"])
        .ok()
        .stderr_has(&["removed cuDNN 9.1.0.70_cuda12"]);
    assert!(!sb.home().join("store/cuda-12/9.1.0.70").exists());
    sb.run(["remove", "9.12.0.46"])
        .ok()
        .stderr_has(&["removed cuDNN 9.12.0.46_cuda12"]);
    assert_eq!(sb.run(["ls", "--json"]).ok().json(), serde_json::json!([]));
}

#[test]
fn which_prints_the_main_library_of_the_release_that_applies_here() {
    let sb = Sandbox::new();
    put_redist_linux_12(&sb.home(), "9.12.0.46");
    put_release(
        &sb.home(),
        &fixtures::windows_zip_8_1_0_77(),
        "8.1.0.77",
        "11.2",
        Platform::WindowsX86_64,
    );
    // Nothing pinned: the error says how to pick one.
    sb.run(["which"])
        .code_is(3)
        .stderr_has(&["no cuDNN release is selected", "help: pass --version SPEC"]);
    std::fs::write(sb.work().join(".cudnn-version"), "9.12\n").unwrap();
    let r = sb.run(["which"]).ok();
    let lib = sb.home().join("store/cuda-12/9.12.0.46/lib/libcudnn.so.9");
    assert_eq!(r.stdout().trim_end(), lib.display().to_string());
    assert_eq!(
        std::fs::read(&lib).unwrap(),
        fixtures::elf_bytes("libcudnn.so.9 9.12.0.46", false),
        "the path is the release's real main library"
    );
    r.stderr_has(&["cuDNN 9.12.0.46_cuda12 (from '"]);
    // A Windows release's is its DLL in bin.
    let r = sb.run(["which", "--version", "8.1", "--json"]).ok().json();
    assert_eq!(r["release"], "8.1.0.77_cuda11.2");
    assert_eq!(
        r["library"],
        sb.home()
            .join("store/cuda-11.2/8.1.0.77/bin/cudnn64_8.dll")
            .display()
            .to_string()
    );
}

//! `install pip:…` with a real pip whose index cannot be reached — a closed
//! port on 127.0.0.1 with `PIP_RETRIES=0` (pip then prints nothing of the
//! connection at its default verbosity), or an `http://` index pip ignores
//! as untrusted — is a network failure (exit 6) naming the index and pip's
//! line, not "no such package" (exit 3), which stays the answer of an index
//! that answers without the package.

// A real pip on the host (wine runs no Windows Python).
#![cfg(unix)]

use crate::common::Sandbox;
use crate::common::http::{TestServer, closed_port};

const REQ: &str = "nvidia-cudnn-jit-cu12==9.12.0.46";

/// A sandbox whose pip reads no configuration but `index` and sees no GPU.
fn with_index(index: &str) -> Sandbox {
    let mut sb = Sandbox::new();
    sb.set_env(
        "PIP_CONFIG_FILE",
        if cfg!(windows) { "NUL" } else { "/dev/null" },
    );
    sb.set_env("PIP_INDEX_URL", index);
    sb.set_env("PIP_DISABLE_PIP_VERSION_CHECK", "1");
    sb.set_env("CUDA_VISIBLE_DEVICES", "");
    sb
}

const HINT: &str = "help: check the network and proxy (HTTPS_PROXY, pip's `proxy`), and pip's index settings (`index-url`, PIP_INDEX_URL; an http:// index also needs `trusted-host`, PIP_TRUSTED_HOST); or download the wheel where pip can reach the index and install the file: `cudnnm install ./nvidia_cudnn_….whl`";

#[test]
fn an_index_on_a_closed_port_is_a_network_failure() {
    let index = format!("http://127.0.0.1:{}/simple", closed_port());
    let mut sb = with_index(&index);
    sb.set_env("PIP_RETRIES", "0");
    for quiet in [false, true] {
        let mut args = vec!["install".to_string(), format!("pip:{REQ}")];
        if quiet {
            args.push("-q".into());
        }
        let r = sb.run(&args).code_is(6).stderr_has(&[
            &format!("error: pip could not reach its index {index} to fetch '{REQ}'"),
            "caused by: Could not fetch URL",
            "Failed to establish a new connection",
            HINT,
        ]);
        assert!(!r.stderr().contains("has no version"), "{}", r.describe());
        assert!(
            !r.stderr().contains("check the package name"),
            "{}",
            r.describe()
        );
    }
}

#[test]
fn an_untrusted_http_index_is_a_network_failure_naming_trusted_host() {
    // Not loopback (pip trusts 127.0.0.1 and localhost over http), and
    // never contacted: pip ignores an untrusted host before connecting.
    let index = "http://pypi.cudnnm.invalid/simple";
    let sb = with_index(index);
    let r = sb.run(["install", &format!("pip:{REQ}")]).code_is(6).stderr_has(&[
        &format!("error: pip could not reach its index {index} to fetch '{REQ}'"),
        "caused by: The repository located at pypi.cudnnm.invalid is not a trusted or secure host and is being ignored.",
        "'--trusted-host pypi.cudnnm.invalid'",
        HINT,
    ]);
    assert!(!r.stderr().contains("has no version"), "{}", r.describe());
}

#[test]
fn an_index_that_answers_without_the_package_is_still_not_found() {
    // The server answers 404 for every page: no such project there.
    let server = TestServer::start();
    let sb = with_index(&server.url("simple"));
    sb.run(["install", &format!("pip:{REQ}")])
        .code_is(3)
        .stderr_has(&[
            "error: pip's index has no version of 'nvidia-cudnn-jit-cu12'",
            "help: check the package name",
        ]);
    assert!(server.hits("simple/nvidia-cudnn-jit-cu12/") >= 1);
}

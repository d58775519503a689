//! One test per check: a snapshot that triggers it and one that does not.
//! Windows cases are Windows snapshots as data (the checks never look at the host).
//!
//! Split by check family (`system.rs`, `files.rs`, `deployments.rs`,
//! `loading.rs`, `windows.rs`, `frameworks.rs`); here the tests over all
//! checks and the sources.

mod deployments;
mod files;
mod frameworks;
mod loading;
mod system;
mod windows;

use super::testkit::{Kit, id, v};
use crate::doctor::FindingId;
use crate::doctor::finding::{AutoFix, Severity};
use crate::doctor::snapshot::*;

const TK12: &str = "/usr/local/cuda-12.4";
const TK112: &str = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.2";

fn bin112() -> String {
    format!(r"{TK112}\bin")
}

#[test]
fn healthy_machines_have_no_findings() {
    for k in [Kit::healthy_linux(), Kit::healthy_windows()] {
        let all = k.run();
        assert!(all.is_empty(), "findings on a healthy setup:\n{}", k.dump());
    }
}

/// The `.rs` files under `src/doctor/<sub>` (a file or a folder, searched
/// through), read at run time, named by their path below `src/doctor`; the
/// check tests (`checks/cases/`, `checks/testkit.rs`) left out.
fn doctor_sources(sub: &str) -> Vec<(String, String)> {
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/doctor");
    let mut todo = vec![base.join(sub)];
    let mut out = Vec::new();
    while let Some(p) = todo.pop() {
        if p.is_dir() {
            todo.extend(std::fs::read_dir(&p).unwrap().flatten().map(|e| e.path()));
            continue;
        }
        let name = p
            .strip_prefix(&base)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let file = p.file_name().unwrap().to_string_lossy();
        let test = name.starts_with("checks/cases/") || name == "checks/testkit.rs";
        if file.ends_with(".rs") && !test {
            out.push((name, std::fs::read_to_string(&p).unwrap()));
        }
    }
    assert!(!out.is_empty(), "no sources under src/doctor/{sub}");
    out.sort();
    out
}

#[test]
fn every_finding_id_is_emitted_by_a_check() {
    let checks: String = doctor_sources("checks")
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    for id in FindingId::ALL {
        assert!(
            checks.contains(&format!("FindingId::{id:?}")),
            "{id} is a finding id but no check emits it"
        );
    }
}

//! The doctor corpus: saved snapshots of machines in known states
//! (`tests/fixtures/doctor-corpus/*.json`, each a `--report` file with an
//! `expect` list added). Each is diagnosed again with `--snapshot` and must
//! give exactly its expected warning- and error-level findings.

use crate::common::Sandbox;
use std::{collections::BTreeSet, fs, path::Path};

#[test]
fn every_saved_snapshot_gives_its_expected_findings() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/doctor-corpus");
    let sb = Sandbox::new();
    let mut seen = 0;
    let mut names: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    names.sort();
    for path in names {
        let saved: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        let expect: BTreeSet<String> = saved["expect"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: no `expect` list", path.display()))
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let r = sb.run(["doctor", "--json", "--snapshot", path.to_str().unwrap()]);
        let findings = r.json()["findings"].as_array().unwrap().clone();
        let got: BTreeSet<String> = findings
            .iter()
            .filter(|f| f["severity"] == "error" || f["severity"] == "warning")
            .map(|f| f["id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(got, expect, "{}\n{}", path.display(), r.describe());
        let errors = findings.iter().any(|f| f["severity"] == "error");
        assert_eq!(r.code(), if errors { 7 } else { 0 }, "{}", r.describe());
        seen += 1;
    }
    assert!(seen >= 7, "only {seen} snapshots in {}", dir.display());
}

//! Helpers for the pins tests: releases written straight into a sandbox
//! store (folders and a real `receipt.toml` through `cudnnm::store`), so
//! resolution, activation and hooks are tested without the importer's cost.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use cudnnm::store::{Receipt, Source};
use cudnnm::version::{CudaVariant, Platform, Version};

/// Writes a release `version` for `cuda` into the store of `home` with
/// `lib/`, `include/` and a receipt for this host's platform; returns its folder.
pub fn fake_release(home: &Path, version: &str, cuda: &str) -> PathBuf {
    let v: Version = version.parse().unwrap();
    let c: CudaVariant = cuda.parse().unwrap();
    let dir = home.join("store").join(c.dir_name()).join(version);
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::create_dir_all(dir.join("include")).unwrap();
    let receipt = Receipt {
        schema: 1,
        version: v.clone(),
        cuda: c,
        platform: Platform::host().unwrap_or(Platform::LinuxX86_64),
        flavour: None,
        header_version: v.triple(),
        installed_at: "2026-11-29T00:00:00Z".into(),
        source: Source {
            kind: cudnnm::shape::Shape::Folder,
            name: format!("fake-{version}"),
            sha256: None,
            size: 0,
            from: cudnnm::store::Provenance::Local,
            dist: None,
        },
        files: vec![],
    };
    std::fs::write(dir.join("receipt.toml"), receipt.to_toml()).unwrap();
    dir
}

/// `dir` as a string (test paths are UTF-8).
pub fn s(dir: &Path) -> String {
    dir.to_str().unwrap().to_string()
}

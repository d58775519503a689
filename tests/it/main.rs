//! The integration tests, as one test binary: each file under `tests/` used
//! to be a binary of its own, and each linked the whole crate (fourteen
//! links of cudnnm per build); as modules of this one it is linked once.
//! Run one file's tests with a filter on its module, e.g.
//! `cargo test --test it use_crash::`.
//!
//! `tests/windows_registry.rs` stays a binary of its own: it changes the wine
//! prefix's user PATH in the registry, which `doctor` reads, so no other test
//! may run in the same process while it does.
#![allow(clippy::disallowed_methods)] // tests build their fixtures with std::fs

// Shared support, declared once.
mod common;
mod deploy_support;
mod doctor_wheels;
mod pin_support;

mod backups;
mod catalog;
mod catalog_today;
mod cli;
mod doctor;
mod doctor_classes;
mod doctor_corpus;
mod doctor_fix;
mod doctor_headers;
mod doctor_healthy;
mod doctor_loader;
mod doctor_run_windows;
mod doctor_stale;
mod doctor_windows_load;
mod download;
mod exec_real;
mod export_dir;
mod frameworks;
mod gpu;
mod guard_crash;
mod hostile;
mod index;
mod install;
mod lock_fallback;
mod modules;
mod pin;
mod pip_index;
mod progress;
mod project_lock;
mod self_update;
mod shell_hooks;
mod store_crash;
mod stream;
mod system;
mod use_;
mod use_crash;
mod use_real;
mod verify;
mod windows;

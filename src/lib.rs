//! cudnnm: a manager for many NVIDIA cuDNN releases on one machine.
//!
//! The library holds all logic so that tests call it directly; `src/main.rs`
//! only runs [`cli::main`]. Module map (`docs/architecture.md#layers`):
//! - [`version`]: release versions, CUDA variants, platforms, specs.
//! - [`archive`]: recognising archive shapes and importing them safely.
//! - [`record`]: typed records (a file or a link) and the state-file loader.
//! - [`store`]: releases on disk and their receipts.
//! - [`toolkit`]: CUDA toolkit discovery and layout.
//! - [`deploy`]: the backup/journal transaction behind `use` and `rollback`.
//! - [`pin`]: `.cudnn-version` files and spec resolution.
//! - [`python`]: a Python environment's installed distributions and which of their requirements apply here.
//! - [`activate`]: per-process environment for a release and shell rendering.
//! - [`export_tree`]: a release exported as a plain folder: its marker, the check of an earlier export, the env file (`export dir`).
//! - [`modulefile`]: Lmod and Environment Modules modulefiles for releases (`export`).
//! - [`catalog`]: the release catalog (`manifest.toml`) and downloads.
//! - [`usage`]: where a home's disk space goes (`du`).
//! - [`verify`]: re-hashing the store and the deployments against their records.
//! - [`ops`]: operations (install, lock, list, use, rollback, current, default, pin, export …) returning typed outcomes the CLI renders.
//! - [`doctor`]: system snapshot and platform-neutral checks.
//! - [`interrupt`]: Ctrl-C / SIGTERM during a change: undo, then exit 130.
//! - [`libcudnn`], [`child`]: loading a cuDNN library, in a child process of its own.
//! - [`gpu`]: the GPUs CUDA would use here, and their compute capability.
//! - [`selfupdate`]: `self update` from the release downloads.
//! - [`disk`]: disk space counted as the file system does (hard links once).
//! - [`fsops`]: the one module that changes files (atomic writes, links, renames).
//! - [`platform`]: the only code that differs by OS.
//!
//! Vocabulary every layer shares sits at the bottom, never inside a command:
//! [`names`] (what cuDNN's file names say), [`quote`] (quoting for each
//! shell), [`command`] (the cudnnm commands printed in hints), [`shape`] (the kinds
//! of archive a receipt records), [`error`], [`digest`]. Layers point down
//! (vocabulary, services, core, operations, diagnosis, front end): a module
//! uses none of a layer above its own, only `cli` and `doctor` itself use
//! `doctor`, and no two top-level modules use each other (the tests in
//! `src/layering.rs` enforce all three, with the layer table of
//! `docs/architecture.md#layers`).

// Only the front end prints or exits (`docs/architecture.md#output-and-errors`):
// library code reports through a trait or returns what to say; `src/cli`
// allows these again, and `clippy.toml` allows printing in tests.
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

pub mod activate;
pub mod archive;
pub mod catalog;
pub mod child;
pub mod cli;
pub mod command;
pub mod deploy;
pub mod digest;
pub mod disk;
pub mod doctor;
pub mod env;
pub mod error;
pub mod export_tree;
pub mod fsops;
pub mod gpu;
pub mod hash;
pub mod home;
pub mod interrupt;
#[cfg(test)]
mod layering;
pub mod libcudnn;
pub mod lock;
pub mod modulefile;
pub mod names;
pub mod ops;
pub mod pin;
pub mod platform;
pub mod progress;
pub mod python;
pub mod quote;
pub mod record;
pub mod selfupdate;
pub mod shape;
pub mod store;
pub mod toolkit;
pub mod usage;
pub mod verify;
pub mod version;

pub use error::{Error, Result};

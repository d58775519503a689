//! Operations: the decisions behind the commands that change or read the
//! home as a whole — install, uninstall, lock, resolving against the catalog,
//! export — between the core (store, catalog, deploy, pin …) and the front
//! end (`docs/architecture.md#layers`).
//!
//! Each operation takes typed inputs and returns a typed outcome that `cli`
//! renders as text or JSON; nothing here prints, reads the terminal or
//! exits, so every decision is tested without a process.

pub mod backups;
pub mod frameworks;
pub mod uninstall;

//! Per-process activation (DESIGN.md §6): the environment that makes one
//! release visible to a process, and its rendering for each shell.
//!
//! (Filled in by the pins issue.)

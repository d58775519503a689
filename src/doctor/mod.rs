//! `doctor` (DESIGN.md §7): a snapshot of the system, gathered by small
//! per-OS code, and platform-neutral checks over it.
//!
//! (Filled in by the doctor issue.)

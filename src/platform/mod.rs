//! The only code that differs by operating system. Each function has the same
//! signature in `unix.rs` and `windows.rs` (after Volta), so the logic around
//! them stays platform-neutral and testable on Linux.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

//! The `cudnnm` binary: everything lives in the library; this only hands over
//! the exit code. Nothing below `cli` exits (clippy's `exit` lint); the one
//! other way out is a second Ctrl-C, which `cli` ends at once with 130.

fn main() -> std::process::ExitCode {
    cudnnm::cli::main()
}

//! The `cudnnm` binary: everything lives in the library; this only hands over
//! the exit code so that nothing else in the program calls `process::exit`.

fn main() -> std::process::ExitCode {
    cudnnm::cli::main()
}

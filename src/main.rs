//! The `kalaha` binary: parses the command line and maps the outcome to exit codes.

fn main() -> std::process::ExitCode {
    // Before anything else: started as an engine's sandbox helper, this process becomes
    // the engine and never returns.
    kalaha::sandbox::run_if_asked();
    kalaha::cli::main()
}

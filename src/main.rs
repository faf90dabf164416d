//! The `kalaha` binary: parses the command line and maps the outcome to exit codes.

fn main() -> std::process::ExitCode {
    kalaha::cli::main()
}

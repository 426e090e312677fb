//! The `wharf` binary: everything lives in the library; see `wharf::cli`.

fn main() -> std::process::ExitCode {
    wharf::cli::main()
}

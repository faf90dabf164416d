//! The command line's error type and its mapping to exit codes.

/// A failed command: `Input` for bad usage or input (exit 2), `Failure` for everything else
/// (exit 1).
#[derive(Debug)]
pub enum CliError {
    Input(anyhow::Error),
    Failure(anyhow::Error),
}

/// What a subcommand returns: its exit code on success (0, or 3 and 4 for `sprt`).
pub type CliResult = Result<u8, CliError>;

impl CliError {
    /// A usage or input error (exit code 2).
    pub fn input(e: impl Into<anyhow::Error>) -> CliError {
        CliError::Input(e.into())
    }

    /// An error reading a file the user gave: bad input (exit 2) when the file is not
    /// one kalaha can read (a FIFO, a device, data it cannot read), a failure otherwise.
    pub fn reading(e: std::io::Error) -> CliError {
        match e.kind() {
            std::io::ErrorKind::InvalidData => CliError::input(e),
            _ => CliError::Failure(e.into()),
        }
    }

    /// A usage or input error from a message.
    pub fn input_msg(msg: impl std::fmt::Display) -> CliError {
        CliError::Input(anyhow::anyhow!("{msg}"))
    }

    fn error(&self) -> &anyhow::Error {
        match self {
            CliError::Input(e) | CliError::Failure(e) => e,
        }
    }

    /// The error as printed, without the `error: ` before it.
    pub fn message(&self) -> String {
        // The message may quote a path or a line the user gave: it is shown, not obeyed.
        crate::record::clean_message(&format!("{:#}", self.error())).into_owned()
    }

    /// Prints the error (unless it is a broken pipe) and returns the exit code.
    pub fn report(&self) -> u8 {
        let broken_pipe = self.error().chain().any(|c| {
            c.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        });
        if broken_pipe {
            return super::exit::OK;
        }
        eprintln!("error: {}", self.message());
        match self {
            CliError::Input(_) => super::exit::USAGE,
            CliError::Failure(_) => super::exit::FAILURE,
        }
    }
}

/// Any other error is a failure (exit 1).
impl<E: Into<anyhow::Error>> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError::Failure(e.into())
    }
}

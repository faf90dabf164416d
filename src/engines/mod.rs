//! The built-in engines, each run as a separate process by `kalaha engine NAME`.

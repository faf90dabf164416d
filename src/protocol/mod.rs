//! The protocol messages of `protocol.md`, version 1.

//! Engine protocol compliance checker (`kalaha check`).

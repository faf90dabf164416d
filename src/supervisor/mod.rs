//! One task per engine process: spawn, handshake, deadlines, clean shutdown.

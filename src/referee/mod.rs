//! Playing one game between two supervised engines.

//! Placeholder, filled in by the preprocessing work.

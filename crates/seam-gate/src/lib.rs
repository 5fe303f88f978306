//! The gate (being written).

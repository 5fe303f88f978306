//! Files an adversarial test plants.

use std::path::Path;

/// A FIFO at `path` (0600): opening it for reading blocks until a writer comes.
pub fn make_fifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
}

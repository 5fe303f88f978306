//! Step 6: the gate, not the agent, remembers which turns are tainted.

use std::collections::HashSet;
use std::sync::Mutex;

/// The set of tainted turns. A turn enters it when a result carrying the
/// owner's data or untrusted content is returned in it, and never leaves.
#[derive(Debug, Default)]
pub(crate) struct TaintBook {
    turns: Mutex<HashSet<String>>,
}

impl TaintBook {
    pub(crate) fn is_tainted(&self, turn: &str) -> bool {
        self.lock().contains(turn)
    }

    pub(crate) fn taint(&self, turn: &str) {
        self.lock().insert(turn.to_owned());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        // A panic while holding this lock cannot leave the set half-updated
        // (insert is atomic from our view), so a poisoned lock is still sound.
        self.turns.lock().unwrap_or_else(|p| p.into_inner())
    }
}

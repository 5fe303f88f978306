//! Step 6: the gate, not the agent, remembers which turns are tainted.

use std::collections::HashSet;
use std::sync::Mutex;

/// The turns the gate opened, and the set of tainted turns. A turn enters the
/// tainted set when a result carrying the owner's data or untrusted content is
/// returned in it, and leaves it only when the turn is closed (after which a
/// toolbox that requires open turns refuses every call naming it).
#[derive(Debug, Default)]
pub(crate) struct TaintBook {
    turns: Mutex<Turns>,
}

#[derive(Debug, Default)]
struct Turns {
    open: HashSet<String>,
    tainted: HashSet<String>,
}

impl TaintBook {
    pub(crate) fn is_tainted(&self, turn: &str) -> bool {
        self.lock().tainted.contains(turn)
    }

    pub(crate) fn taint(&self, turn: &str) {
        self.lock().tainted.insert(turn.to_owned());
    }

    /// Opens a turn under a fresh, unguessable id (a UUIDv7: time-ordered,
    /// with 74 random bits) and returns the id.
    pub(crate) fn open(&self) -> String {
        let id = format!("turn-{}", uuid::Uuid::now_v7());
        self.lock().open.insert(id.clone());
        id
    }

    pub(crate) fn is_open(&self, turn: &str) -> bool {
        self.lock().open.contains(turn)
    }

    /// Forgets a turn. Returns false if it was not open.
    pub(crate) fn close(&self, turn: &str) -> bool {
        let mut turns = self.lock();
        let was_open = turns.open.remove(turn);
        if was_open {
            turns.tainted.remove(turn);
        }
        was_open
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Turns> {
        // A panic while holding this lock cannot leave the sets half-updated
        // (each insert or remove is atomic from our view), so a poisoned lock
        // is still sound.
        self.turns.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_opened_turn_is_known_until_closed_and_closing_forgets_its_taint() {
        let book = TaintBook::default();
        let t = book.open();
        assert!(t.starts_with("turn-"));
        assert!(book.is_open(&t));
        assert!(!book.is_tainted(&t));
        book.taint(&t);
        assert!(book.is_tainted(&t));
        assert!(book.close(&t));
        assert!(!book.is_open(&t));
        assert!(!book.is_tainted(&t));
        assert!(!book.close(&t), "a closed turn cannot be closed again");
        assert_ne!(book.open(), book.open(), "ids are never reused");
    }

    #[test]
    fn closing_a_turn_that_was_never_opened_does_not_untaint_it() {
        let book = TaintBook::default();
        book.taint("made-up");
        assert!(!book.close("made-up"));
        assert!(book.is_tainted("made-up"));
    }
}

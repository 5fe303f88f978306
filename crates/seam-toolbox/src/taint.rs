//! Step 6: the gate, not the agent, remembers which turns are tainted.
//!
//! A turn is a capability, not a name: [`TaintBook::open`] hands out an id (public: the
//! ledger and its stream show it) and a token (secret: only whoever opened the turn holds
//! it). Naming a turn in a call, asking after it, tainting it or closing it takes the token,
//! so a client that learns another session's turn id cannot close that turn (which would
//! forget its taint) or run calls in it.
//!
//! The book also holds, per open turn, the operator's words for it ([`OperatorWords`]: the
//! task, the text of attached files). Only the turn's opener adds to them: in this process
//! through [`crate::Toolbox::open_turn_with`] and [`crate::Toolbox::add_operator_words`],
//! over the service only with the turn opener (which the confined agent never holds). Nothing
//! a call carries, and nothing a tool returns, reaches them. The one other way in is the
//! operator's yes to the consent desk about an exact destination, added by the toolbox
//! ([`TaintBook::add_consented`]).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use seam_policy::OperatorWords;
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

/// The secret half of a turn. Its `Debug` does not show it.
#[derive(Clone, PartialEq, Eq)]
pub struct TurnToken(String);

impl TurnToken {
    /// The token as the client sends it back.
    pub fn secret(&self) -> &str {
        &self.0
    }

    fn digest(secret: &str) -> [u8; 32] {
        Sha256::digest(secret.as_bytes()).into()
    }
}

impl std::fmt::Debug for TurnToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TurnToken(…)")
    }
}

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
    /// Open turns, each with the SHA-256 of its token (the token itself is not kept).
    open: HashMap<String, [u8; 32]>,
    tainted: HashSet<String>,
    /// The operator's words for each open turn that has any.
    words: HashMap<String, OperatorWords>,
}

impl TaintBook {
    pub(crate) fn is_tainted(&self, turn: &str) -> bool {
        self.lock().tainted.contains(turn)
    }

    pub(crate) fn taint(&self, turn: &str) {
        self.lock().tainted.insert(turn.to_owned());
    }

    /// Opens a turn under a fresh, unguessable id (a UUIDv7: time-ordered,
    /// with 74 random bits) and returns the id with the turn's token (32 random bytes).
    pub(crate) fn open(&self) -> (String, TurnToken) {
        let id = format!("turn-{}", uuid::Uuid::now_v7());
        let mut bytes = [0u8; 32];
        // The OS's randomness; without it no turn can be opened safely.
        getrandom::fill(&mut bytes).expect("the operating system's random number generator");
        let token = TurnToken(hex::encode(bytes));
        self.lock()
            .open
            .insert(id.clone(), TurnToken::digest(token.secret()));
        (id, token)
    }

    /// Adds the operator's `text` to an open turn's words. False (nothing kept) when the turn
    /// is not open.
    pub(crate) fn add_words(&self, turn: &str, text: &str) -> bool {
        let mut turns = self.lock();
        if !turns.open.contains_key(turn) {
            return false;
        }
        turns.words.entry(turn.to_owned()).or_default().add(text);
        true
    }

    /// Adds `d`, a destination the operator consented to when the gate asked about it (the
    /// consent desk's answer, never a client's word), to an open turn's words. False (nothing
    /// kept) when the turn is not open.
    pub(crate) fn add_consented(&self, turn: &str, d: seam_policy::Destination) -> bool {
        let mut turns = self.lock();
        if !turns.open.contains_key(turn) {
            return false;
        }
        turns
            .words
            .entry(turn.to_owned())
            .or_default()
            .add_consented(d);
        true
    }

    /// The operator's words for `turn` (empty when none were registered, or it is not open).
    pub(crate) fn words(&self, turn: &str) -> OperatorWords {
        self.lock().words.get(turn).cloned().unwrap_or_default()
    }

    pub(crate) fn is_open(&self, turn: &str) -> bool {
        self.lock().open.contains_key(turn)
    }

    /// Is the turn open, and is `token` its token? (Compared in constant time.)
    pub(crate) fn admits(&self, turn: &str, token: Option<&str>) -> bool {
        let Some(token) = token else { return false };
        let presented = TurnToken::digest(token);
        self.lock()
            .open
            .get(turn)
            .is_some_and(|d| bool::from(d.ct_eq(&presented)))
    }

    /// Forgets a turn. Returns false if it was not open.
    pub(crate) fn close(&self, turn: &str) -> bool {
        let mut turns = self.lock();
        let was_open = turns.open.remove(turn).is_some();
        if was_open {
            turns.tainted.remove(turn);
            turns.words.remove(turn);
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
        let (t, _) = book.open();
        assert!(t.starts_with("turn-"));
        assert!(book.is_open(&t));
        assert!(!book.is_tainted(&t));
        book.taint(&t);
        assert!(book.is_tainted(&t));
        assert!(book.close(&t));
        assert!(!book.is_open(&t));
        assert!(!book.is_tainted(&t));
        assert!(!book.close(&t), "a closed turn cannot be closed again");
        assert_ne!(book.open().0, book.open().0, "ids are never reused");
    }

    #[test]
    fn only_the_turns_own_token_admits_it() {
        let book = TaintBook::default();
        let (a, ta) = book.open();
        let (b, tb) = book.open();
        assert_ne!(ta, tb);
        assert!(book.admits(&a, Some(ta.secret())));
        assert!(!book.admits(&a, Some(tb.secret())), "another turn's token");
        assert!(!book.admits(&a, None));
        assert!(!book.admits(&a, Some("")));
        assert!(!book.admits("turn-made-up", Some(ta.secret())));
        assert!(!format!("{ta:?}").contains(ta.secret()));
        book.close(&b);
        assert!(
            !book.admits(&b, Some(tb.secret())),
            "a closed turn admits nobody"
        );
    }

    #[test]
    fn only_an_open_turn_keeps_words_and_closing_forgets_them() {
        let book = TaintBook::default();
        let (t, _) = book.open();
        let d = seam_policy::Destination::parse_value("alice@example.org").unwrap();
        assert!(!book.words(&t).names(&d));
        assert!(book.add_words(&t, "mail alice@example.org"));
        assert!(book.words(&t).names(&d));
        assert!(!book.add_words("turn-made-up", "mail alice@example.org"));
        assert!(!book.words("turn-made-up").names(&d));
        book.close(&t);
        assert!(!book.words(&t).names(&d));
        assert!(
            !book.add_words(&t, "alice@example.org"),
            "a closed turn takes none"
        );
    }

    #[test]
    fn closing_a_turn_that_was_never_opened_does_not_untaint_it() {
        let book = TaintBook::default();
        book.taint("made-up");
        assert!(!book.close("made-up"));
        assert!(book.is_tainted("made-up"));
    }
}

//! The consent desk: where a call whose capability says `ask` waits for the operator.
//!
//! [`Toolbox::call`](crate::Toolbox::call) brings a call here when the policy's decision for
//! its tool is `ask` and the tool is not a read (a read is refused: it cannot wait for
//! consent), and when an egress call in a tainted turn would reach destinations nothing
//! endorses and the policy's `[egress] unnamed` is `ask` ([`PendingCall::destinations`]: a
//! yes endorses exactly those values for the rest of the turn). The call waits, blocking its worker, until one of the desk's channels answers
//! it or [`ConsentDesk::timeout`] passes:
//!
//! - the **terminal** ([`ConsentDesk::attach_terminal`]): the binary's prompter on the
//!   operator's `/dev/tty`, held by the gate process (started before the agent's walls, so
//!   the agent can neither read that terminal nor type into it);
//! - the **socket** ([`ConsentDesk::with_socket`]): `GET /v1/consents` and `POST
//!   /v1/consents/{id}` on the gate's owner-only unix socket, with the turn opener the agent
//!   never holds (`seam consent list|approve|deny`).
//!
//! A desk with neither refuses at once: nobody is there to ask. An answer names one pending
//! call by its invocation id, so it covers exactly that call: its tool, its turn and its
//! params (the request shows them scrubbed, with the SHA-256 of their canonical JSON, which
//! the ledger's records of the call carry too). Two wider answers exist, and each says how
//! far it reaches: `turn` (the same tool for the rest of that turn) and `always` (the tool
//! from now on: a rule in the policy file, written by [`ConsentDesk::with_rule_writer`]'s
//! writer before the answer counts). Every answer, and a timeout, is signed into the ledger
//! by the toolbox before the call goes on.
//!
//! What this module must never do: let an answer cover a call it does not name; count an
//! "always" whose rule was not written; or wait without a bound.

use std::collections::{BTreeMap, HashSet};
use std::sync::mpsc;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

pub use seam_ledger::{ConsentBy, ConsentScope};
pub use seam_protocol::wire::{ConsentReply, PendingConsent};

/// The default bound on a wait (`--consent-timeout`).
pub const DEFAULT_CONSENT_TIMEOUT: Duration = Duration::from_secs(120);

/// One call waiting for the operator.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingCall {
    /// The call's invocation id.
    pub id: String,
    pub turn: Option<String>,
    pub tool: String,
    /// The capability whose decision is `ask`.
    pub capability: &'static str,
    /// The params, scrubbed.
    pub params: Value,
    /// SHA-256 (hex) of the canonical JSON of `params`.
    pub params_sha256: String,
    /// Destinations of the call that nothing endorses for its tainted turn, as shown to the
    /// operator (`/PLACE = "VALUE"`). Not empty: the call is asked about whatever the earlier
    /// answers for its tool, since those were never about these values.
    pub destinations: Vec<String>,
    /// When it began to wait, and when it stops.
    pub asked: Instant,
    pub deadline: Instant,
}

impl PendingCall {
    /// The wire form (`GET /v1/consents`).
    pub fn to_wire(&self, now: Instant) -> PendingConsent {
        PendingConsent {
            id: self.id.clone(),
            turn: self.turn.clone(),
            tool: self.tool.clone(),
            capability: self.capability.to_owned(),
            params: self.params.clone(),
            params_sha256: self.params_sha256.clone(),
            destinations: self.destinations.clone(),
            waited_ms: now.saturating_duration_since(self.asked).as_millis() as u64,
            timeout_ms: self
                .deadline
                .saturating_duration_since(self.asked)
                .as_millis() as u64,
        }
    }
}

/// How a wait ended, for the toolbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    /// The operator said yes, now, for this scope.
    Granted { scope: ConsentScope, by: ConsentBy },
    /// An earlier `turn` or `always` answer covers the call: nobody was asked again.
    Covered { scope: ConsentScope },
    /// The operator said no.
    Denied { by: ConsentBy },
    /// Nobody answered within the timeout.
    TimedOut { after: Duration },
    /// The desk has no channel to ask on (no terminal, no socket).
    NoOperator,
}

/// An answer that could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    #[error("no call {0:?} is waiting for consent (it was answered, timed out, or never asked)")]
    NotPending(String),
    #[error(
        "the rule for \"always\" could not be written, so the call is still waiting: {0}; \
         answer once or for the turn instead"
    )]
    RuleNotWritten(String),
}

/// Writes `[consent] always` for a tool into the policy file; the error says why it could not.
pub type RuleWriter = Box<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

#[derive(Debug)]
struct Slot {
    call: PendingCall,
    answer: Option<(ConsentReply, ConsentBy)>,
}

#[derive(Debug, Default)]
struct DeskState {
    pending: BTreeMap<String, Slot>,
    /// (turn, tool) answered `turn`.
    turn_grants: HashSet<(String, String)>,
    /// Tools answered `always` while this gate runs (the policy file has the rule too).
    always: HashSet<String>,
    /// How long each call in progress has waited (for the service's timeout): the time of
    /// waits that ended, and when the one under way began.
    waited: BTreeMap<String, (Duration, Option<Instant>)>,
}

/// The gate's consent desk. Share it behind `Arc` between the toolbox and its channels.
pub struct ConsentDesk {
    timeout: Duration,
    socket: bool,
    terminal: Mutex<Option<mpsc::Sender<PendingCall>>>,
    rule_writer: Option<RuleWriter>,
    state: Mutex<DeskState>,
    changed: Condvar,
}

impl std::fmt::Debug for ConsentDesk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsentDesk")
            .field("timeout", &self.timeout)
            .field("socket", &self.socket)
            .field("terminal", &self.has_terminal())
            .finish_non_exhaustive()
    }
}

impl ConsentDesk {
    /// A desk that waits at most `timeout` for an answer, with no channel yet.
    pub fn new(timeout: Duration) -> ConsentDesk {
        ConsentDesk {
            timeout,
            socket: false,
            terminal: Mutex::new(None),
            rule_writer: None,
            state: Mutex::new(DeskState::default()),
            changed: Condvar::new(),
        }
    }

    /// Answers over the gate's socket count (a service gate).
    pub fn with_socket(mut self) -> ConsentDesk {
        self.socket = true;
        self
    }

    /// "always" writes its rule with `writer` before it counts.
    pub fn with_rule_writer(mut self, writer: RuleWriter) -> ConsentDesk {
        self.rule_writer = Some(writer);
        self
    }

    /// The terminal's prompter: it receives every call that starts to wait, and answers with
    /// [`ConsentDesk::answer`] (by [`ConsentBy::Terminal`]). Dropping the receiver detaches it.
    pub fn attach_terminal(&self) -> mpsc::Receiver<PendingCall> {
        let (tx, rx) = mpsc::channel();
        *lock(&self.terminal) = Some(tx);
        rx
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Is a terminal attached (and still listening)?
    pub fn has_terminal(&self) -> bool {
        lock(&self.terminal).is_some()
    }

    /// Do answers over the socket count?
    pub fn takes_socket_answers(&self) -> bool {
        self.socket
    }

    /// Is anybody there to ask (a terminal, or answers over the socket)?
    pub fn has_operator(&self) -> bool {
        self.has_terminal() || self.takes_socket_answers()
    }

    /// Can "always" be answered (is there a rule writer)?
    pub fn can_write_rules(&self) -> bool {
        self.rule_writer.is_some()
    }

    /// The calls waiting now, oldest first.
    pub fn pending(&self) -> Vec<PendingCall> {
        let mut calls: Vec<PendingCall> = lock(&self.state)
            .pending
            .values()
            .filter(|s| s.answer.is_none())
            .map(|s| s.call.clone())
            .collect();
        calls.sort_by_key(|c| c.asked);
        calls
    }

    /// Is this call still waiting for an answer?
    pub fn is_pending(&self, id: &str) -> bool {
        lock(&self.state)
            .pending
            .get(id)
            .is_some_and(|s| s.answer.is_none())
    }

    /// How long the call `id`, in progress, has waited for consent so far, and whether it
    /// is waiting now; `None` if it never waited (or is over). The service adds the wait to
    /// its call timeout.
    pub fn waited(&self, id: &str) -> Option<(Duration, bool)> {
        let state = lock(&self.state);
        let (done, since) = state.waited.get(id)?;
        Some(match since {
            Some(since) => (*done + since.elapsed(), true),
            None => (*done, false),
        })
    }

    /// Answers the pending call `id`. An `always` writes its rule first; if that fails, the
    /// call keeps waiting and the error says why.
    pub fn answer(&self, id: &str, reply: ConsentReply, by: ConsentBy) -> Result<(), AnswerError> {
        let tool = {
            let state = lock(&self.state);
            match state.pending.get(id) {
                Some(slot) if slot.answer.is_none() => slot.call.tool.clone(),
                _ => return Err(AnswerError::NotPending(id.to_owned())),
            }
        };
        if reply == ConsentReply::Always {
            let Some(writer) = &self.rule_writer else {
                return Err(AnswerError::RuleNotWritten(
                    "this gate has no policy file to write rules to".into(),
                ));
            };
            writer(&tool).map_err(AnswerError::RuleNotWritten)?;
        }
        let mut state = lock(&self.state);
        match state.pending.get_mut(id) {
            Some(slot) if slot.answer.is_none() => {
                slot.answer = Some((reply, by));
                self.changed.notify_all();
                Ok(())
            }
            _ => Err(AnswerError::NotPending(id.to_owned())),
        }
    }

    /// Forgets a closed turn's `turn` answers.
    pub fn forget_turn(&self, turn: &str) {
        lock(&self.state).turn_grants.retain(|(t, _)| t != turn);
    }

    /// The call `id` is over (for [`ConsentDesk::waited`]).
    pub(crate) fn end(&self, id: &str) {
        lock(&self.state).waited.remove(id);
    }

    /// Waits for the operator's answer to `call` (see the module doc). Blocking.
    pub(crate) fn wait(&self, mut call: PendingCall) -> Waited {
        // (The terminal gets the call while the state is locked: by the time it can ask
        // about it, the call is pending.)
        let mut state = lock(&self.state);
        if call.destinations.is_empty()
            && let Some(turn) = &call.turn
            && state
                .turn_grants
                .contains(&(turn.clone(), call.tool.clone()))
        {
            return Waited::Covered {
                scope: ConsentScope::Turn,
            };
        }
        if call.destinations.is_empty() && state.always.contains(&call.tool) {
            return Waited::Covered {
                scope: ConsentScope::Always,
            };
        }
        let now = Instant::now();
        call.asked = now;
        call.deadline = now + self.timeout;
        let terminal = {
            let mut t = lock(&self.terminal);
            if let Some(tx) = t.as_ref()
                && tx.send(call.clone()).is_err()
            {
                *t = None;
            }
            t.is_some()
        };
        if !terminal && !self.socket {
            return Waited::NoOperator;
        }
        let id = call.id.clone();
        let deadline = call.deadline;
        state.waited.entry(id.clone()).or_default().1 = Some(now);
        let turn = call.turn.clone();
        let tool = call.tool.clone();
        state
            .pending
            .insert(id.clone(), Slot { call, answer: None });
        loop {
            let answer = state.pending.get(&id).and_then(|s| s.answer);
            let now = Instant::now();
            if answer.is_some() || now >= deadline {
                state.pending.remove(&id);
                if let Some(w) = state.waited.get_mut(&id)
                    && let Some(since) = w.1.take()
                {
                    w.0 += now.saturating_duration_since(since);
                }
                self.changed.notify_all();
                return match answer {
                    None => Waited::TimedOut {
                        after: self.timeout,
                    },
                    Some((ConsentReply::Deny, by)) => Waited::Denied { by },
                    Some((reply, by)) => {
                        let scope = match reply {
                            ConsentReply::Turn if turn.is_some() => {
                                if let Some(t) = turn {
                                    state.turn_grants.insert((t, tool));
                                }
                                ConsentScope::Turn
                            }
                            ConsentReply::Always => {
                                state.always.insert(tool);
                                ConsentScope::Always
                            }
                            _ => ConsentScope::Once,
                        };
                        Waited::Granted { scope, by }
                    }
                };
            }
            state = match self.changed.wait_timeout(state, deadline - now) {
                Ok((s, _)) => s,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn call(id: &str, turn: &str, tool: &str) -> PendingCall {
        let now = Instant::now();
        PendingCall {
            id: id.into(),
            turn: Some(turn.into()),
            tool: tool.into(),
            capability: "python.run",
            params: json!({"code": id}),
            params_sha256: String::new(),
            destinations: Vec::new(),
            asked: now,
            deadline: now,
        }
    }

    #[test]
    fn a_desk_without_a_channel_refuses_at_once() {
        let desk = ConsentDesk::new(Duration::from_secs(60));
        let t = Instant::now();
        assert_eq!(desk.wait(call("a", "t", "python.run")), Waited::NoOperator);
        assert!(t.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn nobody_answering_times_out() {
        let desk = ConsentDesk::new(Duration::from_millis(100)).with_socket();
        assert!(matches!(
            desk.wait(call("a", "t", "python.run")),
            Waited::TimedOut { .. }
        ));
        assert!(desk.pending().is_empty());
        assert!(matches!(
            desk.answer("a", ConsentReply::Once, ConsentBy::Terminal),
            Err(AnswerError::NotPending(_))
        ));
    }

    #[test]
    fn an_answer_names_one_call_and_a_turn_answer_covers_only_its_tool_and_turn() {
        let desk = Arc::new(ConsentDesk::new(Duration::from_secs(30)));
        let rx = desk.attach_terminal();
        let answerer = {
            let desk = desk.clone();
            std::thread::spawn(move || {
                // "once" for a, "turn" for b; each names its own call
                let a = rx.recv().unwrap();
                assert!(
                    desk.answer("b", ConsentReply::Once, ConsentBy::Terminal)
                        .is_err()
                );
                desk.answer(&a.id, ConsentReply::Once, ConsentBy::Terminal)
                    .unwrap();
                let b = rx.recv().unwrap();
                desk.answer(&b.id, ConsentReply::Turn, ConsentBy::Socket { uid: 7 })
                    .unwrap();
                // another turn's call is asked again, and denied
                let d = rx.recv().unwrap();
                assert_eq!(d.turn.as_deref(), Some("t2"));
                desk.answer(&d.id, ConsentReply::Deny, ConsentBy::Terminal)
                    .unwrap();
            })
        };
        assert_eq!(
            desk.wait(call("a", "t1", "python.run")),
            Waited::Granted {
                scope: ConsentScope::Once,
                by: ConsentBy::Terminal
            }
        );
        assert_eq!(
            desk.wait(call("b", "t1", "python.run")),
            Waited::Granted {
                scope: ConsentScope::Turn,
                by: ConsentBy::Socket { uid: 7 }
            }
        );
        assert_eq!(
            desk.wait(call("c", "t1", "python.run")),
            Waited::Covered {
                scope: ConsentScope::Turn
            }
        );
        assert_eq!(
            desk.wait(call("d", "t2", "python.run")),
            Waited::Denied {
                by: ConsentBy::Terminal
            }
        );
        answerer.join().unwrap();
    }

    #[test]
    fn a_call_with_destinations_is_asked_whatever_its_tool_was_granted() {
        let desk = Arc::new(ConsentDesk::new(Duration::from_secs(30)));
        let rx = desk.attach_terminal();
        let answerer = {
            let desk = desk.clone();
            std::thread::spawn(move || {
                let a = rx.recv().unwrap();
                desk.answer(&a.id, ConsentReply::Turn, ConsentBy::Terminal)
                    .unwrap();
                // the turn answer covers the tool; a destination it was not shown is asked
                let b = rx.recv().unwrap();
                assert_eq!(b.destinations, ["/to = \"mallory@evil.example\""]);
                desk.answer(&b.id, ConsentReply::Deny, ConsentBy::Terminal)
                    .unwrap();
            })
        };
        assert!(matches!(
            desk.wait(call("a", "t1", "mail.send")),
            Waited::Granted { .. }
        ));
        assert!(matches!(
            desk.wait(call("c", "t1", "mail.send")),
            Waited::Covered { .. }
        ));
        let mut b = call("b", "t1", "mail.send");
        b.destinations = vec!["/to = \"mallory@evil.example\"".into()];
        assert!(matches!(desk.wait(b), Waited::Denied { .. }));
        answerer.join().unwrap();
    }

    #[test]
    fn always_counts_only_once_its_rule_is_written() {
        let written = Arc::new(Mutex::new(Vec::<String>::new()));
        let fail = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let desk = Arc::new(
            ConsentDesk::new(Duration::from_secs(30))
                .with_socket()
                .with_rule_writer({
                    let written = written.clone();
                    let fail = fail.clone();
                    Box::new(move |tool| {
                        if fail.load(std::sync::atomic::Ordering::SeqCst) {
                            return Err("read-only file system".into());
                        }
                        written.lock().unwrap().push(tool.to_owned());
                        Ok(())
                    })
                }),
        );
        let answerer = {
            let desk = desk.clone();
            std::thread::spawn(move || {
                while desk.pending().is_empty() {
                    std::thread::sleep(Duration::from_millis(5));
                }
                let e = desk
                    .answer("a", ConsentReply::Always, ConsentBy::Socket { uid: 1 })
                    .unwrap_err();
                assert!(matches!(e, AnswerError::RuleNotWritten(_)));
                assert!(desk.is_pending("a"));
                fail.store(false, std::sync::atomic::Ordering::SeqCst);
                desk.answer("a", ConsentReply::Always, ConsentBy::Socket { uid: 1 })
                    .unwrap();
            })
        };
        assert!(matches!(
            desk.wait(call("a", "t1", "web.search")),
            Waited::Granted {
                scope: ConsentScope::Always,
                ..
            }
        ));
        answerer.join().unwrap();
        assert_eq!(*written.lock().unwrap(), ["web.search"]);
        assert_eq!(
            desk.wait(call("b", "t9", "web.search")),
            Waited::Covered {
                scope: ConsentScope::Always
            }
        );
    }
}

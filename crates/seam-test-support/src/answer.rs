//! Reading a gate's answer in a test: what it served, or why it refused.

use std::fmt::Debug;
use std::time::{Duration, Instant};

use seam_protocol::{Answer, RefusalCode};
use serde_json::Value;

/// The served output; a refusal fails the test.
#[track_caller]
pub fn output(a: &Answer) -> &Value {
    match a {
        Answer::Envelope(e) => &e.output,
        Answer::Refusal(r) => panic!("refused: {:?}", r.refused),
    }
}

/// The refusal's code and message; a served call fails the test.
#[track_caller]
pub fn refusal(a: &Answer) -> (RefusalCode, String) {
    match a {
        Answer::Refusal(r) => (r.refused.code, r.refused.message.clone()),
        Answer::Envelope(e) => panic!("expected a refusal, got {:?}", e.output),
    }
}

/// A tool that stops waiting at its timeout: for each of `cases`, `call` is refused as
/// `tool_failed` in less than `bound`, with a message that says it gave up `within` the limit
/// (e.g. `"within 1 s"`) and names `timeout_s`, the setting that moves it.
#[track_caller]
pub fn refused_at_timeout<C: Debug>(
    cases: &[C],
    within: &str,
    bound: Duration,
    call: impl Fn(&C) -> Answer,
) {
    for case in cases {
        let started = Instant::now();
        let (code, message) = refusal(&call(case));
        let took = started.elapsed();
        assert_eq!(code, RefusalCode::ToolFailed, "{case:?}: {message}");
        assert!(message.contains(within), "{case:?}: {message}");
        assert!(message.contains("timeout_s"), "{case:?}: {message}");
        assert!(took < bound, "{case:?} took {took:?}");
    }
}

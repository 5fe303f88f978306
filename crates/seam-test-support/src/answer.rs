//! Reading a gate's answer in a test: what it served, or why it refused.

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

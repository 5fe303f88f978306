//! When a model's reply has started to loop: the one rule both backends cut a
//! reply by, the embedded engine on its tokens and the model-server client on
//! the pieces a server streams (one token each, from llama.cpp's server).
//!
//! Plain Rust, built without the `embedded` feature, so the agent's server
//! client uses the same rule as the engine and the two backends stop a
//! looping reply at the same place.

/// How many final pieces a loop must fill before the reply is cut, and the
/// longest run that counts as looping: at the longest period the run has
/// been said six times over.
pub const LOOP_SPAN: usize = 96;
/// The longest run of pieces that counts as a loop's period.
pub const LOOP_PERIOD: usize = 16;

/// True when `reply` ends in a loop: its last [`LOOP_SPAN`] pieces are one
/// run of at most [`LOOP_PERIOD`] pieces, said over and over (each piece
/// equal to the one a period before it). A reply that does this is not
/// coming back: greedy or low-temperature decoding of a small model that has
/// started to repeat keeps repeating until its token budget runs out, and
/// every token costs a decode. Nothing an agent's action needs repeats a
/// short run that often; a long list of distinct items does not match,
/// since each item differs from the one before it.
pub fn looping_tail<T: PartialEq>(reply: &[T]) -> bool {
    if reply.len() < LOOP_SPAN {
        return false;
    }
    let tail = &reply[reply.len() - LOOP_SPAN..];
    (1..=LOOP_PERIOD).any(|p| (p..tail.len()).all(|i| tail[i] == tail[i - p]))
}

/// The note a reply cut by [`looping_tail`] carries, on either backend.
pub const LOOP_CUT_NOTE: &str = "the reply was cut where it began repeating itself";

#[cfg(test)]
mod tests {
    use super::{LOOP_PERIOD, LOOP_SPAN, looping_tail};

    #[test]
    fn a_reply_that_repeats_a_short_run_is_looping() {
        // One piece over and over, and a run of three, long enough.
        assert!(looping_tail(&[7; LOOP_SPAN]));
        let three: Vec<i32> = (0..LOOP_SPAN + 5).map(|i| [4, 5, 6][i % 3]).collect();
        assert!(looping_tail(&three));
        // The longest period counts; one longer does not.
        let p: Vec<i32> = (0..LOOP_SPAN).map(|i| (i % LOOP_PERIOD) as i32).collect();
        assert!(looping_tail(&p));
        let q: Vec<i32> = (0..LOOP_SPAN)
            .map(|i| (i % (LOOP_PERIOD + 1)) as i32)
            .collect();
        assert!(!looping_tail(&q));
        // Too short a run of repeats, or one break in it: not (yet) a loop.
        assert!(!looping_tail(&[7; LOOP_SPAN - 1]));
        let mut broken = vec![7; LOOP_SPAN];
        broken[LOOP_SPAN / 2] = 8;
        assert!(!looping_tail(&broken));
        // A list of distinct items, each shaped like the last.
        let list: Vec<i32> = (0..200).flat_map(|i| [10, 11, 100 + i, 12]).collect();
        assert!(!looping_tail(&list));
        // Only the tail counts: a loop that ended is no loop.
        let mut ended = vec![7; LOOP_SPAN * 2];
        ended.extend(1..=20);
        assert!(!looping_tail(&ended));
    }

    #[test]
    fn streamed_text_pieces_loop_the_same_way() {
        // What a server streams when the model writes `\b` over and over.
        let pieces: Vec<&str> = std::iter::once("{\"code\":\"re.findall(r'")
            .chain(std::iter::repeat_n("\\b", LOOP_SPAN))
            .collect();
        assert!(looping_tail(&pieces));
        // Prose streamed piece by piece does not.
        let prose: Vec<String> = (0..LOOP_SPAN * 2).map(|i| format!("w{i} ")).collect();
        assert!(!looping_tail(&prose));
    }
}

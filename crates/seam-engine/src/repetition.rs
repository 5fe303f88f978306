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

/// The longest run of pieces that counts as a loop's period when it has
/// been said [`LONG_LOOP_REPEATS`] times over: a sentence or two said again
/// and again. Told which lines held a time, qwen2.5-coder-0.5b closed its
/// answer and went on after it with "This line gives the time from the line
/// about what the task asks. The operator's task was: …", a run of about 70
/// tokens, thirteen times over, until its 1024-token budget ran out (67 s);
/// a period of at most [`LOOP_PERIOD`] never matched it.
pub const LONG_LOOP_PERIOD: usize = 192;
/// How many times over a run longer than [`LOOP_PERIOD`] must fill the end
/// of a reply (and at least [`LOOP_SPAN`] pieces) before the reply is cut.
pub const LONG_LOOP_REPEATS: usize = 3;

/// True when `reply` ends in a loop: its last [`LOOP_SPAN`] pieces are one
/// run of at most [`LOOP_PERIOD`] pieces, said over and over (each piece
/// equal to the one a period before it), or its last pieces are a run of at
/// most [`LONG_LOOP_PERIOD`] pieces said [`LONG_LOOP_REPEATS`] times over
/// (and fill at least [`LOOP_SPAN`] pieces). A reply that does this is not
/// coming back: greedy or low-temperature decoding of a small model that has
/// started to repeat keeps repeating until its token budget runs out, and
/// every token costs a decode. Nothing an agent's action needs repeats a
/// run that often; a long list of distinct items does not match, since each
/// item differs from the one before it.
pub fn looping_tail<T: PartialEq>(reply: &[T]) -> bool {
    let periodic = |p: usize, span: usize| {
        reply.len() >= span && {
            let tail = &reply[reply.len() - span..];
            (p..tail.len()).all(|i| tail[i] == tail[i - p])
        }
    };
    (1..=LOOP_PERIOD).any(|p| periodic(p, LOOP_SPAN))
        || (LOOP_PERIOD + 1..=LONG_LOOP_PERIOD)
            .any(|p| periodic(p, (p * LONG_LOOP_REPEATS).max(LOOP_SPAN)))
}

/// The note a reply cut by [`looping_tail`] carries, on either backend.
pub const LOOP_CUT_NOTE: &str = "the reply was cut where it began repeating itself";

/// The longest run of characters [`text_loop`] looks for: enough for a run
/// of [`LONG_LOOP_PERIOD`] pieces of several characters each.
pub const TEXT_LOOP_PERIOD: usize = 1024;
/// How many times over a run must fill the end of a text for
/// [`text_loop`] to find it.
pub const TEXT_LOOP_REPEATS: usize = 3;

/// Where the loop that ends `text` begins, as found in the text of a reply
/// that [`looping_tail`] cut: the byte offset at which the text's periodic
/// tail begins, and the byte length of one run of it there. The tail is the
/// longest end of `text` in which every character equals the one a period
/// later, for a period of at most [`TEXT_LOOP_PERIOD`] characters, and it
/// holds the run at least [`TEXT_LOOP_REPEATS`] times; of the periods that
/// give the longest tail, the shortest. `None` when no run repeats that
/// often at the end.
///
/// Tokens are not characters, and one reply's loop is cut after another
/// number of pieces than the next one's, so two replies that looped alike
/// differ in how much of the loop they hold; what they said before it is the
/// same. `&text[..start + run]` keeps that and one run of the loop.
pub fn text_loop(text: &str) -> Option<(usize, usize)> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let n = chars.len();
    let mut best: Option<(usize, usize)> = None; // (first char of the tail, period)
    for period in 1..=TEXT_LOOP_PERIOD.min(n / TEXT_LOOP_REPEATS) {
        let mut start = n - period;
        while start > 0 && chars[start - 1].1 == chars[start - 1 + period].1 {
            start -= 1;
        }
        if n - start >= period * TEXT_LOOP_REPEATS && best.is_none_or(|(s, _)| start < s) {
            best = Some((start, period));
        }
    }
    best.map(|(start, period)| {
        let at = chars[start].0;
        let end = chars.get(start + period).map_or(text.len(), |c| c.0);
        (at, end - at)
    })
}

#[cfg(test)]
mod tests {
    use super::{
        LONG_LOOP_PERIOD, LONG_LOOP_REPEATS, LOOP_PERIOD, LOOP_SPAN, TEXT_LOOP_PERIOD,
        looping_tail, text_loop,
    };
    use proptest::prelude::*;

    #[test]
    fn a_reply_that_repeats_a_short_run_is_looping() {
        // One piece over and over, and a run of three, long enough.
        assert!(looping_tail(&[7; LOOP_SPAN]));
        let three: Vec<i32> = (0..LOOP_SPAN + 5).map(|i| [4, 5, 6][i % 3]).collect();
        assert!(looping_tail(&three));
        // The longest short period counts over the span; a longer period
        // needs its run said three times over.
        let p: Vec<i32> = (0..LOOP_SPAN).map(|i| (i % LOOP_PERIOD) as i32).collect();
        assert!(looping_tail(&p));
        let cycle = |period: usize, len: usize| -> Vec<i32> {
            (0..len).map(|i| (i % period) as i32).collect()
        };
        assert!(!looping_tail(&cycle(40, 40 * 3 - 1)));
        assert!(looping_tail(&cycle(40, 40 * 3)));
        assert!(looping_tail(&cycle(LONG_LOOP_PERIOD, LONG_LOOP_PERIOD * 3)));
        assert!(!looping_tail(&cycle(
            LONG_LOOP_PERIOD + 1,
            (LONG_LOOP_PERIOD + 1) * 3
        )));
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
    fn a_sentence_said_over_and_over_is_a_loop() {
        // What qwen2.5-coder-0.5b went on with after closing its answer, one
        // word a piece: the same two sentences again and again.
        let said = "This line gives the time from the line about what the task asks. \
                    The operator's task was: Print notes/laptop-migration.txt for me, I need \
                    to paste it on the new laptop. And what time is our flight home from \
                    Porto? That one's in notes/trip-porto.md.";
        let words: Vec<&str> = said.split(' ').collect();
        assert!(words.len() > LOOP_PERIOD && words.len() <= LONG_LOOP_PERIOD);
        let mut reply = vec!["{\"mode\":\"respond\",\"text\":\"13:31\"}."];
        for _ in 0..2 {
            reply.extend(&words);
        }
        assert!(!looping_tail(&reply), "said twice is not yet a loop");
        reply.extend(&words);
        assert!(looping_tail(&reply), "said three times is");
        // Its text loop is found as well, one run kept.
        let text = reply.join(" ");
        let (at, run) = text_loop(&text).expect("a loop");
        assert!(at <= "{\"mode\":\"respond\",\"text\":\"13:31\"}. ".len());
        assert_eq!(
            run,
            said.len() + 1,
            "one run: the sentences and the space after them"
        );
        // Three paragraphs that each differ in a word are not.
        let paragraphs: Vec<String> = (0..3)
            .flat_map(|k| {
                words.iter().map(move |w| {
                    if *w == "time" {
                        format!("time{k}")
                    } else {
                        (*w).to_owned()
                    }
                })
            })
            .collect();
        assert!(!looping_tail(&paragraphs));
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

    #[test]
    fn a_text_loop_is_found_where_it_began() {
        // The regular expression qwen2.5-coder-1.5b looped in, cut twice at
        // other lengths: the same start, one run kept.
        let a = format!("pattern = r'Week of ({}\\", "\\b".repeat(40));
        let b = format!("pattern = r'Week of ({}", "\\b".repeat(57));
        let (sa, ra) = text_loop(&a).expect("a loop");
        let (sb, rb) = text_loop(&b).expect("a loop");
        assert_eq!(&a[..sa + ra], "pattern = r'Week of (\\b");
        assert_eq!(&a[..sa + ra], &b[..sb + rb]);
        // An answer that says one line over and over keeps it once.
        let s = "Total: 4. STRIPE_SECRET_KEY=[REDACTED] STRIPE_SECRET_KEY=[REDACTED] \
                 STRIPE_SECRET_KEY=[REDACTED] STRIPE_SECRET_KEY=[RED";
        let (at, run) = text_loop(s).expect("a loop");
        assert_eq!(&s[..at + run], "Total: 4. STRIPE_SECRET_KEY=[REDACTED]");
        // Characters of more than one byte are cut on their boundaries.
        let t = format!("é{}", "ü—".repeat(5));
        let (at, run) = text_loop(&t).expect("a loop");
        assert_eq!(&t[..at + run], "éü—");
        // Too few repeats, a run longer than the longest period, or none.
        assert_eq!(text_loop("ab ab"), None);
        let long = "x".repeat(TEXT_LOOP_PERIOD) + "y";
        assert_eq!(text_loop(&long.repeat(3)), None);
        assert_eq!(text_loop("The flight home leaves at 06:50."), None);
        assert_eq!(text_loop(""), None);
    }

    /// The plain statement of [`looping_tail`]: some period whose span the
    /// reply fills, and whose tail is its first run said over and over.
    fn looping_oracle(reply: &[u8]) -> bool {
        (1..=LONG_LOOP_PERIOD).any(|p| {
            let span = if p <= LOOP_PERIOD {
                LOOP_SPAN
            } else {
                (p * LONG_LOOP_REPEATS).max(LOOP_SPAN)
            };
            reply.len() >= span && {
                let tail = &reply[reply.len() - span..];
                tail.iter().enumerate().all(|(i, x)| *x == tail[i % p])
            }
        })
    }

    proptest! {
        /// Against the oracle, on replies made of a prefix and a run said
        /// some times over (small alphabets, so runs recur by chance too).
        #[test]
        fn looping_tail_agrees_with_its_statement(
            before in proptest::collection::vec(0u8..3, 0..40),
            run in proptest::collection::vec(0u8..3, 1..200),
            k in 1usize..7,
            extra in proptest::collection::vec(0u8..3, 0..3),
        ) {
            let mut reply = before;
            for _ in 0..k {
                reply.extend(&run);
            }
            reply.extend(&extra);
            prop_assert_eq!(looping_tail(&reply), looping_oracle(&reply));
        }

        /// Against what the loop is made of: a text said before it, a run
        /// said k >= 3 times, and a part of the run where the cut fell. The
        /// tail found covers the repeats, is periodic, and cannot be made
        /// longer at the same period.
        #[test]
        fn text_loop_covers_the_repeats(
            before in "[a-c ]{0,12}",
            run in "[a-cé]{1,6}",
            k in 3usize..9,
            cut in 0usize..6,
        ) {
            let part: String = run.chars().take(cut % run.chars().count()).collect();
            let text = format!("{before}{}{part}", run.repeat(k));
            let (at, len) = text_loop(&text).expect("a loop");
            prop_assert!(at <= before.len());
            let chars: Vec<char> = text[at..].chars().collect();
            let period = text[at..at + len].chars().count();
            prop_assert!(period <= run.chars().count());
            prop_assert!((period..chars.len()).all(|i| chars[i] == chars[i - period]));
            if let Some(prev) = text[..at].chars().last() {
                prop_assert_ne!(prev, chars[period - 1]);
            }
        }
    }
}

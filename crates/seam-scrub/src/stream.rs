//! Streaming redaction for long outputs (a build log, a program's stdout).
//!
//! Every shape is matched within one line (or one region of a very long line), except the
//! multi-line blocks. So the stream scrubber holds back exactly the last, unfinished line — or,
//! while a private-key block is open, from the block's first line — and scrubs everything
//! before it. A secret split across two chunks is therefore always seen whole, and the output
//! of a stream is byte for byte the output of scrubbing the whole text at once.

use std::io::{self, Write};

use memchr::{memmem, memrchr};

use crate::blocks::{self, Outcome, PEM_BEGIN, PUTTY_BEGIN};
use crate::engine::forced_cuts;
use crate::known::KnownSet;
use crate::{Hit, Scrubber};

/// A scrubber for text that arrives in pieces.
#[derive(Debug)]
pub struct StreamScrubber {
    scrubber: Scrubber,
    pending: Vec<u8>,
    /// Input bytes already scrubbed and given back.
    consumed: usize,
    hits: Vec<Hit>,
}

impl StreamScrubber {
    /// A stream scrubber using `scrubber`'s shapes and known values.
    pub fn new(scrubber: Scrubber) -> Self {
        StreamScrubber {
            scrubber,
            pending: Vec::new(),
            consumed: 0,
            hits: Vec::new(),
        }
    }

    /// Add a piece of text; returns the scrubbed text that is now safe to pass on.
    pub fn push(&mut self, chunk: &str) -> String {
        into_string(self.push_bytes(chunk.as_bytes()))
    }

    /// Add a piece of bytes (any split, even inside a UTF-8 character); returns the scrubbed
    /// bytes that are now safe to pass on.
    pub fn push_bytes(&mut self, chunk: &[u8]) -> Vec<u8> {
        self.pending.extend_from_slice(chunk);
        let cut = safe_prefix(&self.pending, self.scrubber.known.as_deref());
        self.emit(cut)
    }

    /// End of input: scrub and return what was held back.
    pub fn finish(&mut self) -> String {
        into_string(self.finish_bytes())
    }

    /// End of input, for bytes.
    pub fn finish_bytes(&mut self) -> Vec<u8> {
        let all = self.pending.len();
        self.emit(all)
    }

    /// Every redaction so far, with byte offsets into the whole input.
    pub fn hits(&self) -> &[Hit] {
        &self.hits
    }

    /// How many input bytes are held back, waiting for the rest of their line.
    pub fn held(&self) -> usize {
        self.pending.len()
    }

    fn emit(&mut self, cut: usize) -> Vec<u8> {
        if cut == 0 {
            return Vec::new();
        }
        let (out, hits) = self.scrubber.scrub_bytes(&self.pending[..cut]);
        self.hits.extend(hits.into_iter().map(|h| Hit {
            shape: h.shape,
            start: h.start + self.consumed,
            end: h.end + self.consumed,
        }));
        self.pending.drain(..cut);
        self.consumed += cut;
        out
    }
}

fn into_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The longest prefix of `pending` that can be scrubbed now with the same result as if the
/// whole text were known: up to the last line break or forced cut, but not past the start of
/// a key block whose end has not arrived.
///
/// With known values, also not past the start of a known value that reaches the cut, or of
/// text before the cut that begins one (known values are matched across line breaks): the
/// held text goes back to the start of that line (or region).
fn safe_prefix(pending: &[u8], known: Option<&KnownSet>) -> usize {
    let cuts = forced_cuts(pending);
    let mut cut = memrchr(b'\n', pending).map_or(0, |i| i + 1);
    if let Some(&last) = cuts.last() {
        cut = cut.max(last);
    }
    // Holding back from a block's line may cut an earlier block, or a known value: repeat
    // until nothing moves.
    loop {
        let mut hold = hold_for_blocks(pending, &cuts, cut);
        if let Some(k) = known
            && hold > 0
        {
            let from = k.hold_from(pending, &cuts, hold);
            if from < hold {
                let line_start = memrchr(b'\n', &pending[..from]).map_or(0, |i| i + 1);
                let last_cut = cuts
                    .iter()
                    .copied()
                    .filter(|&c| c <= from)
                    .max()
                    .unwrap_or(0);
                hold = line_start.max(last_cut);
            }
        }
        if hold == cut {
            return cut;
        }
        cut = hold;
    }
}

/// The start of the line (or region) of the first key block in `pending[..cut]` whose
/// outcome is not yet known, or that ends past `cut`; `cut` if there is none.
fn hold_for_blocks(pending: &[u8], cuts: &[usize], cut: usize) -> usize {
    let mut hold = cut;
    for (marker, is_pem) in [(PEM_BEGIN, true), (PUTTY_BEGIN, false)] {
        for q in memmem::find_iter(&pending[..cut], marker) {
            if q >= hold {
                break;
            }
            let next_cut = cuts.iter().copied().find(|&c| c > q);
            let (limit, more) = next_cut.map_or((pending.len(), true), |c| (c, false));
            let outcome = if is_pem {
                blocks::pem(pending, q, limit, more)
            } else {
                blocks::putty(pending, q, limit, more)
            };
            let unsafe_here = match outcome {
                Outcome::Undetermined => true,
                Outcome::Found { end, .. } => end > cut,
                Outcome::Nothing => false,
            };
            if unsafe_here {
                let line_start = memrchr(b'\n', &pending[..q]).map_or(0, |i| i + 1);
                let last_cut = cuts.iter().copied().filter(|&c| c <= q).max().unwrap_or(0);
                hold = hold.min(line_start.max(last_cut));
                break;
            }
        }
    }
    hold
}

/// A writer that scrubs everything written through it before passing it on.
///
/// Text is passed on line by line (a line is held until it ends); call [`ScrubWriter::finish`]
/// at the end to pass on the rest. Dropping the writer passes on the scrubbed rest as well,
/// ignoring errors.
#[derive(Debug)]
pub struct ScrubWriter<W: Write> {
    inner: Option<W>,
    stream: StreamScrubber,
}

impl<W: Write> ScrubWriter<W> {
    /// Scrub what is written, with `scrubber`, into `inner`.
    pub fn new(scrubber: Scrubber, inner: W) -> Self {
        ScrubWriter {
            inner: Some(inner),
            stream: StreamScrubber::new(scrubber),
        }
    }

    /// Every redaction so far, with byte offsets into everything written.
    pub fn hits(&self) -> &[Hit] {
        self.stream.hits()
    }

    /// Scrub and write what is held back, flush, and give back the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        let rest = self.stream.finish_bytes();
        let mut inner = self
            .inner
            .take()
            .ok_or_else(|| io::Error::other("scrub writer used after finish"))?;
        inner.write_all(&rest)?;
        inner.flush()?;
        Ok(inner)
    }
}

impl<W: Write> Write for ScrubWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let out = self.stream.push_bytes(buf);
        match self.inner.as_mut() {
            Some(inner) => inner.write_all(&out)?,
            None => return Err(io::Error::other("scrub writer used after finish")),
        }
        Ok(buf.len())
    }

    /// Flushes the inner writer. Text of an unfinished line stays held back: it may be
    /// the first half of a secret.
    fn flush(&mut self) -> io::Result<()> {
        match self.inner.as_mut() {
            Some(inner) => inner.flush(),
            None => Ok(()),
        }
    }
}

impl<W: Write> Drop for ScrubWriter<W> {
    fn drop(&mut self) {
        if let Some(mut inner) = self.inner.take() {
            let rest = self.stream.finish_bytes();
            // Nothing can report an error from drop; `finish` is the checked way.
            let _ = inner.write_all(&rest).and_then(|()| inner.flush());
        }
    }
}

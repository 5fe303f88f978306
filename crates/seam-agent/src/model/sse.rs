//! Server-sent events, as OpenAI-compatible servers stream a chat reply.
//!
//! Written by hand because the part we need is a dozen lines of the
//! WHATWG event-stream rules (fields `data` and `event`, comments, CRLF or
//! LF, an empty line ends an event) and it must work on byte chunks split
//! anywhere, including inside a UTF-8 sequence; the crates that do this pull
//! in a stream framework we do not otherwise need.

/// One event: its `event:` name (if any) and its `data:` lines joined by `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

/// Incremental parser: feed it chunks, take out whole events.
#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    data: Option<String>,
    event: Option<String>,
    /// Bytes of a line longer than this are refused (a server gone wrong).
    received: usize,
}

/// Longest line accepted (one streamed chunk of JSON is far smaller).
pub const MAX_LINE: usize = 4 * 1024 * 1024;

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Total bytes fed so far.
    pub fn received(&self) -> usize {
        self.received
    }

    /// Feeds one chunk; returns the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, String> {
        self.received += chunk.len();
        let mut out = Vec::new();
        for &b in chunk {
            if b == b'\n' {
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                self.line_done(&line, &mut out);
            } else {
                if self.line.len() >= MAX_LINE {
                    return Err(format!(
                        "a line of the event stream passed {MAX_LINE} bytes"
                    ));
                }
                self.line.push(b);
            }
        }
        Ok(out)
    }

    /// The stream ended: an event not yet closed by an empty line still counts.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let line = std::mem::take(&mut self.line);
        let mut out = Vec::new();
        if !line.is_empty() {
            self.line_done(&line, &mut out);
        }
        self.line_done(b"", &mut out);
        out.pop()
    }

    fn line_done(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                out.push(SseEvent {
                    event: self.event.take(),
                    data,
                });
            }
            self.event = None;
            return;
        }
        if line[0] == b':' {
            return; // a comment (keep-alive)
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.split_once(':') {
            Some((f, v)) => (f.to_owned(), v.strip_prefix(' ').unwrap_or(v).to_owned()),
            None => (text.into_owned(), String::new()),
        };
        match field.as_str() {
            "data" => match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(&value);
                }
                None => self.data = Some(value),
            },
            "event" => self.event = Some(value),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8], split: usize) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut ev = p.feed(&input[..split]).unwrap();
        ev.extend(p.feed(&input[split..]).unwrap());
        ev.extend(p.finish());
        ev
    }

    #[test]
    fn events_survive_every_split_point() {
        let input = "data: {\"a\":\"é\"}\r\n\r\n: keep-alive\n\nevent: x\ndata: one\ndata: two\n\ndata: [DONE]\n\n"
            .as_bytes();
        let want = vec![
            SseEvent {
                event: None,
                data: "{\"a\":\"é\"}".into(),
            },
            SseEvent {
                event: Some("x".into()),
                data: "one\ntwo".into(),
            },
            SseEvent {
                event: None,
                data: "[DONE]".into(),
            },
        ];
        for split in 0..=input.len() {
            assert_eq!(all(input, split), want, "split at {split}");
        }
    }

    #[test]
    fn an_unterminated_last_event_still_counts() {
        let mut p = SseParser::new();
        assert!(p.feed(b"data: tail").unwrap().is_empty());
        assert_eq!(p.finish().unwrap().data, "tail");
    }
}

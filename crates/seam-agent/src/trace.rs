//! The turn's trace: every event as one JSON line, written as it happens.
//!
//! Each line is flushed when written, so a turn that ends badly (the model
//! server dies mid-reply, the process is killed) leaves everything up to
//! that moment on disk.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;
use serde_json::{Value, json};

/// Where a turn's events go: a JSON-lines file, or nowhere.
#[derive(Debug)]
pub struct Trace {
    out: Option<(PathBuf, BufWriter<File>)>,
    started: Instant,
    error: Option<String>,
}

/// The trace file could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the trace {path}")]
pub struct TraceError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl Trace {
    /// A trace that records nothing.
    pub fn none() -> Trace {
        Trace {
            out: None,
            started: Instant::now(),
            error: None,
        }
    }

    /// A trace written to `path` (created or truncated).
    pub fn to_file(path: &Path) -> Result<Trace, TraceError> {
        let file = File::create(path).map_err(|source| TraceError {
            path: path.to_owned(),
            source,
        })?;
        Ok(Trace {
            out: Some((path.to_owned(), BufWriter::new(file))),
            started: Instant::now(),
            error: None,
        })
    }

    /// Records one event: `{"t_ms":…, "event":KIND, …fields}`. A write error
    /// is kept (see [`Trace::error`]) and stops further writes; the turn goes on.
    pub fn record<T: Serialize>(&mut self, kind: &str, fields: &T) {
        let Some((path, out)) = &mut self.out else {
            return;
        };
        let mut line = json!({
            "t_ms": self.started.elapsed().as_secs_f64() * 1000.0,
            "event": kind,
        });
        if let (Value::Object(l), Ok(Value::Object(f))) = (&mut line, serde_json::to_value(fields))
        {
            for (k, v) in f {
                l.insert(k, v);
            }
        }
        let written = serde_json::to_writer(&mut *out, &line)
            .map_err(std::io::Error::other)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush());
        if let Err(e) = written {
            self.error = Some(format!("cannot write the trace {}: {e}", path.display()));
            self.out = None;
        }
    }

    /// The first write error, if one happened.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_is_a_flushed_json_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut t = Trace::to_file(&path).unwrap();
        t.record("message", &json!({"role":"user","content":"a\nb"}));
        // Read before the trace is dropped: the line must be on disk already.
        let text = std::fs::read_to_string(&path).unwrap();
        let v: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(v["event"], "message");
        assert_eq!(v["content"], "a\nb");
        assert!(v["t_ms"].as_f64().is_some());
        t.record("final", &json!({"text":"x"}));
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);
    }
}

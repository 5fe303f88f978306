//! `files.read`: text from one of the owner's files, by lines, within a byte cap.
//!
//! The tool never opens anything itself: the toolbox hands it a file that path
//! admission opened and verified. It reads regular files only (admission refuses
//! the rest without blocking), reports a binary file as binary instead of
//! dumping it, and says in its output when it stopped early and where to resume.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::FileExt;

use seam_policy::{Access, Capability, FileAccess};
use seam_protocol::RefusalCode;
use serde::Deserialize;
use serde_json::{Value, json};

use seam_toolbox::{GovernedTool, PathParam, ToolCall, ToolDecl, ToolFailure};

/// How much of the start of a file is sniffed for NUL bytes to call it binary.
const SNIFF_BYTES: usize = 8192;

#[derive(Debug)]
pub struct FilesRead {
    decl: ToolDecl,
    max_bytes: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    #[allow(dead_code)] // admitted by the toolbox; the tool gets the open file
    path: String,
    offset: Option<u64>,
    limit: Option<u64>,
}

impl FilesRead {
    pub fn new(max_bytes: u64) -> Self {
        FilesRead {
            decl: ToolDecl {
                name: "files.read",
                version: "1",
                description: "Read a text file of the owner's by its path (e.g. docs/setup.md): returns its lines from `offset` (1-based line number) for at most `limit` lines. To answer from a file, read it with this.",
                schema: json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["path"],
                    "properties": {
                        "path": {"type": "string", "minLength": 1, "description": "file to read; relative paths are relative to the workspace, ~ is the home directory"},
                        "offset": {"type": "integer", "minimum": 1, "description": "first line to return (1-based, default 1)"},
                        "limit": {"type": "integer", "minimum": 1, "description": "most lines to return (default: all, up to the size limit)"}
                    }
                }),
                capability: Capability::FilesystemRead,
                reads: true,
                paths: vec![PathParam {
                    field: "path",
                    access: Access::Owner(FileAccess::Read),
                }],
                taints: true,
                egress: false,
                destinations: Vec::new(),
                none_named: crate::NoneNamed::Unknown,
            },
            max_bytes: max_bytes.max(1),
        }
    }
}

impl GovernedTool for FilesRead {
    fn decl(&self) -> &ToolDecl {
        &self.decl
    }

    fn run(&self, mut call: ToolCall) -> Result<Value, ToolFailure> {
        let params: Params = serde_json::from_value(call.params().clone())
            .map_err(|e| ToolFailure::new(RefusalCode::InvalidParams, e.to_string()))?;
        let admitted = call.take_read_file("path").ok_or_else(|| {
            ToolFailure::new(
                RefusalCode::ToolFailed,
                "files.read was handed no admitted file",
            )
        })?;
        let real = admitted.real.display().to_string();
        let shown = call.shown_path(&admitted.real);
        let file = admitted.file;
        let io_err = |e: std::io::Error| {
            ToolFailure::new(RefusalCode::ToolFailed, format!("reading {real}: {e}"))
        };
        let meta = file.metadata().map_err(io_err)?;
        if !meta.is_file() {
            return Err(ToolFailure::new(
                RefusalCode::NotAFile,
                format!("{real} is not a regular file"),
            ));
        }
        let size = meta.len();

        let mut head = vec![0u8; SNIFF_BYTES.min(size as usize)];
        let n = read_at_full(&file, &mut head, 0).map_err(io_err)?;
        if head[..n].contains(&0) {
            return Ok(json!({
                "path": shown,
                "size": size,
                "binary": true,
                "text": null,
                "note": format!("binary file ({size} bytes): not shown"),
            }));
        }

        let first = params.offset.unwrap_or(1);
        let limit = params.limit.unwrap_or(u64::MAX);
        let page = read_lines(file, first, limit, self.max_bytes).map_err(io_err)?;
        let text = String::from_utf8_lossy(&page.bytes);
        let lossy = matches!(text, std::borrow::Cow::Owned(_));

        let mut out = serde_json::Map::new();
        out.insert("path".into(), json!(shown));
        out.insert("size".into(), json!(size));
        out.insert("binary".into(), json!(false));
        out.insert("offset".into(), json!(first));
        out.insert("lines".into(), json!(page.lines));
        out.insert("text".into(), json!(text));
        out.insert("truncated".into(), json!(page.cut_by_size));
        out.insert("next_offset".into(), json!(page.next_offset));
        let mut notes = Vec::new();
        if page.skipped_short {
            notes.push(format!(
                "the file has fewer than {first} lines ({} in all)",
                page.total_seen
            ));
        }
        if page.cut_by_size {
            if page.cut_mid_line {
                notes.push(format!(
                    "line {first} is longer than the {} byte limit: cut there",
                    self.max_bytes
                ));
            } else if let Some(next) = page.next_offset {
                notes.push(format!(
                    "output stopped at the {} byte limit; call again with offset {next} for more",
                    self.max_bytes
                ));
            }
        } else if let Some(next) = page.next_offset {
            notes.push(format!("more lines follow; call again with offset {next}"));
        }
        if lossy {
            notes.push("invalid UTF-8 bytes were replaced with U+FFFD".to_owned());
        }
        if !notes.is_empty() {
            out.insert("note".into(), json!(notes.join("; ")));
        }
        Ok(Value::Object(out))
    }
}

fn read_at_full(file: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], at + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[derive(Debug)]
struct Page {
    bytes: Vec<u8>,
    lines: u64,
    next_offset: Option<u64>,
    cut_by_size: bool,
    cut_mid_line: bool,
    skipped_short: bool,
    total_seen: u64,
}

/// Lines `first..first+limit` (1-based), at most `max_bytes` bytes. Skipped
/// lines are streamed past without being held in memory.
fn read_lines(
    file: std::fs::File,
    first: u64,
    limit: u64,
    max_bytes: u64,
) -> std::io::Result<Page> {
    let mut r = BufReader::with_capacity(64 * 1024, file);
    let mut line_no = 1u64;
    // skip
    while line_no < first {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(Page {
                bytes: Vec::new(),
                lines: 0,
                next_offset: None,
                cut_by_size: false,
                cut_mid_line: false,
                skipped_short: true,
                total_seen: line_no - 1,
            });
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(i) => {
                r.consume(i + 1);
                line_no += 1;
            }
            None => {
                let n = buf.len();
                r.consume(n);
            }
        }
    }
    let mut bytes = Vec::new();
    let mut lines = 0u64;
    let mut line = Vec::new();
    loop {
        if lines == limit {
            let more = !r.fill_buf()?.is_empty();
            return Ok(Page {
                bytes,
                lines,
                next_offset: more.then_some(first + lines),
                cut_by_size: false,
                cut_mid_line: false,
                skipped_short: false,
                total_seen: 0,
            });
        }
        line.clear();
        // Never read more than one byte past the budget for a single line.
        let budget = max_bytes - bytes.len() as u64;
        let n = (&mut r).take(budget + 1).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(Page {
                bytes,
                lines,
                next_offset: None,
                cut_by_size: false,
                cut_mid_line: false,
                skipped_short: lines == 0 && first > 1,
                total_seen: first - 1,
            });
        }
        if line.len() as u64 > budget {
            if lines == 0 {
                // One line longer than the whole budget: give its start, cut at a
                // character boundary.
                // Step back over the continuation bytes of a UTF-8 sequence the
                // cut would split (a sequence has at most 3 of them).
                let mut cut = budget as usize;
                let mut back = 0;
                while back < 3 && cut > 0 && line[cut] & 0xC0 == 0x80 {
                    cut -= 1;
                    back += 1;
                }
                bytes.extend_from_slice(&line[..cut]);
                return Ok(Page {
                    bytes,
                    lines: 1,
                    next_offset: Some(first + 1),
                    cut_by_size: true,
                    cut_mid_line: true,
                    skipped_short: false,
                    total_seen: 0,
                });
            }
            return Ok(Page {
                bytes,
                lines,
                next_offset: Some(first + lines),
                cut_by_size: true,
                cut_mid_line: false,
                skipped_short: false,
                total_seen: 0,
            });
        }
        bytes.extend_from_slice(&line);
        lines += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, Write};

    fn file_with(content: &[u8]) -> std::fs::File {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(content).unwrap();
        f.rewind().unwrap();
        f
    }

    #[test]
    fn pages_by_line() {
        let p = read_lines(file_with(b"a\nb\nc\nd\n"), 2, 2, 1 << 20).unwrap();
        assert_eq!(p.bytes, b"b\nc\n");
        assert_eq!(p.lines, 2);
        assert_eq!(p.next_offset, Some(4));
        assert!(!p.cut_by_size);
    }

    #[test]
    fn last_page_has_no_next() {
        let p = read_lines(file_with(b"a\nb"), 2, 5, 1 << 20).unwrap();
        assert_eq!(p.bytes, b"b");
        assert_eq!(p.next_offset, None);
    }

    #[test]
    fn offset_past_the_end_says_so() {
        let p = read_lines(file_with(b"a\nb\n"), 9, 5, 1 << 20).unwrap();
        assert!(p.bytes.is_empty());
        assert!(p.skipped_short);
        assert_eq!(p.total_seen, 2);
    }

    #[test]
    fn size_cap_stops_at_a_line_boundary() {
        let p = read_lines(file_with(b"aaaa\nbbbb\ncccc\n"), 1, u64::MAX, 12).unwrap();
        assert_eq!(p.bytes, b"aaaa\nbbbb\n");
        assert!(p.cut_by_size);
        assert_eq!(p.next_offset, Some(3));
    }

    #[test]
    fn one_huge_line_is_cut_on_a_char_boundary() {
        let content = "ééééé\n".as_bytes(); // 2 bytes each
        let p = read_lines(file_with(content), 1, u64::MAX, 5).unwrap();
        assert!(p.cut_mid_line);
        assert_eq!(p.bytes, "éé".as_bytes());
    }
}

//! What `memory.codebase` answers with, where the agent reads it back: the
//! hits of a search and the files of a directory's outline.
//!
//! The gate writes these from the index's own records (`seam-memory`, which
//! the agent does not link), with each path as the model may be shown it;
//! the agent reads them with the same types, to name what the model should
//! look at. One shape, kept here, so the two ends cannot drift apart.
//! The field order is the order the model reads them in.

use serde::{Deserialize, Serialize};

/// A matching line of a file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct LineHit {
    pub line: u64,
    pub text: String,
    /// The innermost definition whose lines hold this one (`function
    /// cmdList`, `method Store.add`), when the file's symbols say.
    #[serde(rename = "in", default, skip_serializing_if = "Option::is_none")]
    pub within: Option<String>,
}

/// A file that matches a full-text search.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SearchHit {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// The best matching lines, in line order.
    pub lines: Vec<LineHit>,
    /// More lines of this file that match, not shown.
    #[serde(default)]
    pub more_lines: usize,
    /// The index's snippet, when no line holds a query word as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
}

/// A file in the outline of a directory: its top-level definitions.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct FileOutline {
    pub path: String,
    pub symbols: Vec<SymbolAt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<u64>,
    /// Top-level definitions of the file not listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_symbols: Option<usize>,
}

/// A definition as an outline lists it. The outline of one file lists whole
/// symbols (their end line and signature too); they read as this, the rest
/// left out, so one type reads both outlines.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SymbolAt {
    pub name: String,
    pub kind: String,
    pub line: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_hit_reads_back_as_it_was_written_with_its_definition_as_in() {
        let hit = SearchHit {
            path: "src/cli.js".into(),
            language: Some("javascript".into()),
            lines: vec![
                LineHit {
                    line: 7,
                    text: "const { paginate } = require('./paginate');".into(),
                    within: None,
                },
                LineHit {
                    line: 31,
                    text: "printPage(paginate(books));".into(),
                    within: Some("function cmdList".into()),
                },
            ],
            more_lines: 0,
            snippet: None,
        };
        let v = serde_json::to_value(&hit).unwrap();
        assert_eq!(
            v.to_string(),
            r#"{"path":"src/cli.js","language":"javascript","lines":[{"line":7,"text":"const { paginate } = require('./paginate');"},{"line":31,"text":"printPage(paginate(books));","in":"function cmdList"}],"more_lines":0}"#
        );
        assert_eq!(serde_json::from_value::<SearchHit>(v).unwrap(), hit);
    }

    #[test]
    fn a_whole_symbol_reads_as_an_outlines_symbol() {
        let file: FileOutline = serde_json::from_value(json!({"path": "src/cli.js",
            "indexed": true, "symbols": [{"name": "cmdList", "kind": "function", "line": 28,
            "end_line": 40, "signature": "function cmdList(opts)"}]}))
        .unwrap();
        assert_eq!(
            file.symbols,
            [SymbolAt {
                name: "cmdList".into(),
                kind: "function".into(),
                line: 28
            }]
        );
        assert!(serde_json::from_value::<FileOutline>(json!({"path": "x"})).is_err());
    }
}

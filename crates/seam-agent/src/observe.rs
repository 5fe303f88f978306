//! How a tool's result is written for the model to read.
//!
//! A result is JSON, and a text inside it (a file's lines, a program's
//! stdout) is a JSON string: every newline `\n`, every quote `\"`. A small
//! model reading a file that way misreads tables and lines (qwen2.5-coder-1.5b
//! answered from the wrong row of a markdown table it was shown as one
//! escaped string). So an object's fields are written one a line, `key:
//! value`, with a text of several lines written out as itself, below its
//! key, after the short fields. Nothing is left out but `null`, `false` and
//! empty lists, which say nothing (`binary: false`, `timed_out: false` only
//! lengthen what a small model must read past); nested objects and lists
//! stay compact JSON.
//! What the model sees is still bounded by the turn's observation budget
//! (the caller cuts the whole).

use std::fmt::Write as _;

use serde_json::Value;

/// The line after every result the model is shown. Shown a file's lines or a
/// program's output that held the answer, qwen2.5-coder-1.5b went on to run
/// Python over the same file (in 2 of the first 2 reading tasks of the dev
/// suite) instead of answering; the latest words it reads steer it most.
pub const AFTER_RESULT: &str = "If this tells you the answer, respond with it now; call a tool only for what it does not tell you.";

/// The line after a program's result that printed nothing. Its code ran and
/// printed nothing (a filter that matched no row, a result never printed), and
/// qwen2.5-coder-1.5b, told to answer from a result, answered with a number
/// from elsewhere in the conversation.
pub const AFTER_NOTHING_PRINTED: &str = "It printed nothing, so it holds no answer: check what the code filters on and what it prints, against the data, and run it again.";

/// The line that follows `value`, a tool's result, for the model.
pub fn after(value: &Value) -> &'static str {
    let printed_nothing = value.get("stdout").and_then(Value::as_str) == Some("")
        && value.get("exit_code").and_then(Value::as_i64) == Some(0);
    if printed_nothing {
        AFTER_NOTHING_PRINTED
    } else {
        AFTER_RESULT
    }
}

/// `value` as the model reads it.
pub fn render(value: &Value) -> String {
    let Value::Object(fields) = value else {
        return match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
    };
    let mut short = String::new();
    let mut texts = String::new();
    for (key, v) in fields {
        match v {
            Value::Null | Value::Bool(false) => {}
            Value::Array(a) if a.is_empty() => {}
            Value::String(s) if s.contains('\n') => {
                let _ = write!(texts, "{key}:\n{}", s);
                if !s.ends_with('\n') {
                    texts.push('\n');
                }
            }
            Value::String(s) if s.is_empty() => {
                let _ = writeln!(short, "{key}: \"\"");
            }
            Value::String(s) => {
                let _ = writeln!(short, "{key}: {s}");
            }
            other => {
                let _ = writeln!(short, "{key}: {other}");
            }
        }
    }
    short.push_str(&texts);
    short.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_one_a_line_and_texts_written_out_after_them() {
        let v = json!({
            "text": "| a | b |\n|---|---|\n| \"x\" | 2 |\n",
            "path": "notes/t.md",
            "lines": 3,
            "truncated": false,
            "next_offset": null,
            "limit_hit": [],
            "owner_files": [{"name": "a.csv"}],
        });
        assert_eq!(
            render(&v),
            "lines: 3\nowner_files: [{\"name\":\"a.csv\"}]\npath: notes/t.md\n\
             text:\n| a | b |\n|---|---|\n| \"x\" | 2 |"
        );
        // A flag that is set is said.
        assert_eq!(render(&json!({"truncated": true})), "truncated: true");
    }

    #[test]
    fn a_value_that_is_no_object_is_written_as_itself() {
        assert_eq!(render(&json!("plain")), "plain");
        assert_eq!(render(&json!([1, 2])), "[1,2]");
        assert_eq!(render(&json!(7)), "7");
        assert_eq!(render(&json!({})), "");
    }

    #[test]
    fn a_program_that_printed_nothing_is_told_so() {
        assert_eq!(
            after(&json!({"exit_code": 0, "stdout": "", "stderr": ""})),
            AFTER_NOTHING_PRINTED
        );
        assert_eq!(
            after(&json!({"exit_code": 0, "stdout": "8.5\n"})),
            AFTER_RESULT
        );
        // A failure says why in its stderr; a file's text is no program's.
        assert_eq!(
            after(&json!({"exit_code": 1, "stdout": "", "stderr": "E"})),
            AFTER_RESULT
        );
        assert_eq!(after(&json!({"text": ""})), AFTER_RESULT);
    }

    #[test]
    fn empty_output_of_a_program_is_still_said() {
        // stdout "" is a short field: the model sees that nothing was printed.
        let v = json!({"exit_code": 0, "stdout": "", "stderr": ""});
        assert_eq!(render(&v), "exit_code: 0\nstderr: \"\"\nstdout: \"\"");
    }
}

//! FTS5 queries made from words: a caller's text never reaches FTS5's query syntax.

use crate::MemoryError;

/// The longest query accepted, in bytes; the rest is ignored.
const MAX_QUERY_BYTES: usize = 512;
/// The most words a query uses.
const MAX_TERMS: usize = 16;

/// A query as words: each whitespace-separated word becomes an FTS5 phrase (so `parse_config`
/// matches the adjacent tokens `parse config`, and `"`, `*`, `:`, `(`, `-` and `NEAR` mean
/// nothing special), and the phrases are ANDed. A word ending in `*` is a prefix search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FtsQuery {
    /// The FTS5 MATCH expression.
    pub expr: String,
    /// The words, lower-cased, for finding matching lines.
    pub terms: Vec<String>,
}

impl FtsQuery {
    pub fn parse(text: &str) -> Result<FtsQuery, MemoryError> {
        let mut end = text.len().min(MAX_QUERY_BYTES);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let mut parts = Vec::new();
        let mut terms = Vec::new();
        for word in text[..end].split_whitespace() {
            let (word, prefix) = match word.strip_suffix('*') {
                Some(w) => (w, true),
                None => (word, false),
            };
            if !word.chars().any(char::is_alphanumeric) {
                continue;
            }
            let quoted = format!("\"{}\"", word.replace('"', "\"\""));
            parts.push(if prefix { format!("{quoted}*") } else { quoted });
            terms.push(word.to_lowercase());
            if parts.len() == MAX_TERMS {
                break;
            }
        }
        if parts.is_empty() {
            return Err(MemoryError::EmptyQuery);
        }
        Ok(FtsQuery {
            expr: parts.join(" "),
            terms,
        })
    }

    /// How many of the query's words `line` contains (case-insensitively).
    pub fn words_in(&self, line: &str) -> usize {
        let lower = line.to_lowercase();
        self.terms
            .iter()
            .filter(|t| lower.contains(t.as_str()))
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_is_quoted_away() {
        let q = FtsQuery::parse(r#"foo( "bar" NEAR baz* -x :: "#).unwrap();
        assert_eq!(q.expr, r#""foo(" """bar""" "NEAR" "baz"* "-x""#);
        assert_eq!(q.terms, ["foo(", "\"bar\"", "near", "baz", "-x"]);
    }

    #[test]
    fn empty_queries_are_refused() {
        assert!(matches!(
            FtsQuery::parse("  "),
            Err(MemoryError::EmptyQuery)
        ));
        assert!(matches!(
            FtsQuery::parse(":: * ()"),
            Err(MemoryError::EmptyQuery)
        ));
    }
}

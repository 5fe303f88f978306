//! FTS5 queries made from words: a caller's text never reaches FTS5's query syntax.

use crate::MemoryError;

/// The longest query accepted, in bytes; the rest is ignored.
const MAX_QUERY_BYTES: usize = 512;
/// The most words a query uses.
const MAX_TERMS: usize = 16;

/// A query as words: each whitespace-separated word becomes an FTS5 phrase (so `parse_config`
/// matches the adjacent tokens `parse config`, and `"`, `*`, `:`, `(`, `-` and `NEAR` mean
/// nothing special), and the phrases are ANDed. A word ending in `*` is a prefix search.
/// When no row holds every word, a search asks again for rows holding any of them
/// ([`FtsQuery::any_expr`], ranked by BM25, so the rows with the most and rarest words come
/// first): a model asks "staging database maintenance window" of notes that say "the staging
/// database moved" and "maintenance window for kestrel-db-2", and finding nothing it guessed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FtsQuery {
    /// The FTS5 MATCH expression: every word.
    pub expr: String,
    /// The same words ORed: any of them. `None` for a one-word query.
    pub any_expr: Option<String>,
    /// The words, lower-cased, for finding matching lines.
    pub terms: Vec<String>,
}

impl FtsQuery {
    pub fn parse(text: &str) -> Result<FtsQuery, MemoryError> {
        let mut parts = Vec::new();
        let mut terms = Vec::new();
        for word in seam_term::head_bytes(text, MAX_QUERY_BYTES).split_whitespace() {
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
            any_expr: (parts.len() > 1).then(|| parts.join(" OR ")),
            terms,
        })
    }

    /// The MATCH expressions to try in order, with whether each asks for every word: all the
    /// words, then any of them.
    pub fn tries(&self) -> impl Iterator<Item = (&str, Matched)> {
        std::iter::once((self.expr.as_str(), Matched::Every))
            .chain(self.any_expr.as_deref().map(|e| (e, Matched::Some)))
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

/// Whether a search's hits hold every word of the query or only some of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Matched {
    /// Every word (or nothing matched at all).
    #[default]
    Every,
    /// No row held every word; these hold some.
    Some,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_is_quoted_away() {
        let q = FtsQuery::parse(r#"foo( "bar" NEAR baz* -x :: "#).unwrap();
        assert_eq!(q.expr, r#""foo(" """bar""" "NEAR" "baz"* "-x""#);
        assert_eq!(q.terms, ["foo(", "\"bar\"", "near", "baz", "-x"]);
        assert_eq!(
            q.any_expr.as_deref(),
            Some(r#""foo(" OR """bar""" OR "NEAR" OR "baz"* OR "-x""#)
        );
        assert_eq!(FtsQuery::parse("one").unwrap().any_expr, None);
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

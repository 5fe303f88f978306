//! Bounds on every result: a default when none is asked for, a maximum that is never exceeded.

/// A result bound: how many items a query returns when the caller says nothing, and the most it
/// ever returns whatever the caller asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub default: usize,
    pub max: usize,
}

impl Limit {
    pub const fn new(default: usize, max: usize) -> Limit {
        Limit { default, max }
    }

    /// The limit in force for a request: the default when none was asked for, at least 1, at
    /// most the maximum.
    pub fn effective(self, requested: Option<usize>) -> usize {
        requested.unwrap_or(self.default).clamp(1, self.max.max(1))
    }

    /// True when the request asked for more than the maximum (the answer says so).
    pub fn clamped(self, requested: Option<usize>) -> bool {
        requested.is_some_and(|r| r > self.max)
    }
}

/// Cuts `items` to `limit`, returning whether anything was cut. Queries fetch `limit + 1` rows,
/// so a cut is known without counting everything.
pub(crate) fn cut<T>(items: &mut Vec<T>, limit: usize) -> bool {
    if items.len() > limit {
        items.truncate(limit);
        true
    } else {
        false
    }
}

/// `text` cut to at most `max` bytes on a character boundary, with `…` when cut.
pub(crate) fn clip(text: &str, max: usize) -> (String, bool) {
    let kept = seam_term::head_bytes(text, max);
    if kept.len() == text.len() {
        return (text.to_owned(), false);
    }
    (format!("{kept}…"), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effective_limits() {
        let l = Limit::new(10, 50);
        assert_eq!(l.effective(None), 10);
        assert_eq!(l.effective(Some(0)), 1);
        assert_eq!(l.effective(Some(20)), 20);
        assert_eq!(l.effective(Some(500)), 50);
        assert!(l.clamped(Some(51)));
        assert!(!l.clamped(Some(50)));
    }

    #[test]
    fn clip_on_char_boundary() {
        assert_eq!(clip("abc", 5), ("abc".to_owned(), false));
        assert_eq!(clip("ééé", 3), ("é…".to_owned(), true));
    }
}

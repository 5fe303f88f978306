//! The key classification as it was first written: sub-words as `String`s, list look-ups by
//! linear search, provider names in a `HashSet`. The table-driven version in the parent
//! module must answer exactly what this answers; the property tests there check it.

use std::collections::HashSet;
use std::sync::LazyLock;

use super::{
    CREDENTIAL_SUFFIXES, CREDENTIAL_WORDS, ID_WORDS, INDEX_WORDS, PASSWORD_WORDS, PUBLIC_WORDS,
    SPACE_KEYS,
};

static PROVIDERS: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| crate::providers::names().collect());

pub(super) fn is_provider(word: &str) -> bool {
    if PROVIDERS.contains(word) {
        return true;
    }
    (5..word.len()).any(|n| word.is_char_boundary(n) && PROVIDERS.contains(&word[..n]))
}

/// What the key says: (password, credential, provider, public).
pub(super) type Class = (bool, bool, bool, bool);

pub(super) fn sub_words(word: &[u8], out: &mut Vec<String>) {
    let mut current = String::new();
    let mut prev: Option<u8> = None;
    for &b in word {
        let boundary = match prev {
            None => false,
            Some(p) => {
                !b.is_ascii_alphanumeric()
                    || (p.is_ascii_lowercase() && b.is_ascii_uppercase())
                    || (p.is_ascii_alphabetic() && b.is_ascii_digit() && current.len() > 2)
            }
        };
        if boundary && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        if b.is_ascii_alphanumeric() {
            current.push(char::from(b.to_ascii_lowercase()));
        }
        prev = Some(b);
    }
    if !current.is_empty() {
        out.push(current);
    }
}

pub(super) fn joined(word: &[u8]) -> String {
    word.iter()
        .filter(|b| b.is_ascii_alphanumeric())
        .map(|b| char::from(b.to_ascii_lowercase()))
        .collect()
}

fn is_credential_word(s: &str) -> bool {
    CREDENTIAL_WORDS.contains(&s)
        || CREDENTIAL_SUFFIXES
            .iter()
            .any(|suf| s.len() > suf.len() && s.ends_with(suf))
        || (s.len() > 3 && s.ends_with("key") && !s.ends_with("monkey"))
}

fn is_password_word(s: &str) -> bool {
    PASSWORD_WORDS.contains(&s) || s.ends_with("password") || s.ends_with("passwd")
}

pub(super) fn classify(words: &[&[u8]]) -> Class {
    let (mut password, mut credential, mut provider, mut public) = (false, false, false, false);
    let mut subs = Vec::new();
    for (n, word) in words.iter().enumerate() {
        subs.clear();
        sub_words(word, &mut subs);
        if n == 0
            && let Some(last) = subs.last()
            && PUBLIC_WORDS.contains(&last.trim_end_matches(|c: char| c.is_ascii_digit()))
        {
            public = true;
        }
        let trim = |s: &str| s.trim_end_matches(|c: char| c.is_ascii_digit()).to_owned();
        if n == 0
            && let Some(first) = subs.first()
            && ["public", "pub", "publishable"].contains(&trim(first).as_str())
        {
            public = true;
        }
        // An index word before a last `key` (`cache_key`), or before a nearest word `key`
        // (`cache key`).
        if n == 0
            && subs.len() >= 2
            && INDEX_WORDS.contains(&trim(&subs[0]).as_str())
            && ["key", "keys"].contains(&trim(&subs[subs.len() - 1]).as_str())
        {
            public = true;
        }
        if n == 1
            && ["key", "keys"].contains(&joined(words[0]).as_str())
            && subs
                .last()
                .is_some_and(|l| INDEX_WORDS.contains(&trim(l).as_str()))
        {
            public = true;
        }
        let whole = joined(word);
        for s in subs.iter().chain(std::iter::once(&whole)) {
            let s = s.trim_end_matches(|c: char| c.is_ascii_digit());
            if s.is_empty() {
                continue;
            }
            if matches!(s, "h" | "sha" | "md" | "checksum" | "integrity") {
                public = true;
            }
            if is_password_word(s) {
                password = true;
            } else if is_credential_word(s) {
                credential = true;
            }
            if s.len() >= 2 && is_provider(s) {
                provider = true;
            }
        }
    }
    (password, credential, provider, public)
}

pub(super) fn may_stand_before_a_space(word: &[u8], provider: bool) -> bool {
    let nearest = String::from_utf8_lossy(word).to_ascii_lowercase();
    let mut subs = Vec::new();
    sub_words(word, &mut subs);
    let nearest_is_id = subs.last().is_some_and(|l| ID_WORDS.contains(&l.as_str()));
    SPACE_KEYS.contains(&nearest.as_str())
        || subs
            .last()
            .is_some_and(|l| SPACE_KEYS.contains(&l.as_str()))
        || is_provider(&joined(word))
        || (nearest_is_id && provider)
}

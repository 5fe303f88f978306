//! Secret scrubbing: the filter every governed tool's output and every refusal passes before it
//! leaves the toolbox (`Toolbox::call`, step 5).
//!
//! **What it owns.** The published shape set ([`shapes`]): a stable id, a one-line description
//! and a category for each kind of credential it recognises; redaction of those shapes
//! (`[REDACTED:<shape-id>]` in place of the secret itself, every other byte unchanged,
//! overlapping matches merged); removal of *known values* by identity
//! ([`Scrubber::with_known_values`], below); and streaming redaction ([`StreamScrubber`],
//! [`ScrubWriter`]) that gives exactly the one-shot result however the text is split; and
//! scrubbing a JSON value ([`Scrubber::scrub_json`]): every string, object keys included, the
//! one way the gate and the agent's local tools scrub what leaves them.
//!
//! **Known values.** A known value is searched for as it is; in base64 and base64url at each
//! of the three alignments it can have inside a longer encoded text (`base64("user:" +
//! token)`), and in base32 at each of its five, by the characters of the encoding that depend
//! on the value alone (a match is widened to the whole encoded run); URL-encoded and fully
//! percent-encoded (`%XX` for every byte, either case); in hex; and by its parts: any run of
//! [`PART_LEN`] (10) or more consecutive bytes of a value of at least twice that length that
//! looks machine-made, extended as far as the text agrees with the value, so either half of a
//! token goes. All of it is matched in the *normalised* text: line breaks and soft breaks
//! (`=` or `\` before a break) dropped, `\uXXXX`, `\xXX` and HTML character references
//! decoded, default-ignorable characters (zero-width, soft hyphen, BOM, variation
//! selectors…) dropped and compatibility forms folded (NFKD, which has NFKC's equivalence);
//! the normaliser keeps a map back to the original bytes, so a redaction covers exactly the
//! original bytes that carried the value. Out of reach, and said so in the published shape:
//! an encoding (hex, base64, base32) of only part of a value, parts of a value shorter than
//! twice [`PART_LEN`], parts made of words, other escapes
//! (quoted-printable `=XX`, octal, Punycode, ROT13…), a value with its characters reordered
//! or interleaved with others, and anything compressed, encrypted or hashed.
//!
//! **Why the shapes are not normalised.** The shape matchers read the text as it is: their
//! keywords, contexts and line structure (a secret never spans lines) are what make them
//! precise, and joining lines or decoding escapes would let a value borrow a context from the
//! next line. A shape hidden by an escape is left to the keeper's known values. The
//! normaliser runs only when the scrubber has known values; its fast path copies runs of
//! plain ASCII whole.
//!
//! **How it is designed.** One pass: an Aho-Corasick automaton over every keyword (provider
//! prefixes such as `ghp_` or `AKIA`, credential words such as `token` or `password`, the
//! names of several hundred providers, and block markers) finds where to look; the regex of
//! each shape whose keyword hit runs only on the line around the hit, once per line. Shapes
//! come in three families: format shapes (a prefix, a length, a checksum such as GitHub's
//! CRC32), context shapes (a value next to a credential word or a provider's name, judged by
//! entropy and by placeholder, variable-reference and word tests), and blocks (PEM, OpenSSH,
//! PGP and PuTTY private keys, possibly multi-line). The compiled set is built once, on first
//! use, and shared: a [`Scrubber`] is cheap to clone and to share between threads.
//!
//! **What it must never do.** Let a secret through because it was split across two chunks;
//! change a byte that is not part of a redaction; keep a known value where its `Debug` output
//! could show it; print anything.

mod blocks;
mod context;
mod engine;
mod json;
mod known;
mod normalise;
mod providers;
mod rules;
mod stream;
mod value;

use std::fmt;
use std::io::Write;
use std::sync::{Arc, LazyLock};

pub use known::{KNOWN_VALUE_SHAPE, MIN_KNOWN_VALUE_LEN, PART_LEN, SecretValue};
pub use stream::{ScrubWriter, StreamScrubber};

use engine::ENGINE;
use known::KnownSet;

/// One redaction: the shape that fired and the byte range of the input it covered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub shape: &'static str,
    pub start: usize,
    pub end: usize,
}

/// The result of scrubbing a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scrubbed {
    pub text: String,
    pub hits: Vec<Hit>,
}

impl Scrubbed {
    /// The ids of the shapes that fired, sorted and unique.
    pub fn shapes(&self) -> Vec<&'static str> {
        let mut v: Vec<_> = self.hits.iter().map(|h| h.shape).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// What kind of credential a shape is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// Cloud providers and infrastructure (AWS, GCP, Azure, DigitalOcean, Vault, …).
    Cloud,
    /// Source hosting (GitHub, GitLab, Bitbucket, Sourcegraph).
    SourceHosting,
    /// Package registries (npm, PyPI, the Rust crate registry, RubyGems, NuGet, Docker Hub…).
    PackageRegistry,
    /// Chat and webhooks (Slack, Discord, Telegram, Teams, Twilio).
    Chat,
    /// Payment (Stripe, Square, PayPal/Braintree, Shopify…).
    Payment,
    /// AI providers (OpenAI, Anthropic, Hugging Face, Groq, Replicate…).
    Ai,
    /// Other SaaS APIs.
    Saas,
    /// Monitoring and error tracking (Sentry, New Relic, Datadog, Grafana…).
    Observability,
    /// Private keys (PEM, OpenSSH, PGP, PuTTY, age).
    Key,
    /// Connection strings and URLs with embedded passwords.
    ConnectionString,
    /// Generic shapes: JWTs, Authorization headers, password and secret assignments.
    Generic,
    /// A value the scrubber was told to remove by identity.
    Known,
}

impl Category {
    /// A stable lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Cloud => "cloud",
            Category::SourceHosting => "source-hosting",
            Category::PackageRegistry => "package-registry",
            Category::Chat => "chat",
            Category::Payment => "payment",
            Category::Ai => "ai",
            Category::Saas => "saas",
            Category::Observability => "observability",
            Category::Key => "private-key",
            Category::ConnectionString => "connection-string",
            Category::Generic => "generic",
            Category::Known => "known-value",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One published shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// Stable id, used in `[REDACTED:<id>]` and in the envelope's `scrubbed` list.
    pub id: &'static str,
    /// One line saying what it recognises.
    pub description: &'static str,
    pub category: Category,
}

static SHAPES: LazyLock<Vec<Shape>> = LazyLock::new(|| {
    let mut v: Vec<Shape> = rules::RULES
        .iter()
        .map(|r| Shape {
            id: r.id,
            description: r.description,
            category: r.category,
        })
        .chain(rules::CONTEXT_SHAPES.iter().map(|c| Shape {
            id: c.id,
            description: c.description,
            category: c.category,
        }))
        .collect();
    v.push(Shape {
        id: KNOWN_VALUE_SHAPE,
        description: "a value the scrubber was given to remove by identity: raw, base64/base64url/base32 at any alignment, URL- or fully percent-encoded, hex, or any machine-made run of 10+ of its bytes; after dropping line breaks and invisible characters, decoding \\u/\\x escapes and HTML references, and NFKC folding. Not caught: an encoding (hex, base64, base32) of only part of it, part of a value under 20 bytes, other escapes (quoted-printable =XX, octal, punycode), reordered or interleaved characters, compression, encryption, hashing",
        category: Category::Known,
    });
    v
});

/// The published shape set: every shape the scrubber can redact.
pub fn shapes() -> &'static [Shape] {
    &SHAPES
}

/// What went wrong building a scrubber.
#[derive(Debug, thiserror::Error)]
pub enum ScrubError {
    #[error(
        "known value #{index} (or one of its lines) is {len} bytes long; at least {min} are needed, or it would redact ordinary text"
    )]
    KnownValueTooShort {
        index: usize,
        len: usize,
        min: usize,
    },
    #[error("building the known-value automaton failed: {0}")]
    Automaton(String),
}

/// The scrubber. Cheap to share (`Send + Sync`) and to clone; the compiled shape set is built
/// once per process, on first use.
#[derive(Debug, Default, Clone)]
pub struct Scrubber {
    known: Option<Arc<KnownSet>>,
}

impl Scrubber {
    /// A scrubber with the default shape set and no known values.
    pub fn new() -> Self {
        Scrubber { known: None }
    }

    /// A scrubber that also removes `values` by identity, in every form (see the crate doc).
    pub fn with_known_values<I, V>(values: I) -> Result<Self, ScrubError>
    where
        I: IntoIterator<Item = V>,
        V: Into<SecretValue>,
    {
        let values: Vec<SecretValue> = values.into_iter().map(Into::into).collect();
        Ok(Scrubber {
            known: KnownSet::build(&values)?.map(Arc::new),
        })
    }

    /// Build the compiled shape set now rather than on the first scrub.
    pub fn warm_up(&self) {
        LazyLock::force(&ENGINE);
    }

    /// The number of keywords in the prefilter automaton.
    pub fn keyword_count(&self) -> usize {
        ENGINE.keyword_count()
    }

    /// Scrub a text.
    pub fn scrub(&self, text: &str) -> Scrubbed {
        let spans = ENGINE.scan(text.as_bytes(), self.known.as_deref());
        // Redactions start and end on ASCII bytes or on whole known values, so they fall on
        // character boundaries and the output is built from pieces of the input and ASCII
        // markers, with no need to check it again. (Should a boundary ever fall inside a
        // character, the output is checked and repaired as for bytes.)
        if spans
            .iter()
            .all(|s| text.is_char_boundary(s.start) && text.is_char_boundary(s.end))
        {
            let mut out = String::with_capacity(text.len() + spans.len() * 24);
            let mut last = 0;
            let mut hits = Vec::with_capacity(spans.len());
            for s in spans {
                out.push_str(&text[last..s.start]);
                out.push_str("[REDACTED:");
                out.push_str(s.shape);
                out.push(']');
                last = s.end;
                hits.push(Hit {
                    shape: s.shape,
                    start: s.start,
                    end: s.end,
                });
            }
            out.push_str(&text[last..]);
            return Scrubbed { text: out, hits };
        }
        let (bytes, hits) = Self::assemble(text.as_bytes(), spans);
        let text = String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Scrubbed { text, hits }
    }

    /// Scrub bytes (output of a program, say); returns the scrubbed bytes and the hits.
    pub fn scrub_bytes(&self, text: &[u8]) -> (Vec<u8>, Vec<Hit>) {
        Self::assemble(text, ENGINE.scan(text, self.known.as_deref()))
    }

    /// The text with each span replaced by its marker, and the hits.
    fn assemble(text: &[u8], spans: Vec<engine::Span>) -> (Vec<u8>, Vec<Hit>) {
        let mut out = Vec::with_capacity(text.len() + spans.len() * 24);
        let mut last = 0;
        let mut hits = Vec::with_capacity(spans.len());
        for s in spans {
            out.extend_from_slice(&text[last..s.start]);
            out.extend_from_slice(b"[REDACTED:");
            out.extend_from_slice(s.shape.as_bytes());
            out.push(b']');
            last = s.end;
            hits.push(Hit {
                shape: s.shape,
                start: s.start,
                end: s.end,
            });
        }
        out.extend_from_slice(&text[last..]);
        (out, hits)
    }

    /// A stream scrubber with this scrubber's shapes and known values.
    pub fn stream(&self) -> StreamScrubber {
        StreamScrubber::new(self.clone())
    }

    /// A writer that scrubs into `inner`.
    pub fn writer<W: Write>(&self, inner: W) -> ScrubWriter<W> {
        ScrubWriter::new(self.clone(), inner)
    }
}

#[cfg(test)]
mod tests;

//! Evaluate the scrubber on a labelled secrets corpus (JSON lines with `text`, `secrets`,
//! `kind`, `label` and `neg_class`), the way the held-out check scores it:
//!
//! - recall: the share of positives whose secrets are *all* gone from the output;
//! - benign FPR: the share of benign negatives whose output differs from the input;
//! - near-miss rate: the same for near-miss negatives (reported, not a failure).
//!
//! `cargo run --release -p seam-scrub --example corpus_eval -- [PATH] [--details]`
//! (PATH defaults to `../shared/bench-data/secrets/corpus-dev.jsonl` from the repository root).
//! `--details` also lists every missed positive and every altered benign line.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::process::ExitCode;

use seam_scrub::Scrubber;

const DEFAULT: &str = "../shared/bench-data/secrets/corpus-dev.jsonl";

fn main() -> ExitCode {
    let mut path = DEFAULT.to_owned();
    let mut details = false;
    for a in std::env::args().skip(1) {
        if a == "--details" {
            details = true;
        } else {
            path = a;
        }
    }
    match run(&path, details) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(io::stderr(), "corpus_eval: {path}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(path: &str, details: bool) -> Result<(), Box<dyn std::error::Error>> {
    let corpus = std::fs::read_to_string(path)?;
    let scrubber = Scrubber::new();
    let mut out = io::stdout().lock();
    let (mut pos, mut pos_ok) = (0usize, 0usize);
    let (mut benign, mut benign_fp) = (0usize, 0usize);
    let (mut near, mut near_flagged) = (0usize, 0usize);
    let mut missed_by_kind: BTreeMap<String, usize> = BTreeMap::new();
    let mut shapes_fired: BTreeMap<&'static str, usize> = BTreeMap::new();
    for (n, line) in corpus.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("line {}: {e}", n + 1))?;
        let text = row["text"]
            .as_str()
            .ok_or_else(|| format!("line {}: no text", n + 1))?;
        let kind = row["kind"].as_str().unwrap_or("?");
        let result = scrubber.scrub(text);
        for s in result.shapes() {
            *shapes_fired.entry(s).or_default() += 1;
        }
        match row["label"].as_str() {
            Some("pos") => {
                pos += 1;
                let secrets: Vec<&str> = row["secrets"]
                    .as_array()
                    .map(|a| a.iter().filter_map(|s| s.as_str()).collect())
                    .unwrap_or_default();
                let left: Vec<&str> = secrets
                    .iter()
                    .copied()
                    .filter(|s| result.text.contains(s))
                    .collect();
                if left.is_empty() {
                    pos_ok += 1;
                } else {
                    *missed_by_kind.entry(kind.to_owned()).or_default() += 1;
                    if details {
                        writeln!(
                            out,
                            "MISS {kind}: {left:?}\n    in {text:?}\n    -> {:?}",
                            result.text
                        )?;
                    }
                }
            }
            _ => {
                let altered = result.text != text;
                if row["neg_class"].as_str() == Some("benign") {
                    benign += 1;
                    if altered {
                        benign_fp += 1;
                        if details {
                            writeln!(out, "FP {kind}: {text:?}\n    -> {:?}", result.text)?;
                        }
                    }
                } else {
                    near += 1;
                    near_flagged += usize::from(altered);
                }
            }
        }
    }
    let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    writeln!(out, "corpus: {path}")?;
    writeln!(out, "shapes published: {}", seam_scrub::shapes().len())?;
    writeln!(
        out,
        "recall (all secrets removed): {:.3} ({pos_ok}/{pos})",
        ratio(pos_ok, pos)
    )?;
    writeln!(
        out,
        "benign FPR (output altered):  {:.3} ({benign_fp}/{benign})",
        ratio(benign_fp, benign)
    )?;
    writeln!(
        out,
        "near-miss flagged:            {:.3} ({near_flagged}/{near})",
        ratio(near_flagged, near)
    )?;
    writeln!(out, "misses by kind ({} kinds):", missed_by_kind.len())?;
    for (k, c) in &missed_by_kind {
        writeln!(out, "  {k}: {c}")?;
    }
    if details {
        writeln!(out, "shapes fired (rows):")?;
        for (s, c) in &shapes_fired {
            writeln!(out, "  {s}: {c}")?;
        }
    }
    Ok(())
}

//! The labelled corpus, scored the way the held-out check scores it: a positive counts when
//! none of its secrets survive; a benign negative counts against when its output differs.

use std::path::PathBuf;

use seam_scrub::Scrubber;

/// Recall, benign false-positive rate and near-miss rate on a corpus file (JSON lines).
fn score(path: &std::path::Path) -> (usize, usize, usize, usize, usize, usize) {
    let corpus = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("the labelled corpus must be at {}: {e}", path.display()));
    let scrubber = Scrubber::new();
    let (mut pos, mut pos_ok, mut benign, mut benign_fp, mut near, mut near_flagged) =
        (0usize, 0usize, 0usize, 0usize, 0usize, 0usize);
    for (n, line) in corpus
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let row: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{}:{}: not JSON: {e}", path.display(), n + 1));
        let text = row["text"]
            .as_str()
            .unwrap_or_else(|| panic!("line {}: no text", n + 1));
        let out = scrubber.scrub(text).text;
        if row["label"] == "pos" {
            pos += 1;
            let secrets = row["secrets"].as_array().cloned().unwrap_or_default();
            pos_ok += usize::from(
                secrets
                    .iter()
                    .filter_map(|s| s.as_str())
                    .all(|s| !out.contains(s)),
            );
        } else if row["neg_class"] == "benign" {
            benign += 1;
            benign_fp += usize::from(out != text);
        } else {
            near += 1;
            near_flagged += usize::from(out != text);
        }
    }
    (pos, pos_ok, benign, benign_fp, near, near_flagged)
}

/// The independent corpus in this crate (see `corpus/README.md`): synthetic values of
/// documented formats and benign look-alikes, made apart from the development half.
#[test]
fn recall_and_benign_false_positive_rate_on_the_independent_corpus() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/corpus-independent.jsonl");
    let (pos, pos_ok, benign, benign_fp, _, _) = score(&path);
    assert!(
        pos >= 300 && benign >= 150,
        "corpus too small: {pos} positives, {benign} benign"
    );
    let recall = pos_ok as f64 / pos as f64;
    let fpr = benign_fp as f64 / benign as f64;
    assert!(
        recall >= 0.95,
        "recall {recall:.3} ({pos_ok}/{pos}) is below 0.95; benign FPR {fpr:.3}"
    );
    assert!(
        fpr <= 0.01,
        "benign FPR {fpr:.3} ({benign_fp}/{benign}) is above 0.01; recall {recall:.3}"
    );
}

fn corpus_path() -> PathBuf {
    // crates/seam-scrub → the repository root → its sibling shared/.
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/bench-data/secrets/corpus-dev.jsonl")
}

#[test]
fn recall_and_benign_false_positive_rate_on_the_corpus() {
    let (pos, pos_ok, benign, benign_fp, near, near_flagged) = score(&corpus_path());
    assert!(
        pos > 500 && benign > 100,
        "corpus too small: {pos} positives, {benign} benign"
    );
    let recall = pos_ok as f64 / pos as f64;
    let fpr = benign_fp as f64 / benign as f64;
    let near_rate = near_flagged as f64 / near.max(1) as f64;
    assert!(
        recall >= 0.90,
        "recall {recall:.3} ({pos_ok}/{pos}) is below 0.90; benign FPR {fpr:.3}, near-miss {near_rate:.3}"
    );
    assert!(
        fpr <= 0.02,
        "benign FPR {fpr:.3} ({benign_fp}/{benign}) is above 0.02; recall {recall:.3}, near-miss {near_rate:.3}"
    );
}

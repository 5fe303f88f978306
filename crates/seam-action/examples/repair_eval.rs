//! Measures the parser on the two corpora of real model replies.
//!
//! `cargo run -p seam-action --example repair_eval -- [BENCH_DATA_DIR]`
//! (default: the shared bench data beside the workspace). Prints, as
//! markdown tables, the toolcalls recovery rate per category and the
//! seam-actions dispatch rate per model and per category.

#[path = "../tests/support/mod.rs"]
mod support;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use support::{NullToolCatalog, Tally, actions_eval, bench_data, rate, toolcalls_eval};

fn table(out: &mut String, title: &str, t: &Tally) {
    let _ = writeln!(out, "| {title} | recovered | rate |\n|---|---:|---:|");
    for (k, (h, n)) in &t.by {
        let _ = writeln!(out, "| {k} | {h}/{n} | {:.0}% |", 100.0 * rate((*h, *n)));
    }
    let (h, n) = t.total();
    let _ = writeln!(
        out,
        "| **all** | **{h}/{n}** | **{:.1}%** |\n",
        100.0 * rate((h, n))
    );
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(bench_data);
    let mut out = String::new();
    for (label, mode) in [
        ("--tools \"\"", NullToolCatalog::Empty),
        ("no --tools (14 names)", NullToolCatalog::Default14),
    ] {
        let tc = toolcalls_eval(&dir.join("toolcalls/corpus-dev.jsonl"), mode);
        let _ = writeln!(
            out,
            "## toolcalls: intended call recovered (null-tool cases: {label})\n"
        );
        table(&mut out, "category", &tc.by_category);
        if mode == NullToolCatalog::Empty {
            let (h, n) = tc.literal_null_arguments;
            let (e, _) = tc.empty_null_arguments;
            let _ = writeln!(
                out,
                "Other readings of a null intended `arguments`: equal to the params literally \
                 {h}/{n} ({:.1}%); \"no arguments\" ({{}}) {e}/{n} ({:.1}%)\n",
                100.0 * rate((h, n)),
                100.0 * rate((e, n))
            );
            for (id, cat, got) in &tc.misses {
                let _ = writeln!(out, "- miss {id} ({cat}): {got}");
            }
            out.push('\n');
        }
    }
    let sa = actions_eval(&dir.join("seam-actions/corpus-dev.jsonl"));
    let _ = writeln!(
        out,
        "## seam-actions: dispatched correctly after parse + route\n"
    );
    let _ = writeln!(
        out,
        "| model | as written | after parse + route |\n|---|---:|---:|"
    );
    for (model, (h, n)) in &sa.by_model.by {
        let (e, _) = sa.exact_as_written.by[model];
        let _ = writeln!(
            out,
            "| {model} | {e}/{n} ({:.0}%) | {h}/{n} ({:.0}%) |",
            100.0 * rate((e, *n)),
            100.0 * rate((*h, *n))
        );
    }
    let _ = writeln!(out);
    table(
        &mut out,
        "category (a reply counts in each of its categories)",
        &sa.by_category,
    );
    let _ = writeln!(
        out,
        "wrong tool dispatched and not named by the reply: {} {:?}\nwrong tool dispatched (named by the reply): {}\n",
        sa.wrong_unnamed.len(),
        sa.wrong_unnamed,
        sa.wrong_named
    );
    if std::env::var_os("SEAM_EVAL_DETAILS").is_some() {
        for (id, hit, got) in &sa.details {
            let _ = writeln!(out, "- {} {id}: {got}", if *hit { "HIT " } else { "miss" });
        }
    }
    // Examples may write to stdout; the workspace's lints forbid print macros.
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
}

//! Query latency of the codebase index: find_symbol (exact, prefix, qualified, a miss),
//! outline and search.
//!
//! The tree indexed is `SEAM_BENCH_TREE` when set (a real repository: copy one first, the index
//! only reads it), else a synthetic Rust tree made in a temp dir (2,000 files, 100,000
//! functions). Names to look for can be given in `SEAM_BENCH_NAMES` (comma-separated:
//! exact, prefix, qualified, miss).

use std::path::{Path, PathBuf};
use std::time::Instant;

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use seam_memory::{CodebaseIndex, IndexOptions};

fn synthetic(root: &Path) {
    for f in 0..2000 {
        let mut src = format!("pub struct Item{f};\n\nimpl Item{f} {{\n");
        for g in 0..49 {
            src.push_str(&format!(
                "    pub fn handle_{f}_{g}(&self) -> u32 {{ {g} }}\n"
            ));
        }
        src.push_str("}\n");
        let dir = root.join(format!("m{}", f / 100));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{f}.rs")), src).unwrap();
    }
}

/// The index run is not a criterion measurement (it runs once); its numbers go to the report
/// file `SEAM_BENCH_REPORT` when set (measure `seam index` with /usr/bin/time for the record).
fn eprintln_free_report(report: &seam_memory::IndexReport, took: std::time::Duration) {
    if let Some(path) = std::env::var_os("SEAM_BENCH_REPORT") {
        let line = format!(
            "{} files, {} symbols, {} lines indexed in {:.2} s\n",
            report.files,
            report.symbols,
            report.lines,
            took.as_secs_f64()
        );
        std::fs::write(path, line).unwrap();
    }
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let (tree, names): (PathBuf, Vec<String>) = match std::env::var_os("SEAM_BENCH_TREE") {
        Some(t) => {
            let names = std::env::var("SEAM_BENCH_NAMES")
                .unwrap_or_else(|_| "spawn,spawn_,Runtime::block_on,no_such_symbol_xyz".into());
            (
                PathBuf::from(t),
                names.split(',').map(str::to_owned).collect(),
            )
        }
        None => {
            let root = tmp.path().join("tree");
            synthetic(&root);
            let names = [
                "handle_1234_7",
                "handle_12",
                "Item77::handle_77_3",
                "no_such_symbol_xyz",
            ];
            (root, names.iter().map(|s| (*s).to_owned()).collect())
        }
    };
    let tree = tree.canonicalize().unwrap();
    let store = tmp.path().join("memory/codebase.sqlite");
    let mut idx = CodebaseIndex::open(&store).unwrap();
    let started = Instant::now();
    let report = idx
        .index(&tree, &IndexOptions::default(), &mut |_| {})
        .unwrap();
    eprintln_free_report(&report, started.elapsed());
    assert!(report.symbols > 0, "{report:?}");

    for (label, name) in ["exact", "prefix", "qualified", "miss"].iter().zip(&names) {
        let found = idx.find_symbol(&tree, name, 20).unwrap();
        assert!(
            *label == "miss" || !found.matches.is_empty(),
            "{label} {name}: nothing found"
        );
        c.bench_function(&format!("find_symbol {label} ({name})"), |b| {
            b.iter(|| {
                idx.find_symbol(black_box(&tree), black_box(name), 20)
                    .unwrap()
            })
        });
    }
    let some_file = idx
        .find_symbol(&tree, &names[0], 1)
        .unwrap()
        .matches
        .remove(0)
        .path;
    c.bench_function("outline", |b| {
        b.iter(|| idx.outline(black_box(Path::new(&some_file)), 300).unwrap())
    });
    c.bench_function("search (one word, 10 files)", |b| {
        b.iter(|| {
            idx.search(black_box(&tree), black_box(&names[0]), 10)
                .unwrap()
        })
    });
    c.bench_function("tree depth 2", |b| {
        b.iter(|| idx.tree(black_box(&tree), 2, 200).unwrap())
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(std::time::Duration::from_secs(1)).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);

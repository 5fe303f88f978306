//! Throughput of the terminal filter on 100 MB of mixed log text.
//!
//! The text is generated deterministically: mostly ASCII log lines, some lines with UTF-8
//! (accents, CJK, arrows, emoji), some with ANSI colour sequences, some progress lines with
//! carriage returns, some Windows paths and regexes with backslashes.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use seam_term::{Mode, TerminalFilter, on_one_line, visible};
use std::hint::black_box;

const SIZE: usize = 100 * 1000 * 1000;

/// A small deterministic generator (xorshift64*), so the data is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn mixed_log(size: usize) -> Vec<u8> {
    const LEVELS: [&str; 4] = ["INFO ", "DEBUG", "WARN ", "ERROR"];
    const MODULES: [&str; 5] = [
        "seam_gate::toolbox",
        "seam_policy::admission",
        "hyper::proto::h1",
        "cargo::core::compiler",
        "rustc_driver",
    ];
    const WORDS: [&str; 12] = [
        "request",
        "compiled",
        "finished",
        "path",
        "read",
        "bytes",
        "ok",
        "retrying",
        "connection",
        "closed",
        "cache",
        "hit",
    ];
    const UNICODE: [&str; 6] = ["café", "naïve", "日本語のログ", "→ done", "Grüße", "✓ 😀"];
    let mut rng = Rng(0x5EA3_7E57_D47A_0001);
    let mut out = Vec::with_capacity(size + 256);
    while out.len() < size {
        let kind = rng.below(100);
        let millis = rng.below(86_400_000);
        let head = format!(
            "2026-11-{:02}T{:02}:{:02}:{:02}.{:03}Z {} {}: ",
            1 + rng.below(28),
            millis / 3_600_000,
            millis / 60_000 % 60,
            millis / 1000 % 60,
            millis % 1000,
            LEVELS[rng.below(4) as usize],
            MODULES[rng.below(5) as usize],
        );
        if kind < 5 {
            out.extend_from_slice(b"\x1b[32m");
            out.extend_from_slice(head.as_bytes());
            out.extend_from_slice(b"\x1b[0m");
        } else {
            out.extend_from_slice(head.as_bytes());
        }
        for _ in 0..4 + rng.below(8) {
            out.extend_from_slice(WORDS[rng.below(12) as usize].as_bytes());
            out.push(b' ');
        }
        match kind {
            5..=12 => out.extend_from_slice(UNICODE[rng.below(6) as usize].as_bytes()),
            13..=14 => out.extend_from_slice(b"[=====>    ] 52%\r[=========>] 99%\r"),
            15..=16 => out.extend_from_slice(br"C:\Users\build\target\release (\d+\.\d+)"),
            _ => out.extend_from_slice(
                format!("id={} took {}ms", rng.next(), rng.below(999)).as_bytes(),
            ),
        }
        if kind == 17 {
            out.push(b'\t');
        }
        out.push(b'\n');
    }
    out
}

fn throughput(c: &mut Criterion) {
    let input = mixed_log(SIZE);
    let mut group = c.benchmark_group("terminal_filter_100MB_mixed_log");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(input.len() as u64));
    group.bench_function("visible", |b| b.iter(|| visible(black_box(&input))));
    group.bench_function("on_one_line", |b| b.iter(|| on_one_line(black_box(&input))));
    group.bench_function("streaming_64KiB_chunks", |b| {
        let mut out = String::with_capacity(input.len() + input.len() / 8);
        b.iter(|| {
            out.clear();
            let mut filter = TerminalFilter::new(Mode::Visible);
            for chunk in black_box(&input).chunks(64 * 1024) {
                filter.push(chunk, &mut out);
            }
            filter.finish(&mut out);
            out.len()
        });
    });
    group.finish();

    // The worst case for the fast path: arbitrary bytes, mostly invalid UTF-8 and controls.
    let mut rng = Rng(0xB1A5_0000_0000_0001);
    let binary: Vec<u8> = (0..10_000_000).map(|_| rng.next() as u8).collect();
    let mut group = c.benchmark_group("terminal_filter_10MB_random_bytes");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(binary.len() as u64));
    group.bench_function("visible", |b| b.iter(|| visible(black_box(&binary))));
    group.finish();
}

criterion_group!(benches, throughput);
criterion_main!(benches);

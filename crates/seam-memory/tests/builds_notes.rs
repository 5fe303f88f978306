//! The build memory and the operator's notes.

use std::time::Duration;

use seam_memory::{LOG_EXCERPT_BYTES, Matched, MemoryError, MemoryHome, NewBuildRecord, RunKind};
use seam_scrub::Scrubber;

const TOKEN: &str = "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";

fn home() -> (tempfile::TempDir, MemoryHome) {
    let dir = tempfile::tempdir().unwrap();
    let home = MemoryHome::new(dir.path());
    (dir, home)
}

#[test]
fn build_records_are_scrubbed_before_they_are_stored() {
    let (_dir, home) = home();
    let mut builds = home.builds().unwrap();
    let log =
        format!("compiling seam\nerror[E0425]: cannot find value `x`\nGITHUB_TOKEN={TOKEN}\n");
    let id = builds
        .record(
            &Scrubber::new(),
            &NewBuildRecord {
                kind: RunKind::Build,
                command: &format!("cargo build --token {TOKEN}"),
                exit_status: Some(101),
                duration: Duration::from_millis(1234),
                summary: &format!("failed: E0425; token {TOKEN}"),
                log: &log,
            },
        )
        .unwrap();
    let rec = builds.get(id).unwrap().unwrap();
    assert_eq!(rec.summary.exit_status, Some(101));
    assert_eq!(rec.summary.duration_ms, 1234);
    assert_eq!(rec.summary.kind, "build");
    assert!(rec.log_excerpt.contains("error[E0425]"));
    assert!(!rec.log_excerpt.contains(TOKEN));
    assert!(!rec.summary.command.contains(TOKEN));
    assert!(!rec.summary.summary.contains(TOKEN));
    assert!(rec.log_excerpt.contains("[REDACTED:"));
    assert!(!rec.scrubbed.is_empty());
    assert!(!rec.log_cut);
    // not in the file either, in any table
    drop(builds);
    let raw = std::fs::read(home.builds_path()).unwrap();
    let wal = std::fs::read(home.dir().join("builds.sqlite-wal")).unwrap_or_default();
    for bytes in [&raw, &wal] {
        assert!(!bytes.windows(TOKEN.len()).any(|w| w == TOKEN.as_bytes()));
    }
}

#[test]
fn build_summaries_search_get_and_bounds() {
    let (_dir, home) = home();
    let mut builds = home.builds().unwrap();
    let scrubber = Scrubber::new();
    for i in 0..5 {
        builds
            .record(
                &scrubber,
                &NewBuildRecord {
                    kind: if i == 4 {
                        RunKind::Critic
                    } else {
                        RunKind::Build
                    },
                    command: "cargo test",
                    exit_status: Some(if i == 2 { 1 } else { 0 }),
                    duration: Duration::from_secs(i),
                    summary: if i == 2 {
                        "linker failed: undefined symbol"
                    } else {
                        "ok"
                    },
                    log: "running 3 tests\n",
                },
            )
            .unwrap();
    }
    let all = builds.all_summaries(3).unwrap();
    assert_eq!(all.runs.iter().map(|r| r.id).collect::<Vec<_>>(), [5, 4, 3]);
    assert!(all.truncated);
    assert_eq!(all.total, 5);
    assert_eq!(all.runs[0].kind, "critic");
    let hits = builds.search("linker undefined", 10).unwrap();
    assert_eq!(hits.hits.len(), 1);
    assert_eq!(hits.hits[0].summary.id, 3);
    assert!(
        hits.hits[0].snippet.contains("[linker]"),
        "{:?}",
        hits.hits[0].snippet
    );
    assert_eq!(hits.matched, Matched::Every);
    // No run holds both words: the run holding one, said so.
    let some = builds.search("linker zzyzxunheardof", 10).unwrap();
    assert_eq!(some.hits.len(), 1);
    assert_eq!(some.hits[0].summary.id, 3);
    assert_eq!(some.matched, Matched::Some);
    let cut = builds.search("cargo", 2).unwrap();
    assert_eq!(cut.hits.len(), 2);
    assert!(cut.truncated);
    assert!(builds.get(99).unwrap().is_none());
    assert_eq!(builds.last_id().unwrap(), Some(5));
}

#[test]
fn a_long_log_keeps_its_end_on_a_whole_line() {
    let (_dir, home) = home();
    let mut builds = home.builds().unwrap();
    let mut log = String::new();
    for i in 0..5000 {
        log.push_str(&format!("line {i} of the build output\n"));
    }
    log.push_str("error: the last line says what failed\n");
    let id = builds
        .record(
            &Scrubber::new(),
            &NewBuildRecord {
                kind: RunKind::Build,
                command: "make",
                exit_status: None,
                duration: Duration::ZERO,
                summary: "killed",
                log: &log,
            },
        )
        .unwrap();
    let rec = builds.get(id).unwrap().unwrap();
    assert!(rec.log_cut);
    assert_eq!(rec.log_bytes, log.len() as u64);
    assert!(rec.log_excerpt.len() <= LOG_EXCERPT_BYTES);
    assert!(
        rec.log_excerpt.starts_with("line "),
        "starts on a whole line"
    );
    assert!(
        rec.log_excerpt
            .ends_with("error: the last line says what failed\n")
    );
    assert_eq!(rec.summary.exit_status, None);
}

#[test]
fn notes_add_list_search_get() {
    let (_dir, home) = home();
    let mut notes = home.notes().unwrap();
    let a = notes
        .add("The staging server is staging.internal; deploys happen on Fridays.\n")
        .unwrap();
    let b = notes.add("Prefer small commits.").unwrap();
    let long = "x".repeat(600) + " needle";
    let c = notes.add(&long).unwrap();
    assert_eq!((a, b, c), (1, 2, 3));
    let list = notes.list(10).unwrap();
    assert_eq!(
        list.notes.iter().map(|n| n.id).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(
        list.notes[0].text,
        "The staging server is staging.internal; deploys happen on Fridays."
    );
    let newest = notes.list(2).unwrap();
    assert_eq!(
        newest.notes.iter().map(|n| n.id).collect::<Vec<_>>(),
        [2, 3]
    );
    assert!(newest.truncated);
    assert_eq!(newest.total, 3);

    let hits = notes.search("deploys friday*", 10).unwrap();
    assert_eq!(hits.hits.len(), 1);
    assert_eq!(hits.hits[0].id, 1);
    let hits = notes.search("needle", 10).unwrap();
    assert!(hits.hits[0].text_cut);
    assert!(hits.hits[0].text.len() < long.len());
    assert_eq!(notes.get(3).unwrap().unwrap().text, long);
    assert!(notes.get(4).unwrap().is_none());

    assert!(matches!(notes.add("  \n"), Err(MemoryError::EmptyNote)));
    assert!(matches!(
        notes.add(&"y".repeat(70_000)),
        Err(MemoryError::NoteTooLong { .. })
    ));
    assert!(matches!(
        notes.search("!!", 5),
        Err(MemoryError::EmptyQuery)
    ));
}

#[test]
fn a_search_that_no_note_answers_whole_finds_the_notes_holding_some_words() {
    let (_dir, home) = home();
    let mut notes = home.notes().unwrap();
    notes
        .add("The staging database moved to kestrel-db-2 on 2 March 2027.")
        .unwrap();
    notes
        .add("Maintenance window for kestrel-db-2: Wednesdays 03:30-04:00 UTC.")
        .unwrap();
    notes.add("Office parking: level -2, bay 117.").unwrap();
    // Every word in one note: only that note, and said so.
    let every = notes.search("staging database", 10).unwrap();
    assert_eq!(every.hits.iter().map(|h| h.id).collect::<Vec<_>>(), [1]);
    assert_eq!(every.matched, Matched::Every);
    // No note holds all four words: the two that hold some, not the parking note.
    let some = notes
        .search("staging database maintenance window", 10)
        .unwrap();
    let mut ids: Vec<i64> = some.hits.iter().map(|h| h.id).collect();
    ids.sort();
    assert_eq!(ids, [1, 2]);
    assert_eq!(some.matched, Matched::Some);
    // Nothing at all: empty, and no claim of a partial match.
    let none = notes.search("zebra crossing", 10).unwrap();
    assert!(none.hits.is_empty());
    assert_eq!(none.matched, Matched::Every);
}

#[test]
fn a_store_of_another_schema_version_is_refused() {
    let (_dir, home) = home();
    drop(home.notes().unwrap());
    let conn = rusqlite::Connection::open(home.notes_path()).unwrap();
    conn.execute_batch("PRAGMA user_version = 7").unwrap();
    drop(conn);
    match home.notes() {
        Err(MemoryError::Schema {
            found: 7,
            expected: 1,
            ..
        }) => {}
        other => panic!("expected a schema refusal, got {other:?}"),
    }
}

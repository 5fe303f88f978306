//! Races: what a path names is swapped, atomically and in a loop by another thread, between
//! a harmless file and a way to a protected key, while admission opens and reads it thousands
//! of times. The protected bytes must never come back, and nothing may block.

mod common;

use std::fs;
use std::io::Read;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use common::{Fixture, KEY};
use rustix::fs::{CWD, FileType, Mode, RenameFlags};
use seam_policy::{Access, FileAccess, PathAdmission};
use seam_protocol::RefusalCode;

const READ: Access = Access::Owner(FileAccess::Read);
const HARMLESS: &[u8] = b"harmless\n";
/// At least this many opens; more (up to `MAX_OPENS`) until both outcomes were seen often.
const MIN_OPENS: u64 = 4_000;
const MAX_OPENS: u64 = 200_000;

/// Exchanges `a` and `b` (renameat2 RENAME_EXCHANGE) until `stop`, counting swaps.
fn swapper(a: PathBuf, b: PathBuf, stop: Arc<AtomicBool>, swaps: Arc<AtomicU64>) {
    while !stop.load(Ordering::Relaxed) {
        rustix::fs::renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).unwrap();
        swaps.fetch_add(1, Ordering::Relaxed);
    }
}

#[derive(Debug, Default)]
struct Tally {
    harmless: u64,
    refused: u64,
    other: u64,
}

/// Opens `raw` again and again while `a` and `b` are exchanged; never may the key come back.
fn hammer(adm: Arc<PathAdmission>, raw: &'static str, a: PathBuf, b: PathBuf) -> Tally {
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapping = {
        let (stop, swaps) = (Arc::clone(&stop), Arc::clone(&swaps));
        std::thread::spawn(move || swapper(a, b, stop, swaps))
    };
    let (tx, rx) = mpsc::channel();
    let opener = std::thread::spawn(move || {
        let mut tally = Tally::default();
        let mut n = 0u64;
        while n < MIN_OPENS || (n < MAX_OPENS && (tally.harmless < 100 || tally.refused < 100)) {
            n += 1;
            match adm.open_read(READ, std::ffi::OsStr::new(raw)) {
                Ok(mut admitted) => {
                    let mut buf = Vec::new();
                    admitted.file.read_to_end(&mut buf).unwrap();
                    assert_ne!(buf, KEY, "the protected key came back through {raw}");
                    assert!(!buf.windows(11).any(|w| w == b"PRIVATE KEY"));
                    if buf == HARMLESS {
                        tally.harmless += 1;
                    } else {
                        tally.other += 1;
                    }
                }
                Err(refusal) => {
                    assert!(
                        matches!(
                            refusal.code,
                            RefusalCode::Protected
                                | RefusalCode::NotAllowed
                                | RefusalCode::NotFound
                                | RefusalCode::NotAFile
                        ),
                        "{refusal:?}"
                    );
                    tally.refused += 1;
                }
            }
        }
        let _ = tx.send(tally);
    });
    let tally = rx.recv_timeout(Duration::from_secs(300));
    stop.store(true, Ordering::Relaxed);
    swapping.join().unwrap();
    let tally = match tally {
        Ok(tally) => tally,
        // The opener panicked (the key came back): show its panic.
        Err(mpsc::RecvTimeoutError::Disconnected) => match opener.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the opener ended without a tally"),
        },
        // Left running: it is blocked, which is the failure.
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("the opener did not finish: it blocked"),
    };
    opener.join().unwrap();
    assert!(swaps.load(Ordering::Relaxed) > 0, "the swapper never ran");
    tally
}

fn admission(fx: &Fixture) -> Arc<PathAdmission> {
    Arc::new(fx.admission())
}

#[test]
fn a_file_swapped_for_a_link_to_a_key_never_yields_the_key() {
    let fx = Fixture::new();
    let target = fx.home.join("notes/race.txt");
    let alt = fx.home.join("notes/race-alt");
    fs::write(&target, HARMLESS).unwrap();
    symlink(fx.home.join(".ssh/id_rsa"), &alt).unwrap();
    let raw: &'static str = "~/notes/race.txt";
    let tally = hammer(admission(&fx), raw, target, alt);
    assert!(tally.harmless > 0, "{tally:?}");
    assert!(tally.refused > 0, "{tally:?}");
    assert_eq!(tally.other, 0, "{tally:?}");
}

#[test]
fn a_directory_on_the_path_swapped_for_a_link_to_the_key_directory_never_yields_the_key() {
    let fx = Fixture::new();
    let dir = fx.home.join("notes/d");
    let alt = fx.home.join("notes/d-alt");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("id_rsa"), HARMLESS).unwrap();
    symlink(fx.home.join(".ssh"), &alt).unwrap();
    let tally = hammer(admission(&fx), "~/notes/d/id_rsa", dir, alt);
    assert!(tally.harmless > 0, "{tally:?}");
    assert!(tally.refused > 0, "{tally:?}");
    assert_eq!(tally.other, 0, "{tally:?}");
}

#[test]
fn a_file_swapped_for_a_hard_link_to_the_key_never_yields_the_key() {
    let fx = Fixture::new();
    let target = fx.home.join("notes/hl.txt");
    let alt = fx.home.join("notes/hl-alt");
    fs::write(&target, HARMLESS).unwrap();
    fs::hard_link(fx.home.join(".ssh/id_rsa"), &alt).unwrap();
    let tally = hammer(admission(&fx), "~/notes/hl.txt", target, alt);
    assert!(tally.harmless > 0, "{tally:?}");
    assert!(tally.refused > 0, "{tally:?}");
}

#[test]
fn a_file_swapped_for_a_fifo_never_blocks() {
    let fx = Fixture::new();
    let target = fx.home.join("notes/pipe.txt");
    let alt = fx.home.join("notes/pipe-alt");
    fs::write(&target, HARMLESS).unwrap();
    mkfifo(&alt);
    let tally = hammer(admission(&fx), "~/notes/pipe.txt", target, alt);
    assert!(tally.harmless > 0, "{tally:?}");
    assert!(tally.refused > 0, "{tally:?}");
}

#[test]
fn a_directory_swapped_for_a_link_into_proc_never_yields_the_key() {
    let fx = Fixture::new();
    let dir = fx.home.join("notes/p");
    let alt = fx.home.join("notes/p-alt");
    fs::create_dir_all(dir.join(".ssh")).unwrap();
    fs::write(dir.join(".ssh/id_rsa"), HARMLESS).unwrap();
    // notes/p-alt -> /proc/self/root<home>: p/.ssh/id_rsa becomes the real key.
    symlink(format!("/proc/self/root{}", fx.home.display()), &alt).unwrap();
    let tally = hammer(admission(&fx), "~/notes/p/.ssh/id_rsa", dir, alt);
    assert!(tally.harmless > 0, "{tally:?}");
    assert!(tally.refused > 0, "{tally:?}");
}

fn mkfifo(path: &Path) {
    rustix::fs::mknodat(CWD, path, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
}

//! `seam watch`: a live view of the return queue, the calls waiting for consent at the
//! gate on seam's socket (`seam consent approve|deny ID`), and the ledger stream.
//!
//! With a terminal: a ratatui screen (queue above, ledger below; q or Esc
//! quits). With `--plain`, or when stdout is not a terminal: one line per
//! event (a new item, a decision, a ledger record) through the output module.
//! Every text that comes from elsewhere (summaries, tool names, turn ids) is
//! made safe with `seam_term::on_one_line` before it reaches the screen.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use seam_ledger::{LedgerReader, Record};
use seam_local::{QueueItem, ReturnQueue, Status};

use crate::context::Context;
use crate::exit::Exit;
use crate::output;

/// How often the queue and the ledger are looked at.
const POLL: Duration = Duration::from_millis(300);
/// How many items and records the screen keeps.
const KEEP: usize = 200;

pub fn run(ctx: &Context, plain: bool, once: bool) -> anyhow::Result<Exit> {
    if plain || once || !std::io::stdout().is_terminal() {
        return plain_loop(&ctx.seam_home, once);
    }
    screen(&ctx.seam_home)
}

/// What has been seen so far, to report only what changed.
#[derive(Debug, Default)]
struct Seen {
    statuses: HashMap<i64, Status>,
    last_seq: Option<u64>,
    consents: std::collections::HashSet<String>,
}

/// The calls that began to wait for consent since `seen` (and forgets those that stopped).
fn consent_changes(home: &Path, seen: &mut Seen) -> Vec<String> {
    let pending = super::consent::pending_at_gate(home);
    seen.consents
        .retain(|id| pending.iter().any(|p| &p.id == id));
    pending
        .iter()
        .filter(|p| seen.consents.insert(p.id.clone()))
        .map(super::consent::watch_line)
        .collect()
}

/// The queue's items that are new or changed since `seen`, oldest first.
fn queue_changes(home: &Path, seen: &mut Seen) -> anyhow::Result<Vec<QueueItem>> {
    let Some(q) = ReturnQueue::existing(home).context("opening the queue")? else {
        return Ok(Vec::new());
    };
    let mut items = q.list(KEEP).context("listing the queue")?;
    items.reverse();
    Ok(items
        .into_iter()
        .filter(|i| seen.statuses.insert(i.id, i.status) != Some(i.status))
        .collect())
}

/// Ledger records after `seen` (the last 20 on the first look).
fn ledger_changes(home: &Path, seen: &mut Seen) -> Vec<Record> {
    let Ok(reader) = LedgerReader::open(home) else {
        return Vec::new();
    };
    let records = match seen.last_seq {
        None => reader.tail(20),
        Some(seq) => reader.records_after(seq, 1000),
    }
    .unwrap_or_default();
    if let Some(last) = records.last() {
        seen.last_seq = Some(last.seq);
    } else if seen.last_seq.is_none() {
        seen.last_seq = Some(0);
    }
    records
}

fn item_line(i: &QueueItem) -> String {
    format!("queue {}", super::queue::list_line(i))
}

fn record_line(r: &Record) -> String {
    let e = &r.entry;
    let decision = e.decision.label();
    let mut s = format!("ledger {:>6} {} {} {}", r.seq, r.time, e.tool, decision);
    if let Some(turn) = &e.turn_id {
        s.push_str(&format!(" turn={turn}"));
    }
    if e.tainted {
        s.push_str(" tainted");
    }
    s
}

fn plain_loop(home: &Path, once: bool) -> anyhow::Result<Exit> {
    let mut seen = Seen::default();
    loop {
        for item in queue_changes(home, &mut seen)? {
            output::line(&item_line(&item));
        }
        for waiting in consent_changes(home, &mut seen) {
            output::line(&waiting);
        }
        for record in ledger_changes(home, &mut seen) {
            output::line(&record_line(&record));
        }
        if once {
            return Ok(Exit::Ok);
        }
        std::thread::sleep(POLL);
    }
}

fn screen(home: &Path) -> anyhow::Result<Exit> {
    use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
    use ratatui::layout::{Constraint, Layout};
    use ratatui::widgets::{Block, Borders, List, ListItem};

    let mut terminal = ratatui::init();
    let mut seen = Seen::default();
    let mut items: Vec<QueueItem> = Vec::new();
    let mut ledger: Vec<String> = Vec::new();
    let mut waiting: Vec<String> = Vec::new();
    let result = (|| -> anyhow::Result<()> {
        let mut next_poll = Instant::now();
        loop {
            if Instant::now() >= next_poll {
                for changed in queue_changes(home, &mut seen)? {
                    match items.iter_mut().find(|i| i.id == changed.id) {
                        Some(i) => *i = changed,
                        None => items.push(changed),
                    }
                }
                items.sort_by_key(|i| std::cmp::Reverse(i.id));
                items.truncate(KEEP);
                waiting = super::consent::pending_at_gate(home)
                    .iter()
                    .map(|p| seam_term::on_one_line(super::consent::watch_line(p).as_bytes()))
                    .collect();
                for r in ledger_changes(home, &mut seen) {
                    ledger.push(seam_term::on_one_line(record_line(&r).as_bytes()));
                }
                let len = ledger.len();
                if len > KEEP {
                    ledger.drain(..len - KEEP);
                }
                next_poll = Instant::now() + POLL;
            }
            terminal.draw(|frame| {
                let [top, bottom] =
                    Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)])
                        .areas(frame.area());
                let queue: Vec<ListItem> = waiting
                    .iter()
                    .map(|w| ListItem::new(w.as_str()))
                    .chain(items.iter().map(|i| {
                        ListItem::new(seam_term::on_one_line(
                            super::queue::list_line(i).as_bytes(),
                        ))
                    }))
                    .collect();
                frame.render_widget(
                    List::new(queue).block(Block::default().borders(Borders::ALL).title(
                        " consent waiting (seam consent approve|deny ID) · return queue \
                                 (seam queue show|approve|reject ID) · q quits ",
                    )),
                    top,
                );
                let shown = bottom.height.saturating_sub(2) as usize;
                let lines: Vec<ListItem> = ledger
                    .iter()
                    .skip(ledger.len().saturating_sub(shown))
                    .map(|l| ListItem::new(l.as_str()))
                    .collect();
                frame.render_widget(
                    List::new(lines)
                        .block(Block::default().borders(Borders::ALL).title(" ledger ")),
                    bottom,
                );
            })?;
            if event::poll(Duration::from_millis(100))?
                && let Event::Key(key) = event::read()?
                && key.kind == KeyEventKind::Press
                && (matches!(key.code, KeyCode::Char('q') | KeyCode::Esc)
                    || (key.code == KeyCode::Char('c')
                        && key.modifiers.contains(KeyModifiers::CONTROL)))
            {
                return Ok(());
            }
        }
    })();
    ratatui::restore();
    result.map(|()| Exit::Ok)
}

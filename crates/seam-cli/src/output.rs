//! The one module that writes to the terminal.
//!
//! Text passes through `seam_term::visible` (layout survives) or
//! `seam_term::on_one_line`; JSON is written with every character a terminal
//! could act on escaped as `\uXXXX`, so it stays valid JSON and is safe to print.
//! Write errors on stdout (a closed pipe) end the program quietly.

use std::io::Write;

use serde::Serialize;

/// Prints text through the terminal filter; newlines and tabs survive.
pub fn text(s: &str) {
    write_out(seam_term::visible(s.as_bytes()).as_bytes());
}

/// Prints text through the terminal filter and ends it with a newline.
pub fn text_ln(s: &str) {
    let mut v = seam_term::visible(s.as_bytes());
    if !v.ends_with('\n') {
        v.push('\n');
    }
    write_out(v.as_bytes());
}

/// Prints one line: newlines and tabs inside it are shown, not obeyed.
pub fn line(s: &str) {
    let mut v = seam_term::on_one_line(s.as_bytes());
    v.push('\n');
    write_out(v.as_bytes());
}

/// Prints bytes already filtered by a `seam_term` filter (the streaming commands).
pub fn filtered(s: &str) {
    write_out(s.as_bytes());
}

/// Prints a value as pretty JSON, terminal-safe.
pub fn json<T: Serialize + ?Sized>(value: &T) {
    let mut s = json_string(value, true);
    s.push('\n');
    write_out(s.as_bytes());
}

/// Prints a value as one line of JSON, terminal-safe (JSON lines).
pub fn json_line<T: Serialize + ?Sized>(value: &T) {
    let mut s = json_string(value, false);
    s.push('\n');
    write_out(s.as_bytes());
}

/// An error for the operator, on stderr, through the terminal filter.
pub fn error(msg: &str) {
    let mut v = String::from("seam: error: ");
    v.push_str(&seam_term::visible(msg.as_bytes()));
    if !v.ends_with('\n') {
        v.push('\n');
    }
    let _ = std::io::stderr().lock().write_all(v.as_bytes());
}

/// A notice for the operator, on stderr, through the terminal filter.
pub fn notice(msg: &str) {
    let mut v = String::from("seam: ");
    v.push_str(&seam_term::on_one_line(msg.as_bytes()));
    v.push('\n');
    let _ = std::io::stderr().lock().write_all(v.as_bytes());
}

/// A progress line for the operator on stderr (one per tool call in
/// `seam ask`), kept apart from the answer on stdout; newlines inside are shown.
pub fn progress_line(s: &str) {
    let mut v = seam_term::on_one_line(s.as_bytes());
    v.push('\n');
    let _ = std::io::stderr().lock().write_all(v.as_bytes());
}

/// Text for stderr that is already in its final form (clap's usage text),
/// filtered here like everything else.
pub fn stderr_text(s: &str) {
    let _ = std::io::stderr()
        .lock()
        .write_all(seam_term::visible(s.as_bytes()).as_bytes());
}

/// Data passed through a pipe command (`seam scrub`): written as it is when
/// stdout is not a terminal (a file or a pipe, where the bytes are the point),
/// and through the streaming terminal filter when it is one.
#[derive(Debug)]
pub struct Data {
    filter: Option<seam_term::TerminalFilter>,
    shown: String,
}

impl Data {
    pub fn new() -> Self {
        use std::io::IsTerminal;
        let filter = std::io::stdout()
            .is_terminal()
            .then(|| seam_term::TerminalFilter::new(seam_term::Mode::Visible));
        Data {
            filter,
            shown: String::new(),
        }
    }

    pub fn write(&mut self, bytes: &[u8]) {
        match &mut self.filter {
            Some(f) => {
                self.shown.clear();
                f.push(bytes, &mut self.shown);
                write_out(self.shown.as_bytes());
            }
            None => write_out(bytes),
        }
    }

    pub fn finish(mut self) {
        if let Some(f) = &mut self.filter {
            self.shown.clear();
            f.finish(&mut self.shown);
            write_out(self.shown.as_bytes());
        }
    }
}

impl Default for Data {
    fn default() -> Self {
        Self::new()
    }
}

/// A progress bar on stderr, drawn only when stderr is a terminal (nothing at
/// all otherwise). Its message passes through the terminal filter, on one line.
#[derive(Debug)]
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
}

impl Progress {
    /// A bar whose length is set later (`set`); hidden unless stderr is a terminal.
    pub fn new() -> Progress {
        use std::io::IsTerminal;
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::with_draw_target(
                None,
                indicatif::ProgressDrawTarget::stderr_with_hz(10),
            );
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {wide_msg}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar
        });
        Progress { bar }
    }

    /// Position, length (if known) and a message (someone else's words: filtered).
    pub fn set(&self, pos: u64, len: Option<u64>, msg: &str) {
        if let Some(bar) = &self.bar {
            if let Some(len) = len {
                bar.set_length(len);
            }
            bar.set_position(pos);
            bar.set_message(seam_term::on_one_line(msg.as_bytes()));
        }
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Default for Progress {
    fn default() -> Self {
        Self::new()
    }
}

fn write_out(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    if out.write_all(bytes).and_then(|()| out.flush()).is_err() {
        // stdout is gone (a closed pipe): nothing more can be said there.
        std::process::exit(crate::Exit::Ok as i32);
    }
}

/// JSON text in which every character the terminal filter would not pass
/// unchanged is written as a `\uXXXX` escape. The result is valid JSON, decodes
/// to the same value, and holds no byte a terminal would act on.
pub fn json_string<T: Serialize + ?Sized>(value: &T, pretty: bool) -> String {
    let mut buf = Vec::new();
    let res = if pretty {
        let mut ser = serde_json::Serializer::with_formatter(
            &mut buf,
            TerminalSafe {
                inner: serde_json::ser::PrettyFormatter::new(),
            },
        );
        value.serialize(&mut ser)
    } else {
        let mut ser = serde_json::Serializer::with_formatter(
            &mut buf,
            TerminalSafe {
                inner: serde_json::ser::CompactFormatter,
            },
        );
        value.serialize(&mut ser)
    };
    if let Err(e) = res {
        // Serialising our own types into memory cannot fail but for a
        // non-string map key; say so rather than print half a document.
        return format!("{{\"error\":\"cannot serialise output: {e}\"}}");
    }
    // The formatter writes only ASCII escapes and the valid UTF-8 it was given.
    String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A serde_json formatter that escapes what the terminal filter would show.
struct TerminalSafe<F> {
    inner: F,
}

/// JSON strings are escaped for one line: every control, newline included
/// (serde_json already writes `\n`), and every character the filter shows.
fn needs_escape(c: char) -> bool {
    seam_term::is_shown_escaped(c, seam_term::Mode::OneLine)
}

impl<F: serde_json::ser::Formatter> serde_json::ser::Formatter for TerminalSafe<F> {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if needs_escape(c) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    write!(writer, "\\u{:04x}", u)?;
                }
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    // Delegate layout to the inner formatter.
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.begin_array(w)
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.end_array(w)
    }
    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.inner.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.end_array_value(w)
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.begin_object(w)
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.end_object(w)
    }
    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.inner.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_escapes_what_a_terminal_would_act_on_and_round_trips() {
        let v = json!({"t": "a\u{1b}[31mred\u{7f}\u{85}\u{202e}evil\u{e0041}é\n", "k\u{1b}": 1});
        for pretty in [true, false] {
            let s = json_string(&v, pretty);
            assert!(!s.contains('\u{1b}'));
            assert!(!s.contains('\u{7f}'));
            assert!(!s.contains('\u{85}'));
            assert!(!s.contains('\u{202e}'));
            assert!(!s.contains('\u{e0041}'));
            assert!(
                s.contains('é'),
                "ordinary non-ASCII text stays readable: {s}"
            );
            assert!(s.contains("\\u007f"));
            assert!(
                s.contains("\\udb40\\udc41"),
                "astral chars as surrogate pairs: {s}"
            );
            let back: serde_json::Value = serde_json::from_str(&s).unwrap();
            assert_eq!(back, v);
        }
    }
}

/// The operator's own terminal (`/dev/tty` of the process that opened it), for a question
/// only the operator may answer: the gate's consent prompt. What is written passes the
/// terminal filter; what is read is one line the operator typed.
#[derive(Debug)]
pub struct Tty {
    file: std::fs::File,
}

impl Tty {
    /// Opens the controlling terminal; fails when there is none (CI, a service, a pipe).
    pub fn open() -> std::io::Result<Tty> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(rustix::fs::OFlags::NOCTTY.bits() as i32)
            .open("/dev/tty")?;
        if !rustix::termios::isatty(&file) {
            return Err(std::io::Error::other("/dev/tty is not a terminal"));
        }
        Ok(Tty { file })
    }

    /// Writes text through the terminal filter (layout survives).
    pub fn say(&mut self, text: &str) {
        let _ = self
            .file
            .write_all(seam_term::visible(text.as_bytes()).as_bytes());
        let _ = self.file.flush();
    }

    /// Throws away whatever was typed before the question was asked.
    pub fn discard_typed_ahead(&mut self) {
        let _ = rustix::termios::tcflush(&self.file, rustix::termios::QueueSelector::IFlush);
    }

    /// One line the operator types, without its newline; `None` once `until` passes, or as
    /// soon as `still_wanted` says the answer is no longer needed (checked every 100 ms).
    pub fn read_line(
        &mut self,
        until: std::time::Instant,
        still_wanted: impl Fn() -> bool,
    ) -> Option<String> {
        use std::io::Read as _;
        let mut line = Vec::new();
        loop {
            let now = std::time::Instant::now();
            if now >= until || !still_wanted() {
                return None;
            }
            let slice = (until - now).min(std::time::Duration::from_millis(100));
            let timeout = rustix::event::Timespec {
                tv_sec: 0,
                tv_nsec: slice.as_nanos() as _,
            };
            let mut fds = [rustix::event::PollFd::new(
                &self.file,
                rustix::event::PollFlags::IN,
            )];
            match rustix::event::poll(&mut fds, Some(&timeout)) {
                Ok(0) | Err(rustix::io::Errno::INTR) => continue,
                Ok(_) => {}
                Err(_) => return None,
            }
            let mut buf = [0u8; 256];
            match self.file.read(&mut buf) {
                Ok(0) => return None,
                Ok(n) => {
                    for &b in &buf[..n] {
                        if b == b'\n' || b == b'\r' {
                            return Some(String::from_utf8_lossy(&line).into_owned());
                        }
                        if line.len() < 256 {
                            line.push(b);
                        }
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
    }
}

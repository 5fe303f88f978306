//! What code inside the agent's wall tries, for the attack test: each attempt made with the
//! ordinary call a compromised agent would make, and the kernel's answer kept with its errno.
//!
//! `seam __agent-attack` raises exactly the walls `seam ask` raises, makes the attempts it is
//! told to, and prints these outcomes; seam-cli's `tests/confine.rs` asserts that each was
//! denied for the reason the wall gives (EACCES from Landlock, EPERM from seccomp…), not
//! for an accident such as a missing file. The attempts live here, beside the wall they
//! attack, so the binary only wires them; they decide nothing and are never used by seam
//! itself.

use std::io::Read as _;
use std::os::fd::AsFd as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde::Serialize;

/// One thing code inside the wall tries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    /// Open a file and read it to its end.
    Read(PathBuf),
    /// Create (or truncate) a file.
    Write(PathBuf),
    /// A TCP connection to a loopback port.
    Connect(u16),
    /// Run a program (its output dropped); a program that ran counts as allowed whatever
    /// its exit status.
    Exec(PathBuf),
    /// One UDP datagram to a loopback port.
    Udp(u16),
    /// SIGCONT to a process (outside the wall, in the test).
    Signal(i32),
    /// Run a program through the ELF loader (`ld-linux… PROGRAM`), which needs only that the
    /// program can be read; allowed only if the program ran and succeeded.
    ExecViaLoader(PathBuf),
    /// Open `/dev/tty` for reading and writing.
    OpenTty,
    /// Type "y" and a newline (what the operator types to allow a call) into the terminal
    /// behind this process's stdin, stdout or stderr (`TIOCSTI`).
    TypeIntoTerminal(StdStream),
}

/// One of the standard streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdStream {
    Stdin,
    Stdout,
    Stderr,
}

impl StdStream {
    /// All three, in fd order.
    pub const ALL: [StdStream; 3] = [StdStream::Stdin, StdStream::Stdout, StdStream::Stderr];

    fn name(self) -> &'static str {
        match self {
            StdStream::Stdin => "stdin",
            StdStream::Stdout => "stdout",
            StdStream::Stderr => "stderr",
        }
    }
}

/// What the kernel answered to one [`Attempt`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The kind of attempt (`read`, `write`, `connect`, `exec`, `udp`, `signal`,
    /// `exec-via-loader`, `open-tty`, `type-into-terminal`).
    pub attack: &'static str,
    /// What it was aimed at: a path, a port, a pid or a stream's name.
    pub target: String,
    /// Whether it failed.
    pub denied: bool,
    /// The errno it failed with, when the failure was the kernel's.
    pub errno: Option<i32>,
    /// The failure in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The ELF loaders tried by [`Attempt::ExecViaLoader`], the first present being used.
const LOADERS: [&str; 2] = ["/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"];

impl Attempt {
    /// Makes the attempt and says what the kernel answered.
    pub fn run(&self) -> Outcome {
        let (attack, target, result) = match self {
            Attempt::Read(p) => ("read", p.display().to_string(), read_all(p)),
            Attempt::Write(p) => (
                "write",
                p.display().to_string(),
                std::fs::File::create(p).map(drop),
            ),
            Attempt::Connect(port) => (
                "connect",
                port.to_string(),
                std::net::TcpStream::connect(("127.0.0.1", *port)).map(drop),
            ),
            Attempt::Exec(p) => (
                "exec",
                p.display().to_string(),
                run_quietly(&mut Command::new(p)).map(drop),
            ),
            Attempt::Udp(port) => ("udp", port.to_string(), send_datagram(*port)),
            Attempt::Signal(pid) => ("signal", pid.to_string(), sigcont(*pid)),
            Attempt::ExecViaLoader(p) => {
                let loader = LOADERS
                    .into_iter()
                    .find(|l| std::path::Path::new(l).exists())
                    .unwrap_or(LOADERS[0]);
                let result = run_quietly(Command::new(loader).arg(p)).and_then(|status| {
                    if status.success() {
                        Ok(())
                    } else {
                        Err(std::io::Error::other(format!(
                            "the loader failed: {status}"
                        )))
                    }
                });
                ("exec-via-loader", p.display().to_string(), result)
            }
            Attempt::OpenTty => (
                "open-tty",
                "/dev/tty".to_owned(),
                std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open("/dev/tty")
                    .map(drop),
            ),
            Attempt::TypeIntoTerminal(stream) => (
                "type-into-terminal",
                stream.name().to_owned(),
                type_yes(*stream),
            ),
        };
        Outcome::of(attack, target, result)
    }
}

impl Outcome {
    fn of(attack: &'static str, target: String, result: std::io::Result<()>) -> Outcome {
        match result {
            Ok(()) => Outcome {
                attack,
                target,
                denied: false,
                errno: None,
                error: None,
            },
            Err(e) => Outcome {
                attack,
                target,
                denied: true,
                errno: e.raw_os_error(),
                error: Some(e.to_string()),
            },
        }
    }
}

fn read_all(path: &std::path::Path) -> std::io::Result<()> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.read_to_end(&mut bytes).map(drop)
}

fn run_quietly(command: &mut Command) -> std::io::Result<std::process::ExitStatus> {
    command.stdout(Stdio::null()).stderr(Stdio::null()).status()
}

fn send_datagram(port: u16) -> std::io::Result<()> {
    std::net::UdpSocket::bind("127.0.0.1:0")?
        .send_to(b"exfil", ("127.0.0.1", port))
        .map(drop)
}

fn sigcont(pid: i32) -> std::io::Result<()> {
    let pid = rustix::process::Pid::from_raw(pid).ok_or_else(|| std::io::Error::other("pid 0"))?;
    rustix::process::kill_process(pid, rustix::process::Signal::CONT).map_err(Into::into)
}

fn type_yes(stream: StdStream) -> std::io::Result<()> {
    let fd = match stream {
        StdStream::Stdin => std::io::stdin().as_fd().try_clone_to_owned(),
        StdStream::Stdout => std::io::stdout().as_fd().try_clone_to_owned(),
        StdStream::Stderr => std::io::stderr().as_fd().try_clone_to_owned(),
    }?;
    crate::agent_wall::type_into_terminal(fd.as_fd(), b'y')?;
    crate::agent_wall::type_into_terminal(fd.as_fd(), b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    // Outside any wall, each attempt's own failure is kept with its errno, and a success is
    // an outcome with neither: what the attack test reads to tell a wall from an accident.

    #[test]
    fn a_read_that_works_is_allowed_and_a_missing_file_says_enoent() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let ok = Attempt::Read(file.path().to_owned()).run();
        assert_eq!((ok.denied, ok.errno, ok.error), (false, None, None));
        assert_eq!(ok.attack, "read");
        assert_eq!(ok.target, file.path().display().to_string());
        let missing = Attempt::Read(file.path().with_extension("gone")).run();
        assert!(missing.denied);
        assert_eq!(missing.errno, Some(libc::ENOENT));
        assert!(missing.error.is_some());
    }

    #[test]
    fn a_write_creates_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("made");
        assert!(!Attempt::Write(file.clone()).run().denied);
        assert!(file.exists());
        let under_a_file = Attempt::Write(file.join("x")).run();
        assert_eq!(under_a_file.errno, Some(libc::ENOTDIR));
    }

    #[test]
    fn a_connection_to_a_closed_port_is_refused() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let open = listener.local_addr().unwrap().port();
        assert!(!Attempt::Connect(open).run().denied);
        // A port bound and never listened on refuses, and stays ours while
        // held: a listener's port, once dropped, was taken by a test running
        // beside this one, and the connection went through.
        let held =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        held.bind(&any.into()).unwrap();
        let port = held.local_addr().unwrap().as_socket().unwrap().port();
        let closed = Attempt::Connect(port).run();
        assert_eq!(closed.errno, Some(libc::ECONNREFUSED));
    }

    #[test]
    fn a_program_that_ran_is_allowed_whatever_its_status_but_not_through_the_loader() {
        assert!(!Attempt::Exec("/bin/false".into()).run().denied);
        let missing = Attempt::Exec("/nonexistent/prog".into()).run();
        assert_eq!(missing.errno, Some(libc::ENOENT));
        let via_loader = Attempt::ExecViaLoader("/bin/false".into()).run();
        assert!(via_loader.denied, "{via_loader:?}");
        assert_eq!(via_loader.errno, None);
    }

    #[test]
    fn a_signal_to_a_missing_process_says_esrch() {
        assert!(!Attempt::Signal(std::process::id() as i32).run().denied);
        let none = Attempt::Signal(i32::MAX).run();
        assert_eq!(none.errno, Some(libc::ESRCH));
        assert_eq!(Attempt::Signal(0).run().error.as_deref(), Some("pid 0"));
    }

    #[test]
    fn the_json_keeps_errno_null_and_leaves_out_error_on_success() {
        let dir = tempfile::tempdir().unwrap();
        let ok = serde_json::to_value(Attempt::Write(dir.path().join("f")).run()).unwrap();
        assert_eq!(ok["errno"], serde_json::Value::Null);
        assert!(ok.get("error").is_none());
        assert_eq!(ok["denied"], false);
    }
}

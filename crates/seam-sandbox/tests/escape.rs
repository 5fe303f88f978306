//! Escape tests: each tries one way out of the sandbox and asserts it is shut, with a clear
//! outcome. None can hang: every run has a wall-clock limit of a few seconds, and every test
//! body runs under a watchdog that fails the test if the call does not return in time.
//!
//! These need the walls: on a machine without them the first assertion says which is missing.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use seam_sandbox::{Job, LimitHit, Limits, RunOutput, Sandbox, ScratchFile};

fn sandbox() -> &'static Sandbox {
    let sb = Sandbox::shared();
    assert!(
        sb.available(),
        "the sandbox's walls are not all available here: {:?}",
        sb.protections().missing()
    );
    sb
}

/// Runs a job on its own thread and fails the test if it has not returned within its wall
/// time plus a margin.
fn run(job: Job) -> RunOutput {
    let sb = sandbox();
    let patience = job.limits.wall + Duration::from_secs(5);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(sb.run(&job));
    });
    match rx.recv_timeout(patience) {
        Ok(result) => result.expect("the sandboxed run failed to start"),
        Err(_) => panic!("the sandboxed run did not return within {patience:?}"),
    }
}

fn job(code: &str, wall_secs: f64) -> Job {
    Job {
        limits: Limits::with_wall(Duration::from_secs_f64(wall_secs)),
        ..Job::new(code)
    }
}

/// A directory of the machine outside /tmp (which the sandbox shows as its scratch).
fn host_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("escape-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

fn marker(what: &str) -> String {
    format!("SEAM-{what}-{}-{}", std::process::id(), rand_u64())
}

fn rand_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(std::time::Instant::now().elapsed().as_nanos() as u64);
    h.finish()
}

/// Processes of the machine whose command line holds `needle`.
fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) || name == std::process::id().to_string() {
            continue;
        }
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&cmd).contains(needle)
        {
            found.push(name);
        }
    }
    found
}

fn py_str(p: &Path) -> String {
    format!("{:?}", p.display().to_string())
}

#[test]
fn print_runs_and_reports() {
    let out = run(job("print(1)", 5.0));
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "1\n");
    assert!(out.sandboxed && !out.timed_out && out.limit_hit.is_empty());
}

#[test]
fn a_key_planted_in_a_fake_home_is_not_there() {
    let home = host_dir();
    let secret = marker("KEY");
    std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
    let key = home.path().join(".ssh/id_ed25519");
    std::fs::write(&key, &secret).unwrap();
    let code = format!(
        "import os\n\
         for p in [{key}, {home}, '/home', '/root/.ssh', '/root']:\n\
         \x20   try:\n\
         \x20       print(p, repr(open(p).read()) if os.path.isfile(p) else sorted(os.listdir(p)))\n\
         \x20   except Exception as e:\n\
         \x20       print(p, type(e).__name__)\n",
        key = py_str(&key),
        home = py_str(home.path()),
    );
    let out = run(job(&code, 5.0));
    assert!(!out.stdout.contains(&secret) && !out.stderr.contains(&secret));
    assert!(
        out.stdout
            .contains(&format!("{} FileNotFoundError", key.display())),
        "{out:?}"
    );
    assert!(out.stdout.contains("/home FileNotFoundError"), "{out:?}");
    assert!(
        out.stdout.contains("/root/.ssh FileNotFoundError"),
        "{out:?}"
    );
    // /root holds only the way to the Python prefix (when Python lives there)
    assert!(
        out.stdout.contains("/root FileNotFoundError") || out.stdout.contains("/root ['.pyenv']"),
        "{out:?}"
    );
}

#[test]
fn etc_shadow_cannot_be_read() {
    let out = run(job(
        "import os\n\
         try:\n    print(open('/etc/shadow').read())\nexcept Exception as e:\n    print('shadow', type(e).__name__)\n\
         print(sorted(os.listdir('/etc')))",
        5.0,
    ));
    assert!(out.stdout.contains("shadow FileNotFoundError"), "{out:?}");
    assert!(
        out.stdout.contains("['group', 'ld.so.cache', 'passwd']")
            || out.stdout.contains("['group', 'passwd']"),
        "{out:?}"
    );
}

#[test]
fn nothing_can_be_written_outside_scratch() {
    let host = host_dir();
    let python_prefix = sandbox()
        .protections()
        .python
        .as_ref()
        .unwrap()
        .prefix
        .clone();
    let targets: Vec<PathBuf> = vec![
        "/usr/seam-escape".into(),
        "/etc/seam-escape".into(),
        "/seam-escape".into(),
        "/dev/seam-escape".into(),
        python_prefix.join("seam-escape"),
        host.path().join("seam-escape"),
    ];
    let list: Vec<String> = targets.iter().map(|p| py_str(p)).collect();
    let code = format!(
        "import os\n\
         for p in [{}]:\n\
         \x20   try:\n\
         \x20       open(p, 'w').write('x'); print('WROTE', p)\n\
         \x20   except Exception as e:\n\
         \x20       print('refused', p, type(e).__name__)\n\
         for p in ['/dev/null', '/usr/bin']:\n\
         \x20   try:\n\
         \x20       os.chmod(p, 0o777); print('CHMOD', p)\n\
         \x20   except Exception as e:\n\
         \x20       print('refused chmod', p, type(e).__name__)\n\
         open('/scratch/ok', 'w').write('fine'); print('scratch', open('/tmp/ok').read())\n",
        list.join(", ")
    );
    let out = run(job(&code, 5.0));
    assert!(!out.stdout.contains("WROTE"), "{out:?}");
    assert!(!out.stdout.contains("CHMOD"), "{out:?}");
    assert_eq!(
        out.stdout.matches("refused ").count(),
        targets.len() + 2,
        "{out:?}"
    );
    assert!(out.stdout.contains("scratch fine"), "{out:?}");
    for t in &targets {
        assert!(!t.exists(), "{} was written", t.display());
    }
    let null = std::fs::metadata("/dev/null").unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(null.permissions().mode() & 0o777, 0o666);
}

#[test]
fn a_tcp_listener_on_loopback_cannot_be_reached() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let code = format!(
        "import socket\n\
         try:\n\
         \x20   socket.create_connection(('127.0.0.1', {port}), timeout=1); print('CONNECTED')\n\
         except Exception as e:\n\
         \x20   print('refused', type(e).__name__, e)\n"
    );
    let out = run(job(&code, 5.0));
    assert!(out.stdout.starts_with("refused"), "{out:?}");
    assert!(!out.stdout.contains("CONNECTED"));
    assert_eq!(
        listener.accept().map(|_| ()).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock,
        "the listener got a connection"
    );
}

#[test]
fn a_host_name_cannot_be_resolved() {
    let out = run(job(
        "import socket\n\
         for h in ['example.com', 'localhost']:\n\
         \x20   try:\n\
         \x20       print(h, 'RESOLVED', socket.getaddrinfo(h, 80))\n\
         \x20   except Exception as e:\n\
         \x20       print(h, 'refused', type(e).__name__)\n",
        5.0,
    ));
    assert!(out.stdout.contains("example.com refused"), "{out:?}");
    // even if localhost is known by name, there is nothing to reach there (see the TCP test)
}

#[test]
fn a_fork_bomb_is_bounded_and_leaves_nothing() {
    let tag = marker("FORKBOMB");
    let code = format!(
        "# {tag}\nimport os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    );
    let mut j = job(&code, 2.0);
    j.limits.processes = 16;
    let out = run(j);
    assert!(out.timed_out, "{out:?}");
    assert!(out.limit_hit.contains(&LimitHit::WallTime));
    assert!(out.wall_ms < 5000, "took {} ms", out.wall_ms);
    assert_eq!(processes_with(&tag), Vec::<String>::new());
}

#[test]
fn a_memory_bomb_fails_inside_its_limit() {
    let mut j = job(
        "try:\n    x = bytearray(4 << 30)\nexcept MemoryError:\n    print('big: MemoryError')\n\
         a = []\nwhile True:\n    a.append(bytearray(1 << 24))\n",
        5.0,
    );
    j.limits.address_space = 256 << 20;
    let out = run(j);
    assert!(out.stdout.contains("big: MemoryError"), "{out:?}");
    assert!(out.stderr.contains("MemoryError"), "{out:?}");
    assert_eq!(out.exit_code, Some(1));
    assert!(!out.timed_out);
}

#[test]
fn an_infinite_loop_is_killed_at_the_wall_clock() {
    let out = run(job("while True:\n    pass\n", 1.0));
    assert!(out.timed_out, "{out:?}");
    assert_eq!(out.exit_code, None);
    assert!(out.wall_ms >= 1000 && out.wall_ms < 4000, "{}", out.wall_ms);
}

#[test]
fn cpu_time_is_limited_apart_from_the_wall_clock() {
    // a wall far beyond the CPU limit: a loaded machine may give the loop a fraction of a core
    let mut j = job("while True:\n    pass\n", 15.0);
    j.limits.cpu_seconds = 1;
    let out = run(j);
    assert!(!out.timed_out, "{out:?}");
    assert_eq!(out.signal, Some(libc::SIGXCPU));
    assert!(out.limit_hit.contains(&LimitHit::CpuTime));
}

#[test]
fn a_gigabyte_of_output_is_cut_at_the_cap() {
    let out = run(job(
        "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(chunk)\n",
        10.0,
    ));
    assert!(out.stdout_cut, "{:?}", (out.exit_code, &out.stderr));
    assert_eq!(out.stdout.len(), 256 * 1024);
    assert!(out.limit_hit.contains(&LimitHit::Stdout));
    assert!(!out.timed_out, "the writer was not stopped at the cap");
    assert!(out.stderr.len() <= 256 * 1024);
}

#[test]
fn another_process_environment_cannot_be_read() {
    let secret = marker("ENV");
    let mut sleeper = std::process::Command::new("sleep")
        .arg("30")
        .env("SEAM_ESCAPE_SECRET", &secret)
        .spawn()
        .unwrap();
    let pid = sleeper.id();
    let code = format!(
        "import os\n\
         for p in ['/proc/{pid}/environ', '/proc/1/environ', '/proc/self/environ']:\n\
         \x20   try:\n\
         \x20       print(p, open(p, 'rb').read())\n\
         \x20   except Exception as e:\n\
         \x20       print(p, 'refused', type(e).__name__)\n"
    );
    let out = run(job(&code, 5.0));
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    assert!(!out.stdout.contains(&secret) && !out.stderr.contains(&secret));
    assert!(
        out.stdout
            .contains(&format!("/proc/{pid}/environ refused FileNotFoundError")),
        "{out:?}"
    );
}

#[test]
fn ptrace_is_refused() {
    let gate = std::process::id();
    let code = format!(
        "import ctypes, os\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         r = libc.ptrace(0, 0, 0, 0); print('traceme', r, ctypes.get_errno())\n\
         r = libc.ptrace(16, {gate}, 0, 0); print('attach', r, ctypes.get_errno())\n"
    );
    let out = run(job(&code, 5.0));
    assert!(out.stdout.contains("traceme -1 1\n"), "{out:?}"); // EPERM
    assert!(out.stdout.contains("attach -1 1\n"), "{out:?}");
}

#[test]
fn the_gate_cannot_be_signalled() {
    let gate = std::process::id();
    let code = format!(
        "import os, signal\n\
         try:\n\
         \x20   os.kill({gate}, signal.SIGKILL); print('SENT')\n\
         except Exception as e:\n\
         \x20   print('refused', type(e).__name__)\n\
         try:\n\
         \x20   os.kill(-1, signal.SIGKILL)\n\
         except Exception as e:\n\
         \x20   pass\n\
         print('still here')\n"
    );
    let out = run(job(&code, 5.0));
    assert!(out.stdout.contains("refused ProcessLookupError"), "{out:?}");
    assert!(!out.stdout.contains("SENT"));
    // and this process is still alive to assert it
}

#[test]
fn no_background_process_outlives_the_call() {
    let tag = marker("BACKGROUND");
    let code = format!(
        "import subprocess, sys, os\n\
         subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60) # {tag}'], start_new_session=True)\n\
         if os.fork() == 0:\n\
         \x20   os.setsid()\n\
         \x20   os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(60) # {tag}'])\n\
         print('started')\n"
    );
    let out = run(job(&code, 5.0));
    assert!(out.stdout.contains("started"), "{out:?}");
    assert!(!out.timed_out, "{out:?}");
    assert_eq!(processes_with(&tag), Vec::<String>::new());
}

#[test]
fn no_descriptor_is_inherited_from_the_gate() {
    // an fd without close-on-exec in the gate, the kind a careless library leaves
    let file = std::fs::File::open("/dev/null").unwrap();
    rustix::io::fcntl_setfd(&file, rustix::io::FdFlags::empty()).unwrap();
    let out = run(job(
        "import os\nfds = []\nfor fd in range(4096):\n    try:\n        os.fstat(fd); fds.append(fd)\n    except OSError:\n        pass\nprint(fds)\n",
        5.0,
    ));
    drop(file);
    assert_eq!(out.stdout, "[0, 1, 2]\n", "{out:?}");
}

#[test]
fn files_land_in_scratch_and_nothing_outlives_the_call() {
    let mut j = job(
        "import os\nprint(open('data/in.txt').read(), os.getcwd())\nopen('left-behind', 'w').write('x')\nopen('/dev/null', 'w').write('x')\n",
        5.0,
    );
    j.files = vec![ScratchFile {
        name: "data/in.txt".into(),
        text: "hello".into(),
    }];
    j.stdin = b"ignored".to_vec();
    let out = run(j);
    assert_eq!(out.stdout, "hello /scratch\n", "{out:?}");
    let again = run(job("import os\nprint(sorted(os.listdir('.')))\n", 5.0));
    assert_eq!(again.stdout, "[]\n", "{again:?}");
}

#[test]
fn stdin_reaches_python() {
    let mut j = job("import sys\nprint(sys.stdin.read().upper())", 5.0);
    j.stdin = b"from stdin".to_vec();
    assert_eq!(run(j).stdout, "FROM STDIN\n");
}

#[test]
fn a_bad_file_name_is_refused_before_anything_runs() {
    let mut j = job("print(1)", 5.0);
    j.files = vec![ScratchFile {
        name: "../escape".into(),
        text: String::new(),
    }];
    let err = sandbox().run(&j).unwrap_err();
    assert!(err.to_string().contains("../escape"), "{err}");
}

#[test]
fn eight_runs_at_once_each_finish_within_their_limits() {
    let handles: Vec<_> = (0..8)
        .map(|i| std::thread::spawn(move || run(job(&format!("print({i} * 2)"), 10.0))))
        .collect();
    for (i, h) in handles.into_iter().enumerate() {
        let out = h.join().unwrap();
        assert_eq!(out.exit_code, Some(0), "{out:?}");
        assert_eq!(out.stdout, format!("{}\n", i * 2));
        assert!(!out.timed_out);
    }
}

/// The controls: the same attempts without the walls do get out, so the tests above would
/// fail if the walls were gone.
#[test]
fn without_the_walls_the_same_attempts_succeed() {
    let home = host_dir();
    let secret = marker("CONTROL");
    let key = home.path().join("id_ed25519");
    std::fs::write(&key, &secret).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let code = format!(
        "import socket\nprint(open({key}).read())\nsocket.create_connection(('127.0.0.1', {port}), timeout=2); print('CONNECTED')\n",
        key = py_str(&key)
    );
    let out = sandbox().run_unsandboxed(&job(&code, 5.0)).unwrap();
    assert!(!out.sandboxed);
    assert!(out.stdout.contains(&secret), "{out:?}");
    assert!(out.stdout.contains("CONNECTED"), "{out:?}");
    let walled = run(job(&code, 5.0));
    assert!(!walled.stdout.contains(&secret) && !walled.stdout.contains("CONNECTED"));
}

#[test]
fn the_code_holds_no_capabilities() {
    // capget(2) through ctypes: version 3 header, two data structs
    let out = run(job(
        "import ctypes\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         hdr = (ctypes.c_uint32 * 2)(0x20080522, 0)\n\
         data = (ctypes.c_uint32 * 6)()\n\
         r = libc.capget(hdr, data)\n\
         print(r, list(data))\n",
        5.0,
    ));
    assert_eq!(out.stdout, "0 [0, 0, 0, 0, 0, 0]\n", "{out:?}");
}

#[test]
fn everyday_python_works_inside() {
    let out = run(job(
        "import multiprocessing as mp, subprocess, threading, tempfile, sqlite3, os\n\
         with mp.Pool(2) as p:\n    print('pool', p.map(abs, [-1, -2]))\n\
         print('sh', subprocess.run('echo $((1+2))', shell=True, capture_output=True, text=True).stdout.strip())\n\
         print('tmp', os.path.dirname(tempfile.mkstemp()[1]))\n\
         print('sqlite', sqlite3.connect(':memory:').execute('select 1+1').fetchone()[0])\n",
        10.0,
    ));
    assert_eq!(
        out.stdout, "pool [1, 2]\nsh 3\ntmp /scratch\nsqlite 2\n",
        "{out:?}"
    );
}

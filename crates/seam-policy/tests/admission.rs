//! Every way path admission refuses, on real directory trees in a temp dir.

mod common;

use std::fs;
use std::io::Read;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use common::{Fixture, HELLO, KEY, os, os_bytes, p, refused};
use rustix::fs::{CWD, FileType, Mode};
use seam_home::SeamHome;
use seam_policy::{Access, Decision, FileAccess, PathAdmission};
use seam_protocol::RefusalCode;

const READ: Access = Access::Owner(FileAccess::Read);
const WRITE: Access = Access::Owner(FileAccess::Write);

fn read_all(adm: &PathAdmission, raw: &str) -> Vec<u8> {
    let mut admitted = adm.open_read(READ, os(raw)).unwrap();
    let mut buf = Vec::new();
    admitted.file.read_to_end(&mut buf).unwrap();
    buf
}

fn mkfifo(path: &Path) {
    rustix::fs::mknodat(CWD, path, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
}

/// Runs `f` on another thread and fails if it does not finish within 10 s (it must not block).
fn promptly<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(10))
        .expect("admission blocked (no answer within 10 s)")
}

// ---- what is admitted ----

#[test]
fn reads_an_allowed_file_and_returns_it_open() {
    let fx = Fixture::new();
    let adm = fx.admission();
    let admitted = adm.open_read(READ, os("~/notes/hello.txt")).unwrap();
    assert_eq!(admitted.real, fx.home.join("notes/hello.txt"));
    assert_eq!(admitted.metadata.len(), HELLO.len() as u64);
    assert_eq!(read_all(&adm, "~/notes/hello.txt"), HELLO);
    let absolute = fx.home.join("notes/./hello.txt");
    assert_eq!(
        adm.open_read(READ, p(&absolute)).unwrap().real,
        fx.home.join("notes/hello.txt")
    );
}

#[test]
fn a_link_inside_the_allowed_tree_is_followed_and_the_real_path_reported() {
    let fx = Fixture::new();
    symlink(fx.home.join("notes/hello.txt"), fx.home.join("notes/alias")).unwrap();
    let adm = fx.admission();
    let admitted = adm.open_read(READ, os("~/notes/alias")).unwrap();
    assert_eq!(admitted.real, fx.home.join("notes/hello.txt"));
}

#[test]
fn relative_paths_are_relative_to_the_workspace_root() {
    let fx = Fixture::new();
    let adm = fx.admission();
    let admitted = adm.open_read(Access::Source, os("src/main.rs")).unwrap();
    assert_eq!(admitted.real, fx.ws.join("src/main.rs"));
    // The workspace is not in the owner's read list, so an owner read of it is refused.
    let r = refused(adm.open_read(READ, os("src/main.rs")));
    assert_eq!(r.code, RefusalCode::NotAllowed);
    // And an owner file is not a source path.
    let r = refused(adm.open_read(Access::Source, os("~/notes/hello.txt")));
    assert_eq!(r.code, RefusalCode::NotAllowed);
    assert!(r.message.contains("workspace root"), "{}", r.message);
}

#[test]
fn admitted_path_admits_directories_for_reads_but_open_read_does_not() {
    let fx = Fixture::new();
    let adm = fx.admission();
    let ok = adm.admitted_path(READ, os("~/notes")).unwrap();
    assert_eq!(ok.real, fx.home.join("notes"));
    assert!(ok.exists);
    assert_eq!(ok.decision, Decision::Allow);
    let r = refused(adm.open_read(READ, os("~/notes")));
    assert_eq!(r.code, RefusalCode::NotAFile);
    assert!(r.message.contains("directory"), "{}", r.message);
    let r = refused(adm.open_read(READ, os("~")));
    assert_eq!(r.code, RefusalCode::NotAFile);
}

// ---- malformed paths ----

#[test]
fn malformed_paths_are_invalid() {
    let fx = Fixture::new();
    let adm = fx.admission();
    let long_component = format!("~/{}", "a".repeat(256));
    let long_path = format!("~/{}", "abcdefgh/".repeat(460));
    let cases: Vec<(&std::ffi::OsStr, &str)> = vec![
        (os(""), "empty"),
        (os_bytes(b"~/notes/hello.txt\0.png"), "NUL"),
        (os_bytes(b"~/notes/\xff\xfe.txt"), "UTF-8"),
        (os(&long_component), "255"),
        (os(&long_path), "4095"),
    ];
    for (raw, what) in cases {
        for access in [READ, WRITE, Access::Source] {
            let r = refused(adm.admitted_path(access, raw));
            assert_eq!(r.code, RefusalCode::InvalidPath, "{raw:?}");
            assert!(r.message.contains(what), "{raw:?}: {}", r.message);
            let r = refused(adm.open_read(READ, raw));
            assert_eq!(r.code, RefusalCode::InvalidPath, "{raw:?}");
        }
    }
}

#[test]
fn shell_syntax_is_refused_not_taken_literally() {
    let fx = Fixture::new();
    // A directory literally named "$HOME" in the workspace must not be what "$HOME/…" reads.
    fs::create_dir_all(fx.ws.join("$HOME/notes")).unwrap();
    fs::write(fx.ws.join("$HOME/notes/hello.txt"), b"literal").unwrap();
    let adm = fx.admission_with("[filesystem]\nread = [\"~\", \"/\"]\n");
    for raw in [
        "~root/.ssh/id_rsa",
        "~nobody",
        "~+/x",
        "$HOME/notes/hello.txt",
        "${HOME}/notes/hello.txt",
        "$(echo ~)/notes/hello.txt",
        "`echo ~`/notes/hello.txt",
        "~/notes/*.txt",
        "~/notes/hell?.txt",
    ] {
        let r = refused(adm.open_read(READ, os(raw)));
        assert_eq!(r.code, RefusalCode::InvalidPath, "{raw}: {}", r.message);
        assert!(r.message.contains("expand"), "{raw}: {}", r.message);
    }
}

// ---- capability decisions ----

#[test]
fn ask_for_a_read_refuses_and_says_why() {
    let fx = Fixture::new();
    let adm = fx.admission_with("[capabilities]\n\"filesystem.read\" = \"ask\"\n");
    for access in [READ, Access::Source] {
        let r = refused(adm.open_read(access, os("~/notes/hello.txt")));
        assert_eq!(r.code, RefusalCode::ConsentRequired);
        assert!(
            r.message
                .contains("consent is given for a change, not for a read")
        );
        assert!(r.message.contains("\"filesystem.read\" = \"allow\""));
        let r = refused(adm.admitted_path(access, os("~/notes/hello.txt")));
        assert_eq!(r.code, RefusalCode::ConsentRequired);
    }
}

#[test]
fn deny_refuses_every_path_of_that_capability() {
    let fx = Fixture::new();
    let adm = fx.admission_with(
        "[capabilities]\n\"filesystem.read\" = \"deny\"\n\"filesystem.write\" = \"deny\"\n",
    );
    let r = refused(adm.open_read(READ, os("~/notes/hello.txt")));
    assert_eq!(r.code, RefusalCode::CapabilityDenied);
    assert!(r.message.contains("filesystem.read"), "{}", r.message);
    let r = refused(adm.admitted_path(WRITE, os(&format!("{}/staging/x", fx.seam.display()))));
    assert_eq!(r.code, RefusalCode::CapabilityDenied);
    assert!(r.message.contains("filesystem.write"), "{}", r.message);
}

// ---- `..` walks and places outside the lists ----

#[test]
fn dot_dot_walks_are_decided_on_where_they_land() {
    let fx = Fixture::new();
    let adm = fx.admission();
    let r = refused(adm.open_read(READ, os("~/notes/../../../../../../etc/passwd")));
    assert_eq!(r.code, RefusalCode::NotAllowed);
    assert!(r.message.contains("/etc/passwd"), "{}", r.message);
    assert!(!r.message.contains(".."), "{}", r.message);

    let r = refused(adm.open_read(READ, os("~/notes/../.ssh/id_rsa")));
    assert_eq!(r.code, RefusalCode::Protected);
    assert!(
        r.message
            .contains(&format!("{}/.ssh/id_rsa", fx.home.display()))
    );

    // From the workspace root, up and into the home: protected comes first.
    let r = refused(adm.open_read(Access::Source, os("../home/.ssh/id_rsa")));
    assert_eq!(r.code, RefusalCode::Protected);
    let r = refused(adm.open_read(Access::Source, os("../home/notes/hello.txt")));
    assert_eq!(r.code, RefusalCode::NotAllowed);
}

#[test]
fn dot_dot_is_lexical_the_normalised_path_is_what_is_opened() {
    let fx = Fixture::new();
    // ~/notes/up -> the fixture root; the kernel would take `up/..` to the root's parent,
    // lexically it is ~/notes. Admission opens ~/notes/hello.txt, what it checked.
    symlink(&fx.root, fx.home.join("notes/up")).unwrap();
    let adm = fx.admission();
    let admitted = adm.open_read(READ, os("~/notes/up/../hello.txt")).unwrap();
    assert_eq!(admitted.real, fx.home.join("notes/hello.txt"));
}

#[test]
fn absolute_paths_outside_the_lists_are_not_allowed() {
    let fx = Fixture::new();
    let adm = fx.admission();
    for raw in ["/etc/passwd", "/etc/hostname", "/", "/tmp"] {
        let r = refused(adm.open_read(READ, os(raw)));
        assert_eq!(r.code, RefusalCode::NotAllowed, "{raw}");
        assert!(r.message.contains("read allow-list"), "{}", r.message);
    }
    // Outside the lists, existence is not revealed.
    let r = refused(adm.open_read(READ, os("/no/such/file")));
    assert_eq!(r.code, RefusalCode::NotAllowed);
}

#[test]
fn missing_files_inside_the_lists_are_not_found() {
    let fx = Fixture::new();
    let adm = fx.admission();
    let r = refused(adm.open_read(READ, os("~/notes/missing.txt")));
    assert_eq!(r.code, RefusalCode::NotFound);
    assert!(
        r.message
            .contains(&format!("{}/notes/missing.txt", fx.home.display()))
    );
    let r = refused(adm.open_read(READ, os("~/notes/hello.txt/inside")));
    assert_eq!(r.code, RefusalCode::NotFound);
    assert!(r.message.contains("not a directory"), "{}", r.message);
}

// ---- links ----

#[test]
fn a_symlink_out_of_an_allowed_directory_is_refused_naming_its_target() {
    let fx = Fixture::new();
    symlink("/etc/passwd", fx.home.join("notes/out")).unwrap();
    let adm = fx.admission();
    for r in [
        refused(adm.open_read(READ, os("~/notes/out"))),
        refused(adm.admitted_path(READ, os("~/notes/out"))),
    ] {
        assert_eq!(r.code, RefusalCode::NotAllowed);
        assert!(r.message.contains("/etc/passwd"), "{}", r.message);
        assert!(!r.message.contains("notes/out"), "{}", r.message);
    }
    // A dangling link out: still not allowed, not "not found".
    symlink("/no/such/place", fx.home.join("notes/dangling-out")).unwrap();
    let r = refused(adm.open_read(READ, os("~/notes/dangling-out")));
    assert_eq!(r.code, RefusalCode::NotAllowed);
    assert!(r.message.contains("/no/such/place"), "{}", r.message);
    // A dangling link inside: not found, naming where it leads.
    symlink(
        fx.home.join("notes/gone.txt"),
        fx.home.join("notes/dangling-in"),
    )
    .unwrap();
    let r = refused(adm.open_read(READ, os("~/notes/dangling-in")));
    assert_eq!(r.code, RefusalCode::NotFound);
    assert!(r.message.contains("notes/gone.txt"), "{}", r.message);
}

#[test]
fn a_symlink_loop_is_refused_clearly() {
    let fx = Fixture::new();
    symlink("loop-b", fx.home.join("notes/loop-a")).unwrap();
    symlink("loop-a", fx.home.join("notes/loop-b")).unwrap();
    symlink("self", fx.home.join("notes/self")).unwrap();
    let adm = fx.admission();
    for raw in ["~/notes/loop-a", "~/notes/self", "~/notes/self/x"] {
        let r = refused(promptly({
            let adm = fx.admission();
            let raw = raw.to_owned();
            move || adm.open_read(READ, os(&raw))
        }));
        assert_eq!(r.code, RefusalCode::NotFound, "{raw}");
        assert!(r.message.contains("symbolic links"), "{raw}: {}", r.message);
        let r = refused(adm.admitted_path(WRITE, os(raw)));
        assert_ne!(r.code, RefusalCode::InvalidPath);
    }
}

#[test]
fn a_link_chain_to_a_protected_file_is_refused_naming_the_key() {
    let fx = Fixture::new();
    fs::create_dir_all(fx.home.join("notes/deeper")).unwrap();
    symlink("c2", fx.home.join("notes/c1")).unwrap();
    symlink(fx.home.join("notes/deeper/c3"), fx.home.join("notes/c2")).unwrap();
    symlink("../../.ssh/id_rsa", fx.home.join("notes/deeper/c3")).unwrap();
    let adm = fx.admission();
    for r in [
        refused(adm.open_read(READ, os("~/notes/c1"))),
        refused(adm.admitted_path(READ, os("~/notes/c1"))),
        refused(adm.admitted_path(WRITE, os("~/notes/c1"))),
    ] {
        assert_eq!(r.code, RefusalCode::Protected, "{}", r.message);
        assert!(
            r.message
                .contains(&format!("{}/.ssh/id_rsa", fx.home.display())),
            "{}",
            r.message
        );
        assert!(!r.message.contains("c1"), "{}", r.message);
    }
}

#[test]
fn protected_paths_never_reveal_whether_they_exist() {
    let fx = Fixture::new();
    symlink(
        fx.home.join(".ssh/id_ed25519"),
        fx.home.join("notes/to-missing-key"),
    )
    .unwrap();
    let adm = fx.admission();
    for raw in [
        "~/.ssh/id_rsa",
        "~/.ssh/id_ed25519",
        "~/notes/to-missing-key",
        "~/.aws/credentials",
    ] {
        let r = refused(adm.open_read(READ, os(raw)));
        assert_eq!(r.code, RefusalCode::Protected, "{raw}: {}", r.message);
    }
}

#[test]
fn a_hard_link_to_a_protected_file_is_refused() {
    let fx = Fixture::new();
    fs::hard_link(
        fx.home.join(".ssh/id_rsa"),
        fx.home.join("notes/innocent.txt"),
    )
    .unwrap();
    let adm = fx.admission();
    for r in [
        refused(adm.open_read(READ, os("~/notes/innocent.txt"))),
        refused(adm.admitted_path(READ, os("~/notes/innocent.txt"))),
    ] {
        assert_eq!(r.code, RefusalCode::Protected);
        assert!(r.message.contains("hard link"), "{}", r.message);
        assert!(r.message.contains(".ssh/id_rsa"), "{}", r.message);
    }
    // Also for a write, where hard links are allowed.
    let adm = fx.admission_with("[filesystem]\nwrite = [\"~/notes\"]\n");
    let r = refused(adm.admitted_path(WRITE, os("~/notes/innocent.txt")));
    assert_eq!(r.code, RefusalCode::Protected);
}

#[test]
fn a_hard_link_between_ordinary_files_is_fine() {
    let fx = Fixture::new();
    fs::hard_link(
        fx.home.join("notes/hello.txt"),
        fx.home.join("notes/hello2.txt"),
    )
    .unwrap();
    let adm = fx.admission();
    let mut admitted = adm.open_read(READ, os("~/notes/hello2.txt")).unwrap();
    let mut buf = Vec::new();
    admitted.file.read_to_end(&mut buf).unwrap();
    assert_eq!(buf, HELLO);
}

#[test]
fn a_hard_link_search_that_cannot_finish_refuses() {
    let fx = Fixture::new();
    for i in 0..20 {
        fs::write(fx.home.join(format!(".ssh/k{i}")), b"x").unwrap();
    }
    fs::hard_link(
        fx.home.join("notes/hello.txt"),
        fx.home.join("notes/hello2.txt"),
    )
    .unwrap();
    let adm = fx.admission().with_hard_link_budget(5);
    let r = refused(adm.open_read(READ, os("~/notes/hello2.txt")));
    assert_eq!(r.code, RefusalCode::Protected);
    assert!(r.message.contains("could not rule out"), "{}", r.message);
}

#[test]
fn a_protected_file_entry_is_refused_by_identity_too() {
    let fx = Fixture::new();
    fs::write(fx.home.join(".netrc"), KEY).unwrap();
    symlink(fx.home.join(".netrc"), fx.home.join("notes/netrc")).unwrap();
    let adm = fx.admission();
    for raw in ["~/.netrc", "~/notes/netrc"] {
        let r = refused(adm.open_read(READ, os(raw)));
        assert_eq!(r.code, RefusalCode::Protected, "{raw}");
        assert!(r.message.contains(&format!("{}/.netrc", fx.home.display())));
    }
}

#[test]
fn seams_own_keys_ledger_policy_and_config_files_are_protected() {
    let fx = Fixture::new();
    let adm = fx.admission();
    let layout = SeamHome::new(&fx.seam);
    // policy.toml: the file an "always" answer writes, which seam loads by default
    fs::write(layout.policy_file(), b"[consent]\nalways = []\n").unwrap();
    // config.toml: the gate's MCP upstreams, their commands and environments
    fs::write(layout.gate_config(), b"[mcp.servers.x]\ncommand = \"x\"\n").unwrap();
    for path in [
        layout.keys().join("signing.key"),
        layout.ledger().join("head"),
        layout.keys(),
        layout.policy_file(),
        layout.gate_config(),
    ] {
        let r = refused(adm.admitted_path(READ, p(&path)));
        assert_eq!(r.code, RefusalCode::Protected, "{}", path.display());
        assert!(r.message.contains("built-in"), "{}", r.message);
    }
    // The rest of seam's home is readable by default.
    fs::write(fx.seam.join("notes.md"), b"n").unwrap();
    adm.open_read(READ, p(&fx.seam.join("notes.md"))).unwrap();
}

#[test]
fn a_protected_directory_that_is_a_link_protects_where_it_leads() {
    let fx = Fixture::new();
    let vault = fx.path("elsewhere/aws-real");
    fs::create_dir_all(&vault).unwrap();
    fs::write(vault.join("credentials"), KEY).unwrap();
    symlink(&vault, fx.home.join(".aws")).unwrap();
    let adm = fx.admission_with(&format!(
        "[filesystem]\nread = [\"~\", \"{}\"]\n",
        fx.path("elsewhere").display()
    ));
    let r = refused(adm.open_read(READ, p(&vault.join("credentials"))));
    assert_eq!(r.code, RefusalCode::Protected);
    assert!(
        r.message
            .contains(&vault.join("credentials").display().to_string())
    );
    let r = refused(adm.open_read(READ, os("~/.aws/credentials")));
    assert_eq!(r.code, RefusalCode::Protected);
    // The refusal names the real file, where the protected link leads.
    assert!(
        r.message
            .contains(&vault.join("credentials").display().to_string()),
        "{}",
        r.message
    );
}

#[test]
fn a_user_protected_link_protects_both_ends() {
    let fx = Fixture::new();
    let real = fx.path("vault");
    fs::create_dir_all(&real).unwrap();
    fs::write(real.join("s"), KEY).unwrap();
    symlink(&real, fx.home.join("secrets")).unwrap();
    symlink(real.join("s"), fx.home.join("notes/v")).unwrap();
    let adm = fx.admission_with(&format!(
        "[filesystem]\nread = [\"~\", \"{}\"]\nprotected = [\"~/secrets\"]\n",
        real.display()
    ));
    for raw in ["~/secrets/s", "~/notes/v"] {
        let r = refused(adm.open_read(READ, os(raw)));
        assert_eq!(r.code, RefusalCode::Protected, "{raw}");
        assert!(
            r.message.contains("[filesystem] protected"),
            "{}",
            r.message
        );
    }
    let r = refused(adm.open_read(READ, p(&real.join("s"))));
    assert_eq!(r.code, RefusalCode::Protected);
}

#[test]
fn lists_are_resolved_again_on_refresh() {
    let fx = Fixture::new();
    let adm = fx.admission_with(&format!(
        "[filesystem]\nread = [\"~\", \"{}\"]\n",
        fx.path("later").display()
    ));
    let kube = fx.path("later/kube-real");
    fs::create_dir_all(&kube).unwrap();
    fs::write(kube.join("config"), KEY).unwrap();
    // Made a link only after the policy was loaded.
    symlink(&kube, fx.home.join(".kube")).unwrap();
    adm.refresh();
    let r = refused(adm.open_read(READ, p(&kube.join("config"))));
    assert_eq!(r.code, RefusalCode::Protected);
}

#[test]
fn the_policy_file_in_use_is_protected() {
    let fx = Fixture::new();
    let file = fx.home.join("policy.toml");
    fs::write(&file, "[filesystem]\nwrite = [\"~\"]\n").unwrap();
    let policy = seam_policy::Policy::load(Some(&file), fx.env()).unwrap();
    let adm = PathAdmission::new(std::sync::Arc::new(policy));
    let r = refused(adm.admitted_path(WRITE, os("~/policy.toml")));
    assert_eq!(r.code, RefusalCode::Protected);
    adm.admitted_path(WRITE, os("~/other.toml")).unwrap();
}

// ---- things that are not files ----

#[test]
fn a_fifo_is_refused_promptly_without_blocking() {
    let fx = Fixture::new();
    mkfifo(&fx.home.join("notes/fifo"));
    symlink(fx.home.join("notes/fifo"), fx.home.join("notes/to-fifo")).unwrap();
    for raw in ["~/notes/fifo", "~/notes/to-fifo"] {
        let adm = fx.admission();
        let raw_owned = raw.to_owned();
        let r = refused(promptly(move || adm.open_read(READ, os(&raw_owned))));
        assert_eq!(r.code, RefusalCode::NotAFile, "{raw}");
        assert!(r.message.contains("FIFO"), "{}", r.message);
        assert!(r.message.contains("notes/fifo"), "{}", r.message);
        let adm = fx.admission();
        let raw_owned = raw.to_owned();
        let r = refused(promptly(move || adm.admitted_path(READ, os(&raw_owned))));
        assert_eq!(r.code, RefusalCode::NotAFile);
    }
    let adm = fx.admission_with("[filesystem]\nwrite = [\"~/notes\"]\n");
    let r = refused(promptly(move || {
        adm.admitted_path(WRITE, os("~/notes/fifo"))
    }));
    assert_eq!(r.code, RefusalCode::NotAFile);
}

#[test]
fn a_device_is_refused() {
    let fx = Fixture::new();
    symlink("/dev/null", fx.home.join("notes/null")).unwrap();
    symlink("/dev/zero", fx.home.join("notes/zero")).unwrap();
    let adm = fx.admission();
    let r = refused(adm.open_read(READ, os("~/notes/null")));
    assert_eq!(r.code, RefusalCode::NotAllowed);
    assert!(r.message.contains("/dev/null"), "{}", r.message);
    // With everything readable, a device is still not a file.
    let adm = fx.admission_with("[filesystem]\nread = [\"/\"]\n");
    for raw in [
        "~/notes/null",
        "~/notes/zero",
        "/dev/null",
        "/dev/zero",
        "/dev/tty",
    ] {
        let adm = fx.admission_with("[filesystem]\nread = [\"/\"]\n");
        let raw_owned = raw.to_owned();
        let r = refused(promptly(move || adm.open_read(READ, os(&raw_owned))));
        assert_eq!(r.code, RefusalCode::NotAFile, "{raw}: {}", r.message);
        assert!(r.message.contains("device"), "{}", r.message);
    }
    let r = refused(adm.admitted_path(READ, os("/dev/null")));
    assert_eq!(r.code, RefusalCode::NotAFile);
}

#[test]
fn a_socket_is_refused() {
    let fx = Fixture::new();
    let _listener = std::os::unix::net::UnixListener::bind(fx.home.join("notes/sock")).unwrap();
    let adm = fx.admission();
    let r = refused(adm.open_read(READ, os("~/notes/sock")));
    assert_eq!(r.code, RefusalCode::NotAFile);
    assert!(r.message.contains("socket"), "{}", r.message);
}

// ---- /proc ----

#[test]
fn proc_self_root_is_no_way_around() {
    let fx = Fixture::new();
    let key = fx.home.join(".ssh/id_rsa");
    let hello = fx.home.join("notes/hello.txt");
    let via_root = |path: &Path| format!("/proc/self/root{}", path.display());
    let held_open = fs::File::open(&key).unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&held_open);
    let pid = std::process::id();

    // Under the default policy /proc is simply outside the lists.
    let adm = fx.admission();
    let r = refused(adm.open_read(READ, os(&via_root(&key))));
    assert_ne!(r.code, RefusalCode::InvalidPath);

    // Even when everything is readable, /proc magic links are never followed.
    let adm = fx.admission_with("[filesystem]\nread = [\"/\"]\n");
    for raw in [
        via_root(&key),
        format!("/proc/{pid}/root{}", key.display()),
        format!("/proc/thread-self/root{}", key.display()),
        format!("/proc/self/fd/{fd}"),
        format!("/dev/fd/{fd}"),
        format!("/proc/self/cwd/../../../../../../..{}", key.display()),
    ] {
        let r = refused(adm.open_read(READ, os(&raw)));
        assert!(
            matches!(r.code, RefusalCode::Protected | RefusalCode::NotAllowed),
            "{raw}: {r:?}"
        );
    }
    let r = refused(adm.open_read(READ, os(&via_root(&key))));
    assert_eq!(r.code, RefusalCode::Protected, "{}", r.message);
    assert!(
        r.message.contains(&key.display().to_string()),
        "{}",
        r.message
    );
    let r = refused(adm.open_read(READ, os(&via_root(&hello))));
    assert_eq!(r.code, RefusalCode::Protected);
    assert!(r.message.contains("/proc"), "{}", r.message);

    // A link in the home into /proc/self/root.
    symlink(via_root(&key), fx.home.join("notes/proc-key")).unwrap();
    let adm = fx.admission();
    let r = refused(adm.open_read(READ, os("~/notes/proc-key")));
    assert_eq!(r.code, RefusalCode::Protected, "{}", r.message);
    drop(held_open);
}

// ---- writes ----

#[test]
fn writes_resolve_the_deepest_existing_directory() {
    let fx = Fixture::new();
    let adm = fx.admission();
    let staging = SeamHome::new(&fx.seam).staging();
    let ok = adm
        .admitted_path(WRITE, p(&staging.join("new/dir/file.txt")))
        .unwrap();
    assert_eq!(ok.real, staging.join("new/dir/file.txt"));
    assert!(!ok.exists);
    assert_eq!(ok.decision, Decision::Ask);
    fs::write(staging.join("old.txt"), b"x").unwrap();
    let ok = adm
        .admitted_path(WRITE, p(&staging.join("old.txt")))
        .unwrap();
    assert!(ok.exists);

    let r = refused(adm.admitted_path(WRITE, os("~/notes/new.txt")));
    assert_eq!(r.code, RefusalCode::NotAllowed);
    assert!(r.message.contains("write allow-list"), "{}", r.message);
    let r = refused(adm.admitted_path(WRITE, p(&staging)));
    assert_eq!(r.code, RefusalCode::NotAFile);
    fs::write(staging.join("plain"), b"x").unwrap();
    let r = refused(adm.admitted_path(WRITE, p(&staging.join("plain/x"))));
    assert_eq!(r.code, RefusalCode::NotFound);
}

#[test]
fn writes_through_dangling_links_are_decided_on_the_target() {
    let fx = Fixture::new();
    let adm = fx.admission_with("[filesystem]\nwrite = [\"~\"]\n");
    symlink(
        fx.home.join(".ssh/authorized_keys"),
        fx.home.join("notes/ak"),
    )
    .unwrap();
    symlink("/etc/cron.d/evil", fx.home.join("notes/cron")).unwrap();
    let r = refused(adm.admitted_path(WRITE, os("~/notes/ak")));
    assert_eq!(r.code, RefusalCode::Protected);
    assert!(r.message.contains(".ssh/authorized_keys"), "{}", r.message);
    assert!(!r.message.contains("notes/ak"), "{}", r.message);
    let r = refused(adm.admitted_path(WRITE, os("~/notes/cron")));
    assert_eq!(r.code, RefusalCode::NotAllowed);
    assert!(r.message.contains("/etc/cron.d/evil"), "{}", r.message);
    // Straight into a protected directory, whatever the write list says.
    let r = refused(adm.admitted_path(WRITE, os("~/.ssh/authorized_keys")));
    assert_eq!(r.code, RefusalCode::Protected);
    let r = refused(adm.admitted_path(WRITE, os("~/.gnupg/new")));
    assert_eq!(r.code, RefusalCode::Protected);
}

#[test]
fn open_read_refuses_an_access_declared_for_writing() {
    let fx = Fixture::new();
    let adm = fx.admission();
    let r = refused(adm.open_read(WRITE, os("~/notes/hello.txt")));
    assert_eq!(r.code, RefusalCode::NotAllowed);
}

#[test]
fn proc_and_sys_are_protected_even_when_everything_is_readable() {
    let fx = Fixture::new();
    symlink("/proc/self/environ", fx.home.join("notes/env")).unwrap();
    symlink("/proc/self/mem", fx.home.join("notes/mem")).unwrap();
    let adm = fx.admission();
    for raw in ["~/notes/env", "~/notes/mem"] {
        let r = refused(adm.open_read(READ, os(raw)));
        assert_eq!(r.code, RefusalCode::Protected, "{raw}: {}", r.message);
        assert!(!r.message.contains("notes/"), "{}", r.message);
    }
    let adm = fx.admission_with("[filesystem]\nread = [\"/\"]\nwrite = [\"/\"]\n");
    for raw in [
        "/proc/self/environ",
        "/proc/self/mem",
        "/proc/cpuinfo",
        "/sys/kernel/mm/transparent_hugepage/enabled",
        "~/notes/env",
    ] {
        let r = refused(adm.open_read(READ, os(raw)));
        assert_eq!(r.code, RefusalCode::Protected, "{raw}: {}", r.message);
        let r = refused(adm.admitted_path(WRITE, os(raw)));
        assert_eq!(r.code, RefusalCode::Protected, "{raw}: {}", r.message);
    }
}

#[test]
fn a_link_inside_a_protected_directory_protects_where_it_leads() {
    let fx = Fixture::new();
    let keys = fx.path("keys");
    fs::create_dir_all(keys.join("dir")).unwrap();
    fs::write(keys.join("work_key"), KEY).unwrap();
    fs::write(keys.join("dir/inner"), KEY).unwrap();
    fs::write(keys.join("public.txt"), b"public").unwrap();
    symlink(keys.join("work_key"), fx.home.join(".ssh/id_work")).unwrap();
    symlink(keys.join("dir"), fx.home.join(".ssh/keydir")).unwrap();
    let adm = fx.admission_with(&format!(
        "[filesystem]\nread = [\"~\", \"{}\"]\n",
        keys.display()
    ));
    for path in [keys.join("work_key"), keys.join("dir/inner")] {
        let r = refused(adm.open_read(READ, p(&path)));
        assert_eq!(r.code, RefusalCode::Protected, "{path:?}");
        assert!(r.message.contains(".ssh/"), "{}", r.message);
        assert!(r.message.contains("link"), "{}", r.message);
    }
    adm.open_read(READ, p(&keys.join("public.txt"))).unwrap();
}

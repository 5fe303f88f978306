//! `seam policy check` and `seam policy show`.

mod common;

use std::os::unix::fs::symlink;

use common::{Owner, path_str};

#[test]
fn check_prints_the_real_path_of_an_admitted_file() {
    let o = Owner::new();
    let f = o.write("project/a.txt", b"a");
    symlink(&f, o.workspace.join("link")).unwrap();
    let out = o
        .seam()
        .args(["policy", "check", "--access", "read", "link"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), path_str(&f));
}

#[test]
fn check_refuses_a_protected_file_with_exit_3_naming_it() {
    let o = Owner::new();
    let key = o.write(".aws/credentials", b"[default]\n");
    symlink(&key, o.workspace.join("creds")).unwrap();
    let out = o
        .seam()
        .args(["policy", "check", "--access", "read", "creds"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(path_str(&key)), "{text}");
}

#[test]
fn writes_outside_staging_are_refused_by_default() {
    let o = Owner::new();
    let out = o
        .seam()
        .args(["policy", "check", "--access", "write", "new.txt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn check_output_passes_the_terminal_filter() {
    let o = Owner::new();
    let out = o
        .seam()
        .args([
            "policy",
            "check",
            "--access",
            "read",
            "/nowhere/\u{1b}[2J\u{202e}x",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(!out.stdout.contains(&0x1b), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains('\u{202e}'));
}

#[test]
fn show_prints_the_expanded_lists() {
    let o = Owner::new();
    let out = o.seam().args(["policy", "show"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("{}/.ssh", o.home.display())),
        "{text}"
    );
    assert!(text.contains("filesystem.read"), "{text}");

    let out = o
        .seam()
        .args(["policy", "show", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v.to_string()
            .contains(&format!("{}/.gnupg", o.home.display())),
        "{v}"
    );
}

#[test]
fn show_prints_the_protected_patterns_as_enforced() {
    let o = Owner::new();
    o.write(
        ".var/app/org.mozilla.firefox/.mozilla/firefox/profiles.ini",
        b"[General]\n",
    );
    let policy = o.policy("[filesystem]\nprotected = [\"*.age\"]\n");
    let out = o
        .seam()
        .arg("--policy")
        .arg(&policy)
        .args(["policy", "show"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let home = path_str(&o.home);
    for shown in [
        format!("{home}/.var/app/*/.mozilla  [built-in: ~/.var/app/*/.mozilla]"),
        format!("now: {home}/.var/app/org.mozilla.firefox/.mozilla"),
        "*.kdbx".to_owned(),
        "/run/user/*/containers/auth.json".to_owned(),
        format!("{home}/.config/rclone  [built-in: ~/.config/rclone]"),
        "*.age".to_owned(),
    ] {
        assert!(text.contains(&shown), "{shown} missing from:\n{text}");
    }
    let out = o
        .seam()
        .arg("--policy")
        .arg(&policy)
        .args(["policy", "show", "--json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let patterns = json["filesystem"]["protected_patterns"].as_array().unwrap();
    assert!(
        patterns
            .iter()
            .any(|p| p["pattern"] == "*.age" && p["kind"] == "file_name" && p["builtin"] == false)
    );
    let vkey = o.write("keys/work.kdbx", b"db");
    let out = o
        .seam()
        .args(["policy", "check", "--access", "read"])
        .arg(&vkey)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains(path_str(&vkey)));
}

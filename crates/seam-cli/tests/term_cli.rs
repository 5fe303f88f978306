//! `seam term visible|line` and the filter on error output.

mod common;

use common::Owner;

#[test]
fn visible_shows_escapes_and_keeps_layout() {
    let o = Owner::new();
    let out = o
        .seam()
        .args(["term", "visible"])
        .write_stdin(b"ok\tgo\n\x1b]0;pwned\x07\r\xff\xe2\x80\xae".to_vec())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.starts_with("ok\tgo\n"), "{s}");
    assert!(s.contains("\\x1b]0;pwned\\x07\\r\\xff"), "{s}");
    assert!(s.contains("\\u{202e}"), "{s}");
}

#[test]
fn line_shows_newlines_too() {
    let o = Owner::new();
    let out = o
        .seam()
        .args(["term", "line"])
        .write_stdin(b"a\nb\tc".to_vec())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "a\\nb\\tc");
}

#[test]
fn usage_errors_are_filtered_and_exit_2() {
    let o = Owner::new();
    let out = o.seam().arg("--bogus\u{1b}[31m").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!out.stderr.contains(&0x1b), "{out:?}");
}

//! `seam scrub` and `seam shapes`.

mod common;

use common::Owner;

const TOKEN: &str = "ghp_R8b2Xq4TzK9mLp3Vw7Ys1Nc6Hd5Fj0Ga2Ue4";

#[test]
fn scrub_redacts_the_secret_and_keeps_every_other_byte() {
    let o = Owner::new();
    let input = format!("before {TOKEN} after\n\\x1b stays as typed\n");
    let out = o
        .seam()
        .arg("scrub")
        .write_stdin(input.clone())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text,
        "before [REDACTED:github-pat-classic] after\n\\x1b stays as typed\n"
    );
}

#[test]
fn scrub_json_reports_byte_offsets_into_the_input() {
    let o = Owner::new();
    let input = format!("é {TOKEN}");
    let out = o
        .seam()
        .args(["scrub", "--json"])
        .write_stdin(input.clone())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hit = &v["hits"][0];
    let (start, end) = (
        hit["start"].as_u64().unwrap() as usize,
        hit["end"].as_u64().unwrap() as usize,
    );
    assert_eq!(&input[start..end], TOKEN);
    assert_eq!(hit["shape"], "github-pat-classic");
    assert_eq!(v["text"], "é [REDACTED:github-pat-classic]");
}

#[test]
fn scrub_json_refuses_non_utf8_with_exit_2() {
    let o = Owner::new();
    let out = o
        .seam()
        .args(["scrub", "--json"])
        .write_stdin(b"ok\xffno".to_vec())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("byte 2"));
}

#[test]
fn shapes_publishes_every_shape_with_id_and_description() {
    let o = Owner::new();
    let out = o.seam().args(["shapes", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = v.as_array().unwrap();
    assert!(list.len() >= 120, "{} shapes", list.len());
    assert_eq!(list.len(), seam_scrub_count(&o));
    for s in list {
        assert!(!s["id"].as_str().unwrap().is_empty());
        assert!(!s["description"].as_str().unwrap().is_empty());
    }
    assert!(list.iter().any(|s| s["id"] == "github-pat-classic"));
}

fn seam_scrub_count(o: &Owner) -> usize {
    let out = o.seam().arg("shapes").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    text.split_whitespace().next().unwrap().parse().unwrap()
}

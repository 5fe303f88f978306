//! The owner's `~/.gitconfig` is out of the agent's reach: inside the walls
//! git cannot read it, and a git that tries dies ("the repository is on a
//! detached HEAD" was the builder's word for it). seam's git reads no global
//! or system config, so the builder works all the same.
//!
//! We run as root here, so a mode-000 file would still be read: the test
//! points `GIT_CONFIG_GLOBAL` at a directory instead, which git fails to read,
//! and `HOME` at a directory holding a `.gitconfig`. The variables are set
//! for a child run of this test binary (`inner`), never in this process.

mod common;

use std::process::Command;

use common::{Fixture, params, turn};
use seam_local::{LocalConfig, LocalTools, ReturnQueue};
use serde_json::json;

const INNER: &str = "SEAM_LOCAL_TEST_GLOBAL_CONFIG_INNER";

#[test]
fn the_builder_works_when_the_owners_global_config_cannot_be_read() {
    let f = Fixture::new();
    let home = f.dir.path().join("owner-home");
    std::fs::create_dir(&home).unwrap();
    std::fs::write(
        home.join(".gitconfig"),
        "[user]\n\tname = Owner\n[core]\n\tpager = false\n",
    )
    .unwrap();
    let unreadable = f.dir.path().join("a-directory");
    std::fs::create_dir(&unreadable).unwrap();
    let probe = Command::new("git")
        .arg("-C")
        .arg(f.repo())
        .args(["rev-parse", "--abbrev-ref", "HEAD"])
        .env("HOME", &home)
        .env("GIT_CONFIG_GLOBAL", &unreadable)
        .output()
        .unwrap();
    assert!(
        !probe.status.success(),
        "the simulated wall makes a plain git fail"
    );
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "inner", "--nocapture", "--test-threads=1"])
        .env(INNER, f.dir.path())
        .env("HOME", &home)
        .env("GIT_CONFIG_GLOBAL", &unreadable)
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("1 passed"), "{said}");
    assert!(f.repo().join("g.txt").exists(), "approved into main");
}

/// The child's half: a whole builder turn and its approval, with the
/// unreadable global config in the environment. Does nothing when run alone.
#[test]
fn inner() {
    let Some(dir) = std::env::var_os(INNER) else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let mut config = LocalConfig::new(dir.join("home"));
    config.repo = Some(dir.join("repo"));
    let tools = LocalTools::open(config).unwrap();
    assert!(
        tools.builder_unavailable().is_none(),
        "{:?}",
        tools.builder_unavailable()
    );
    let t = turn("g1");
    let out = tools
        .call(
            &t,
            "builder",
            &params(json!({"op": "write", "path": "g.txt", "content": "g\n"})),
        )
        .unwrap();
    assert_eq!(out["changed"], true, "{out}");
    let item = tools.finish_turn(&t).unwrap().remove(0);
    ReturnQueue::open(&dir.join("home"))
        .unwrap()
        .approve(item.id)
        .unwrap();
}

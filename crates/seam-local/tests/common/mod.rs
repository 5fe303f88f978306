//! Shared by the integration tests: real git repositories in temp dirs.

#![allow(dead_code)]

use std::path::PathBuf;

use seam_local::{LocalConfig, LocalRefusal, LocalTools, TurnInfo};
use serde_json::{Map, Value};

pub use seam_test_support::git::git;

/// A temp dir with `repo/` (a git repository on `main` with one commit) and `home/`.
#[derive(Debug)]
pub struct Fixture {
    pub dir: tempfile::TempDir,
}

impl Fixture {
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        git(&repo, &["init", "-q", "-b", "main"]);
        std::fs::write(repo.join("README.md"), "hello\n").unwrap();
        std::fs::create_dir(repo.join("src")).unwrap();
        std::fs::write(repo.join("src/lib.rs"), "pub fn one() -> u32 {\n    1\n}\n").unwrap();
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", "first"]);
        Fixture { dir }
    }

    pub fn repo(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// The places in [`Fixture::home`], as seam lays them out.
    pub fn layout(&self) -> seam_home::SeamHome {
        seam_home::SeamHome::new(self.home())
    }

    pub fn config(&self) -> LocalConfig {
        let mut c = LocalConfig::new(self.home());
        c.repo = Some(self.repo());
        c
    }

    pub fn tools(&self) -> LocalTools {
        LocalTools::open(self.config()).unwrap()
    }

    pub fn head(&self, rev: &str) -> String {
        git(&self.repo(), &["rev-parse", rev])
    }

    /// The staging repository the builder's branches live in.
    pub fn staging(&self) -> PathBuf {
        self.tools()
            .staging_repository()
            .expect("the builder is available")
            .to_path_buf()
    }

    /// A revision in the staging repository.
    pub fn staged(&self, rev: &str) -> String {
        git(&self.staging(), &["rev-parse", rev])
    }

    /// Links in the repository that lead out of it, committed: `out` to the directory
    /// `outside` beside the repository, and `file-link` to `outside/secret.txt` (`keep`).
    /// Returns `outside`.
    pub fn links_out(&self) -> PathBuf {
        let outside = self.dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "keep\n").unwrap();
        std::os::unix::fs::symlink(&outside, self.repo().join("out")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret.txt"), self.repo().join("file-link"))
            .unwrap();
        git(&self.repo(), &["add", "-A"]);
        git(&self.repo(), &["commit", "-q", "-m", "links"]);
        outside
    }

    pub fn branches(&self) -> Vec<String> {
        git(&self.repo(), &["branch", "--format=%(refname:short)"])
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

pub fn turn(id: &str) -> TurnInfo {
    TurnInfo {
        turn: id.to_owned(),
        task: "make a change".to_owned(),
        ..TurnInfo::default()
    }
}

pub fn params(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("params must be an object"),
    }
}

/// A builder call of turn `t` that must be answered: its answer.
pub fn builder_ok(tools: &LocalTools, t: &str, p: Value) -> Value {
    tools
        .call(&turn(t), "builder", &params(p.clone()))
        .unwrap_or_else(|e| panic!("{p} refused: {e}"))
}

/// A builder call of turn `t` that must be refused: its refusal.
pub fn builder_refused(tools: &LocalTools, t: &str, p: Value) -> LocalRefusal {
    match tools.call(&turn(t), "builder", &params(p.clone())) {
        Err(e) => e,
        Ok(v) => panic!("{p} answered {v}"),
    }
}

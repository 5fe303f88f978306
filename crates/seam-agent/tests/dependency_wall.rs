//! The dependency rules of ARCHITECTURE.md, as one table, checked against the manifests.
//!
//! The seam cannot erode by an innocent `use`: every rule the architecture states about which
//! seam crate may depend on which is a row of [`RULES`], with its reason, and the test
//! fails naming the row when a manifest breaks it. The graph is read from
//! `cargo metadata --no-deps`: each workspace crate's *declared* dependencies on other seam
//! crates.
//!
//! - Normal and build dependencies are edges, whatever their platform or feature: optional and
//!   target-specific ones count too, so the graph is the widest any build could have.
//! - Dev-dependencies are not edges: they build only a crate's tests, benches and examples, and
//!   never reach its library or binary code.
//! - Only seam crates are nodes: a crate from outside the workspace cannot depend on one (seam
//!   is not published), so the closure over seam crates is the whole story.
//!
//! What of `seam-memory` the agent side may use is finer than a crate edge; the second test
//! reads the agent-side sources for it.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use serde_json::Value;

/// What one rule says about its crate.
#[derive(Debug, Clone, Copy)]
enum Says {
    /// The crate's direct seam dependencies are among these (none, if empty).
    DependsOnlyOn(&'static [&'static str]),
    /// The crate's whole closure (direct and through other seam crates) holds none of these.
    NeverReaches(&'static [&'static str]),
    /// The crate may depend on any seam crate, and no seam crate depends on it.
    IsTheTop,
}
use Says::{DependsOnlyOn, IsTheTop, NeverReaches};

/// The crates that touch the world: egress, credentials, the kernel's walls, and the gate's
/// pipeline that governs them. The agent side reaches governed tools over HTTP
/// (`seam_agent::gate_client`) and nothing of these.
const WORLD: &[&str] = &["seam-gate", "seam-toolbox", "seam-sandbox", "seam-keeper"];

/// The rules: (crate, what it says, why). Every workspace crate has a `DependsOnlyOn` row (or
/// is the top), so
/// a new crate or a new edge between crates is a decision written here (and drawn in
/// ARCHITECTURE.md's diagram, which shows exactly these edges).
const RULES: &[(&str, Says, &str)] = &[
    // Leaves: no seam crate.
    (
        "seam-protocol",
        DependsOnlyOn(&[]),
        "wire types both sides share: data only, no policy, no I/O",
    ),
    (
        "seam-term",
        DependsOnlyOn(&[]),
        "making others' text safe for a terminal, and clipping text for display, need nothing \
         of seam",
    ),
    (
        "seam-scrub",
        DependsOnlyOn(&[]),
        "secret shapes and redaction stand alone; the keeper hands it values",
    ),
    (
        "seam-home",
        DependsOnlyOn(&[]),
        "owner-only files, atomic replacement and locks: how seam writes a file, for every crate \
         that writes one, the agent's side too",
    ),
    (
        "seam-home",
        NeverReaches(WORLD),
        "the agent side writes its files with it",
    ),
    (
        "seam-ledger",
        DependsOnlyOn(&["seam-home"]),
        "the audit ledger records what it is given and decides nothing; its files are written \
         the one owner-only, atomic way",
    ),
    (
        "seam-pylex",
        DependsOnlyOn(&[]),
        "a lexer both sides share: the gate's python.run and the agent agree through it",
    ),
    (
        "seam-sandbox",
        DependsOnlyOn(&[]),
        "the only unsafe code: kernel walls over a plan, nothing of seam's policy",
    ),
    // The gate's libraries.
    (
        "seam-policy",
        DependsOnlyOn(&["seam-home", "seam-protocol", "seam-term"]),
        "policy decides over the protocol's types and nothing else; its file's edits are \
         replaced atomically; what its messages quote is clipped with seam-term",
    ),
    (
        "seam-keeper",
        DependsOnlyOn(&["seam-home", "seam-scrub", "seam-term"]),
        "the keeper hands its values to the scrubber as SecretValue, and writes its file \
         owner-only, atomically, under a lock; a bad name it quotes is clipped with seam-term",
    ),
    (
        "seam-memory",
        DependsOnlyOn(&["seam-home", "seam-ledger", "seam-scrub", "seam-term"]),
        "the stores scrub what they keep, write times with the ledger's one RFC 3339 formatter, \
         and cut what they keep to its byte budget with seam-term's",
    ),
    (
        "seam-toolbox",
        DependsOnlyOn(&["seam-ledger", "seam-policy", "seam-protocol", "seam-scrub"]),
        "the pipeline decides with the policy, scrubs, records in the ledger, and knows no tool \
         nor transport",
    ),
    (
        "seam-gate",
        DependsOnlyOn(&[
            "seam-home",
            "seam-keeper",
            "seam-ledger",
            "seam-memory",
            "seam-policy",
            "seam-protocol",
            "seam-pylex",
            "seam-sandbox",
            "seam-scrub",
            "seam-term",
            "seam-toolbox",
        ]),
        "the gate governs tools; it never parses model text nor runs the agent's tools",
    ),
    // The agent side.
    (
        "seam-action",
        DependsOnlyOn(&["seam-protocol", "seam-term"]),
        "model text to one canonical Action: the protocol's types alone, no I/O; what its \
         messages quote is clipped with seam-term (a leaf, no I/O either)",
    ),
    (
        "seam-local",
        DependsOnlyOn(&[
            "seam-home",
            "seam-memory",
            "seam-policy",
            "seam-protocol",
            "seam-scrub",
            "seam-term",
        ]),
        "the agent's local tools: its own build records, path rules, scrubbing, clipping for \
         display",
    ),
    (
        "seam-engine",
        DependsOnlyOn(&["seam-home"]),
        "the embedded model knows nothing of seam but how a file is written: a download is \
         staged, installed atomically and locked the one way",
    ),
    (
        "seam-agent",
        DependsOnlyOn(&[
            "seam-action",
            "seam-engine",
            "seam-home",
            "seam-local",
            "seam-protocol",
            "seam-pylex",
            "seam-term",
        ]),
        "the agent reaches governed tools over HTTP, not by linking the gate; the embedded \
         model (seam-engine, feature `embedded`) is its ChatModel, in-process; it clips text \
         for display with seam-term",
    ),
    (
        "seam-agent",
        NeverReaches(WORLD),
        "the agent side never links what touches the world",
    ),
    (
        "seam-action",
        NeverReaches(WORLD),
        "the agent side never links what touches the world",
    ),
    (
        "seam-local",
        NeverReaches(WORLD),
        "the agent side never links what touches the world",
    ),
    (
        "seam-pylex",
        NeverReaches(WORLD),
        "the agent side never links what touches the world",
    ),
    (
        "seam-engine",
        NeverReaches(WORLD),
        "the agent side never links what touches the world",
    ),
    // The launcher's: what the agent's walls let through, planned before the agent runs.
    (
        "seam-confine",
        DependsOnlyOn(&["seam-home", "seam-local", "seam-sandbox"]),
        "the agent's confinement: the programs are seam-local's, the walls seam-sandbox's; \
         no agent-side crate links it (it reaches the sandbox)",
    ),
    // The tests' fixtures.
    (
        "seam-test-support",
        DependsOnlyOn(&["seam-protocol"]),
        "the shared test fixtures: only ever a dev-dependency (no row above lists it, so no \
         library or binary links it); of seam it links the wire types alone, to read answers",
    ),
    // The binary wires everything.
    (
        "seam-cli",
        IsTheTop,
        "the thin binary wires the crates and owns all printing; no library can print through it",
    ),
];

/// Each seam crate's direct seam dependencies (normal and build).
type Graph = BTreeMap<String, BTreeSet<String>>;

fn workspace_graph() -> Graph {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    let members: BTreeSet<&str> = meta["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let packages: Vec<&Value> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| members.contains(p["id"].as_str().unwrap()))
        .collect();
    let seam: BTreeSet<&str> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                // `kind` is null for a normal dependency, "build" or "dev" otherwise.
                .filter(|d| d["kind"].is_null() || d["kind"] == "build")
                .map(|d| d["name"].as_str().unwrap())
                .filter(|n| seam.contains(n))
                .map(str::to_owned)
                .collect();
            (p["name"].as_str().unwrap().to_owned(), deps)
        })
        .collect()
}

/// Every crate `root` reaches, itself included.
fn closure(graph: &Graph, root: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![root.to_owned()];
    while let Some(c) = stack.pop() {
        if seen.insert(c.clone()) {
            stack.extend(graph.get(&c).into_iter().flatten().cloned());
        }
    }
    seen
}

/// The rules `graph` breaks: (index in [`RULES`], what).
fn violations(graph: &Graph) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (i, (krate, says, why)) in RULES.iter().enumerate() {
        match says {
            DependsOnlyOn(allowed) => {
                for dep in &graph[*krate] {
                    if !allowed.contains(&dep.as_str()) {
                        found.push((i, format!("{krate} depends on {dep}, but: {why}")));
                    }
                }
            }
            NeverReaches(forbidden) => {
                let reach = closure(graph, krate);
                for f in *forbidden {
                    if reach.contains(*f) {
                        found.push((i, format!("{krate} reaches {f} ({reach:?}), but: {why}")));
                    }
                }
            }
            IsTheTop => {
                for (user, deps) in graph {
                    if deps.contains(*krate) {
                        found.push((i, format!("{user} depends on {krate}, but: {why}")));
                    }
                }
            }
        }
    }
    found
}

#[test]
fn every_dependency_rule_holds() {
    let graph = workspace_graph();
    // Every name in the table is a workspace crate (a typo would make a rule hold vacuously),
    // and every workspace crate has a row saying what it may depend on.
    for (krate, says, _) in RULES {
        assert!(graph.contains_key(*krate), "no workspace crate {krate}");
        let names = match says {
            DependsOnlyOn(names) | NeverReaches(names) => *names,
            IsTheTop => &[],
        };
        for n in names {
            assert!(graph.contains_key(*n), "no workspace crate {n}");
        }
    }
    for krate in graph.keys() {
        assert!(
            RULES
                .iter()
                .any(|(k, s, _)| k == krate && matches!(s, DependsOnlyOn(_) | IsTheTop)),
            "{krate} has no DependsOnlyOn row: say what it may depend on, and why"
        );
    }
    let broken = violations(&graph);
    assert!(
        broken.is_empty(),
        "dependency rules broken:\n{}",
        broken
            .iter()
            .map(|(_, m)| m.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The wall is real: the binary that wires everything does reach what the agent side
    // must not, so a `NeverReaches` row can see it.
    let cli = closure(&graph, "seam-cli");
    for f in WORLD {
        assert!(cli.contains(*f), "the check would not see {f}");
    }
}

/// The table agrees with itself: even the widest graph its `DependsOnlyOn` rows allow keeps
/// every `NeverReaches` rule, so widening one crate's list cannot open a path to the world
/// unnoticed.
#[test]
fn the_table_allows_no_path_it_forbids() {
    let widest: Graph = RULES
        .iter()
        .filter_map(|(k, s, _)| match s {
            DependsOnlyOn(a) => Some((k.to_string(), a.iter().map(|d| d.to_string()).collect())),
            NeverReaches(_) | IsTheTop => None,
        })
        .collect();
    let broken = violations(&widest);
    assert!(
        broken.is_empty(),
        "the table contradicts itself: {broken:?}"
    );
}

/// Each rule can fail: the real graph with one edge added that breaks it is caught by that
/// very rule.
#[test]
fn each_rule_fails_when_broken() {
    let graph = workspace_graph();
    for (i, (krate, says, _)) in RULES.iter().enumerate() {
        let other = |ok: &dyn Fn(&str) -> bool| {
            graph
                .keys()
                .find(|c| c.as_str() != *krate && ok(c))
                .expect("a crate to break the rule with")
                .clone()
        };
        // The edge that breaks the rule: (from, to).
        let (from, to) = match says {
            DependsOnlyOn(allowed) => (krate.to_string(), other(&|c| !allowed.contains(&c))),
            NeverReaches(forbidden) => (krate.to_string(), forbidden[0].to_owned()),
            IsTheTop => (other(&|_| true), krate.to_string()),
        };
        let mut broken = graph.clone();
        broken.get_mut(&from).unwrap().insert(to.clone());
        assert!(
            violations(&broken).iter().any(|(j, _)| *j == i),
            "rule {i} ({krate}) does not see an edge from {from} to {to}"
        );
    }
}

/// `seam-memory` holds the gate's stores (the operator's notes, the codebase index with the
/// raw text of other repositories) and the agent's own build records. The agent-side crates
/// may use exactly this of it: `MemoryHome::new(home).agent_builds()` (the build records in
/// the agent's own directory, `agent/builds.sqlite`), the record types `NewBuildRecord`,
/// `RunKind`, `MemoryError`, and `seam_memory::time`. Nothing that opens the gate's stores,
/// which the agent's walls no longer grant.
#[test]
fn the_agent_side_uses_only_its_own_build_records_of_seam_memory() {
    const GATE_STORES: [&str; 9] = [
        "CodebaseIndex",
        "OperatorNotes",
        "existing_codebase",
        "existing_notes",
        "existing_builds(",
        "codebase_path",
        "notes_path",
        "builds_path",
        "MemoryHome::dir",
    ];
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut seen_memory_home = 0;
    for krate in ["seam-agent", "seam-action", "seam-local"] {
        let mut stack = vec![root.join(krate).join("src")];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                if p.extension().is_none_or(|x| x != "rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&p).unwrap();
                for bad in GATE_STORES {
                    assert!(!text.contains(bad), "{} uses {bad}", p.display());
                }
                let mut rest = text.as_str();
                while let Some(at) = rest.find("MemoryHome::new(") {
                    let tail = &rest[at..];
                    let stmt = &tail[..tail.find(';').unwrap_or(tail.len())];
                    assert!(
                        stmt.contains(".agent_builds()") && !stmt.contains(".builds()"),
                        "{}: a MemoryHome used for something else than the agent's own build \
                         records: {stmt}",
                        p.display()
                    );
                    seen_memory_home += 1;
                    rest = &tail[1..];
                }
            }
        }
    }
    assert!(seen_memory_home > 0, "the check would not see a use");
}

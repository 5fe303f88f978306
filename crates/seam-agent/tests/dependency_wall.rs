//! The seam cannot erode by an innocent `use`: the agent's whole dependency
//! closure (normal and build dependencies, as `cargo metadata` resolves
//! them) holds none of the crates that touch the world — the gate, the
//! sandbox, the keeper. Dev-dependencies are not followed: they never reach
//! the agent's binary code.

use std::collections::{BTreeSet, HashMap};
use std::process::Command;

use serde_json::Value;

const FORBIDDEN: [&str; 3] = ["seam-gate", "seam-sandbox", "seam-keeper"];

fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        // Resolved for this machine's platform only: the manifests of packages for other
        // platforms (never built here, so never downloaded) are not needed.
        .args(["metadata", "--format-version", "1", "--filter-platform"])
        .arg(host_triple())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The host's target triple, as rustc reports it.
fn host_triple() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(rustc)
        .arg("-vV")
        .output()
        .expect("running rustc -vV");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .trim()
        .to_owned()
}

/// Every package `root` reaches through normal and build dependencies.
fn closure(meta: &Value, root: &str) -> BTreeSet<String> {
    let names: HashMap<&str, &str> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let nodes: HashMap<&str, &Value> = meta["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n))
        .collect();
    let root_id = names
        .iter()
        .find(|(_, n)| **n == root)
        .map(|(id, _)| *id)
        .unwrap_or_else(|| panic!("{root} is not in the workspace"));
    let mut seen = BTreeSet::new();
    let mut stack = vec![root_id];
    while let Some(id) = stack.pop() {
        if !seen.insert(names[id].to_owned()) && id != root_id {
            continue;
        }
        for dep in nodes[id]["deps"].as_array().unwrap() {
            let normal_or_build = dep["dep_kinds"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k["kind"].is_null() || k["kind"] == "build");
            if normal_or_build {
                stack.push(dep["pkg"].as_str().unwrap());
            }
        }
    }
    seen
}

#[test]
fn the_agent_reaches_no_crate_that_touches_the_world() {
    let meta = metadata();
    for root in ["seam-agent", "seam-action", "seam-local"] {
        let reach = closure(&meta, root);
        assert!(reach.contains(root));
        for f in FORBIDDEN {
            assert!(
                !reach.contains(f),
                "{root} depends on {f} (through: {reach:?})"
            );
        }
    }
    // The wall is real: the binary that wires everything does reach them.
    let cli = closure(&meta, "seam-cli");
    for f in FORBIDDEN {
        assert!(cli.contains(f), "the check would not see {f}");
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

//! `"python.run" = "allow-unsandboxed"`: only python.run takes it, it allows, and the policy
//! as shown says so.

mod common;

use std::path::Path;

use common::Fixture;
use seam_policy::{Capability, Decision, Policy};

fn parse(fx: &Fixture, toml: &str) -> Result<Policy, seam_policy::PolicyError> {
    Policy::from_toml_str(toml, Path::new("my-policy.toml"), fx.env())
}

#[test]
fn allow_unsandboxed_allows_python_run_and_is_shown() {
    let fx = Fixture::new();
    let policy = parse(
        &fx,
        "[capabilities]\n\"python.run\" = \"allow-unsandboxed\"\n",
    )
    .unwrap();
    assert_eq!(policy.decision(Capability::PythonRun), Decision::Allow);
    assert!(policy.python_run_unsandboxed());
    let shown = policy.enforced();
    assert!(shown.python_run_unsandboxed);
    let text = shown.render_text();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("python.run"))
        .unwrap();
    assert!(line.contains("allow-unsandboxed"), "{line}");
    assert!(line.contains("WITHOUT the sandbox"), "{line}");
    let json = serde_json::to_value(&shown).unwrap();
    assert_eq!(json["python_run_unsandboxed"], true);
}

#[test]
fn by_default_python_run_asks_and_needs_the_sandbox() {
    let fx = Fixture::new();
    let policy = Policy::builtin(fx.env());
    assert_eq!(policy.decision(Capability::PythonRun), Decision::Ask);
    assert!(!policy.python_run_unsandboxed());
    let allowed = parse(&fx, "[capabilities]\n\"python.run\" = \"allow\"\n").unwrap();
    assert!(!allowed.python_run_unsandboxed());
    assert!(
        !allowed
            .enforced()
            .render_text()
            .contains("allow-unsandboxed")
    );
}

#[test]
fn only_python_run_takes_allow_unsandboxed() {
    let fx = Fixture::new();
    let err = parse(
        &fx,
        "[capabilities]\n\"web.search\" = \"allow-unsandboxed\"\n",
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        err.contains("web.search") && err.contains("line 2"),
        "{err}"
    );
    assert!(!err.contains("\"allow-unsandboxed\", "), "{err}");
    let typo = parse(
        &fx,
        "[capabilities]\n\"python.run\" = \"allow-unsandbox\"\n",
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        typo.contains("did you mean \"allow-unsandboxed\""),
        "{typo}"
    );
}

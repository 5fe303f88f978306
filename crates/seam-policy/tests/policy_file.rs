//! The policy file: strict parsing, defaults, and the policy as enforced.

mod common;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use common::Fixture;
use seam_policy::{Capability, Decision, EnforcedOrigin, Policy, PolicyError, TaintEgress};

fn parse(fx: &Fixture, toml: &str) -> Result<Policy, PolicyError> {
    Policy::from_toml_str(toml, Path::new("my-policy.toml"), fx.env())
}

/// The error for `toml`, checked to name `key` and `line`.
#[track_caller]
fn rejected(fx: &Fixture, toml: &str, key: &str, line: usize) -> String {
    let err = match parse(fx, toml) {
        Ok(_) => panic!("accepted:\n{toml}"),
        Err(e) => e,
    };
    let text = err.to_string();
    match &err {
        PolicyError::Invalid { line: l, .. } => assert_eq!(*l, line, "{text}"),
        PolicyError::Read { .. } => panic!("{text}"),
    }
    assert!(text.contains("my-policy.toml"), "{text}");
    assert!(text.contains(&format!("line {line}")), "{text}");
    assert!(text.contains(key), "{text}");
    text
}

#[test]
fn defaults_when_no_file_is_given() {
    let fx = Fixture::new();
    let policy = Policy::load(None, fx.env()).unwrap();
    let expected = [
        (Capability::FilesystemRead, Decision::Allow),
        (Capability::FilesystemWrite, Decision::Ask),
        (Capability::SelfModify, Decision::Ask),
        (Capability::PythonRun, Decision::Ask),
        (Capability::WebSearch, Decision::Ask),
        (Capability::Memory, Decision::Allow),
        (Capability::Facts, Decision::Allow),
        (Capability::WebFetch, Decision::Ask),
    ];
    for (cap, decision) in expected {
        assert_eq!(policy.decision(cap), decision, "{cap}");
    }
    let shown = policy.enforced();
    assert_eq!(shown.origin, EnforcedOrigin::Builtin);
    let paths = |list: &[seam_policy::EnforcedPath]| -> Vec<String> {
        list.iter().map(|p| p.path.clone()).collect()
    };
    assert_eq!(
        paths(&shown.filesystem.read),
        [fx.home.display().to_string(), fx.seam.display().to_string()]
    );
    assert_eq!(
        paths(&shown.filesystem.write),
        [seam_home::SeamHome::new(&fx.seam)
            .staging()
            .display()
            .to_string()]
    );
    let protected = paths(&shown.filesystem.protected);
    for rel in [
        ".ssh",
        ".gnupg",
        ".password-store",
        ".local/share/keyrings",
        ".aws",
        ".config/gcloud",
        ".azure",
        ".kube",
        ".docker/config.json",
        ".netrc",
        ".git-credentials",
        ".pgpass",
        ".config/gh/hosts.yml",
        ".mozilla",
        ".config/google-chrome",
        ".config/chromium",
        ".config/BraveSoftware",
    ] {
        assert!(
            protected.contains(&fx.home.join(rel).display().to_string()),
            "{rel}"
        );
    }
    for rel in ["keys", "ledger"] {
        assert!(protected.contains(&fx.seam.join(rel).display().to_string()));
    }
    assert!(shown.filesystem.protected.iter().all(|p| p.builtin));
}

#[test]
fn an_empty_file_is_the_defaults() {
    let fx = Fixture::new();
    let policy = parse(&fx, "# nothing\n").unwrap();
    assert_eq!(policy.decision(Capability::SelfModify), Decision::Ask);
    assert_eq!(policy.enforced().filesystem.read.len(), 2);
}

#[test]
fn the_documented_shape_parses() {
    let fx = Fixture::new();
    let policy = parse(
        &fx,
        r#"
[capabilities]
"filesystem.read" = "allow"     # allow | ask | deny
"filesystem.write" = "ask"
"self.modify" = "deny"
"python.run" = "deny"
"web.search" = "allow"
memory = "ask"

[filesystem]
read = ["~", "~/notes"]         # allow-list for reads
write = ["~/project"]           # allow-list for writes
protected = ["~/secrets"]       # added to the built-in protected list
"#,
    )
    .unwrap();
    assert_eq!(policy.decision(Capability::PythonRun), Decision::Deny);
    assert_eq!(policy.decision(Capability::WebSearch), Decision::Allow);
    assert_eq!(policy.decision(Capability::Memory), Decision::Ask);
    let shown = policy.enforced();
    let read: Vec<&str> = shown
        .filesystem
        .read
        .iter()
        .map(|p| p.path.as_str())
        .collect();
    assert_eq!(
        read,
        [
            fx.home.display().to_string(),
            fx.home.join("notes").display().to_string()
        ]
    );
    assert_eq!(
        shown.filesystem.write[0].path,
        fx.home.join("project").display().to_string()
    );
    assert_eq!(shown.filesystem.write[0].written, "~/project");
    let secrets = shown
        .filesystem
        .protected
        .iter()
        .find(|p| p.written == "~/secrets")
        .unwrap();
    assert!(!secrets.builtin);
    // The built-in list is still all there.
    assert!(
        shown
            .filesystem
            .protected
            .iter()
            .any(|p| p.path.ends_with("/.ssh") && p.builtin)
    );
}

#[test]
fn the_built_in_protected_list_cannot_be_removed() {
    let fx = Fixture::new();
    let policy = parse(&fx, "[filesystem]\nprotected = []\n").unwrap();
    let shown = policy.enforced();
    assert!(
        shown
            .filesystem
            .protected
            .iter()
            .any(|p| p.path.ends_with("/.ssh"))
    );
    assert!(
        shown
            .filesystem
            .protected
            .iter()
            .any(|p| p.path.ends_with("/keys"))
    );
}

#[test]
fn a_list_given_replaces_the_default() {
    let fx = Fixture::new();
    let policy = parse(&fx, "[filesystem]\nread = []\n").unwrap();
    let shown = policy.enforced();
    assert!(shown.filesystem.read.is_empty());
    assert_eq!(shown.filesystem.write.len(), 1, "write keeps its default");
    assert!(shown.render_text().contains("(empty: nothing is allowed)"));
}

#[test]
fn unknown_keys_are_rejected_with_their_line() {
    let fx = Fixture::new();
    let text = rejected(
        &fx,
        "[capabilities]\n\"filesystem.read\" = \"allow\"\n\"filesystem.raed\" = \"deny\"\n",
        "filesystem.raed",
        3,
    );
    assert!(text.contains("did you mean \"filesystem.read\""), "{text}");
    let text = rejected(
        &fx,
        "[capabilities]\nmemory = \"allow\"\n\n[filesytem]\nread = [\"~\"]\n",
        "filesytem",
        4,
    );
    assert!(text.contains("did you mean \"filesystem\""), "{text}");
    rejected(&fx, "[filesystem]\nraed = [\"~\"]\n", "raed", 2);
    rejected(&fx, "[filesystem]\nRead = [\"~\"]\n", "Read", 2);
    rejected(&fx, "autonomy = \"high\"\n", "autonomy", 1);
    rejected(&fx, "[capabilities]\n\"Memory\" = \"allow\"\n", "Memory", 2);
    // An unquoted dotted name makes a nested table: explain how to write it.
    let text = rejected(
        &fx,
        "[capabilities]\nfilesystem.read = \"allow\"\n",
        "filesystem",
        2,
    );
    assert!(text.contains("quoted"), "{text}");
    rejected(
        &fx,
        "[capabilities.filesystem]\nread = \"allow\"\n",
        "filesystem",
        1,
    );
}

#[test]
fn bad_values_are_rejected_with_their_line() {
    let fx = Fixture::new();
    let text = rejected(
        &fx,
        "[capabilities]\n\"filesystem.read\" = \"alow\"\n",
        "filesystem.read",
        2,
    );
    assert!(text.contains("\"alow\""), "{text}");
    assert!(text.contains("did you mean \"allow\""), "{text}");
    rejected(&fx, "[capabilities]\nmemory = true\n", "memory", 2);
    rejected(&fx, "[capabilities]\nmemory = \"Allow\"\n", "memory", 2);
    rejected(&fx, "[capabilities]\nmemory = [\"allow\"]\n", "memory", 2);
    rejected(&fx, "[filesystem]\nread = \"~\"\n", "read", 2);
    rejected(
        &fx,
        "[filesystem]\nread = [\n  \"~\",\n  3,\n]\n",
        "read",
        4,
    );
    rejected(&fx, "capabilities = 1\n", "capabilities", 1);
    rejected(&fx, "filesystem = [1]\n", "filesystem", 1);
    rejected(&fx, "[[filesystem]]\nread = []\n", "filesystem", 1);
}

#[test]
fn policy_paths_expand_only_tilde() {
    let fx = Fixture::new();
    for (path, what) in [
        ("$HOME/notes", "$HOME"),
        ("${HOME}", "${HOME}"),
        ("~root/x", "~root"),
        ("`pwd`", "`pwd`"),
        ("notes", "relative"),
        ("", "empty"),
        ("~/a\\u0000b", "NUL"),
    ] {
        let toml = format!("[filesystem]\n\nprotected = [\"{path}\"]\n");
        let text = rejected(&fx, &toml, "protected", 3);
        assert!(text.contains(what), "{path}: {text}");
    }
    let policy = parse(
        &fx,
        "[filesystem]\nread = [\"~\", \"~/\", \"~/a/../b\", \"/srv//x/\"]\n",
    )
    .unwrap();
    let read: Vec<String> = policy
        .enforced()
        .filesystem
        .read
        .iter()
        .map(|p| p.path.clone())
        .collect();
    assert_eq!(
        read,
        [
            fx.home.display().to_string(),
            fx.home.join("b").display().to_string(),
            "/srv/x".to_owned()
        ]
    );
}

#[test]
fn syntax_errors_and_duplicates_name_the_line() {
    let fx = Fixture::new();
    let text = rejected(
        &fx,
        "[capabilities]\nmemory = \"allow\"\nmemory = \"deny\"\n",
        "memory",
        3,
    );
    assert!(text.contains("duplicate"), "{text}");
    let err = parse(&fx, "[capabilities\n").unwrap_err().to_string();
    assert!(err.contains("line 1"), "{err}");
    let err = parse(&fx, "a = \n").unwrap_err().to_string();
    assert!(err.contains("line 1"), "{err}");
}

#[test]
fn load_reads_a_file_and_says_which() {
    let fx = Fixture::new();
    let file = fx.path("policy.toml");
    fs::write(&file, "[capabilities]\n\"web.search\" = \"deny\"\n").unwrap();
    let policy = Policy::load(Some(&file), fx.env()).unwrap();
    assert_eq!(policy.decision(Capability::WebSearch), Decision::Deny);
    let shown = policy.enforced();
    assert_eq!(
        shown.origin,
        EnforcedOrigin::File {
            path: file.display().to_string()
        }
    );
    assert!(
        shown
            .render_text()
            .contains(&format!("policy: {}", file.display()))
    );
    let missing = fx.path("nope.toml");
    let err = Policy::load(Some(&missing), fx.env()).unwrap_err();
    assert!(matches!(err, PolicyError::Read { .. }));
    assert!(err.to_string().contains("nope.toml"), "{err}");
    fs::write(&file, "[filesystem]\nwrite = [\"~\"]\nprotectd = []\n").unwrap();
    let err = Policy::load(Some(&file), fx.env()).unwrap_err().to_string();
    assert!(err.contains("policy.toml, line 3"), "{err}");
}

#[test]
fn a_fifo_as_policy_file_does_not_block() {
    let fx = Fixture::new();
    let fifo = fx.path("policy.fifo");
    seam_test_support::fs::make_fifo(&fifo);
    let env = fx.env();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(Policy::load(Some(&fifo), env).map(|_| ()).map_err(|e| {
            // The message and its causes, as `seam` shows them.
            std::iter::successors(Some(&e as &dyn std::error::Error), |e| e.source())
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join(": ")
        }));
    });
    let result = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("loading blocked");
    let err = result.unwrap_err();
    assert!(err.contains("not a regular file"), "{err}");
}

#[test]
fn enforced_json_has_the_documented_shape() {
    let fx = Fixture::new();
    let real = fx.path("vault");
    fs::create_dir_all(&real).unwrap();
    symlink(&real, fx.home.join("secrets")).unwrap();
    let policy = parse(
        &fx,
        "[capabilities]\nmemory = \"deny\"\n[filesystem]\nprotected = [\"~/secrets\"]\n",
    )
    .unwrap();
    let json = serde_json::to_value(policy.enforced()).unwrap();
    assert_eq!(json["origin"]["kind"], "file");
    assert_eq!(json["origin"]["path"], "my-policy.toml");
    let caps = json["capabilities"].as_object().unwrap();
    let names: Vec<&String> = caps.keys().collect();
    assert_eq!(names.len(), 8);
    assert_eq!(json["capabilities"]["web.fetch"], "ask");
    assert_eq!(json["capabilities"]["memory"], "deny");
    assert_eq!(json["capabilities"]["filesystem.read"], "allow");
    let secrets = json["filesystem"]["protected"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["written"] == "~/secrets")
        .unwrap()
        .clone();
    assert_eq!(
        secrets["path"],
        fx.home.join("secrets").display().to_string()
    );
    assert_eq!(secrets["canonical"], real.display().to_string());
    assert_eq!(secrets["builtin"], false);
    assert_eq!(json["source"][0]["path"], fx.ws.display().to_string());
    assert_eq!(json["workspace_root"], fx.ws.display().to_string());

    let text = policy.enforced().render_text();
    assert!(text.contains("policy: my-policy.toml"), "{text}");
    assert!(text.contains("memory"), "{text}");
    assert!(
        text.contains(&format!(
            "{} -> {}",
            fx.home.join("secrets").display(),
            real.display()
        )),
        "{text}"
    );
    assert!(text.contains("[built-in: ~/.ssh]"), "{text}");
}

#[test]
fn taint_egress_defaults_to_deny_and_is_shown() {
    let fx = Fixture::new();
    let policy = Policy::load(None, fx.env()).unwrap();
    assert_eq!(policy.taint_egress(), TaintEgress::Deny);
    let json = serde_json::to_value(policy.enforced()).unwrap();
    assert_eq!(json["taint"]["egress"], "deny");
    let text = policy.enforced().render_text();
    assert!(text.contains("[taint] egress"), "{text}");
    assert!(text.contains("egress             deny"), "{text}");

    let allow = parse(&fx, "[taint]\negress = \"allow\"\n").unwrap();
    assert_eq!(allow.taint_egress(), TaintEgress::Allow);
    let json = serde_json::to_value(allow.enforced()).unwrap();
    assert_eq!(json["taint"]["egress"], "allow");
    assert!(
        allow
            .enforced()
            .render_text()
            .contains("egress             allow"),
    );
    let deny = parse(&fx, "[taint]\negress = \"deny\"\n").unwrap();
    assert_eq!(deny.taint_egress(), TaintEgress::Deny);
}

#[test]
fn taint_keys_and_values_are_strict() {
    let fx = Fixture::new();
    let text = rejected(&fx, "[taint]\negres = \"allow\"\n", "egres", 2);
    assert!(text.contains("did you mean \"egress\""), "{text}");
    let text = rejected(&fx, "[taint]\negress = \"ask\"\n", "egress", 2);
    assert!(text.contains("\"deny\", \"allow\""), "{text}");
    rejected(&fx, "\n[taint]\negress = true\n", "egress", 3);
    rejected(&fx, "taint = \"deny\"\n", "taint", 1);
}

#[test]
fn facts_is_a_capability_of_its_own() {
    let fx = Fixture::new();
    let policy = parse(&fx, "[capabilities]\nfacts = \"deny\"\n").unwrap();
    assert_eq!(policy.decision(Capability::Facts), Decision::Deny);
    assert_eq!(policy.decision(Capability::Memory), Decision::Allow);
}

#[test]
fn consent_always_answers_ask_for_one_tool_and_never_overrides_deny() {
    let fx = Fixture::new();
    let policy = parse(
        &fx,
        "[capabilities]\n\"web.search\" = \"deny\"\n[consent]\nalways = [\"python.run\", \"web.search\"]\n",
    )
    .unwrap();
    assert_eq!(
        policy.decision_for_tool(Capability::PythonRun, "python.run"),
        Decision::Allow
    );
    // Another tool of the same capability still asks; a deny stays a deny.
    assert_eq!(
        policy.decision_for_tool(Capability::PythonRun, "other.run"),
        Decision::Ask
    );
    assert_eq!(
        policy.decision_for_tool(Capability::WebSearch, "web.search"),
        Decision::Deny
    );
    assert_eq!(policy.decision(Capability::PythonRun), Decision::Ask);
    let text = policy.enforced().render_text();
    assert!(text.contains("python.run  always"), "{text}");
    let json = serde_json::to_value(policy.enforced()).unwrap();
    assert_eq!(json["consent_always"][0], "python.run");
}

#[test]
fn consent_keys_and_values_are_strict() {
    let fx = Fixture::new();
    rejected(&fx, "[consent]\nallways = []\n", "allways", 2);
    rejected(&fx, "[consent]\nalways = \"python.run\"\n", "always", 2);
    rejected(&fx, "[consent]\nalways = [\"python run\"]\n", "always", 2);
    rejected(&fx, "\n[consent]\nalways = [1]\n", "always", 3);
}

#[test]
fn egress_destinations_are_parsed_matched_and_shown() {
    let fx = Fixture::new();
    let policy = parse(
        &fx,
        "[egress]\ndestinations = [\"*.Example.org\", \"bob@example.net\", \
         \"gb29 nwbk 6016 1331 9268 19\", \"*.example.org\"]\n",
    )
    .unwrap();
    let allow = policy.egress_destinations();
    assert_eq!(allow.entries().len(), 3, "a repeated entry is kept once");
    let d = |s: &str| seam_policy::Destination::parse_value(s).unwrap();
    assert_eq!(
        allow.matching(&d("files.example.org")),
        Some("*.Example.org")
    );
    assert_eq!(
        allow.matching(&d("Bob@Example.NET")),
        Some("bob@example.net")
    );
    assert!(allow.matching(&d("GB29NWBK60161331926819")).is_some());
    assert_eq!(allow.matching(&d("example.org")), None);
    assert_eq!(allow.matching(&d("mallory@example.net")), None);
    let text = policy.enforced().render_text();
    assert!(text.contains("egress in a tainted turn"), "{text}");
    assert!(
        text.contains("*.Example.org  (any host below example.org"),
        "{text}"
    );
    assert!(text.contains("named in the operator's words"), "{text}");
    let json = serde_json::to_value(policy.enforced()).unwrap();
    assert_eq!(
        json["egress"]["destinations"][1]["written"],
        "bob@example.net"
    );
    // without the table: an empty list, said so
    let text = parse(&fx, "").unwrap().enforced().render_text();
    assert!(
        text.contains("(empty: only destinations the operator's words name)"),
        "{text}"
    );
    let text = parse(&fx, "[taint]\negress = \"allow\"\n")
        .unwrap()
        .enforced()
        .render_text();
    assert!(text.contains("the allow-list below is not used"), "{text}");
}

#[test]
fn egress_keys_and_values_are_strict() {
    let fx = Fixture::new();
    rejected(&fx, "[egress]\ndestination = []\n", "destination", 2);
    rejected(
        &fx,
        "[egress]\ndestinations = \"*.example.org\"\n",
        "destinations",
        2,
    );
    rejected(&fx, "[egress]\ndestinations = [1]\n", "destinations", 2);
    let t = rejected(
        &fx,
        "\n[egress]\ndestinations = [\"a.*.org\"]\n",
        "destinations",
        3,
    );
    assert!(t.contains("only a first label"), "{t}");
    rejected(
        &fx,
        "[egress]\ndestinations = [\"  \"]\n",
        "destinations",
        2,
    );
    let t = rejected(&fx, "[egress]\nunnamed = \"allow\"\n", "unnamed", 2);
    assert!(t.contains("[taint] egress = \"allow\""), "{t}");
    let t = rejected(&fx, "[egress]\nunnamed = \"aks\"\n", "unnamed", 2);
    assert!(t.contains("did you mean \"ask\""), "{t}");
    rejected(&fx, "\n[egress]\nunnamed = true\n", "unnamed", 3);
}

#[test]
fn an_unnamed_destination_is_refused_unless_the_policy_says_ask() {
    let fx = Fixture::new();
    let default = parse(&fx, "").unwrap();
    assert_eq!(default.egress_unnamed(), Decision::Deny);
    let text = default.enforced().render_text();
    assert!(
        text.contains("[egress] unnamed = \"deny\"): refused"),
        "{text}"
    );
    let ask = parse(&fx, "[egress]\nunnamed = \"ask\"\n").unwrap();
    assert_eq!(ask.egress_unnamed(), Decision::Ask);
    let text = ask.enforced().render_text();
    assert!(
        text.contains("the operator is asked about that exact value"),
        "{text}"
    );
    let json = serde_json::to_value(ask.enforced()).unwrap();
    assert_eq!(json["egress"]["unnamed"], "ask");
    assert_eq!(
        parse(&fx, "[egress]\nunnamed = \"deny\"\n")
            .unwrap()
            .egress_unnamed(),
        Decision::Deny
    );
}

//! Properties of the builder's path check: whatever text the model sends, a
//! path that passes stays inside the repository and out of `.git`.

use proptest::prelude::*;
use seam_local::RepoPath;

fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("..".to_owned()),
        Just(".".to_owned()),
        Just("".to_owned()),
        Just(".git".to_owned()),
        Just(".GiT".to_owned()),
        Just("~".to_owned()),
        Just("a\\..".to_owned()),
        "[a-z.~\\-]{1,6}",
        "\\PC{1,4}",
    ]
}

proptest! {
    #[test]
    fn an_accepted_path_never_leaves_or_enters_git(
        lead in prop_oneof![Just(""), Just("/"), Just("./"), Just("~/")],
        parts in proptest::collection::vec(piece(), 1..8),
    ) {
        let raw = format!("{lead}{}", parts.join("/"));
        if let Ok(p) = RepoPath::parse(&raw) {
            let s = p.as_str();
            prop_assert!(!s.starts_with('/'));
            prop_assert!(!s.is_empty());
            for c in s.split('/') {
                prop_assert!(c != ".." && c != "." && !c.is_empty(), "{raw:?} -> {s:?}");
                prop_assert!(!c.eq_ignore_ascii_case(".git"), "{raw:?} -> {s:?}");
            }
            let root = std::path::Path::new("/repo");
            let joined = seam_policy::lexical::clean_absolute(&root.join(s));
            prop_assert!(joined.starts_with(root) && joined != root, "{raw:?} -> {joined:?}");
            // The check is stable: a checked path checks to itself.
            let again = RepoPath::parse(s).unwrap();
            prop_assert_eq!(again.as_str(), s);
        }
    }
}

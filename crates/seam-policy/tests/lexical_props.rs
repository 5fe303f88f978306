//! Properties of the lexical normaliser: it never yields `..` or `.`, its result is absolute
//! and clean, normalising twice changes nothing, and `~/…` without `..` stays in the home.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

use proptest::prelude::*;
use seam_policy::lexical::{PATH_MAX_BYTES, is_within, normalise, normalise_str};

const HOME: &str = "/home/owner";
const BASE: &str = "/srv/space";

fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("..".to_owned()),
        Just(".".to_owned()),
        Just(String::new()),
        Just("~".to_owned()),
        Just(".ssh".to_owned()),
        Just("...".to_owned()),
        Just("a b".to_owned()),
        Just("ü".to_owned()),
        "[a-z.~-]{1,6}",
        "[^/\u{0}]{1,8}",
    ]
}

fn raw_path() -> impl Strategy<Value = String> {
    (
        prop_oneof![
            Just(""),
            Just("/"),
            Just("~/"),
            Just("~"),
            Just("./"),
            Just("//")
        ],
        prop::collection::vec(component(), 0..12),
        any::<bool>(),
    )
        .prop_map(|(start, parts, trailing)| {
            let mut s = format!("{start}{}", parts.join("/"));
            if trailing {
                s.push('/');
            }
            s
        })
}

fn check_clean(p: &Path) {
    let bytes = p.as_os_str().as_bytes();
    assert!(p.is_absolute(), "{p:?}");
    assert!(bytes.len() <= PATH_MAX_BYTES);
    assert!(bytes == b"/" || !bytes.ends_with(b"/"), "{p:?}");
    assert!(!bytes.windows(2).any(|w| w == b"//"), "{p:?}");
    for c in p.components() {
        assert!(
            matches!(c, Component::RootDir | Component::Normal(_)),
            "{p:?} holds {c:?}"
        );
    }
    assert!(
        !p.components()
            .any(|c| c.as_os_str() == ".." || c.as_os_str() == "."),
        "{p:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn structured_paths_normalise_cleanly(raw in raw_path()) {
        let home = Path::new(HOME);
        let base = Path::new(BASE);
        if let Ok(p) = normalise_str(&raw, home, Some(base)) {
            check_clean(&p);
            // Idempotent: the result, normalised again, is itself.
            let again = normalise(p.as_os_str(), home, Some(base)).unwrap();
            prop_assert_eq!(&again, &p);
            // `~/…` with no `..` stays in the home; a relative one stays in the base.
            let has_dotdot = raw.split('/').any(|c| c == "..");
            if !has_dotdot {
                if raw == "~" || raw.starts_with("~/") {
                    prop_assert!(is_within(&p, home), "{} -> {:?}", raw, p);
                } else if !raw.starts_with('/') && !raw.is_empty() {
                    prop_assert!(is_within(&p, base), "{} -> {:?}", raw, p);
                }
            }
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_yield_clean_paths(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let home = Path::new(HOME);
        let base = Path::new(BASE);
        let raw = OsStr::from_bytes(&bytes);
        if let Ok(p) = normalise(raw, home, Some(base)) {
            check_clean(&p);
            prop_assert!(!bytes.contains(&0));
            prop_assert!(std::str::from_utf8(&bytes).is_ok());
            prop_assert_eq!(normalise(p.as_os_str(), home, Some(base)).unwrap(), p);
        }
    }

    #[test]
    fn arbitrary_text_never_panics(raw in "\\PC{0,80}") {
        if let Ok(p) = normalise_str(&raw, Path::new(HOME), Some(Path::new(BASE))) {
            check_clean(&p);
            prop_assert!(!raw.contains('$') && !raw.contains('`'));
        }
        // Without a base, a relative path never normalises.
        if let Ok(p) = normalise_str(&raw, Path::new(HOME), None) {
            check_clean(&p);
            prop_assert!(raw.starts_with('/') || raw == "~" || raw.starts_with("~/"));
        }
    }

    #[test]
    fn over_long_components_and_paths_are_refused(n in 256usize..400, depth in 1usize..10) {
        let long = format!("~/{}", "x".repeat(n));
        prop_assert!(normalise_str(&long, Path::new(HOME), None).is_err());
        let deep = format!("/{}", format!("{}/", "y".repeat(250)).repeat(16 + depth));
        prop_assert!(normalise_str(&deep, Path::new(HOME), None).is_err());
    }
}

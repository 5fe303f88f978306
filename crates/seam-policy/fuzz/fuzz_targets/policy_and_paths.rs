//! The policy file parser and the lexical normaliser on arbitrary input. The first byte picks
//! which. Neither may panic; a parsed policy must hold only clean absolute paths; a normalised
//! path must be absolute, free of `.` and `..`, and normalise to itself again.
#![no_main]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use libfuzzer_sys::fuzz_target;
use seam_policy::{Policy, PolicyEnv, lexical};

// Paths that do not exist, so canonicalising the lists looks at nothing real.
const HOME: &str = "/nonexistent-seam-fuzz/home";
const SEAM: &str = "/nonexistent-seam-fuzz/seam";
const BASE: &str = "/nonexistent-seam-fuzz/ws";

fn assert_clean(p: &str) {
    let path = Path::new(p);
    assert!(path.is_absolute(), "{p:?}");
    assert!(
        path.components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_))),
        "{p:?}"
    );
    assert!(!path.components().any(|c| c.as_os_str() == ".."), "{p:?}");
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    if which % 2 == 0 {
        let Ok(text) = std::str::from_utf8(rest) else {
            return;
        };
        let env = PolicyEnv {
            owner_home: PathBuf::from(HOME),
            seam_home: PathBuf::from(SEAM),
            workspace_root: PathBuf::from(BASE),
        };
        match Policy::from_toml_str(text, Path::new("fuzz.toml"), env) {
            Ok(policy) => {
                let shown = policy.enforced();
                for entry in shown
                    .filesystem
                    .read
                    .iter()
                    .chain(&shown.filesystem.write)
                    .chain(&shown.filesystem.protected)
                {
                    assert_clean(&entry.path);
                }
                // The built-in protected list is always there.
                assert!(
                    shown
                        .filesystem
                        .protected
                        .iter()
                        .any(|p| p.path.ends_with("/.ssh"))
                );
                let _ = shown.render_text();
            }
            Err(e) => {
                let message = e.to_string();
                assert!(message.contains("line "), "{message}");
            }
        }
    } else {
        let raw = OsStr::from_bytes(rest);
        if let Ok(p) = lexical::normalise(raw, Path::new(HOME), Some(Path::new(BASE))) {
            let text = p.to_str().expect("normalised paths are UTF-8");
            assert_clean(text);
            assert!(text.len() <= lexical::PATH_MAX_BYTES);
            let again = lexical::normalise(p.as_os_str(), Path::new(HOME), Some(Path::new(BASE)))
                .expect("a normalised path normalises again");
            assert_eq!(again, p);
        }
    }
});

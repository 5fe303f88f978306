//! A files.read of a path that does not exist names, beside the refusal, the
//! files of that name in the workspace that the same admission would give:
//! never a protected one, never one behind a link or in a hidden directory.

mod builtin_support;

use std::os::unix::fs::symlink;
use std::path::Path;

use seam_gate::{CallRequest, Toolbox};
use seam_protocol::{Answer, RefusalCode};
use serde_json::json;

fn toolbox(root: &Path) -> Toolbox {
    builtin_support::builtin_toolbox(root, "home")
}

fn refusal(tb: &Toolbox, path: &str) -> (RefusalCode, String) {
    let answer = tb
        .call(CallRequest {
            tool: "files.read".into(),
            params: json!({ "path": path }),
            turn: None,
        })
        .unwrap();
    match answer {
        Answer::Refusal(r) => (r.refused.code, r.refused.message),
        Answer::Envelope(e) => panic!("{path} was read: {:?}", e.output),
    }
}

#[test]
fn a_missing_path_names_the_readable_files_of_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let home = root.join("home");
    for d in ["notes", "old/deep", ".ssh", ".hidden", "elsewhere"] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    std::fs::create_dir_all(root.join("seam")).unwrap();
    std::fs::write(home.join("notes/rota.md"), "the rota").unwrap();
    std::fs::write(home.join("old/deep/rota.md"), "an old rota").unwrap();
    std::fs::write(home.join(".hidden/rota.md"), "hidden").unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "KEY").unwrap();
    // a link of the name, to a key: not named
    symlink(home.join(".ssh/id_rsa"), home.join("elsewhere/id_rsa")).unwrap();
    // a file the protected list names by its name (a KeePass database)
    std::fs::create_dir_all(home.join("backup")).unwrap();
    std::fs::write(home.join("backup/vault.kdbx"), "KDBX").unwrap();
    let tb = toolbox(&root);

    let (code, message) = refusal(&tb, "rota.md");
    assert_eq!(code, RefusalCode::NotFound);
    assert!(message.contains("rota.md does not exist"), "{message}");
    assert!(
        message.contains("of that name, this can be read: notes/rota.md, old/deep/rota.md")
            || message.contains("of that name, this can be read: old/deep/rota.md, notes/rota.md"),
        "{message}"
    );
    assert!(!message.contains(".hidden"), "{message}");

    let (_, message) = refusal(&tb, "id_rsa");
    assert!(
        !message.contains("can be read"),
        "a link to a key was named: {message}"
    );
    let (_, message) = refusal(&tb, "vault.kdbx");
    assert!(
        !message.contains("backup"),
        "a protected file was named: {message}"
    );

    let (_, message) = refusal(&tb, "nothing-of-this-name.txt");
    assert!(!message.contains("can be read"), "{message}");
}

#[test]
fn a_directory_read_as_a_file_names_the_files_in_it_that_can_be_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let home = root.join("home");
    for d in ["notes/sub", ".ssh", "empty"] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    std::fs::create_dir_all(root.join("seam")).unwrap();
    std::fs::write(home.join("notes/rota.md"), "the rota").unwrap();
    std::fs::write(home.join("notes/b.txt"), "b").unwrap();
    std::fs::write(home.join("notes/sub/deep.md"), "deeper").unwrap();
    std::fs::write(home.join("notes/.secret"), "hidden").unwrap();
    // a file the protected list names by its name, and a link to a key
    std::fs::write(home.join("notes/vault.kdbx"), "KDBX").unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "KEY").unwrap();
    symlink(home.join(".ssh/id_rsa"), home.join("notes/key.txt")).unwrap();
    let tb = toolbox(&root);

    for path in ["notes", "notes/", "~/notes"] {
        let (code, message) = refusal(&tb, path);
        assert_eq!(code, RefusalCode::NotAFile, "{path}");
        assert!(message.contains("is a directory"), "{message}");
        let sep = if path.ends_with('/') { "" } else { "/" };
        let want = format!(
            "the files in it that can be read: {path}{sep}b.txt, {path}{sep}rota.md (read one by its path)"
        );
        assert!(message.contains(&want), "{message}");
        for never in ["vault", "key.txt", ".secret", "sub", "deep"] {
            assert!(!message.contains(never), "{never} named: {message}");
        }
    }
    // A directory with nothing to read says only what it is.
    let (_, message) = refusal(&tb, "empty");
    assert!(!message.contains("can be read"), "{message}");
    // A protected directory is refused as protected, its files unnamed.
    let (code, message) = refusal(&tb, ".ssh");
    assert_ne!(code, RefusalCode::NotAFile, "{message}");
    assert!(!message.contains("id_rsa"), "{message}");
}

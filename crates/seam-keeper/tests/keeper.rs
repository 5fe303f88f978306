//! The keeper on real files: permissions, atomic writes, refusals, concurrency.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use seam_home::SeamHome;
use seam_keeper::{Keeper, KeeperError, KeeperHandle, SECRETS_FILE, SecretValue};

const VALUE: &str = "BSA-test-value-0123456789abcdef";

/// The keeper's directory in the seam home `home`.
fn keys(home: &Path) -> PathBuf {
    SeamHome::new(home).keys()
}

/// The keeper's file in the seam home `home`.
fn secrets(home: &Path) -> PathBuf {
    keys(home).join(SECRETS_FILE)
}

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

#[test]
fn a_missing_file_is_an_empty_keeper_and_nothing_is_created() {
    let home = tempfile::tempdir().unwrap();
    let keeper = Keeper::open(home.path()).unwrap();
    assert!(keeper.is_empty());
    assert!(!keys(home.path()).exists(), "open must not create anything");
}

#[test]
fn set_writes_an_owner_only_file_in_an_owner_only_dir_and_reads_back() {
    let home = tempfile::tempdir().unwrap();
    let mut keeper = Keeper::open(home.path()).unwrap();
    assert!(!keeper.set("brave", SecretValue::new(VALUE)).unwrap());
    assert!(
        keeper
            .set("brave", SecretValue::new(format!("{VALUE}-2")))
            .unwrap(),
        "a second set replaces"
    );
    keeper
        .set("searx", SecretValue::new("another-secret-value"))
        .unwrap();
    let file = secrets(home.path());
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(&keys(home.path())), 0o700);

    let again = Keeper::open(home.path()).unwrap();
    assert_eq!(
        again.get("brave").unwrap().expose(),
        format!("{VALUE}-2").as_str()
    );
    assert_eq!(again.names().collect::<Vec<_>>(), ["brave", "searx"]);
    let h = KeeperHandle::parse("keeper:searx").unwrap();
    assert_eq!(again.resolve(&h).unwrap().expose(), "another-secret-value");
    let missing = KeeperHandle::parse("keeper:nope").unwrap();
    let err = again.resolve(&missing).unwrap_err().to_string();
    assert!(err.contains("seam secret set nope"), "{err}");
    // No temporary file is left behind.
    let left: Vec<_> = fs::read_dir(keys(home.path()))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn debug_and_names_never_show_values() {
    let home = tempfile::tempdir().unwrap();
    let mut keeper = Keeper::open(home.path()).unwrap();
    keeper.set("brave", SecretValue::new(VALUE)).unwrap();
    let shown = format!("{keeper:?} {:?}", keeper.get("brave"));
    assert!(!shown.contains(VALUE), "{shown}");
    assert!(shown.contains("brave"), "{shown}");
    let names: String = keeper.names().collect();
    assert!(!names.contains(VALUE));
}

#[test]
fn remove_deletes_and_says_whether_there_was_one() {
    let home = tempfile::tempdir().unwrap();
    let mut keeper = Keeper::open(home.path()).unwrap();
    keeper.set("a", SecretValue::new(VALUE)).unwrap();
    assert!(keeper.remove("a").unwrap());
    assert!(!keeper.remove("a").unwrap());
    assert!(Keeper::open(home.path()).unwrap().get("a").is_none());
    let text = fs::read_to_string(secrets(home.path())).unwrap();
    assert!(
        !text.contains(VALUE),
        "the removed value is gone from the file"
    );
}

#[test]
fn a_file_others_can_read_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let mut keeper = Keeper::open(home.path()).unwrap();
    keeper.set("brave", SecretValue::new(VALUE)).unwrap();
    let file = secrets(home.path());
    for m in [0o640, 0o604, 0o660, 0o602] {
        fs::set_permissions(&file, fs::Permissions::from_mode(m)).unwrap();
        match Keeper::open(home.path()) {
            Err(KeeperError::InsecureFile { mode, .. }) => assert_eq!(mode, m),
            other => panic!("mode {m:o}: expected InsecureFile, got {other:?}"),
        }
        // A write is refused too: it re-reads the file first.
        assert!(keeper.set("x", SecretValue::new(VALUE)).is_err());
    }
    let err = Keeper::open(home.path()).unwrap_err().to_string();
    assert!(err.contains("chmod 600"), "{err}");
}

#[test]
fn a_keys_dir_others_can_write_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let mut keeper = Keeper::open(home.path()).unwrap();
    keeper.set("brave", SecretValue::new(VALUE)).unwrap();
    let dir = keys(home.path());
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
    assert!(matches!(
        Keeper::open(home.path()),
        Err(KeeperError::InsecureDir { .. })
    ));
}

#[test]
fn a_symlinked_file_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let elsewhere = home.path().join("elsewhere.toml");
    fs::write(&elsewhere, format!("[secrets]\nk = \"{VALUE}\"\n")).unwrap();
    fs::set_permissions(&elsewhere, fs::Permissions::from_mode(0o600)).unwrap();
    fs::create_dir(keys(home.path())).unwrap();
    fs::set_permissions(keys(home.path()), fs::Permissions::from_mode(0o700)).unwrap();
    symlink(&elsewhere, secrets(home.path())).unwrap();
    match Keeper::open(home.path()) {
        Err(KeeperError::NotRegular { what, .. }) => assert!(what.contains("symbolic"), "{what}"),
        other => panic!("expected NotRegular, got {other:?}"),
    }
}

#[test]
fn a_file_of_another_owner_is_refused() {
    if rustix::process::geteuid().as_raw() != 0 {
        // Only root can give a file away; elsewhere this case cannot be set up.
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let mut keeper = Keeper::open(home.path()).unwrap();
    keeper.set("brave", SecretValue::new(VALUE)).unwrap();
    let file = secrets(home.path());
    std::os::unix::fs::chown(&file, Some(65534), None).unwrap();
    match Keeper::open(home.path()) {
        Err(KeeperError::ForeignOwner { owner, .. }) => assert_eq!(owner, 65534),
        other => panic!("expected ForeignOwner, got {other:?}"),
    }
}

#[test]
fn bad_names_and_values_are_refused_without_echoing_the_value() {
    let home = tempfile::tempdir().unwrap();
    let mut keeper = Keeper::open(home.path()).unwrap();
    assert!(matches!(
        keeper.set("a b", SecretValue::new(VALUE)),
        Err(KeeperError::BadName { .. })
    ));
    for v in ["", "short", "line-one-ok\nab"] {
        let err = keeper.set("k", SecretValue::new(v)).unwrap_err();
        assert!(matches!(err, KeeperError::BadValue { .. }), "{err}");
    }
    let err = keeper
        .set("k", SecretValue::new("abc\0defghijk"))
        .unwrap_err()
        .to_string();
    assert!(!err.contains("defghijk"), "{err}");
    assert!(keeper.is_empty());
}

#[test]
fn concurrent_writers_lose_nothing() {
    let home = tempfile::tempdir().unwrap();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let home = home.path().to_path_buf();
            std::thread::spawn(move || {
                // Each writer opened before the others wrote: a naive write would
                // overwrite their secrets with its stale view.
                let mut keeper = Keeper::open(&home).unwrap();
                for i in 0..5 {
                    keeper
                        .set(
                            &format!("t{t}-{i}"),
                            SecretValue::new(format!("value-of-{t}-{i}-xyz")),
                        )
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let keeper = Keeper::open(home.path()).unwrap();
    assert_eq!(keeper.len(), 40);
    assert_eq!(keeper.get("t3-4").unwrap().expose(), "value-of-3-4-xyz");
}

#[test]
fn values_with_every_kind_of_character_round_trip() {
    let home = tempfile::tempdir().unwrap();
    let mut keeper = Keeper::open(home.path()).unwrap();
    let nasty = "quote\" back\\slash\ttab\u{1b}[31m é ☃ \u{7f}end";
    keeper.set("nasty", SecretValue::new(nasty)).unwrap();
    let again = Keeper::open(home.path()).unwrap();
    assert_eq!(again.get("nasty").unwrap().expose(), nasty);
}

/// A write that crashed between its temporary file and the rename left every secret in that
/// file; the next write, under the lock, removes it.
#[test]
fn a_crashed_writes_temporary_file_is_removed_by_the_next_write() {
    let home = tempfile::tempdir().unwrap();
    let mut keeper = Keeper::open(home.path()).unwrap();
    keeper.set("brave", SecretValue::new(VALUE)).unwrap();
    let leftover = keys(home.path()).join(".secrets.toml.k3Yx9q.tmp");
    fs::write(&leftover, format!("brave = \"{VALUE}\"\n")).unwrap();
    fs::set_permissions(&leftover, fs::Permissions::from_mode(0o600)).unwrap();
    keeper.set("searx", SecretValue::new("another")).unwrap();
    assert!(
        !leftover.exists(),
        "the leftover holding the secret is gone"
    );
    let names: Vec<String> = fs::read_dir(keys(home.path()))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
    assert_eq!(
        Keeper::open(home.path())
            .unwrap()
            .get("brave")
            .unwrap()
            .expose(),
        VALUE
    );
}

//! The file primitives against what may already be at a name: a link, a FIFO, a file others
//! can read, and a crash between the write and the rename.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::time::Duration;

use seam_test_support::fs::make_fifo;

use seam_home::file::{
    Lock, OWNER_ONLY, create_private_file, ensure_private_dir, install_new, replace,
};

fn mode(p: &std::path::Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

/// A link at the target is replaced by the file: the file it pointed at is untouched.
#[test]
fn replace_never_writes_through_a_link_at_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "the owner's").unwrap();
    let target = dir.path().join("state.json");
    std::os::unix::fs::symlink(&victim, &target).unwrap();
    replace(&target, b"new", OWNER_ONLY).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the owner's");
    assert!(
        !std::fs::symlink_metadata(&target)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    assert_eq!(mode(&target), 0o600);
}

/// A FIFO at the target is replaced without being opened (opening it would block).
#[test]
fn replace_does_not_open_a_fifo_at_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("head");
    make_fifo(&target);
    replace(&target, b"whole", OWNER_ONLY).unwrap();
    let meta = std::fs::symlink_metadata(&target).unwrap();
    assert!(meta.is_file());
    assert_eq!(std::fs::read(&target).unwrap(), b"whole");
}

/// A file others could read is replaced by an owner-only one, whatever the umask; a file
/// written with a wider mode on purpose keeps exactly that mode.
#[test]
fn replace_leaves_the_mode_asked_for_not_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("secrets.toml");
    std::fs::write(&target, "old").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o666)).unwrap();
    replace(&target, b"new", OWNER_ONLY).unwrap();
    assert_eq!(mode(&target), 0o600);
    replace(&target, b"newer", 0o640).unwrap();
    assert_eq!(mode(&target), 0o640);
}

/// A crash between the write and the rename (the temporary file is written, never renamed)
/// leaves the old file whole; the next replace succeeds beside the leftover.
#[test]
fn a_crash_before_the_rename_leaves_the_old_file_whole() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("fingerprint.json");
    replace(&target, b"old and whole", OWNER_ONLY).unwrap();
    // What a crash leaves: the temporary file, written and never renamed, under the name
    // pattern replace uses, and one an attacker planted as a link under a guessed name.
    let leftover = dir.path().join(".fingerprint.json.crash.tmp");
    std::fs::write(&leftover, "half").unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::write(&elsewhere, "untouched").unwrap();
    std::os::unix::fs::symlink(&elsewhere, dir.path().join(".fingerprint.json.AAAAAA.tmp"))
        .unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), b"old and whole");
    replace(&target, b"new", OWNER_ONLY).unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), b"new");
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "untouched");
    // A failed replace (no directory to stage in) leaves the old file as it was.
    let missing = dir.path().join("no-such-dir").join("f");
    assert!(replace(&missing, b"x", OWNER_ONLY).is_err());
    assert_eq!(std::fs::read(&target).unwrap(), b"new");
}

/// Creating a new file never opens what is at the name: a link (even dangling) or a FIFO
/// counts as taken, and the link's target is not created.
#[test]
fn create_and_install_never_open_a_link_or_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let far = dir.path().join("far");
    let link = dir.path().join("lock");
    std::os::unix::fs::symlink(&far, &link).unwrap();
    assert!(!create_private_file(&link).unwrap());
    assert!(!far.exists());
    assert!(!install_new(&link, b"token").unwrap());
    assert!(!far.exists());
    let fifo = dir.path().join("fifo");
    make_fifo(&fifo);
    assert!(!create_private_file(&fifo).unwrap());
    assert!(!install_new(&fifo, b"token").unwrap());
    // Nothing there: made, owner-only, whole.
    let fresh = dir.path().join("key");
    assert!(install_new(&fresh, b"seed").unwrap());
    assert_eq!(std::fs::read(&fresh).unwrap(), b"seed");
    assert_eq!(mode(&fresh), 0o600);
    assert!(!install_new(&fresh, b"other").unwrap());
    assert_eq!(std::fs::read(&fresh).unwrap(), b"seed");
    // Only the installed files remain: no temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}

/// A private directory made wide by someone is narrowed back to 0700.
#[test]
fn a_wide_private_directory_is_narrowed() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("a").join("keys");
    ensure_private_dir(&keys).unwrap();
    assert_eq!(mode(&keys), 0o700);
    std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o777)).unwrap();
    ensure_private_dir(&keys).unwrap();
    assert_eq!(mode(&keys), 0o700);
}

/// The lock is exclusive, seen from outside, released on drop, and never taken through a
/// link.
#[test]
fn the_lock_is_exclusive_and_never_follows_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lock");
    assert!(!Lock::is_held(&path));
    let held = Lock::exclusive(&path).unwrap();
    assert!(Lock::is_held(&path));
    assert!(
        Lock::exclusive_within(&path, Duration::from_millis(20))
            .unwrap()
            .is_none()
    );
    drop(held);
    assert!(!Lock::is_held(&path));
    assert!(
        Lock::exclusive_within(&path, Duration::ZERO)
            .unwrap()
            .is_some()
    );
    assert_eq!(mode(&path), 0o600);
    let far = dir.path().join("far");
    let link = dir.path().join("link.lock");
    std::os::unix::fs::symlink(&far, &link).unwrap();
    assert!(Lock::exclusive(&link).is_err());
    assert!(!far.exists());
}

/// The sweep removes what a crash left beside a file (a regular file named as the writer
/// names its temporary files), and nothing else: not the file, not another file's leftover,
/// not a link that looks like a leftover, nor the file it points at.
#[test]
fn the_sweep_removes_a_crashed_writes_leftover_and_nothing_else() {
    use seam_home::file::sweep_staged;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("secrets.toml");
    replace(&target, b"a = \"1\"\n", OWNER_ONLY).unwrap();
    let leftover = dir.path().join(".secrets.toml.Xy12Ab.tmp");
    std::fs::write(&leftover, "a = \"every secret\"\n").unwrap();
    let other = dir.path().join(".state.json.Xy12Ab.tmp");
    std::fs::write(&other, "{}").unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "kept").unwrap();
    let link = dir.path().join(".secrets.toml.Zz99Zz.tmp");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    // The bare prefix and suffix, with no random part, is no name the writer makes.
    let bare = dir.path().join(".secrets.toml..tmp");
    std::fs::write(&bare, "x").unwrap();

    assert_eq!(sweep_staged(&target).unwrap(), 1);
    assert!(!leftover.exists());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "a = \"1\"\n");
    assert!(other.exists() && bare.exists() && victim.exists());
    assert!(std::fs::symlink_metadata(&link).is_ok());
    // Nothing left: nothing to do.
    assert_eq!(sweep_staged(&target).unwrap(), 0);
}

/// A staged file is written in pieces beside its target and is not there until it is
/// persisted: the target keeps its old content meanwhile, then holds every piece with the
/// mode asked for. Dropped unpersisted, it leaves nothing; left by a crash, the sweep knows
/// its name.
#[test]
fn a_staged_file_appears_whole_on_persist_and_nowhere_before() {
    use std::io::Write as _;

    use seam_home::file::{Staged, sweep_staged};
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("model.gguf");
    std::fs::write(&target, "old").unwrap();
    let names = || {
        let mut n: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    };

    let mut staged = Staged::beside(&target, 0o640).unwrap();
    assert_eq!(staged.path().parent(), Some(dir.path()));
    for piece in [&b"first "[..], b"second ", b"third"] {
        staged.file().write_all(piece).unwrap();
        assert_eq!(
            std::fs::read(&target).unwrap(),
            b"old",
            "not before persist"
        );
    }
    staged.persist().unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), b"first second third");
    assert_eq!(mode(&target), 0o640);
    assert_eq!(
        names(),
        ["model.gguf"],
        "the temporary file became the target"
    );

    let mut dropped = Staged::beside(&target, OWNER_ONLY).unwrap();
    dropped.file().write_all(b"half").unwrap();
    drop(dropped);
    assert_eq!(names(), ["model.gguf"], "dropped, it is removed");
    assert_eq!(std::fs::read(&target).unwrap(), b"first second third");

    // A crash: the process ends with the file written and never persisted nor removed.
    let mut crashed = Staged::beside(&target, OWNER_ONLY).unwrap();
    crashed.file().write_all(b"half").unwrap();
    let left = crashed
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    std::mem::forget(crashed);
    assert_eq!(names().len(), 2);
    // Its name is known for what it is; the target's, and names like it, are not.
    assert!(seam_home::file::is_staged_name(&left), "{left}");
    for other in [
        "model.gguf",
        ".model.gguf",
        ".model.gguf.tmp",
        ".tmp",
        "..x.tmp",
        "x.a.tmp",
    ] {
        assert!(!seam_home::file::is_staged_name(other), "{other}");
    }
    assert_eq!(sweep_staged(&target).unwrap(), 1);
    assert_eq!(names(), ["model.gguf"]);
}

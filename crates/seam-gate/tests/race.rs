//! Races against `Toolbox::call`: a file, and a directory on the path, swapped
//! for links to protected files while files.read runs. The protected bytes must
//! never come back, whatever the interleaving.

mod builtin_support;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use seam_gate::{CallRequest, Toolbox};
use seam_protocol::Answer;
use serde_json::json;

const SECRET: &str = "PROTECTED-BYTES-7f3a";

fn toolbox(root: &Path) -> Toolbox {
    builtin_support::builtin_toolbox(root, "home/project")
}

/// Calls files.read on `path` at least `rounds` times, and on until both
/// outcomes have been seen or `4 * rounds` calls were made: how the swapper's
/// states interleave with a call depends on the machine's load, so a fixed
/// count can miss one of them.
fn hammer(tb: &Toolbox, path: &str, stop: &AtomicBool, rounds: usize) -> (usize, usize) {
    let (mut admitted, mut refused) = (0, 0);
    for round in 0..4 * rounds {
        if round >= rounds && admitted > 0 && refused > 0 {
            break;
        }
        let answer = tb
            .call(CallRequest {
                tool: "files.read".into(),
                params: json!({ "path": path }),
                turn: None,
            })
            .unwrap();
        let text = serde_json::to_string(&answer).unwrap();
        assert!(!text.contains(SECRET), "protected bytes came back: {text}");
        match answer {
            Answer::Envelope(_) => admitted += 1,
            Answer::Refusal(_) => refused += 1,
        }
    }
    stop.store(true, Ordering::SeqCst);
    (admitted, refused)
}

#[test]
fn a_file_swapped_for_a_link_to_a_key_never_leaks() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let project = root.join("home/project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(root.join("home/.ssh")).unwrap();
    std::fs::create_dir_all(root.join("seam")).unwrap();
    let key = root.join("home/.ssh/id_rsa");
    std::fs::write(&key, SECRET).unwrap();
    let target = project.join("target.txt");
    std::fs::write(&target, "public").unwrap();

    let tb = toolbox(&root);
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = stop.clone();
        let (project, target, key) = (project.clone(), target.clone(), key.clone());
        std::thread::spawn(move || {
            let (tmp_link, tmp_file) = (project.join(".l"), project.join(".f"));
            let mut swaps = 0u64;
            while !stop.load(Ordering::SeqCst) {
                let _ = std::fs::remove_file(&tmp_link);
                symlink(&key, &tmp_link).unwrap();
                std::fs::write(&tmp_file, "public").unwrap();
                std::fs::rename(&tmp_link, &target).unwrap();
                // Each state is held for a scheduler slice, so a call can
                // land wholly in either (on a slow filesystem the write
                // alone used to outlast every call, and no read was admitted).
                std::thread::yield_now();
                std::fs::rename(&tmp_file, &target).unwrap();
                std::thread::yield_now();
                swaps += 1;
            }
            swaps
        })
    };
    let (admitted, refused) = hammer(&tb, "target.txt", &stop, 3000);
    let swaps = swapper.join().unwrap();
    assert!(
        swaps > 100,
        "the swapper must actually race ({swaps} swaps)"
    );
    assert!(
        admitted > 0 && refused > 0,
        "both outcomes seen: {admitted} admitted, {refused} refused"
    );
}

#[test]
fn a_directory_on_the_path_swapped_for_a_link_never_leaks() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let project = root.join("home/project");
    std::fs::create_dir_all(project.join("d")).unwrap();
    std::fs::create_dir_all(root.join("home/.ssh")).unwrap();
    std::fs::create_dir_all(root.join("seam")).unwrap();
    std::fs::write(root.join("home/.ssh/config"), SECRET).unwrap();
    std::fs::write(project.join("d/config"), "public").unwrap();

    let tb = toolbox(&root);
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = stop.clone();
        let (project, ssh) = (project.clone(), root.join("home/.ssh"));
        std::thread::spawn(move || {
            let (d, real, link) = (
                project.join("d"),
                project.join(".real"),
                project.join(".link"),
            );
            let mut swaps = 0u64;
            while !stop.load(Ordering::SeqCst) {
                // d: directory → link to ~/.ssh → directory again
                std::fs::rename(&d, &real).unwrap();
                let _ = std::fs::remove_file(&link);
                symlink(&ssh, &link).unwrap();
                std::fs::rename(&link, &d).unwrap();
                std::fs::remove_file(&d).unwrap();
                std::fs::rename(&real, &d).unwrap();
                swaps += 1;
            }
            swaps
        })
    };
    let (admitted, _refused) = hammer(&tb, "d/config", &stop, 3000);
    let swaps = swapper.join().unwrap();
    assert!(
        swaps > 100,
        "the swapper must actually race ({swaps} swaps)"
    );
    assert!(
        admitted > 0,
        "the real file is still readable between swaps"
    );
}

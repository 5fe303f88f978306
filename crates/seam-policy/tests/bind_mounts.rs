//! Bind mounts: a protected file or directory mounted under an allowed name is still the
//! protected file. These need the right to mount (root here); where it is missing the test
//! says so in its result (it passes without asserting, which its name's `_when_mountable` says).

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{Fixture, os, p, refused};
use rustix::mount::{UnmountFlags, mount_bind, unmount};
use seam_policy::{Access, FileAccess};
use seam_protocol::RefusalCode;

const READ: Access = Access::Owner(FileAccess::Read);

/// Unmounts on drop, also when the test fails.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = unmount(&self.0, UnmountFlags::DETACH);
    }
}

fn bind(source: &Path, target: &Path) -> Option<Mounted> {
    match mount_bind(source, target) {
        Ok(()) => Some(Mounted(target.to_path_buf())),
        Err(rustix::io::Errno::PERM | rustix::io::Errno::ACCESS) => None,
        Err(e) => panic!("bind mount {source:?} -> {target:?}: {e}"),
    }
}

#[test]
fn a_bind_mounted_protected_directory_is_refused_when_mountable() {
    let fx = Fixture::new();
    let target = fx.home.join("notes/mnt");
    fs::create_dir_all(&target).unwrap();
    let Some(_m) = bind(&fx.home.join(".ssh"), &target) else {
        return;
    };
    let adm = fx.admission();
    let r = refused(adm.open_read(READ, os("~/notes/mnt/id_rsa")));
    assert_eq!(r.code, RefusalCode::Protected, "{}", r.message);
    assert!(r.message.contains("bind mount"), "{}", r.message);
}

#[test]
fn a_bind_mounted_protected_file_is_refused_when_mountable() {
    let fx = Fixture::new();
    let Some(_m) = bind(
        &fx.home.join(".ssh/id_rsa"),
        &fx.home.join("notes/hello.txt"),
    ) else {
        return;
    };
    let adm = fx.admission();
    let r = refused(adm.open_read(READ, os("~/notes/hello.txt")));
    assert_eq!(r.code, RefusalCode::Protected, "{}", r.message);
    assert!(r.message.contains(".ssh/id_rsa"), "{}", r.message);
}

#[test]
fn a_bind_mounted_home_does_not_reach_its_keys_when_mountable() {
    let fx = Fixture::new();
    let other = fx.path("other");
    fs::create_dir_all(&other).unwrap();
    let Some(_m) = bind(&fx.home, &other) else {
        return;
    };
    let adm = fx.admission_with(&format!(
        "[filesystem]\nread = [\"~\", \"{}\"]\n",
        other.display()
    ));
    let r = refused(adm.open_read(READ, p(&other.join(".ssh/id_rsa"))));
    assert_eq!(r.code, RefusalCode::Protected, "{}", r.message);
    // What is not protected stays readable through the mount.
    adm.open_read(READ, p(&other.join("notes/hello.txt")))
        .unwrap();
}

#[test]
fn procfs_mounted_elsewhere_is_refused_by_its_type_when_mountable() {
    let fx = Fixture::new();
    let target = fx.home.join("notes/p");
    fs::create_dir_all(&target).unwrap();
    let Some(_m) = bind(Path::new("/proc"), &target) else {
        return;
    };
    let adm = fx.admission();
    for raw in ["~/notes/p/self/environ", "~/notes/p/cpuinfo"] {
        let r = refused(adm.open_read(READ, os(raw)));
        assert_eq!(r.code, RefusalCode::Protected, "{raw}: {}", r.message);
        assert!(r.message.contains("procfs"), "{}", r.message);
    }
}

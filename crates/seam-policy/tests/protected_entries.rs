//! Every entry of the built-in protected list, one test each: a throwaway home holds the file
//! the entry is there for (at the place the tool documents), and path admission refuses it —
//! by its own name, for reading and for writing, and through a link from an allowed place,
//! naming the real file — and the entry that refuses it is that entry.

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use common::{Fixture, KEY, os, p, refused};
use seam_policy::{Access, FileAccess, Policy};
use seam_protocol::RefusalCode;

const READ: Access = Access::Owner(FileAccess::Read);
const WRITE: Access = Access::Owner(FileAccess::Write);

/// The home `fx` with `rel` written in it; asserts every refusal and the entry.
fn assert_refused_in(fx: &Fixture, entry: &str, file: &Path) {
    let admission = fx.admission();
    let real = file.display().to_string();
    let r = refused(admission.open_read(READ, p(file)));
    assert_eq!(r.code, RefusalCode::Protected, "{entry}: {r}");
    assert!(r.message.contains(&real), "{entry}: {r}");
    let r = refused(admission.admitted_path(READ, p(file)));
    assert_eq!(r.code, RefusalCode::Protected, "{entry}: {r}");
    let r = refused(admission.admitted_path(WRITE, p(file)));
    assert_eq!(r.code, RefusalCode::Protected, "{entry}: {r}");
    // Through a link from a place the policy lets tools read: the refusal names the real file.
    let link = fx.home.join("notes/innocent.txt");
    symlink(file, &link).unwrap();
    let r = refused(admission.open_read(READ, p(&link)));
    assert_eq!(r.code, RefusalCode::Protected, "{entry} via a link: {r}");
    assert!(r.message.contains(&real), "{entry} via a link: {r}");
    assert_eq!(
        admission.policy().protecting_entry(file).as_deref(),
        Some(entry),
        "{real} is refused by another entry than {entry}"
    );
    // Even a policy that allows reading and writing everything keeps it out.
    let open = fx.admission_with(
        "[capabilities]\n\"filesystem.write\" = \"allow\"\n[filesystem]\nread = [\"/\"]\nwrite = [\"/\"]\n",
    );
    let r = refused(open.open_read(READ, p(file)));
    assert_eq!(
        r.code,
        RefusalCode::Protected,
        "{entry} under an open policy: {r}"
    );
    let r = refused(open.admitted_path(WRITE, p(file)));
    assert_eq!(
        r.code,
        RefusalCode::Protected,
        "{entry} under an open policy: {r}"
    );
}

/// A throwaway home holding `rel` (with a key's bytes in it), then the assertions.
fn assert_refused(entry: &str, rel: &str) {
    let fx = Fixture::new();
    let file = fx.home.join(rel);
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(&file, KEY).unwrap();
    assert_refused_in(&fx, entry, &file);
}

macro_rules! entries {
    ($($name:ident: $entry:literal => $file:literal,)*) => {
        $(
            #[test]
            fn $name() {
                assert_refused($entry, $file);
            }
        )*
        /// (entry, file in the home) of every test above.
        const CASES: &[(&str, &str)] = &[$(($entry, $file)),*];
    };
}

entries! {
    // keys and password stores
    ssh: "~/.ssh" => ".ssh/id_ed25519",
    gnupg: "~/.gnupg" => ".gnupg/private-keys-v1.d/0123456789ABCDEF.key",
    pass: "~/.password-store" => ".password-store/mail/work.gpg",
    gnome_keyring: "~/.local/share/keyrings" => ".local/share/keyrings/login.keyring",
    gnome2_keyring: "~/.gnome2/keyrings" => ".gnome2/keyrings/login.keyring",
    kwallet: "~/.local/share/kwalletd" => ".local/share/kwalletd/kdewallet.kwl",
    kwallet_kde4: "~/.kde*/share/apps/kwallet" => ".kde4/share/apps/kwallet/kdewallet.kwl",
    kwallet_kde: "~/.kde*/share/apps/kwallet" => ".kde/share/apps/kwallet/kdewallet.kwl",
    bitwarden: "~/.config/Bitwarden" => ".config/Bitwarden/data.json",
    bitwarden_cli: "~/.config/Bitwarden CLI" => ".config/Bitwarden CLI/data.json",
    onepassword: "~/.config/1Password" => ".config/1Password/1password.sqlite",
    onepassword_cli: "~/.config/op" => ".config/op/config",
    sops_age: "~/.config/sops" => ".config/sops/age/keys.txt",
    authinfo: "~/.authinfo" => ".authinfo",
    authinfo_gpg: "~/.authinfo.gpg" => ".authinfo.gpg",
    keepass: "*.kdbx" => "Documents/Passwords.kdbx",
    keepass_upper_case: "*.kdbx" => "Passwords.KDBX",
    keepass1: "*.kdb" => "backup/old.kdb",
    password_safe: "*.psafe3" => "pwsafe.psafe3",
    // wallets
    electrum: "~/.electrum" => ".electrum/wallets/default_wallet",
    bitcoin: "~/.bitcoin" => ".bitcoin/wallets/wallet.dat",
    ethereum: "~/.ethereum/keystore" => ".ethereum/keystore/UTC--2024-01-01T00-00-00.0Z--0a1b2c",
    // cloud, cluster and infrastructure credentials
    aws: "~/.aws" => ".aws/credentials",
    gcloud: "~/.config/gcloud" => ".config/gcloud/application_default_credentials.json",
    boto: "~/.boto" => ".boto",
    azure: "~/.azure" => ".azure/msal_token_cache.json",
    oci: "~/.oci" => ".oci/oci_api_key.pem",
    doctl: "~/.config/doctl" => ".config/doctl/config.yaml",
    s3cmd: "~/.s3cfg" => ".s3cfg",
    rclone: "~/.config/rclone" => ".config/rclone/rclone.conf",
    rclone_old: "~/.rclone.conf" => ".rclone.conf",
    kube: "~/.kube" => ".kube/config",
    helm_registry: "~/.config/helm/registry" => ".config/helm/registry/config.json",
    vault: "~/.vault-token" => ".vault-token",
    terraform_login: "~/.terraform.d/credentials.tfrc.json" => ".terraform.d/credentials.tfrc.json",
    terraformrc: "~/.terraformrc" => ".terraformrc",
    // container registries
    docker: "~/.docker/config.json" => ".docker/config.json",
    containers_auth: "~/.config/containers/auth.json" => ".config/containers/auth.json",
    // forges, git and package registries
    netrc: "~/.netrc" => ".netrc",
    git_credentials: "~/.git-credentials" => ".git-credentials",
    git_credentials_xdg: "~/.config/git/credentials" => ".config/git/credentials",
    gh: "~/.config/gh/hosts.yml" => ".config/gh/hosts.yml",
    glab: "~/.config/glab-cli" => ".config/glab-cli/config.yml",
    hub: "~/.config/hub" => ".config/hub",
    npm: "~/.npmrc" => ".npmrc",
    pypi: "~/.pypirc" => ".pypirc",
    cargo_old: "~/.cargo/credentials" => ".cargo/credentials",
    cargo: "~/.cargo/credentials.toml" => ".cargo/credentials.toml",
    rubygems: "~/.gem/credentials" => ".gem/credentials",
    composer: "~/.config/composer/auth.json" => ".config/composer/auth.json",
    maven: "~/.m2/settings.xml" => ".m2/settings.xml",
    maven_security: "~/.m2/settings-security.xml" => ".m2/settings-security.xml",
    gradle: "~/.gradle/gradle.properties" => ".gradle/gradle.properties",
    nuget: "~/.nuget/NuGet/NuGet.Config" => ".nuget/NuGet/NuGet.Config",
    // databases
    pgpass: "~/.pgpass" => ".pgpass",
    // mail
    msmtp: "~/.msmtprc" => ".msmtprc",
    msmtp_xdg: "~/.config/msmtp" => ".config/msmtp/config",
    mbsync: "~/.mbsyncrc" => ".mbsyncrc",
    mbsync_xdg: "~/.config/isyncrc" => ".config/isyncrc",
    fetchmail: "~/.fetchmailrc" => ".fetchmailrc",
    thunderbird: "~/.thunderbird" => ".thunderbird/a1b2c3.default-release/logins.json",
    evolution_data: "~/.local/share/evolution" => ".local/share/evolution/mail/local/folders.db",
    evolution_config: "~/.config/evolution" => ".config/evolution/sources/a1b2.source",
    // messengers
    signal: "~/.config/Signal" => ".config/Signal/config.json",
    element: "~/.config/Element" => ".config/Element/Local Storage/leveldb/000003.log",
    riot: "~/.config/Riot" => ".config/Riot/Local Storage/leveldb/000003.log",
    telegram: "~/.local/share/TelegramDesktop" => ".local/share/TelegramDesktop/tdata/key_datas",
    // browsers
    nss: "~/.pki" => ".pki/nssdb/key4.db",
    firefox: "~/.mozilla" => ".mozilla/firefox/a1b2c3.default-release/logins.json",
    librewolf: "~/.librewolf" => ".librewolf/a1b2c3.default-default/logins.json",
    firefox_snap: "~/snap/firefox/common/.mozilla" => "snap/firefox/common/.mozilla/firefox/a1.default/key4.db",
    chromium_snap: "~/snap/chromium/common/chromium" => "snap/chromium/common/chromium/Default/Login Data",
    chrome: "~/.config/google-chrome" => ".config/google-chrome/Default/Login Data",
    chrome_beta: "~/.config/google-chrome-beta" => ".config/google-chrome-beta/Default/Login Data",
    chrome_unstable: "~/.config/google-chrome-unstable" => ".config/google-chrome-unstable/Default/Cookies",
    chromium: "~/.config/chromium" => ".config/chromium/Default/Login Data",
    brave: "~/.config/BraveSoftware" => ".config/BraveSoftware/Brave-Browser/Default/Login Data",
    edge: "~/.config/microsoft-edge" => ".config/microsoft-edge/Default/Login Data",
    edge_beta: "~/.config/microsoft-edge-beta" => ".config/microsoft-edge-beta/Default/Login Data",
    edge_dev: "~/.config/microsoft-edge-dev" => ".config/microsoft-edge-dev/Default/Login Data",
    vivaldi: "~/.config/vivaldi" => ".config/vivaldi/Default/Login Data",
    vivaldi_snapshot: "~/.config/vivaldi-snapshot" => ".config/vivaldi-snapshot/Default/Login Data",
    opera: "~/.config/opera" => ".config/opera/Login Data",
    opera_beta: "~/.config/opera-beta" => ".config/opera-beta/Login Data",
    // sandboxed apps: Flatpak
    flatpak_firefox: "~/.var/app/*/.mozilla" => ".var/app/org.mozilla.firefox/.mozilla/firefox/a1.default/logins.json",
    flatpak_thunderbird: "~/.var/app/*/.thunderbird" => ".var/app/org.mozilla.Thunderbird/.thunderbird/a1.default/logins.json",
    flatpak_librewolf: "~/.var/app/*/.librewolf" => ".var/app/io.gitlab.librewolf-community/.librewolf/a1.default/logins.json",
    flatpak_chrome: "~/.var/app/*/config/google-chrome" => ".var/app/com.google.Chrome/config/google-chrome/Default/Login Data",
    flatpak_chromium: "~/.var/app/*/config/chromium" => ".var/app/org.chromium.Chromium/config/chromium/Default/Login Data",
    flatpak_brave: "~/.var/app/*/config/BraveSoftware" => ".var/app/com.brave.Browser/config/BraveSoftware/Brave-Browser/Default/Login Data",
    flatpak_edge: "~/.var/app/*/config/microsoft-edge" => ".var/app/com.microsoft.Edge/config/microsoft-edge/Default/Login Data",
    flatpak_vivaldi: "~/.var/app/*/config/vivaldi" => ".var/app/com.vivaldi.Vivaldi/config/vivaldi/Default/Login Data",
    flatpak_opera: "~/.var/app/*/config/opera" => ".var/app/com.opera.Opera/config/opera/Login Data",
    flatpak_signal: "~/.var/app/*/config/Signal" => ".var/app/org.signal.Signal/config/Signal/config.json",
    flatpak_element: "~/.var/app/*/config/Element" => ".var/app/im.riot.Riot/config/Element/Local Storage/leveldb/000003.log",
    flatpak_bitwarden: "~/.var/app/*/config/Bitwarden" => ".var/app/com.bitwarden.desktop/config/Bitwarden/data.json",
    flatpak_keyrings: "~/.var/app/*/data/keyrings" => ".var/app/org.gnome.Fractal/data/keyrings/default.keyring",
    flatpak_evolution: "~/.var/app/*/data/evolution" => ".var/app/org.gnome.Evolution/data/evolution/mail/local/folders.db",
    // sandboxed apps: Snap
    snap_firefox_revision: "~/snap/*/*/.mozilla" => "snap/firefox/4567/.mozilla/firefox/a1.default/logins.json",
    snap_thunderbird: "~/snap/*/*/.thunderbird" => "snap/thunderbird/common/.thunderbird/a1.default/logins.json",
    snap_brave: "~/snap/*/*/.config/BraveSoftware" => "snap/brave/412/.config/BraveSoftware/Brave-Browser/Default/Login Data",
    snap_opera: "~/snap/*/*/.config/opera" => "snap/opera/301/.config/opera/Login Data",
    snap_signal: "~/snap/*/*/.config/Signal" => "snap/signal-desktop/688/.config/Signal/config.json",
    snap_bitwarden: "~/snap/*/*/.config/Bitwarden" => "snap/bitwarden/120/.config/Bitwarden/data.json",
}

/// The built-in entries as `seam policy show` lists them (the written form of each).
fn builtin_entries(policy: &Policy) -> BTreeSet<String> {
    let shown = policy.enforced();
    shown
        .filesystem
        .protected
        .iter()
        .filter(|e| e.builtin)
        .map(|e| e.written.clone())
        .chain(
            shown
                .filesystem
                .protected_patterns
                .iter()
                .filter(|e| e.builtin)
                .map(|e| e.written.clone()),
        )
        .collect()
}

#[test]
fn every_built_in_entry_has_its_test() {
    let fx = Fixture::new();
    let listed = builtin_entries(&Policy::builtin(fx.env()));
    let tested: BTreeSet<String> = CASES
        .iter()
        .map(|(entry, _)| (*entry).to_owned())
        .chain(
            // Tested below, and (seam home), /proc and /sys in admission.rs.
            [
                "/run/user/*/containers/auth.json",
                "/run/containers/*/auth.json",
                "(seam home)/keys",
                "(seam home)/ledger",
                "(seam home)/policy.toml",
                "(seam home)/config.toml",
                "/proc",
                "/sys",
            ]
            .map(str::to_owned),
        )
        .collect();
    let untested: Vec<&String> = listed.difference(&tested).collect();
    assert!(
        untested.is_empty(),
        "built-in entries without a test: {untested:?}"
    );
    let unknown: Vec<&String> = tested.difference(&listed).collect();
    assert!(
        unknown.is_empty(),
        "tests for entries not in the list: {unknown:?}"
    );
}

/// `$XDG_RUNTIME_DIR/containers/auth.json` is outside any home: it is refused by its name
/// before anything is opened (whether it exists is never said), for every user's runtime dir.
#[test]
fn containers_auth_in_the_runtime_dir_is_refused() {
    let fx = Fixture::new();
    let open = fx.admission_with("[filesystem]\nread = [\"/\"]\n");
    for (entry, path) in [
        (
            "/run/user/*/containers/auth.json",
            "/run/user/1000/containers/auth.json",
        ),
        ("/run/containers/*/auth.json", "/run/containers/0/auth.json"),
    ] {
        let r = refused(open.open_read(READ, os(path)));
        assert_eq!(r.code, RefusalCode::Protected, "{path}: {r}");
        assert!(r.message.contains(path), "{r}");
        assert_eq!(
            open.policy().protecting_entry(Path::new(path)).as_deref(),
            Some(entry)
        );
    }
    // The real runtime dir of this user, when there is one.
    let uid = rustix::process::getuid().as_raw();
    let auth = format!("/run/user/{uid}/containers/auth.json");
    let r = refused(open.admitted_path(WRITE, os(&auth)));
    assert_eq!(r.code, RefusalCode::Protected, "{r}");
}

/// A wildcard entry's match is a protected tree: a link to it, and a hard link to a file in
/// it, are refused naming the real file.
#[test]
fn a_wildcard_match_is_protected_by_identity_too() {
    let fx = Fixture::new();
    let dir = fx
        .home
        .join(".var/app/org.mozilla.firefox/.mozilla/firefox/a1.default");
    fs::create_dir_all(&dir).unwrap();
    let logins = dir.join("logins.json");
    fs::write(&logins, KEY).unwrap();
    let hard = fx.home.join("notes/logins-copy.json");
    fs::hard_link(&logins, &hard).unwrap();
    let admission = fx.admission();
    let r = refused(admission.open_read(READ, p(&hard)));
    assert_eq!(r.code, RefusalCode::Protected, "{r}");
    assert!(r.message.contains(&logins.display().to_string()), "{r}");
}

/// A directory named like a KeePass file protects what is in it; a name that only contains
/// the pattern does not match.
#[test]
fn file_name_patterns_match_whole_names() {
    let fx = Fixture::new();
    fs::create_dir_all(fx.home.join("notes/vault.kdbx")).unwrap();
    fs::write(fx.home.join("notes/vault.kdbx/inner"), KEY).unwrap();
    fs::write(fx.home.join("notes/kdbx-notes.txt"), b"about kdbx\n").unwrap();
    fs::write(fx.home.join("notes/a.kdbx.txt"), b"not a database\n").unwrap();
    let admission = fx.admission();
    let r = refused(admission.open_read(READ, p(&fx.home.join("notes/vault.kdbx/inner"))));
    assert_eq!(r.code, RefusalCode::Protected, "{r}");
    assert!(r.message.contains("*.kdbx"), "{r}");
    for ok in ["notes/kdbx-notes.txt", "notes/a.kdbx.txt"] {
        admission
            .open_read(READ, p(&fx.home.join(ok)))
            .unwrap_or_else(|r| panic!("{ok}: {r}"));
    }
}

/// A policy file can add patterns of both kinds; they print, and they are enforced.
#[test]
fn a_policy_file_adds_patterns() {
    let fx = Fixture::new();
    fs::create_dir_all(fx.home.join("vaults/work")).unwrap();
    fs::write(fx.home.join("vaults/work/secret.age"), KEY).unwrap();
    fs::write(fx.home.join("notes/x.age"), KEY).unwrap();
    let admission =
        fx.admission_with("[filesystem]\nprotected = [\"~/vaults/*/secret.age\", \"*.age\"]\n");
    for rel in ["vaults/work/secret.age", "notes/x.age"] {
        let r = refused(admission.open_read(READ, p(&fx.home.join(rel))));
        assert_eq!(r.code, RefusalCode::Protected, "{rel}: {r}");
        assert!(r.message.contains("[filesystem] protected"), "{r}");
    }
    let text = admission.policy().enforced().render_text();
    assert!(
        text.contains(&format!("{}/vaults/*/secret.age", fx.home.display())),
        "{text}"
    );
    assert!(text.contains("*.age"), "{text}");
    assert!(text.contains("*.kdbx"), "{text}");
    assert!(
        text.contains(&format!(
            "now: {}",
            fx.home.join("vaults/work/secret.age").display()
        )),
        "{text}"
    );
}

#[test]
fn bad_patterns_in_a_policy_file_are_refused_naming_the_line() {
    let fx = Fixture::new();
    for (pattern, what) in [
        ("*", "every file"),
        ("a*b*", "more than one"),
        ("~/x/*?", "?"),
        ("x/*", "relative"),
        ("~/a/../*", ".."),
    ] {
        let toml = format!("[filesystem]\nprotected = [\"{pattern}\"]\n");
        let err = Policy::from_toml_str(&toml, Path::new("p.toml"), fx.env())
            .err()
            .unwrap_or_else(|| panic!("accepted {pattern}"));
        let text = err.to_string();
        assert!(text.contains("line 2"), "{pattern}: {text}");
        assert!(text.contains(what), "{pattern}: {text}");
    }
}

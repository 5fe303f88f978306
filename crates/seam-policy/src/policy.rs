//! The policy: the file's shape, its parsing, the defaults, and the policy as enforced.
//!
//! ```toml
//! [capabilities]
//! "filesystem.read" = "allow"     # allow | ask | deny
//! "filesystem.write" = "ask"
//! "python.run" = "ask"            # also "allow-unsandboxed": allow, and run without the
//!                                 # sandbox where this machine cannot raise its walls
//!
//! [filesystem]
//! read = ["~", "~/notes"]         # allow-list for reads (replaces the default list)
//! write = ["~/project"]           # allow-list for writes (replaces the default list)
//! protected = ["~/secrets",       # added to the built-in protected list: a file or a tree,
//!     "~/vaults/*/key.age",       # a path in which a "*" stands for any run of characters
//!                                 # in one name,
//!     "*.age"]                    # or a name without "/", protected wherever it is
//!
//! [taint]
//! egress = "deny"                 # deny | allow: may a tainted turn still reach the network?
//!
//! [egress]
//! destinations = ["*.example.org",  # in a tainted turn, an egress call may still reach these
//!     "bob@example.net",            # (and any destination the operator's words for the turn
//!     "GB29 NWBK 6016 1331 9268 19"] # name): a host below, a host, an address, an IBAN, a name
//! unnamed = "deny"                # deny | ask: a destination nothing endorses is refused, or
//!                                 # the operator is asked about that exact value (per-value
//!                                 # consent; a yes endorses it for the rest of the turn)
//!
//! [consent]
//! always = ["python.run"]         # tools whose "ask" the owner has answered yes for good
//!                                 # (the gate's "always" writes here); a "deny" still wins
//! ```
//!
//! Every key and value is checked: an unknown key or a bad value is an error that names the key
//! and its line, so a typo can never silently widen or narrow what is enforced. A capability
//! missing from `[capabilities]` keeps its default; a list missing from `[filesystem]` keeps its
//! default; a list that is present replaces the default (`read = []` allows no reads).

use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde::ser::SerializeMap as _;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::destination::{DestinationAllowList, DestinationPattern};
use crate::lexical::{clean_absolute, normalise_str};
use crate::lists::{ProtectedEntry, ProtectedSpec, ResolvedLists, Rule, RuleSpec};
use crate::rules::{ProtectedRule, WildcardPath};
use crate::strict_toml::{
    Source, TomlFileError, entries_in_order, read_toml_file, suggestion, type_name,
};
use crate::{Capability, Decision, PolicyEnv};

/// The decisions when the policy says nothing: reads are free, every change and every way out
/// asks (a change to seam's own source too: it is staged for the operator, never applied without
/// them). In the order of [`Capability::ALL`].
pub const DEFAULT_DECISIONS: [(Capability, Decision); 8] = [
    (Capability::FilesystemRead, Decision::Allow),
    (Capability::FilesystemWrite, Decision::Ask),
    (Capability::SelfModify, Decision::Ask),
    (Capability::PythonRun, Decision::Ask),
    (Capability::WebSearch, Decision::Ask),
    (Capability::Memory, Decision::Allow),
    (Capability::Facts, Decision::Allow),
    (Capability::WebFetch, Decision::Ask),
];

/// Whether a tainted turn keeps its way out (`[taint] egress`). A turn is tainted once it has
/// read the owner's files or untrusted content (web results); with `Deny`, the default, every
/// tool that reaches the network is refused for the rest of that turn, so private data,
/// untrusted content and an exit never meet in one turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TaintEgress {
    /// A tainted turn cannot reach the network (the default).
    #[default]
    Deny,
    /// A tainted turn may still reach the network: the owner accepted the risk.
    Allow,
}

impl TaintEgress {
    pub fn as_str(self) -> &'static str {
        match self {
            TaintEgress::Deny => "deny",
            TaintEgress::Allow => "allow",
        }
    }
}

/// Protected in every policy, relative to the owner's home: keys, password stores, cloud and
/// registry credentials, browser and mail profiles. No policy file can remove one. Each is a
/// file or a directory tree, at the place the tool's own documentation gives (quoted next to
/// it; `$XDG_CONFIG_HOME` is taken at its default, `~/.config`, and `$XDG_DATA_HOME` at
/// `~/.local/share`). See also [`BUILTIN_PROTECTED_WILDCARDS_IN_HOME`] (sandboxed apps' copies),
/// [`BUILTIN_PROTECTED_WILDCARDS_SYSTEM`] and [`BUILTIN_PROTECTED_FILE_NAMES`].
pub const BUILTIN_PROTECTED_IN_HOME: &[&str] = &[
    // --- keys and password stores
    ".ssh",                  // ssh(1): "~/.ssh/id_rsa … contains the private key"
    ".gnupg",                // gpg(1): "~/.gnupg … the default home directory"
    ".password-store",       // pass(1): "PASSWORD_STORE_DIR … default ~/.password-store"
    ".local/share/keyrings", // gnome-keyring / Seahorse: "~/.local/share/keyrings/*.keyring"
    ".gnome2/keyrings",      // gnome-keyring before 3.0: "~/.gnome2/keyrings"
    ".local/share/kwalletd", // KWallet (KF5): "~/.local/share/kwalletd/kdewallet.kwl"
    ".config/Bitwarden",     // Bitwarden desktop, "Storage": "~/.config/Bitwarden/data.json"
    ".config/Bitwarden CLI", // Bitwarden CLI, "Storage": "~/.config/Bitwarden CLI/data.json"
    ".config/1Password",     // 1Password for Linux: data in "~/.config/1Password"
    ".config/op",            // 1Password CLI: "~/.config/op/config"
    ".config/sops",          // sops: age keys in "$XDG_CONFIG_HOME/sops/age/keys.txt"
    ".authinfo",             // Emacs auth-source: auth-sources "~/.authinfo"
    ".authinfo.gpg",         // Emacs auth-source: auth-sources "~/.authinfo.gpg"
    // --- wallets
    ".electrum",          // Electrum FAQ: wallets in "~/.electrum/wallets"
    ".bitcoin",           // Bitcoin Core: default datadir on Linux "~/.bitcoin/" (wallets/)
    ".ethereum/keystore", // geth, "Managing accounts": keys in "~/.ethereum/keystore"
    // --- cloud, cluster and infrastructure credentials
    ".aws",                               // AWS CLI: "~/.aws/credentials", "~/.aws/config"
    ".config/gcloud",                     // gcloud: configuration in "~/.config/gcloud"
    ".boto",                              // gsutil: credentials in "~/.boto"
    ".azure",                             // Azure CLI: "~/.azure" (AZURE_CONFIG_DIR)
    ".oci",                               // OCI CLI: "~/.oci/config" and its API keys
    ".config/doctl",                      // doctl: "~/.config/doctl/config.yaml"
    ".s3cfg",                             // s3cmd: "~/.s3cfg"
    ".config/rclone",                     // rclone config: "~/.config/rclone/rclone.conf"
    ".rclone.conf",                       // rclone config: the older "~/.rclone.conf"
    ".kube",                              // kubectl: "~/.kube/config" (KUBECONFIG)
    ".config/helm/registry", // helm registry login: "~/.config/helm/registry/config.json"
    ".vault-token",          // Vault: token helper writes "~/.vault-token"
    ".terraform.d/credentials.tfrc.json", // terraform login: "~/.terraform.d/credentials.tfrc.json"
    ".terraformrc",          // Terraform CLI config (credentials blocks): "~/.terraformrc"
    // --- container registries
    ".docker/config.json", // docker login: credentials in "~/.docker/config.json"
    ".config/containers/auth.json", // containers-auth.json(5): "$HOME/.config/containers/auth.json"
    // --- forges, git and package registries
    ".netrc",                     // curl, git, ftp: "~/.netrc"
    ".git-credentials",           // git-credential-store(1): "~/.git-credentials"
    ".config/git/credentials",    // git-credential-store(1): "$XDG_CONFIG_HOME/git/credentials"
    ".config/gh/hosts.yml",       // gh: "hosts.yml" in "$XDG_CONFIG_HOME/gh"
    ".config/glab-cli",           // glab: "~/.config/glab-cli/config.yml"
    ".config/hub",                // hub(1): "~/.config/hub"
    ".npmrc",                     // npmrc(5): per-user config "~/.npmrc" (auth tokens)
    ".pypirc",                    // PyPA, "The .pypirc file": "$HOME/.pypirc"
    ".cargo/credentials",         // Cargo: "$CARGO_HOME/credentials" (before 1.46)
    ".cargo/credentials.toml",    // Cargo: "$CARGO_HOME/credentials.toml"
    ".gem/credentials",           // RubyGems: API key in "~/.gem/credentials"
    ".config/composer/auth.json", // Composer: "auth.json" in COMPOSER_HOME "~/.config/composer"
    ".m2/settings.xml",           // Maven: user settings "${user.home}/.m2/settings.xml"
    ".m2/settings-security.xml",  // Maven password encryption: "~/.m2/settings-security.xml"
    ".gradle/gradle.properties",  // Gradle: "GRADLE_USER_HOME/gradle.properties" (credentials)
    ".nuget/NuGet/NuGet.Config",  // NuGet: user config "~/.nuget/NuGet/NuGet.Config"
    // --- databases
    ".pgpass", // libpq, "The Password File": "~/.pgpass"
    // --- mail
    ".msmtprc",               // msmtp(1): "~/.msmtprc"
    ".config/msmtp",          // msmtp(1): "$XDG_CONFIG_HOME/msmtp/config"
    ".mbsyncrc",              // mbsync(1): "~/.mbsyncrc"
    ".config/isyncrc",        // mbsync(1) 1.5: "$XDG_CONFIG_HOME/isyncrc"
    ".fetchmailrc",           // fetchmail(1): "~/.fetchmailrc" (holds passwords)
    ".thunderbird",           // Thunderbird profiles: "~/.thunderbird/"
    ".local/share/evolution", // Evolution: mail and accounts in "~/.local/share/evolution"
    ".config/evolution",      // Evolution: account sources in "~/.config/evolution"
    // --- messengers
    ".config/Signal",               // Signal Desktop: data in "~/.config/Signal"
    ".config/Element",              // Element Desktop: data in "~/.config/Element"
    ".config/Riot",                 // Element Desktop before its rename: "~/.config/Riot"
    ".local/share/TelegramDesktop", // Telegram Desktop: session in "~/.local/share/TelegramDesktop"
    // --- browsers (profiles hold saved logins, cookies and their keys)
    ".pki",                           // NSS shared database: "~/.pki/nssdb"
    ".mozilla",                       // Firefox profiles: "~/.mozilla/firefox/"
    ".librewolf",                     // LibreWolf profiles: "~/.librewolf/"
    "snap/firefox/common/.mozilla",   // Firefox snap: profiles in "~/snap/firefox/common/.mozilla"
    "snap/chromium/common/chromium",  // Chromium snap: "~/snap/chromium/common/chromium"
    ".config/google-chrome", // Chromium docs, "User Data Directory": "~/.config/google-chrome"
    ".config/google-chrome-beta", // ibid.: "~/.config/google-chrome-beta"
    ".config/google-chrome-unstable", // ibid.: "~/.config/google-chrome-unstable"
    ".config/chromium",      // ibid.: "~/.config/chromium"
    ".config/BraveSoftware", // Brave: "~/.config/BraveSoftware/Brave-Browser"
    ".config/microsoft-edge", // Edge: "~/.config/microsoft-edge"
    ".config/microsoft-edge-beta", // Edge Beta: "~/.config/microsoft-edge-beta"
    ".config/microsoft-edge-dev", // Edge Dev: "~/.config/microsoft-edge-dev"
    ".config/vivaldi",       // Vivaldi: "~/.config/vivaldi"
    ".config/vivaldi-snapshot", // Vivaldi Snapshot: "~/.config/vivaldi-snapshot"
    ".config/opera",         // Opera: profile ("Login Data") in "~/.config/opera"
    ".config/opera-beta",    // Opera beta: "~/.config/opera-beta"
];

/// Protected in every policy, relative to the owner's home, where a `*` in a name stands for
/// any run of characters: the same stores as sandboxed apps keep them (a Flatpak app's
/// `$XDG_CONFIG_HOME` is `~/.var/app/ID/config` and its `$XDG_DATA_HOME` `~/.var/app/ID/data`,
/// flatpak(1); a Snap's `$HOME` is `~/snap/NAME/REVISION` and `$SNAP_USER_COMMON`
/// `~/snap/NAME/common`, snap environment variables), and KDE 4's KWallet in `~/.kde*`.
pub const BUILTIN_PROTECTED_WILDCARDS_IN_HOME: &[&str] = &[
    ".kde*/share/apps/kwallet", // KWallet (KDE 4): "~/.kde/share/apps/kwallet", "~/.kde4/…"
    ".var/app/*/.mozilla",      // Firefox Flatpak (org.mozilla.firefox): "~/.var/app/…/.mozilla"
    ".var/app/*/.thunderbird",  // Thunderbird Flatpak (org.mozilla.Thunderbird)
    ".var/app/*/.librewolf",    // LibreWolf Flatpak (io.gitlab.librewolf-community)
    ".var/app/*/config/google-chrome", // Chrome Flatpak (com.google.Chrome)
    ".var/app/*/config/chromium", // Chromium Flatpak (org.chromium.Chromium)
    ".var/app/*/config/BraveSoftware", // Brave Flatpak (com.brave.Browser)
    ".var/app/*/config/microsoft-edge", // Edge Flatpak (com.microsoft.Edge)
    ".var/app/*/config/vivaldi", // Vivaldi Flatpak (com.vivaldi.Vivaldi)
    ".var/app/*/config/opera",  // Opera Flatpak (com.opera.Opera)
    ".var/app/*/config/Signal", // Signal Flatpak (org.signal.Signal)
    ".var/app/*/config/Element", // Element Flatpak (im.riot.Riot)
    ".var/app/*/config/Bitwarden", // Bitwarden Flatpak (com.bitwarden.desktop)
    ".var/app/*/data/keyrings", // libsecret in a Flatpak: "$XDG_DATA_HOME/keyrings" (file backend)
    ".var/app/*/data/evolution", // Evolution Flatpak (org.gnome.Evolution)
    "snap/*/*/.mozilla",        // Firefox snap, in "$HOME" or "$SNAP_USER_COMMON"
    "snap/*/*/.thunderbird",    // Thunderbird snap
    "snap/*/*/.config/BraveSoftware", // Brave snap: "~/snap/brave/current/.config/BraveSoftware"
    "snap/*/*/.config/opera",   // Opera snap
    "snap/*/*/.config/Signal",  // Signal Desktop snap (signal-desktop)
    "snap/*/*/.config/Bitwarden", // Bitwarden snap
];

/// Protected in every policy, absolute, where a `*` in a name stands for any run of characters.
pub const BUILTIN_PROTECTED_WILDCARDS_SYSTEM: &[&str] = &[
    // containers-auth.json(5): "${XDG_RUNTIME_DIR}/containers/auth.json" (the default;
    // $XDG_RUNTIME_DIR is /run/user/UID, pam_systemd(8)), and "/run/containers/${UID}/auth.json".
    "/run/user/*/containers/auth.json",
    "/run/containers/*/auth.json",
];

/// Protected in every policy wherever they are: files (or directories) whose name matches,
/// ASCII letters folded (`Passwords.KDBX` too).
pub const BUILTIN_PROTECTED_FILE_NAMES: &[&str] = &[
    "*.kdbx",   // KeePass 2.x, KeePassXC database
    "*.kdb",    // KeePass 1.x database
    "*.psafe3", // Password Safe database
];

/// Protected in every policy: the kernel's file systems that expose the memory and the
/// environment of processes (seam's own too) and the kernel's state. Files in them are also
/// refused by file-system type wherever such a file system is mounted.
pub const BUILTIN_PROTECTED_SYSTEM: &[&str] = &["/proc", "/sys"];

/// Protected in every policy, relative to seam's home: its signing keys, its ledger and its
/// policy file (seam_home::layout, beside what the agent may write there).
pub const BUILTIN_PROTECTED_IN_SEAM_HOME: &[&str] = seam_home::layout::PROTECTED;

/// The policy file in seam's home: used when no other is given, if it exists, and made by
/// the gate when the operator answers "always" under the built-in policy.
pub const HOME_POLICY_FILE: &str = seam_home::layout::POLICY_FILE;

/// The default write list, relative to seam's home.
pub const DEFAULT_WRITE_IN_SEAM_HOME: &str = seam_home::layout::GATE_WRITES;

/// The largest policy file seam reads.
const MAX_POLICY_FILE_BYTES: u64 = 1 << 20;

/// Where a policy came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyOrigin {
    /// No file was given: the defaults embedded in seam.
    Builtin,
    /// A policy file (as given, made absolute).
    File(PathBuf),
}

/// A policy file that could not be used: the error of seam's TOML files
/// ([`TomlFileError`]), which this crate owns and the gate's config shares. The text names
/// the file, and for a bad key or value the key, its line and its column.
pub type PolicyError = TomlFileError;

/// What [`PolicyError::Read`] calls a policy file.
const POLICY_FILE: &str = "policy file";

/// The policy as loaded: decisions per capability and the path lists, expanded and
/// canonicalised at load time.
#[derive(Debug)]
pub struct Policy {
    env: PolicyEnv,
    origin: PolicyOrigin,
    decisions: [Decision; 8],
    taint_egress: TaintEgress,
    /// `[egress] destinations`: what a tainted turn's egress may still reach.
    egress_destinations: DestinationAllowList,
    /// `[egress] unnamed`: a destination nothing endorses is refused (`deny`) or asked about.
    egress_unnamed: Decision,
    /// `"python.run" = "allow-unsandboxed"`: the owner accepts unsandboxed runs.
    python_run_unsandboxed: bool,
    /// `[consent] always`: tools whose `ask` is answered yes by the policy itself.
    consent_always: Vec<String>,
    read: Vec<RuleSpec>,
    write: Vec<RuleSpec>,
    protected: Vec<ProtectedSpec>,
    lists: Arc<ResolvedLists>,
}

impl Policy {
    /// The embedded default policy for `env`.
    pub fn builtin(env: PolicyEnv) -> Policy {
        let env = clean_env(env);
        Policy::assemble(env, PolicyOrigin::Builtin, PolicyFile::default(), None)
    }

    /// Loads `file`, or the embedded default when there is none.
    pub fn load(file: Option<&Path>, env: PolicyEnv) -> Result<Policy, PolicyError> {
        let Some(file) = file else {
            return Ok(Policy::builtin(env));
        };
        let (src, absolute) = read_toml_file(file, MAX_POLICY_FILE_BYTES, POLICY_FILE)?;
        let env = clean_env(env);
        let parsed = PolicyFile::parse(&src, file, &env)?;
        let path = clean_absolute(&absolute);
        Ok(Policy::assemble(
            env,
            PolicyOrigin::File(path.clone()),
            parsed,
            Some(path),
        ))
    }

    /// Parses policy text; `origin` is what error messages and `policy show` call it.
    pub fn from_toml_str(src: &str, origin: &Path, env: PolicyEnv) -> Result<Policy, PolicyError> {
        let env = clean_env(env);
        let parsed = PolicyFile::parse(src, origin, &env)?;
        Ok(Policy::assemble(
            env,
            PolicyOrigin::File(origin.to_path_buf()),
            parsed,
            None,
        ))
    }

    fn assemble(
        env: PolicyEnv,
        origin: PolicyOrigin,
        file: PolicyFile,
        policy_path: Option<PathBuf>,
    ) -> Policy {
        let mut decisions = DEFAULT_DECISIONS.map(|(_, d)| d);
        for (cap, decision) in file.decisions {
            decisions[cap.index()] = decision;
        }
        let read = file.read.unwrap_or_else(|| {
            vec![
                builtin_spec("~", env.owner_home.clone()),
                builtin_spec("(seam home)", env.seam_home.clone()),
            ]
        });
        let write = file.write.unwrap_or_else(|| {
            vec![builtin_spec(
                &format!("(seam home)/{DEFAULT_WRITE_IN_SEAM_HOME}"),
                env.seam_home.join(DEFAULT_WRITE_IN_SEAM_HOME),
            )]
        });
        let mut protected = builtin_protected(&env);
        if let Some(path) = policy_path {
            protected.push(builtin_path("(the policy file in use)", path));
        }
        for spec in file.protected {
            if !protected.iter().any(|p| p.rule == spec.rule) {
                protected.push(spec);
            }
        }
        let source = vec![builtin_spec("(workspace root)", env.workspace_root.clone())];
        let lists = Arc::new(ResolvedLists::resolve(&read, &write, &source, &protected));
        Policy {
            env,
            origin,
            decisions,
            taint_egress: file.taint_egress.unwrap_or_default(),
            egress_destinations: file.egress_destinations,
            egress_unnamed: file.egress_unnamed.unwrap_or(Decision::Deny),
            python_run_unsandboxed: file.python_run_unsandboxed,
            consent_always: file.consent_always,
            read,
            write,
            protected,
            lists,
        }
    }

    /// The decision for `cap`.
    pub fn decision(&self, cap: Capability) -> Decision {
        self.decisions[cap.index()]
    }

    /// The decision for one tool of `cap`: the capability's, except that `ask` is `allow` for
    /// a tool the owner listed in `[consent] always` (a `deny` stays a `deny`). The gate asks
    /// this, once per call.
    pub fn decision_for_tool(&self, cap: Capability, tool: &str) -> Decision {
        match self.decision(cap) {
            Decision::Ask if self.consent_always(tool) => Decision::Allow,
            other => other,
        }
    }

    /// Is `tool` in `[consent] always`?
    pub fn consent_always(&self, tool: &str) -> bool {
        self.consent_always.iter().any(|t| t == tool)
    }

    /// Did the owner say `"python.run" = "allow-unsandboxed"`? Then `python.run` is allowed,
    /// and runs without the sandbox on a machine that cannot raise every wall (it still runs
    /// sandboxed where it can). Without it, a missing wall makes `python.run` refuse.
    pub fn python_run_unsandboxed(&self) -> bool {
        self.python_run_unsandboxed
    }

    /// Whether a tainted turn may still reach the network (`[taint] egress`).
    pub fn taint_egress(&self) -> TaintEgress {
        self.taint_egress
    }

    /// `[egress] destinations`: the destinations an egress call in a tainted turn may reach
    /// besides those the operator's words for the turn name.
    pub fn egress_destinations(&self) -> &DestinationAllowList {
        &self.egress_destinations
    }

    /// `[egress] unnamed`: what becomes of an egress call in a tainted turn to a destination
    /// nothing endorses: `Deny` (the default) refuses it, `Ask` asks the operator about that
    /// exact value (with nobody to ask, refused). Never `Allow`: that is `[taint] egress`.
    pub fn egress_unnamed(&self) -> Decision {
        self.egress_unnamed
    }

    /// The environment the policy's names were expanded in (lexically cleaned).
    pub fn env(&self) -> &PolicyEnv {
        &self.env
    }

    /// Where the policy came from.
    pub fn origin(&self) -> &PolicyOrigin {
        &self.origin
    }

    /// The file a rule the operator makes ("always") is written to: the policy file in use,
    /// or [`HOME_POLICY_FILE`] in seam's home under the built-in policy (which seam loads
    /// from then on).
    pub fn rule_file(&self) -> PathBuf {
        match &self.origin {
            PolicyOrigin::File(path) => path.clone(),
            PolicyOrigin::Builtin => seam_home::SeamHome::new(&self.env.seam_home).policy_file(),
        }
    }

    /// The lists canonicalised as they are on disk now (admission refreshes with this).
    pub(crate) fn resolve_lists(&self) -> Arc<ResolvedLists> {
        let source = vec![builtin_spec(
            "(workspace root)",
            self.env.workspace_root.clone(),
        )];
        Arc::new(ResolvedLists::resolve(
            &self.read,
            &self.write,
            &source,
            &self.protected,
        ))
    }

    /// The lists as canonicalised when the policy was loaded.
    pub(crate) fn lists(&self) -> &Arc<ResolvedLists> {
        &self.lists
    }

    /// The protected entry (as written: `~/.ssh`, `~/.var/app/*/.mozilla`, `*.kdbx`) that holds
    /// `path`, a clean absolute path, by its name or, for a tree on disk now, where it leads.
    /// Not a decision about a file (that is [`crate::PathAdmission`]): it says which entry a
    /// refusal comes from.
    pub fn protecting_entry(&self, path: &Path) -> Option<String> {
        let lists = self.resolve_lists();
        lists.protecting(path).map(|by| by.written().to_owned())
    }

    /// The policy as enforced: effective decisions, expanded and canonicalised lists.
    pub fn enforced(&self) -> EnforcedPolicy {
        let lists = &self.lists;
        let paths = |rules: &[Rule]| rules.iter().map(EnforcedPath::from_rule).collect();
        let mut protected = Vec::new();
        let mut protected_patterns = Vec::new();
        for entry in &lists.protected {
            match &entry.spec.rule {
                ProtectedRule::Path(_) => {
                    protected.extend(entry.trees.iter().map(EnforcedPath::from_rule));
                }
                _ => protected_patterns.push(EnforcedPattern::from_entry(entry)),
            }
        }
        EnforcedPolicy {
            origin: match &self.origin {
                PolicyOrigin::Builtin => EnforcedOrigin::Builtin,
                PolicyOrigin::File(path) => EnforcedOrigin::File {
                    path: path.display().to_string(),
                },
            },
            owner_home: self.env.owner_home.display().to_string(),
            seam_home: self.env.seam_home.display().to_string(),
            workspace_root: self.env.workspace_root.display().to_string(),
            capabilities: EnforcedDecisions(
                Capability::ALL
                    .iter()
                    .map(|&c| (c, self.decision(c)))
                    .collect(),
            ),
            taint: EnforcedTaint {
                egress: self.taint_egress,
            },
            egress: EnforcedEgress {
                unnamed: self.egress_unnamed,
                destinations: self
                    .egress_destinations
                    .entries()
                    .iter()
                    .map(|(written, p)| EnforcedDestination {
                        written: written.clone(),
                        matches: p.describe(),
                    })
                    .collect(),
            },
            python_run_unsandboxed: self.python_run_unsandboxed,
            consent_always: self.consent_always.clone(),
            filesystem: EnforcedFilesystem {
                read: paths(&lists.read),
                write: paths(&lists.write),
                protected,
                protected_patterns,
            },
            source: paths(&lists.source),
        }
    }
}

/// The built-in protected list for `env`, parsed: the entries in the owner's home, in seam's
/// home, the system's, the wildcard entries, then the file-name patterns.
fn builtin_protected(env: &PolicyEnv) -> Vec<ProtectedSpec> {
    let in_home = BUILTIN_PROTECTED_IN_HOME
        .iter()
        .map(|rel| builtin_path(&format!("~/{rel}"), env.owner_home.join(rel)));
    let in_seam_home = BUILTIN_PROTECTED_IN_SEAM_HOME
        .iter()
        .map(|rel| builtin_path(&format!("(seam home)/{rel}"), env.seam_home.join(rel)));
    let system = BUILTIN_PROTECTED_SYSTEM
        .iter()
        .map(|abs| builtin_path(abs, PathBuf::from(abs)));
    let wildcards = BUILTIN_PROTECTED_WILDCARDS_IN_HOME
        .iter()
        .map(|rel| format!("~/{rel}"))
        .chain(
            BUILTIN_PROTECTED_WILDCARDS_SYSTEM
                .iter()
                .map(|abs| (*abs).to_owned()),
        )
        .map(|written| {
            let rule = WildcardPath::parse(&written, &env.owner_home)
                .map(ProtectedRule::Wildcard)
                .unwrap_or_else(|e| panic!("built-in protected entry {written}: {e}"));
            ProtectedSpec {
                written,
                rule,
                builtin: true,
            }
        });
    let names = BUILTIN_PROTECTED_FILE_NAMES.iter().map(|pattern| {
        let rule = ProtectedRule::file_name(pattern)
            .unwrap_or_else(|e| panic!("built-in protected entry {pattern}: {e}"));
        ProtectedSpec {
            written: (*pattern).to_owned(),
            rule,
            builtin: true,
        }
    });
    in_home
        .chain(in_seam_home)
        .chain(system)
        .chain(wildcards)
        .chain(names)
        .collect()
}

fn builtin_path(written: &str, path: PathBuf) -> ProtectedSpec {
    ProtectedSpec {
        written: written.to_owned(),
        rule: ProtectedRule::Path(path),
        builtin: true,
    }
}

fn builtin_spec(written: &str, lexical: PathBuf) -> RuleSpec {
    RuleSpec {
        written: written.to_owned(),
        lexical,
        builtin: true,
    }
}

fn clean_env(env: PolicyEnv) -> PolicyEnv {
    PolicyEnv {
        owner_home: clean_absolute(&env.owner_home),
        seam_home: clean_absolute(&env.seam_home),
        workspace_root: clean_absolute(&env.workspace_root),
    }
}

/// What a policy file says, checked and expanded.
#[derive(Debug, Default)]
struct PolicyFile {
    decisions: Vec<(Capability, Decision)>,
    read: Option<Vec<RuleSpec>>,
    write: Option<Vec<RuleSpec>>,
    protected: Vec<ProtectedSpec>,
    taint_egress: Option<TaintEgress>,
    egress_destinations: DestinationAllowList,
    egress_unnamed: Option<Decision>,
    python_run_unsandboxed: bool,
    consent_always: Vec<String>,
}

const TOP_KEYS: &[&str] = &["capabilities", "filesystem", "taint", "egress", "consent"];
const EGRESS_KEYS: &[&str] = &["destinations", "unnamed"];
const CONSENT_KEYS: &[&str] = &["always"];
const FILESYSTEM_KEYS: &[&str] = &["read", "write", "protected"];
const TAINT_KEYS: &[&str] = &["egress"];
const DECISION_WORDS: &[&str] = &["allow", "ask", "deny"];
const TAINT_EGRESS_WORDS: &[&str] = &["deny", "allow"];
/// The value only `python.run` takes besides the decisions.
const ALLOW_UNSANDBOXED: &str = "allow-unsandboxed";

impl PolicyFile {
    fn parse(text: &str, origin: &Path, env: &PolicyEnv) -> Result<PolicyFile, PolicyError> {
        let src = Source { text, origin };
        let doc = DeTable::parse(text).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            let at = text
                .get(span.clone())
                .map(str::trim)
                .filter(|s| !s.is_empty() && !s.contains('\n') && s.chars().count() <= 60);
            let message = match at {
                Some(at) => format!("not valid TOML: {} (at `{at}`)", e.message()),
                None => format!("not valid TOML: {}", e.message()),
            };
            src.error(span, at.map(str::to_owned), message)
        })?;
        let mut out = PolicyFile::default();
        for (key, value) in entries_in_order(doc.get_ref()) {
            let name: &str = key.get_ref();
            match name {
                "capabilities" => {
                    let table = expect_table(&src, name, value)?;
                    out.parse_capabilities(&src, table)?;
                }
                "filesystem" => {
                    let table = expect_table(&src, name, value)?;
                    out.parse_filesystem(&src, table, env)?;
                }
                "taint" => {
                    let table = expect_table(&src, name, value)?;
                    out.parse_taint(&src, table)?;
                }
                "consent" => {
                    let table = expect_table(&src, name, value)?;
                    out.parse_consent(&src, table)?;
                }
                "egress" => {
                    let table = expect_table(&src, name, value)?;
                    out.parse_egress(&src, table)?;
                }
                other => {
                    return Err(src.error(
                        key.span(),
                        Some(other.to_owned()),
                        format!(
                            "unknown key \"{other}\" at the top level{}; the policy file has the tables {}",
                            suggestion(other, TOP_KEYS),
                            quoted_list(TOP_KEYS, "[", "]"),
                        ),
                    ));
                }
            }
        }
        Ok(out)
    }

    fn parse_capabilities(
        &mut self,
        src: &Source<'_>,
        table: &DeTable<'_>,
    ) -> Result<(), PolicyError> {
        let names: Vec<&str> = Capability::ALL.iter().map(|c| c.as_str()).collect();
        for (key, value) in entries_in_order(table) {
            let name: &str = key.get_ref();
            let dotted = format!("capabilities.{name}");
            let Some(cap) = Capability::from_name(name) else {
                let hint = if value.get_ref().is_table() {
                    format!(
                        "; capability names hold a dot, so write them quoted, e.g. \"{name}.{}\" = \"allow\"",
                        value
                            .get_ref()
                            .as_table()
                            .and_then(|t| t.iter().next())
                            .map_or("read".to_owned(), |(k, _)| k.get_ref().to_string())
                    )
                } else {
                    suggestion(name, &names)
                };
                return Err(src.error(
                    key.span(),
                    Some(dotted),
                    format!(
                        "unknown key \"{name}\" in [capabilities]{hint}; the capabilities are {}",
                        quoted_list(&names, "\"", "\"")
                    ),
                ));
            };
            let word = value.get_ref().as_str().ok_or_else(|| {
                src.error(
                    value.span(),
                    Some(dotted.clone()),
                    format!(
                        "bad value for \"{name}\" in [capabilities]: expected one of {} (a string), found {}",
                        quoted_list(DECISION_WORDS, "\"", "\""),
                        type_name(value.get_ref())
                    ),
                )
            })?;
            let decision = match word {
                ALLOW_UNSANDBOXED if cap == Capability::PythonRun => {
                    self.python_run_unsandboxed = true;
                    Decision::Allow
                }
                "allow" => Decision::Allow,
                "ask" => Decision::Ask,
                "deny" => Decision::Deny,
                other => {
                    let mut words = DECISION_WORDS.to_vec();
                    if cap == Capability::PythonRun {
                        words.push(ALLOW_UNSANDBOXED);
                    }
                    return Err(src.error(
                        value.span(),
                        Some(dotted),
                        format!(
                            "bad value for \"{name}\" in [capabilities]: \"{other}\" is not one of {}{}",
                            quoted_list(&words, "\"", "\""),
                            suggestion(other, &words)
                        ),
                    ));
                }
            };
            self.decisions.push((cap, decision));
        }
        Ok(())
    }

    fn parse_taint(&mut self, src: &Source<'_>, table: &DeTable<'_>) -> Result<(), PolicyError> {
        for (key, value) in entries_in_order(table) {
            let name: &str = key.get_ref();
            let dotted = format!("taint.{name}");
            if !TAINT_KEYS.contains(&name) {
                return Err(src.error(
                    key.span(),
                    Some(dotted),
                    format!(
                        "unknown key \"{name}\" in [taint]{}; the keys are {}",
                        suggestion(name, TAINT_KEYS),
                        quoted_list(TAINT_KEYS, "\"", "\"")
                    ),
                ));
            }
            let bad = |found: String| {
                src.error(
                    value.span(),
                    Some(dotted.clone()),
                    format!(
                        "bad value for \"{name}\" in [taint]: {found}; expected one of {} \
                         (may a turn that has read the owner's files or web results still \
                         reach the network?)",
                        quoted_list(TAINT_EGRESS_WORDS, "\"", "\""),
                    ),
                )
            };
            self.taint_egress = Some(match value.get_ref().as_str() {
                Some("deny") => TaintEgress::Deny,
                Some("allow") => TaintEgress::Allow,
                Some(other) => {
                    return Err(bad(format!(
                        "\"{other}\" is not a choice here{}",
                        suggestion(other, TAINT_EGRESS_WORDS)
                    )));
                }
                None => return Err(bad(format!("found {}", type_name(value.get_ref())))),
            });
        }
        Ok(())
    }

    fn parse_egress(&mut self, src: &Source<'_>, table: &DeTable<'_>) -> Result<(), PolicyError> {
        for (key, value) in entries_in_order(table) {
            let name: &str = key.get_ref();
            let dotted = format!("egress.{name}");
            if !EGRESS_KEYS.contains(&name) {
                return Err(src.error(
                    key.span(),
                    Some(dotted),
                    format!(
                        "unknown key \"{name}\" in [egress]{}; the keys are {}",
                        suggestion(name, EGRESS_KEYS),
                        quoted_list(EGRESS_KEYS, "\"", "\"")
                    ),
                ));
            }
            if name == "unnamed" {
                self.egress_unnamed = Some(match value.get_ref().as_str() {
                    Some("deny") => Decision::Deny,
                    Some("ask") => Decision::Ask,
                    other => {
                        let found = match other {
                            Some("allow") => "\"allow\" (to let a tainted turn reach any \
                                              destination, set [taint] egress = \"allow\")"
                                .to_owned(),
                            Some(w) => format!("\"{w}\"{}", suggestion(w, &["deny", "ask"])),
                            None => format!("found {}", type_name(value.get_ref())),
                        };
                        return Err(src.error(
                            value.span(),
                            Some(dotted),
                            format!(
                                "bad value for \"unnamed\" in [egress]: {found}; expected \
                                 \"deny\" (a destination nothing endorses is refused) or \"ask\" \
                                 (the operator is asked about that exact value)"
                            ),
                        ));
                    }
                });
                continue;
            }
            let bad = |span: Range<usize>, found: String| {
                src.error(
                    span,
                    Some(dotted.clone()),
                    format!(
                        "bad value for \"{name}\" in [egress]: {found}; expected an array of \
                         destinations an egress call in a tainted turn may still reach, e.g. \
                         destinations = [\"*.example.org\", \"bob@example.net\"]"
                    ),
                )
            };
            let Some(items) = value.get_ref().as_array() else {
                return Err(bad(
                    value.span(),
                    format!("found {}", type_name(value.get_ref())),
                ));
            };
            for item in items.iter() {
                let Some(written) = item.get_ref().as_str() else {
                    return Err(bad(
                        item.span(),
                        format!("found {}", type_name(item.get_ref())),
                    ));
                };
                let pattern =
                    DestinationPattern::parse(written).map_err(|why| bad(item.span(), why))?;
                self.egress_destinations.push(written.to_owned(), pattern);
            }
        }
        Ok(())
    }

    fn parse_consent(&mut self, src: &Source<'_>, table: &DeTable<'_>) -> Result<(), PolicyError> {
        for (key, value) in entries_in_order(table) {
            let name: &str = key.get_ref();
            let dotted = format!("consent.{name}");
            if !CONSENT_KEYS.contains(&name) {
                return Err(src.error(
                    key.span(),
                    Some(dotted),
                    format!(
                        "unknown key \"{name}\" in [consent]{}; the keys are {}",
                        suggestion(name, CONSENT_KEYS),
                        quoted_list(CONSENT_KEYS, "\"", "\"")
                    ),
                ));
            }
            let bad = |span: Range<usize>, found: String| {
                src.error(
                    span,
                    Some(dotted.clone()),
                    format!(
                        "bad value for \"{name}\" in [consent]: expected an array of tool \
                         names, e.g. always = [\"python.run\"], found {found}"
                    ),
                )
            };
            let Some(items) = value.get_ref().as_array() else {
                return Err(bad(value.span(), type_name(value.get_ref()).to_owned()));
            };
            for item in items.iter() {
                let tool = match item.get_ref().as_str() {
                    Some(t) if is_tool_name(t) => t,
                    Some(t) => {
                        return Err(bad(
                            item.span(),
                            format!("\"{}\", which is not a tool name", t.escape_debug()),
                        ));
                    }
                    None => return Err(bad(item.span(), type_name(item.get_ref()).to_owned())),
                };
                if !self.consent_always.iter().any(|t| t == tool) {
                    self.consent_always.push(tool.to_owned());
                }
            }
        }
        Ok(())
    }

    fn parse_filesystem(
        &mut self,
        src: &Source<'_>,
        table: &DeTable<'_>,
        env: &PolicyEnv,
    ) -> Result<(), PolicyError> {
        for (key, value) in entries_in_order(table) {
            let name: &str = key.get_ref();
            let dotted = format!("filesystem.{name}");
            if !FILESYSTEM_KEYS.contains(&name) {
                return Err(src.error(
                    key.span(),
                    Some(dotted),
                    format!(
                        "unknown key \"{name}\" in [filesystem]{}; the keys are {}",
                        suggestion(name, FILESYSTEM_KEYS),
                        quoted_list(FILESYSTEM_KEYS, "\"", "\"")
                    ),
                ));
            }
            let Some(items) = value.get_ref().as_array() else {
                return Err(src.error(
                    value.span(),
                    Some(dotted),
                    format!(
                        "bad value for \"{name}\" in [filesystem]: expected an array of paths, e.g. {name} = [\"~/notes\"], found {}",
                        type_name(value.get_ref())
                    ),
                ));
            };
            let mut specs: Vec<RuleSpec> = Vec::new();
            let mut protected: Vec<ProtectedSpec> = Vec::new();
            for item in items.iter() {
                let Some(written) = item.get_ref().as_str() else {
                    return Err(src.error(
                        item.span(),
                        Some(dotted),
                        format!(
                            "bad value in [filesystem] {name}: expected a path (a string), found {}",
                            type_name(item.get_ref())
                        ),
                    ));
                };
                if name == "protected" && written.contains('*') {
                    let rule = if written.contains('/') {
                        WildcardPath::parse(written, &env.owner_home).map(ProtectedRule::Wildcard)
                    } else {
                        ProtectedRule::file_name(written)
                    }
                    .map_err(|e| {
                        src.error(
                            item.span(),
                            Some(dotted.clone()),
                            format!(
                                "bad pattern \"{}\" in [filesystem] protected: {e}",
                                written.escape_debug()
                            ),
                        )
                    })?;
                    if !protected.iter().any(|p| p.rule == rule) {
                        protected.push(ProtectedSpec {
                            written: written.to_owned(),
                            rule,
                            builtin: false,
                        });
                    }
                    continue;
                }
                let lexical = normalise_str(written, &env.owner_home, None).map_err(|e| {
                    src.error(
                        item.span(),
                        Some(dotted.clone()),
                        format!(
                            "bad path \"{}\" in [filesystem] {name}: {e}",
                            written.escape_debug()
                        ),
                    )
                })?;
                if name == "protected" {
                    let rule = ProtectedRule::Path(lexical);
                    if !protected.iter().any(|p| p.rule == rule) {
                        protected.push(ProtectedSpec {
                            written: written.to_owned(),
                            rule,
                            builtin: false,
                        });
                    }
                    continue;
                }
                if !specs.iter().any(|s| s.lexical == lexical) {
                    specs.push(RuleSpec {
                        written: written.to_owned(),
                        lexical,
                        builtin: false,
                    });
                }
            }
            match name {
                "read" => self.read = Some(specs),
                "write" => self.write = Some(specs),
                _ => self.protected = protected,
            }
        }
        Ok(())
    }
}

/// A tool's name as the gate registers it: letters, digits, `.`, `_` and `-` (`python.run`,
/// `fs.read_text_file`).
fn is_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn expect_table<'a, 'i>(
    src: &Source<'_>,
    name: &str,
    value: &'a Spanned<DeValue<'i>>,
) -> Result<&'a DeTable<'i>, PolicyError> {
    match value.get_ref() {
        DeValue::Table(table) => Ok(table),
        other => Err(src.error(
            value.span(),
            Some(name.to_owned()),
            format!(
                "bad value for \"{name}\": expected a table ([{name}]), found {}",
                type_name(other)
            ),
        )),
    }
}

fn quoted_list(words: &[&str], open: &str, close: &str) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("{open}{w}{close}")).collect();
    quoted.join(", ")
}

/// The policy as enforced, for `seam policy show` (text) and `seam policy show --json`.
#[derive(Debug, Clone, Serialize)]
pub struct EnforcedPolicy {
    /// Where the policy came from.
    pub origin: EnforcedOrigin,
    /// What `~` expands to.
    pub owner_home: String,
    /// seam's state directory.
    pub seam_home: String,
    /// What relative tool paths are relative to.
    pub workspace_root: String,
    /// The effective decision of every capability, in a fixed order.
    pub capabilities: EnforcedDecisions,
    /// What taint closes (`[taint]`).
    pub taint: EnforcedTaint,
    /// What a tainted turn's egress may still reach (`[egress]`).
    pub egress: EnforcedEgress,
    /// `"python.run" = "allow-unsandboxed"`: python.run may run without the sandbox where the
    /// machine cannot raise its walls.
    pub python_run_unsandboxed: bool,
    /// `[consent] always`: tools whose "ask" the policy answers yes.
    pub consent_always: Vec<String>,
    /// The path lists, expanded and canonicalised.
    pub filesystem: EnforcedFilesystem,
    /// The allow-list of `Access::Source` paths: the workspace root.
    pub source: Vec<EnforcedPath>,
}

/// Where an enforced policy came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum EnforcedOrigin {
    /// The defaults embedded in seam (no policy file).
    Builtin,
    /// A policy file.
    File { path: String },
}

/// Capability → decision, serialised as a JSON object in [`Capability::ALL`] order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnforcedDecisions(pub Vec<(Capability, Decision)>);

impl Serialize for EnforcedDecisions {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (cap, decision) in &self.0 {
            map.serialize_entry(cap.as_str(), decision)?;
        }
        map.end()
    }
}

/// The enforced `[taint]` settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct EnforcedTaint {
    /// Whether a tainted turn may still reach the network.
    pub egress: TaintEgress,
}

/// The enforced `[egress]` settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnforcedEgress {
    /// `[egress] unnamed`: `deny` or `ask` for a destination nothing endorses.
    pub unnamed: Decision,
    /// `[egress] destinations`, in the file's order.
    pub destinations: Vec<EnforcedDestination>,
}

/// One allow-list entry of `[egress] destinations`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnforcedDestination {
    /// As written in the policy file.
    pub written: String,
    /// What it matches, in words.
    pub matches: String,
}

/// The enforced `[filesystem]` lists.
#[derive(Debug, Clone, Serialize)]
pub struct EnforcedFilesystem {
    pub read: Vec<EnforcedPath>,
    pub write: Vec<EnforcedPath>,
    /// The protected files and trees: built-in entries first, then the policy file's.
    pub protected: Vec<EnforcedPath>,
    /// The protected entries that are patterns (wildcard paths, file names anywhere):
    /// built-in entries first, then the policy file's.
    pub protected_patterns: Vec<EnforcedPattern>,
}

/// What kind of pattern a protected entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EnforcedPatternKind {
    /// A path whose names may hold a `*`: every match, and what is under it.
    Wildcard,
    /// A name, wherever it is (ASCII letters in any case): such a file, or a directory and what
    /// is under it.
    FileName,
}

/// One protected pattern as enforced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnforcedPattern {
    pub kind: EnforcedPatternKind,
    /// The pattern with `~` expanded (`/home/o/.var/app/*/.mozilla`), or the name (`*.kdbx`).
    pub pattern: String,
    /// As written in the policy file, or the built-in entry.
    pub written: String,
    /// A built-in entry: no policy file removes it.
    pub builtin: bool,
    /// What a wildcard matched on disk when the policy was loaded, each also enforced as a
    /// protected tree (links followed, by `(device, inode)` too); paths that match later are
    /// refused by name, and as trees once the lists are refreshed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub matches: Vec<EnforcedPath>,
}

impl EnforcedPattern {
    fn from_entry(entry: &ProtectedEntry) -> EnforcedPattern {
        EnforcedPattern {
            kind: match entry.spec.rule {
                ProtectedRule::FileName(_) => EnforcedPatternKind::FileName,
                _ => EnforcedPatternKind::Wildcard,
            },
            pattern: entry.spec.rule.to_string(),
            written: entry.spec.written.clone(),
            builtin: entry.spec.builtin,
            matches: entry.trees.iter().map(EnforcedPath::from_rule).collect(),
        }
    }
}

/// One list entry as enforced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnforcedPath {
    /// Expanded and lexically normalised.
    pub path: String,
    /// Where `path` leads, when it is (or goes through) a link. Both are enforced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canonical: Option<String>,
    /// As written in the policy file, or what a built-in entry stands for.
    pub written: String,
    /// A built-in entry (or default): no policy file removes a built-in protected entry.
    pub builtin: bool,
}

impl EnforcedPath {
    fn from_rule(rule: &Rule) -> EnforcedPath {
        EnforcedPath {
            path: rule.spec.lexical.display().to_string(),
            canonical: (rule.canonical != rule.spec.lexical)
                .then(|| rule.canonical.display().to_string()),
            written: rule.spec.written.clone(),
            builtin: rule.spec.builtin,
        }
    }
}

impl EnforcedPolicy {
    /// The human form for `seam policy show`.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        match &self.origin {
            EnforcedOrigin::Builtin => {
                out.push_str("policy: the built-in default (no policy file given)\n");
            }
            EnforcedOrigin::File { path } => {
                let _ = writeln!(out, "policy: {path}");
            }
        }
        let _ = writeln!(
            out,
            "owner home (~): {}\nseam home: {}\nworkspace root: {}",
            self.owner_home, self.seam_home, self.workspace_root
        );
        out.push_str("\ncapabilities:\n");
        for (cap, decision) in &self.capabilities.0 {
            let word = match decision {
                Decision::Allow => "allow",
                Decision::Ask => "ask",
                Decision::Deny => "deny",
            };
            if *cap == Capability::PythonRun && self.python_run_unsandboxed {
                let _ = writeln!(
                    out,
                    "  {:<18} {ALLOW_UNSANDBOXED}  (allowed; runs WITHOUT the sandbox where this \
                     machine cannot raise every wall: see `seam doctor`)",
                    cap.as_str()
                );
                continue;
            }
            let _ = writeln!(out, "  {:<18} {word}", cap.as_str());
        }
        out.push_str("\nconsent ([consent] always: \"ask\" answered yes for good):\n");
        if self.consent_always.is_empty() {
            out.push_str("  (none: every \"ask\" asks)\n");
        }
        for tool in &self.consent_always {
            let _ = writeln!(out, "  {tool}  always");
        }
        let _ = writeln!(
            out,
            "\ntaint ([taint] egress):\n  egress             {}  ({})",
            self.taint.egress.as_str(),
            match self.taint.egress {
                TaintEgress::Deny => {
                    "a turn that has read the owner's files or web results cannot reach the network"
                }
                TaintEgress::Allow => {
                    "a tainted turn may still reach the network: private data, untrusted content \
                     and a way out can meet in one turn"
                }
            }
        );
        out.push_str("\negress in a tainted turn ([taint] egress, [egress] destinations):\n");
        match self.taint.egress {
            TaintEgress::Deny => out.push_str(
                "  rule: a tool with egress, in a turn that has read the owner's files or \
                 untrusted content, runs only when it declares where its data goes and every \
                 such destination in the call is endorsed: named in the operator's words for \
                 the turn (the task, attached files; registered by whoever opened the turn), \
                 matched by the allow-list below, or consented to by the operator when asked. \
                 A tool with egress that declares no destinations, and a call that names none of \
                 its destinations (unless its tool says such a call reaches no one new), are \
                 refused. The rest of the call (a body, a query) is not checked: it can carry \
                 the turn's data to an endorsed destination.\n",
            ),
            TaintEgress::Allow => out.push_str(
                "  rule: none: [taint] egress is \"allow\", so a tainted turn reaches any \
                 destination, and the allow-list below is not used\n",
            ),
        }
        if self.taint.egress == TaintEgress::Deny {
            out.push_str(match self.egress.unnamed {
                Decision::Ask => {
                    "  a destination nothing endorses ([egress] unnamed = \"ask\"): the operator \
                     is asked about that exact value, and a yes endorses it for the rest of the \
                     turn; with nobody to ask, the call is refused, naming it\n"
                }
                _ => {
                    "  a destination nothing endorses ([egress] unnamed = \"deny\"): refused, \
                     naming it (\"ask\" would ask the operator about that exact value)\n"
                }
            });
        }
        out.push_str("  allow-list ([egress] destinations):\n");
        if self.egress.destinations.is_empty() {
            out.push_str("    (empty: only destinations the operator's words name)\n");
        }
        for d in &self.egress.destinations {
            let _ = writeln!(out, "    {}  ({})", d.written, d.matches);
        }
        let mut list = |title: &str, paths: &[EnforcedPath], mark_builtin: bool| {
            let _ = writeln!(out, "\n{title}:");
            if paths.is_empty() {
                out.push_str("  (empty: nothing is allowed)\n");
            }
            for p in paths {
                let _ = write!(out, "  {}", p.path);
                if let Some(canonical) = &p.canonical {
                    let _ = write!(out, " -> {canonical} (a link: both are enforced)");
                }
                if mark_builtin && p.builtin {
                    let _ = write!(out, "  [built-in: {}]", p.written);
                } else if !mark_builtin && p.written != p.path && !p.builtin {
                    let _ = write!(out, "  (written \"{}\")", p.written);
                }
                out.push('\n');
            }
        };
        list(
            "read allow-list ([filesystem] read)",
            &self.filesystem.read,
            false,
        );
        list(
            "write allow-list ([filesystem] write)",
            &self.filesystem.write,
            false,
        );
        list("source paths (the workspace root)", &self.source, false);
        list(
            "protected: never read or written, at any autonomy level ([filesystem] protected adds to the built-in entries)",
            &self.filesystem.protected,
            true,
        );
        let _ = writeln!(
            out,
            "\nprotected patterns: never read or written, at any autonomy level (a \"*\" stands for any run of characters in one name):"
        );
        for p in &self.filesystem.protected_patterns {
            match p.kind {
                EnforcedPatternKind::Wildcard => {
                    let _ = write!(out, "  {}", p.pattern);
                }
                EnforcedPatternKind::FileName => {
                    let _ = write!(
                        out,
                        "  {}  (a file or directory of that name anywhere, letters in any case)",
                        p.pattern
                    );
                }
            }
            if p.builtin {
                let _ = write!(out, "  [built-in: {}]", p.written);
            } else if p.written != p.pattern {
                let _ = write!(out, "  (written \"{}\")", p.written);
            }
            out.push('\n');
            for m in &p.matches {
                let _ = write!(out, "      now: {}", m.path);
                if let Some(canonical) = &m.canonical {
                    let _ = write!(out, " -> {canonical} (a link: both are enforced)");
                }
                out.push('\n');
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strict_toml::line_column;

    #[test]
    fn line_column_counts_from_one() {
        let text = "a\nbc\né=1";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 3), (2, 2));
        assert_eq!(line_column(text, 5), (3, 1));
        assert_eq!(line_column(text, 7), (3, 2));
    }

    #[test]
    fn suggestions_find_typos() {
        assert_eq!(
            suggestion("filesystem.raed", &["filesystem.read", "memory"]),
            " (did you mean \"filesystem.read\"?)"
        );
        assert_eq!(suggestion("zzzzzz", &["read"]), "");
    }
}

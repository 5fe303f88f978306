//! The one change seam itself makes to a policy file: a tool added to `[consent] always`,
//! when the operator answers "always" to a pending call. The file keeps its comments and
//! layout (it is edited as TOML, not rewritten), the result must still parse as a policy, and
//! it replaces the old file in one rename, keeping its mode.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::{Policy, PolicyEnv, PolicyError};

/// The policy file could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum PolicyWriteError {
    #[error(transparent)]
    Policy(#[from] PolicyError),
    #[error("{}: {reason}", path.display())]
    Shape { path: PathBuf, reason: String },
    #[error("cannot write the policy file {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Adds `tool` to `[consent] always` in the policy file at `path` (made, owner-only, if it
/// does not exist). Returns false when the tool was listed already. The new text is parsed as
/// a policy (in `env`) before it replaces the file.
pub fn add_consent_always(
    path: &Path,
    tool: &str,
    env: &PolicyEnv,
) -> Result<bool, PolicyWriteError> {
    let io = |source| PolicyWriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    let shape = |reason: &str| PolicyWriteError::Shape {
        path: path.to_path_buf(),
        reason: reason.to_owned(),
    };
    let (text, mode) = match std::fs::metadata(path) {
        Ok(meta) => (
            crate::strict_toml::read_text_file(path, 1 << 20).map_err(io)?,
            meta.permissions().mode() & 0o7777,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (String::new(), 0o600),
        Err(e) => return Err(io(e)),
    };
    // The file as it is must be a policy: a change is never made on top of a broken one.
    Policy::from_toml_str(&text, path, env.clone())?;
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| shape(&e.to_string()))?;
    let consent = doc
        .entry("consent")
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()));
    let consent = consent
        .as_table_like_mut()
        .ok_or_else(|| shape("[consent] is not a table"))?;
    let always = consent
        .entry("always")
        .or_insert(toml_edit::value(toml_edit::Array::new()));
    let list = always
        .as_array_mut()
        .ok_or_else(|| shape("[consent] always is not an array"))?;
    if list.iter().any(|v| v.as_str() == Some(tool)) {
        return Ok(false);
    }
    list.push(tool);
    let new = doc.to_string();
    Policy::from_toml_str(&new, path, env.clone())?;

    if path.file_name().is_none() {
        return Err(shape("names no file"));
    }
    // Replaced atomically, keeping the file's mode (seam_home::file::replace).
    seam_home::file::replace(path, new.as_bytes(), mode).map_err(|e| io(e.source))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(dir: &Path) -> PolicyEnv {
        PolicyEnv {
            owner_home: dir.join("home"),
            seam_home: dir.join("seam"),
            workspace_root: dir.to_path_buf(),
        }
    }

    #[test]
    fn a_tool_is_added_keeping_the_file_and_its_comments() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.toml");
        std::fs::write(
            &path,
            "# mine\n[capabilities]\n\"web.search\" = \"ask\" # keep\n",
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let e = env(dir.path());
        assert!(add_consent_always(&path, "python.run", &e).unwrap());
        assert!(!add_consent_always(&path, "python.run", &e).unwrap());
        assert!(add_consent_always(&path, "web.search", &e).unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("# mine\n[capabilities]\n\"web.search\" = \"ask\" # keep\n"),
            "{text}"
        );
        let policy = Policy::load(Some(&path), e).unwrap();
        assert!(policy.consent_always("python.run") && policy.consent_always("web.search"));
        assert_eq!(
            policy.decision_for_tool(crate::Capability::PythonRun, "python.run"),
            crate::Decision::Allow
        );
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o640
        );
    }

    #[test]
    fn a_missing_file_is_made_owner_only_and_a_broken_one_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.toml");
        assert!(add_consent_always(&path, "python.run", &env(dir.path())).unwrap());
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let broken = dir.path().join("broken.toml");
        std::fs::write(&broken, "[capabilitis]\n").unwrap();
        assert!(add_consent_always(&broken, "python.run", &env(dir.path())).is_err());
        assert_eq!(std::fs::read_to_string(&broken).unwrap(), "[capabilitis]\n");
    }
}

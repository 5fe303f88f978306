//! Where python3 really lives. `python3` on the PATH may be a shim (pyenv), a symlink or a
//! virtual environment; the sandbox needs the real interpreter and the one directory (its
//! prefix) that holds its standard library, so that it can bind exactly that directory
//! read-only and nothing around it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The interpreter the sandbox runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonInstall {
    /// The real executable (links resolved).
    pub executable: PathBuf,
    /// Its prefix (`sys.base_prefix`, links resolved): bound read-only when outside `/usr`.
    pub prefix: PathBuf,
    /// `major.minor.micro`.
    pub version: String,
}

impl PythonInstall {
    /// Does the sandbox need to bind the prefix (it is not under `/usr`, which is bound anyway)?
    pub fn prefix_needs_bind(&self) -> bool {
        !self.prefix.starts_with("/usr")
    }
}

const ASK: &str = "import os, sys\n\
print(os.path.realpath(sys.executable))\n\
print(os.path.realpath(sys.base_prefix))\n\
print('%d.%d.%d' % sys.version_info[:3])";

/// Asks `python` (a name on the PATH or a path) where it really lives. Runs it once, unsandboxed,
/// with `-I` (no environment variables, no user site, no current directory on the path).
pub fn discover(python: &Path) -> Result<PythonInstall, String> {
    let out = Command::new(python)
        .args(["-I", "-c", ASK])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} -c failed ({}): {}",
            python.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let (Some(exe), Some(prefix), Some(version)) = (lines.next(), lines.next(), lines.next())
    else {
        return Err(format!(
            "{} did not say where it lives (got {text:?})",
            python.display()
        ));
    };
    let install = PythonInstall {
        executable: PathBuf::from(exe),
        prefix: PathBuf::from(prefix),
        version: version.to_owned(),
    };
    check(&install)?;
    Ok(install)
}

/// The prefix must be a directory of its own: never `/`, the home of anyone, or a place that
/// would bring the owner's files into view; and the executable must be inside it or `/usr`.
fn check(install: &PythonInstall) -> Result<(), String> {
    let prefix = &install.prefix;
    if !prefix.is_absolute() || !install.executable.is_absolute() {
        return Err(format!(
            "python3's prefix {} or executable {} is not an absolute path",
            prefix.display(),
            install.executable.display()
        ));
    }
    let too_wide = [
        "/", "/home", "/root", "/tmp", "/var", "/etc", "/opt", "/srv", "/mnt", "/media",
    ];
    if too_wide.iter().any(|w| prefix == Path::new(w))
        || prefix.components().count() < 3 && !prefix.starts_with("/usr")
    {
        return Err(format!(
            "python3's prefix {} is too wide a directory to show the sandbox (it would bring \
             other files into view)",
            prefix.display()
        ));
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    if let Some(home) = home
        && home.is_absolute()
        && home.starts_with(prefix)
    {
        return Err(format!(
            "python3's prefix {} holds the home directory {}",
            prefix.display(),
            home.display()
        ));
    }
    if !install.executable.starts_with(prefix) && !install.executable.starts_with("/usr") {
        return Err(format!(
            "python3 ({}) lives outside its prefix {} and /usr",
            install.executable.display(),
            prefix.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn install(exe: &str, prefix: &str) -> PythonInstall {
        PythonInstall {
            executable: exe.into(),
            prefix: prefix.into(),
            version: "3.11.0".into(),
        }
    }

    #[test]
    fn wide_prefixes_are_refused() {
        assert!(check(&install("/bin/python3", "/")).is_err());
        assert!(check(&install("/home/python3", "/home")).is_err());
        assert!(check(&install("/opt/x/python3", "/opt")).is_err());
        assert!(check(&install("/usr/bin/python3", "/usr")).is_ok());
        assert!(check(&install("/opt/py/bin/python3", "/opt/py")).is_ok());
    }

    #[test]
    fn an_executable_outside_its_prefix_is_refused() {
        assert!(check(&install("/srv/x/python3", "/opt/py")).is_err());
    }
}

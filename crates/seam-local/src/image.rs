//! image: a Graphviz DOT diagram rendered to SVG by the distribution's `dot`,
//! into `<seam_home>/staging/images/<turn>/`, for the operator to see. DOT that
//! names files (`image`, `shapefile`, `imagepath`, `fontpath`) is refused, and
//! `dot` runs with `GV_FILE_PATH` set to an empty directory, which keeps it
//! from reading any image file; the run has a timeout and a size limit.

use std::path::PathBuf;
use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;

use seam_home::SeamHome;
use seam_protocol::RefusalCode;
use serde_json::{Map, Value};

use crate::builder::{make_private_dir, turn_slug};
use crate::process;
use crate::{LocalRefusal, LocalTools, TurnInfo, required, str_param};

/// The largest DOT source taken.
pub const MAX_DOT_BYTES: usize = 64 * 1024;
/// The largest SVG kept.
pub const MAX_SVG_BYTES: usize = 4 * 1024 * 1024;
/// Graphviz's renderer, looked up on PATH.
pub(crate) const DOT: &str = "dot";
const DOT_TIMEOUT: Duration = Duration::from_secs(10);

static FILE_ATTRIBUTES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)\b(image|shapefile|imagepath|fontpath)\b"?\s*="#).expect("a valid regex")
});

/// Renders `dot` and stages the SVG; returns its path.
pub(crate) fn render(
    home: &SeamHome,
    turn: &str,
    dot: &str,
    name: Option<&str>,
) -> Result<PathBuf, LocalRefusal> {
    if dot.len() > MAX_DOT_BYTES {
        return Err(LocalRefusal::new(
            RefusalCode::InvalidParams,
            format!(
                "dot is {} bytes, over the limit of {MAX_DOT_BYTES}",
                dot.len()
            ),
        ));
    }
    if let Some(m) = FILE_ATTRIBUTES.find(dot) {
        return Err(LocalRefusal::new(
            RefusalCode::NotAllowed,
            format!(
                "dot uses the attribute {:?}, which reads files: diagrams may not",
                m.as_str().trim_end_matches('=').trim()
            ),
        ));
    }
    let name = name.unwrap_or("diagram");
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(LocalRefusal::new(
            RefusalCode::InvalidParams,
            "name must be 1 to 64 letters, digits, - or _",
        ));
    }
    if !process::on_path(DOT) {
        return Err(LocalRefusal::new(
            RefusalCode::Unavailable,
            "Graphviz's dot is not installed on this machine, so diagrams cannot be rendered",
        ));
    }
    let images = home.images();
    let empty = images.join(".no-files");
    make_private_dir(&empty)?;
    let dir = images.join(turn_slug(turn));
    make_private_dir(&dir)?;
    let argv = vec![DOT.to_owned(), "-Tsvg".to_owned()];
    let out = process::run(
        &argv,
        &empty,
        Some(dot.as_bytes()),
        &[
            ("GV_FILE_PATH", &empty.to_string_lossy()),
            ("SERVER_NAME", "seam"),
        ],
        DOT_TIMEOUT,
        MAX_SVG_BYTES,
    )
    .map_err(|e| LocalRefusal::new(RefusalCode::Failed, format!("cannot run dot: {e}")))?;
    if out.timed_out {
        return Err(LocalRefusal::new(RefusalCode::Failed, "dot took too long"));
    }
    if !out.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(LocalRefusal::new(
            RefusalCode::Failed,
            format!("dot refused the diagram: {}", err.trim()),
        ));
    }
    if out.output_bytes as usize > MAX_SVG_BYTES + out.stderr.len() {
        return Err(LocalRefusal::new(
            RefusalCode::Failed,
            "the SVG is too large",
        ));
    }
    let mut path = dir.join(format!("{name}.svg"));
    let mut n = 2;
    while path.exists() {
        path = dir.join(format!("{name}-{n}.svg"));
        n += 1;
    }
    std::fs::write(&path, &out.stdout).map_err(|e| {
        LocalRefusal::new(
            RefusalCode::Failed,
            format!("cannot write {}: {e}", path.display()),
        )
    })?;
    Ok(path)
}

impl LocalTools {
    /// The image tool's call: renders `dot` and holds the diagram for the turn.
    pub(crate) fn image(
        &self,
        turn: &TurnInfo,
        params: &Map<String, Value>,
    ) -> Result<Value, LocalRefusal> {
        let dot = required(params, "dot", "")?;
        let path = render(&self.home(), &turn.turn, dot, str_param(params, "name"))?;
        let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let file = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let state = self.turn_state(&turn.turn);
        let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
        state.images.push((path, dot.to_owned()));
        Ok(
            serde_json::json!({"staged": file, "bytes": bytes, "shown": "to the operator in the queue"}),
        )
    }
}

//! The governed tools. Each is a [`GovernedTool`](crate::GovernedTool): a
//! declaration the toolbox checks, and a `run` that sees only admitted inputs.

mod files_read;

pub use files_read::FilesRead;

use crate::toolbox::{GovernedTool, ToolboxConfig};

/// The built-in governed tools.
pub fn builtin(config: &ToolboxConfig) -> Vec<Box<dyn GovernedTool>> {
    vec![Box::new(FilesRead::new(config.files_read_max_bytes))]
}

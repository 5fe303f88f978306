//! The MCP peers a test drives: each check fails the test naming the install command.

use std::process::Command;

/// Fails the test, naming the install command, when the official Python MCP SDK's `module`
/// (`mcp.server.mcpserver`, `mcp.client.session`) cannot be imported.
pub fn require_python_mcp(module: &str) {
    let ok = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "the official Python MCP SDK is not installed; install it with: \
         python3 -m pip install \"mcp>=2,<3\" (.ci/run does)"
    );
}

/// Fails the test, naming `install`, when `cmd` is not on the PATH.
pub fn require_command(cmd: &str, install: &str) {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(cmd).is_file()));
    assert!(
        found,
        "the MCP peer {cmd:?} is not installed; install it with: {install} (.ci/run does)"
    );
}

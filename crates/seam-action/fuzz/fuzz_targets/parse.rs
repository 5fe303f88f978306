//! Any bytes: `parse` never panics, and any action it returns re-serialises
//! and re-parses as the strict `Action`, and parses again to itself; `route`
//! never panics on it.

#![no_main]

use libfuzzer_sys::fuzz_target;
use seam_action::{ToolCatalog, parse, route};
use seam_protocol::Action;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let catalog = ToolCatalog::from_names([
        "files.read", "web.search", "python.run", "memory.codebase", "scribe", "builder", "seer",
    ]);
    if let Ok(parsed) = parse(text, &catalog) {
        let json = serde_json::to_string(&parsed.action).expect("serialises");
        let strict: Action = serde_json::from_str(&json).expect("strict Action reads it back");
        assert_eq!(strict, parsed.action);
        let again = parse(&json, &catalog).expect("its own JSON parses");
        // canonical output reads back to the same action (names already resolved)
        assert_eq!(again.action, parsed.action);
        let _ = route(parsed.action, &catalog);
    }
});

//! Any bytes: `parse` never panics, and any action it returns re-serialises
//! and re-parses as the strict `Action`, and parses again to itself; `route`
//! never panics on it. Run against a catalog of names only and against the
//! 14 tools with their schemas (so the schema repairs are fuzzed too). The
//! bytes are also read as a catalog file (`ToolCatalog::from_json`).

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use seam_action::{CatalogEntry, ToolCatalog, parse, route};
use seam_protocol::Action;

fn catalogs() -> &'static [ToolCatalog; 2] {
    static CATALOGS: OnceLock<[ToolCatalog; 2]> = OnceLock::new();
    CATALOGS.get_or_init(|| {
        let names = ToolCatalog::from_names([
            "files.read", "web.search", "python.run", "memory.codebase", "scribe", "builder", "seer",
        ]);
        let entries: Vec<CatalogEntry> =
            serde_json::from_str(include_str!("../../tests/fixtures/catalog.json"))
                .expect("catalog fixture");
        [names, ToolCatalog::new(entries)]
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for catalog in catalogs() {
        if let Ok(parsed) = parse(text, catalog) {
            let json = serde_json::to_string(&parsed.action).expect("serialises");
            let strict: Action = serde_json::from_str(&json).expect("strict Action reads it back");
            assert_eq!(strict, parsed.action);
            let again = parse(&json, catalog).expect("its own JSON parses");
            // canonical output reads back to the same action (names already resolved)
            assert_eq!(again.action, parsed.action);
            let _ = route(parsed.action, catalog);
        }
    }
    // The same bytes as a catalog file (`seam action parse --catalog`): read
    // or refused, never a panic; a catalog read is one the parser can use.
    if let Ok(catalog) = ToolCatalog::from_json(text) {
        let _ = parse(r#"{"mode":"action","tool":"x","params":{"path":"a"}}"#, &catalog);
    }
});

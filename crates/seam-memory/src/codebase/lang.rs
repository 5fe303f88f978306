//! Languages, by file name: which are recorded, and which are parsed for symbols.

use std::path::Path;

/// The languages whose symbols are parsed with tree-sitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parsed {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
}

impl Parsed {
    pub fn grammar(self) -> tree_sitter::Language {
        match self {
            Parsed::Rust => tree_sitter_rust::LANGUAGE.into(),
            Parsed::Python => tree_sitter_python::LANGUAGE.into(),
            Parsed::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Parsed::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Parsed::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Parsed::Go => tree_sitter_go::LANGUAGE.into(),
        }
    }
}

/// A file's language: its name in the index, and the parser for it if there is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Language {
    pub name: &'static str,
    pub parsed: Option<Parsed>,
}

const fn lang(name: &'static str, parsed: Option<Parsed>) -> Option<Language> {
    Some(Language { name, parsed })
}

/// The language of a file, by its extension or its whole name; `None` for anything else.
pub(crate) fn detect(path: &Path) -> Option<Language> {
    let name = path.file_name()?.to_str()?;
    match name {
        "Makefile" | "makefile" | "GNUmakefile" => return lang("make", None),
        "Dockerfile" | "Containerfile" => return lang("dockerfile", None),
        "CMakeLists.txt" => return lang("cmake", None),
        "Cargo.lock" => return lang("toml", None),
        _ => {}
    }
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    match ext.as_str() {
        "rs" => lang("rust", Some(Parsed::Rust)),
        "py" | "pyi" => lang("python", Some(Parsed::Python)),
        "js" | "mjs" | "cjs" | "jsx" => lang("javascript", Some(Parsed::JavaScript)),
        "ts" | "mts" | "cts" => lang("typescript", Some(Parsed::TypeScript)),
        "tsx" => lang("typescript", Some(Parsed::Tsx)),
        "go" => lang("go", Some(Parsed::Go)),
        "c" | "h" => lang("c", None),
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => lang("cpp", None),
        "java" => lang("java", None),
        "kt" | "kts" => lang("kotlin", None),
        "swift" => lang("swift", None),
        "rb" => lang("ruby", None),
        "php" => lang("php", None),
        "cs" => lang("csharp", None),
        "sh" | "bash" | "zsh" => lang("shell", None),
        "md" | "markdown" => lang("markdown", None),
        "rst" => lang("rst", None),
        "txt" => lang("text", None),
        "toml" => lang("toml", None),
        "yaml" | "yml" => lang("yaml", None),
        "json" => lang("json", None),
        "html" | "htm" => lang("html", None),
        "css" | "scss" => lang("css", None),
        "sql" => lang("sql", None),
        "proto" => lang("protobuf", None),
        "lua" => lang("lua", None),
        "zig" => lang("zig", None),
        "nix" => lang("nix", None),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_extension_and_name() {
        let l = |p: &str| detect(Path::new(p)).map(|l| (l.name, l.parsed));
        assert_eq!(l("src/lib.rs"), Some(("rust", Some(Parsed::Rust))));
        assert_eq!(l("a/B.TSX"), Some(("typescript", Some(Parsed::Tsx))));
        assert_eq!(l("x/Makefile"), Some(("make", None)));
        assert_eq!(l("README.md"), Some(("markdown", None)));
        assert_eq!(l("LICENSE"), None);
        assert_eq!(l("archive.bin"), None);
    }
}

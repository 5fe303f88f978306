//! Symbols from source text, with tree-sitter: functions, methods, types, modules, impls.
//!
//! Each language has a small visitor over the syntax tree that looks at declarations only:
//! a module, an impl, a trait, a class or an interface is entered (its members get it as
//! their parent); a function body never is, so local helpers and closures are not symbols.
//! A tree with syntax errors still yields the declarations tree-sitter could recover.

use tree_sitter::{Node, Parser};

use super::lang::Parsed;

/// How deeply containers (modules in modules, classes in namespaces) are followed.
const MAX_DEPTH: usize = 48;
/// How deeply Rust macro bodies holding items (`cfg_if! { … }`) are parsed again as items.
const MAX_MACRO_NESTING: usize = 2;
/// The longest name and signature kept, in bytes.
const MAX_NAME: usize = 200;
const MAX_SIGNATURE: usize = 160;

/// One definition found in a file. Lines are 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FoundSymbol {
    pub name: String,
    pub kind: &'static str,
    pub line: u32,
    pub end_line: u32,
    /// The enclosing module, impl, trait, class or interface.
    pub parent: Option<String>,
    /// The first line of the definition, trimmed.
    pub signature: String,
}

/// A parser for each language, made once and reused across files.
#[derive(Default)]
pub(crate) struct SymbolParser {
    parsers: Vec<(Parsed, Parser)>,
}

impl std::fmt::Debug for SymbolParser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SymbolParser")
            .field("languages", &self.parsers.len())
            .finish()
    }
}

impl SymbolParser {
    pub fn new() -> SymbolParser {
        SymbolParser::default()
    }

    fn parser(&mut self, lang: Parsed) -> Option<&mut Parser> {
        let at = match self.parsers.iter().position(|(l, _)| *l == lang) {
            Some(i) => i,
            None => {
                let mut p = Parser::new();
                p.set_language(&lang.grammar()).ok()?;
                self.parsers.push((lang, p));
                self.parsers.len() - 1
            }
        };
        Some(&mut self.parsers[at].1)
    }

    /// The symbols of `source`, in document order. Empty when the grammar cannot be loaded.
    pub fn symbols(&mut self, lang: Parsed, source: &str) -> Vec<FoundSymbol> {
        let Some(parser) = self.parser(lang) else {
            return Vec::new();
        };
        let Some(tree) = parser.parse(source, None) else {
            return Vec::new();
        };
        let mut v = Visitor {
            src: source.as_bytes(),
            lang,
            out: Vec::new(),
            line_offset: 0,
            nesting: 0,
        };
        v.children(tree.root_node(), &Ctx::top(), 0);
        v.out
    }
}

/// Where a declaration sits.
#[derive(Debug, Clone)]
struct Ctx {
    parent: Option<String>,
    /// Inside an impl, trait, class or interface: functions there are methods.
    in_type: bool,
}

impl Ctx {
    fn top() -> Ctx {
        Ctx {
            parent: None,
            in_type: false,
        }
    }

    fn module(name: &str) -> Ctx {
        Ctx {
            parent: Some(name.to_owned()),
            in_type: false,
        }
    }

    fn ty(name: &str) -> Ctx {
        Ctx {
            parent: Some(name.to_owned()),
            in_type: true,
        }
    }
}

struct Visitor<'s> {
    src: &'s [u8],
    lang: Parsed,
    out: Vec<FoundSymbol>,
    /// Added to every line: a macro body parsed on its own starts inside the file.
    line_offset: u32,
    /// How many macro bodies deep this visitor is.
    nesting: usize,
}

impl<'s> Visitor<'s> {
    fn text(&self, node: Node) -> &'s str {
        node.utf8_text(self.src).unwrap_or("")
    }

    fn name_of(&self, node: Node) -> Option<String> {
        let n = node.child_by_field_name("name")?;
        let t = self.text(n).trim();
        let t = t.trim_matches(|c| c == '"' || c == '\'' || c == '`');
        (!t.is_empty()).then(|| clip(t, MAX_NAME))
    }

    fn push(&mut self, node: Node, name: String, kind: &'static str, ctx: &Ctx) {
        let first = self.text(node).lines().next().unwrap_or("").trim();
        self.out.push(FoundSymbol {
            name,
            kind,
            line: node.start_position().row as u32 + 1 + self.line_offset,
            end_line: node.end_position().row as u32 + 1 + self.line_offset,
            parent: ctx.parent.clone(),
            signature: clip(first, MAX_SIGNATURE),
        });
    }

    fn children(&mut self, node: Node, ctx: &Ctx, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let mut cursor = node.walk();
        let kids: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in kids {
            match self.lang {
                Parsed::Rust => self.rust(child, ctx, depth),
                Parsed::Python => self.python(child, ctx, depth),
                Parsed::JavaScript | Parsed::TypeScript | Parsed::Tsx => {
                    self.script(child, ctx, depth)
                }
                Parsed::Go => self.go(child, ctx, depth),
            }
        }
    }

    fn body(&mut self, node: Node, ctx: &Ctx, depth: usize) {
        if let Some(b) = node.child_by_field_name("body") {
            self.children(b, ctx, depth + 1);
        }
    }

    fn rust(&mut self, node: Node, ctx: &Ctx, depth: usize) {
        let simple = match node.kind() {
            "function_item" | "function_signature_item" => {
                Some(if ctx.in_type { "method" } else { "function" })
            }
            "struct_item" => Some("struct"),
            "enum_item" => Some("enum"),
            "union_item" => Some("union"),
            "type_item" => Some("type"),
            "const_item" => Some("const"),
            "static_item" => Some("static"),
            "macro_definition" => Some("macro"),
            _ => None,
        };
        if let Some(kind) = simple {
            if let Some(name) = self.name_of(node) {
                self.push(node, name, kind, ctx);
            }
            return;
        }
        match node.kind() {
            "trait_item" => {
                if let Some(name) = self.name_of(node) {
                    self.push(node, name.clone(), "trait", ctx);
                    self.body(node, &Ctx::ty(&name), depth);
                }
            }
            "mod_item" => {
                if let Some(name) = self.name_of(node) {
                    self.push(node, name.clone(), "module", ctx);
                    self.body(node, &Ctx::module(&name), depth);
                }
            }
            "impl_item" => {
                let Some(ty) = node.child_by_field_name("type") else {
                    return;
                };
                let name = self.rust_type_name(ty);
                self.push(node, name.clone(), "impl", ctx);
                self.body(node, &Ctx::ty(&name), depth);
            }
            "foreign_mod_item" => self.body(node, ctx, depth),
            "macro_invocation" => self.rust_macro_items(node, ctx),
            "expression_statement" => {
                if let Some(m) = node.named_child(0)
                    && m.kind() == "macro_invocation"
                {
                    self.rust_macro_items(m, ctx);
                }
            }
            _ => {}
        }
    }

    /// Items inside a macro invocation's braces (`cfg_rt! { pub fn spawn … }`, `cfg_if!`,
    /// `thread_local!`): tree-sitter sees tokens there, so the body is parsed again as Rust
    /// and its items are kept, with their lines in the file.
    fn rust_macro_items(&mut self, node: Node, ctx: &Ctx) {
        if self.nesting >= MAX_MACRO_NESTING {
            return;
        }
        let mut cursor = node.walk();
        let Some(tt) = node
            .named_children(&mut cursor)
            .find(|c| c.kind() == "token_tree")
        else {
            return;
        };
        let text = self.text(tt);
        let Some(inner) = text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) else {
            return;
        };
        const ITEM_WORDS: [&str; 8] = [
            "fn ", "struct ", "enum ", "trait ", "impl", "mod ", "type ", "static ",
        ];
        if !ITEM_WORDS.iter().any(|w| inner.contains(w)) {
            return;
        }
        let mut parser = Parser::new();
        if parser.set_language(&Parsed::Rust.grammar()).is_err() {
            return;
        }
        let Some(tree) = parser.parse(inner, None) else {
            return;
        };
        let mut v = Visitor {
            src: inner.as_bytes(),
            lang: Parsed::Rust,
            out: Vec::new(),
            line_offset: self.line_offset + tt.start_position().row as u32,
            nesting: self.nesting + 1,
        };
        v.children(tree.root_node(), ctx, 0);
        self.out.append(&mut v.out);
    }

    /// `Foo` for `Foo`, `Foo<T>`, `a::b::Foo`, `&Foo`.
    fn rust_type_name(&self, node: Node) -> String {
        let inner = match node.kind() {
            "generic_type" | "reference_type" | "pointer_type" => node.child_by_field_name("type"),
            "scoped_type_identifier" => node.child_by_field_name("name"),
            _ => None,
        };
        match inner {
            Some(n) => self.rust_type_name(n),
            None => clip(self.text(node).trim(), MAX_NAME),
        }
    }

    fn python(&mut self, node: Node, ctx: &Ctx, depth: usize) {
        match node.kind() {
            "class_definition" => {
                if let Some(name) = self.name_of(node) {
                    self.push(node, name.clone(), "class", ctx);
                    self.body(node, &Ctx::ty(&name), depth);
                }
            }
            "function_definition" => {
                if let Some(name) = self.name_of(node) {
                    let kind = if ctx.in_type { "method" } else { "function" };
                    self.push(node, name, kind, ctx);
                }
            }
            "decorated_definition" => {
                if let Some(def) = node.child_by_field_name("definition") {
                    self.python(def, ctx, depth);
                }
            }
            _ => {}
        }
    }

    /// JavaScript, TypeScript and TSX share their declaration nodes.
    fn script(&mut self, node: Node, ctx: &Ctx, depth: usize) {
        match node.kind() {
            "function_declaration" | "generator_function_declaration" | "function_signature" => {
                if let Some(name) = self.name_of(node) {
                    self.push(node, name, "function", ctx);
                }
            }
            "method_definition" | "method_signature" | "abstract_method_signature" => {
                if let Some(name) = self.name_of(node) {
                    self.push(node, name, "method", ctx);
                }
            }
            "class_declaration" | "abstract_class_declaration" | "class" => {
                if let Some(name) = self.name_of(node) {
                    self.push(node, name.clone(), "class", ctx);
                    self.body(node, &Ctx::ty(&name), depth);
                }
            }
            "interface_declaration" => {
                if let Some(name) = self.name_of(node) {
                    self.push(node, name.clone(), "interface", ctx);
                    self.body(node, &Ctx::ty(&name), depth);
                }
            }
            "type_alias_declaration" => {
                if let Some(name) = self.name_of(node) {
                    self.push(node, name, "type", ctx);
                }
            }
            "enum_declaration" => {
                if let Some(name) = self.name_of(node) {
                    self.push(node, name, "enum", ctx);
                }
            }
            "internal_module" | "module" => {
                if let Some(name) = self.name_of(node) {
                    self.push(node, name.clone(), "module", ctx);
                    self.body(node, &Ctx::module(&name), depth);
                }
            }
            "lexical_declaration" | "variable_declaration" => {
                let mut cursor = node.walk();
                let decls: Vec<Node> = node.named_children(&mut cursor).collect();
                for d in decls {
                    if d.kind() != "variable_declarator" {
                        continue;
                    }
                    let kind = match d.child_by_field_name("value").map(|v| v.kind()) {
                        Some(
                            "arrow_function"
                            | "function_expression"
                            | "function"
                            | "generator_function",
                        ) => "function",
                        Some("class") => "class",
                        _ => continue,
                    };
                    if let Some(name) = self.name_of(d) {
                        // The whole declaration gives the signature (`export const f = …`).
                        self.push(node, name, kind, ctx);
                    }
                }
            }
            "export_statement" => match node.child_by_field_name("declaration") {
                Some(decl) => self.script(decl, ctx, depth),
                None => self.children(node, ctx, depth + 1),
            },
            "ambient_declaration" | "expression_statement" => self.children(node, ctx, depth + 1),
            _ => {}
        }
    }

    fn go(&mut self, node: Node, ctx: &Ctx, depth: usize) {
        match node.kind() {
            "function_declaration" => {
                if let Some(name) = self.name_of(node) {
                    self.push(node, name, "function", ctx);
                }
            }
            "method_declaration" => {
                let Some(name) = self.name_of(node) else {
                    return;
                };
                let receiver = node
                    .child_by_field_name("receiver")
                    .and_then(|params| {
                        let mut c = params.walk();
                        params
                            .named_children(&mut c)
                            .find(|p| p.kind() == "parameter_declaration")
                    })
                    .and_then(|p| p.child_by_field_name("type"))
                    .map(|t| self.go_type_name(t));
                let ctx = Ctx {
                    parent: receiver,
                    in_type: true,
                };
                self.push(node, name, "method", &ctx);
            }
            "type_declaration" => {
                let mut cursor = node.walk();
                let specs: Vec<Node> = node.named_children(&mut cursor).collect();
                for spec in specs {
                    if !matches!(spec.kind(), "type_spec" | "type_alias") {
                        continue;
                    }
                    let Some(name) = self.name_of(spec) else {
                        continue;
                    };
                    let ty = spec.child_by_field_name("type");
                    let kind = match ty.map(|t| t.kind()) {
                        Some("struct_type") => "struct",
                        Some("interface_type") => "interface",
                        _ => "type",
                    };
                    self.push(spec, name.clone(), kind, ctx);
                    if let (Some(t), "interface") = (ty, kind)
                        && depth < MAX_DEPTH
                    {
                        let mut c = t.walk();
                        let elems: Vec<Node> = t.named_children(&mut c).collect();
                        for e in elems {
                            if e.kind() == "method_elem"
                                && let Some(m) = self.name_of(e)
                            {
                                self.push(e, m, "method", &Ctx::ty(&name));
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// `T` for `T`, `*T`, `T[K]`, `pkg.T`.
    fn go_type_name(&self, node: Node) -> String {
        let inner = match node.kind() {
            "pointer_type" => node.named_child(0),
            "generic_type" => node.child_by_field_name("type"),
            "qualified_type" => node.child_by_field_name("name"),
            _ => None,
        };
        match inner {
            Some(n) => self.go_type_name(n),
            None => clip(self.text(node).trim(), MAX_NAME),
        }
    }
}

fn clip(s: &str, max: usize) -> String {
    crate::bound::clip(s, max).0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syms(lang: Parsed, src: &str) -> Vec<(String, &'static str, u32, Option<String>)> {
        SymbolParser::new()
            .symbols(lang, src)
            .into_iter()
            .map(|s| (s.name, s.kind, s.line, s.parent))
            .collect()
    }

    fn has(
        v: &[(String, &'static str, u32, Option<String>)],
        name: &str,
        kind: &str,
        line: u32,
        parent: Option<&str>,
    ) {
        assert!(
            v.iter().any(|(n, k, l, p)| n == name
                && *k == kind
                && *l == line
                && p.as_deref() == parent),
            "{name} {kind} {line} {parent:?} not in {v:?}"
        );
    }

    #[test]
    fn rust_items() {
        let src = "use x;\n\
                   pub struct Config { a: u32 }\n\
                   impl<T> Display for Wrapper<T> {\n    fn fmt(&self) {}\n}\n\
                   pub trait Store {\n    fn get(&self);\n}\n\
                   mod inner {\n    pub fn helper() { fn local() {} }\n}\n\
                   macro_rules! m { () => {} }\n\
                   enum E { A }\nconst N: u8 = 1;\ntype T = u8;\n";
        let v = syms(Parsed::Rust, src);
        has(&v, "Config", "struct", 2, None);
        has(&v, "Wrapper", "impl", 3, None);
        has(&v, "fmt", "method", 4, Some("Wrapper"));
        has(&v, "Store", "trait", 6, None);
        has(&v, "get", "method", 7, Some("Store"));
        has(&v, "inner", "module", 9, None);
        has(&v, "helper", "function", 10, Some("inner"));
        has(&v, "m", "macro", 12, None);
        has(&v, "E", "enum", 13, None);
        has(&v, "N", "const", 14, None);
        has(&v, "T", "type", 15, None);
        assert!(
            !v.iter().any(|s| s.0 == "local"),
            "function bodies are not entered"
        );
    }

    #[test]
    fn rust_items_inside_macro_bodies() {
        let src = "cfg_rt! {\n    /// Spawns.\n    pub fn spawn() {}\n\n    impl Handle {\n        fn enter(&self) {}\n    }\n}\n\
                   mod m {\n    cfg_if::cfg_if! {\n        if #[cfg(unix)] {\n            fn on_unix() {}\n        }\n    }\n}\n\
                   fn f() { println!(\"not items\"); }\nthread_local! {\n    static CURRENT: u8 = 0;\n}\n";
        let v = syms(Parsed::Rust, src);
        has(&v, "spawn", "function", 3, None);
        has(&v, "Handle", "impl", 5, None);
        has(&v, "enter", "method", 6, Some("Handle"));
        has(&v, "m", "module", 9, None);
        has(&v, "f", "function", 16, None);
        has(&v, "CURRENT", "static", 18, None);
        assert_eq!(v.len(), 6, "{v:?}");
    }

    #[test]
    fn python_defs() {
        let src = "import os\n\nclass Greeter(Base):\n    @staticmethod\n    def hello(self):\n        def inner(): pass\n\n@cache\ndef main():\n    pass\n";
        let v = syms(Parsed::Python, src);
        has(&v, "Greeter", "class", 3, None);
        has(&v, "hello", "method", 5, Some("Greeter"));
        has(&v, "main", "function", 9, None);
        assert!(!v.iter().any(|s| s.0 == "inner"));
    }

    #[test]
    fn javascript_and_typescript() {
        let js = "export function start() {}\nclass Queue {\n  push(x) {}\n}\nconst handler = (req) => req;\nexport default class App {}\n";
        let v = syms(Parsed::JavaScript, js);
        has(&v, "start", "function", 1, None);
        has(&v, "Queue", "class", 2, None);
        has(&v, "push", "method", 3, Some("Queue"));
        has(&v, "handler", "function", 5, None);
        has(&v, "App", "class", 6, None);

        let ts = "export interface Shape {\n  area(): number;\n}\ntype Id = string;\nenum Color { Red }\nnamespace Geo {\n  export function dist(): number { return 0; }\n}\nabstract class Base {\n  abstract run(): void;\n}\n";
        let v = syms(Parsed::TypeScript, ts);
        has(&v, "Shape", "interface", 1, None);
        has(&v, "area", "method", 2, Some("Shape"));
        has(&v, "Id", "type", 4, None);
        has(&v, "Color", "enum", 5, None);
        has(&v, "Geo", "module", 6, None);
        has(&v, "dist", "function", 7, Some("Geo"));
        has(&v, "Base", "class", 9, None);
        has(&v, "run", "method", 10, Some("Base"));

        let tsx = "export const Button = (p: Props) => <button>{p.label}</button>;\n";
        has(&syms(Parsed::Tsx, tsx), "Button", "function", 1, None);
    }

    #[test]
    fn go_decls() {
        let src = "package main\n\ntype Server struct {\n\taddr string\n}\n\ntype Handler interface {\n\tServe(r int) error\n}\n\nfunc (s *Server) Start() error { return nil }\n\nfunc main() {}\n";
        let v = syms(Parsed::Go, src);
        has(&v, "Server", "struct", 3, None);
        has(&v, "Handler", "interface", 7, None);
        has(&v, "Serve", "method", 8, Some("Handler"));
        has(&v, "Start", "method", 11, Some("Server"));
        has(&v, "main", "function", 13, None);
    }

    #[test]
    fn broken_source_still_yields_what_parses() {
        let v = syms(Parsed::Rust, "fn ok() {}\nfn broken( {\nstruct After;\n");
        has(&v, "ok", "function", 1, None);
    }
}

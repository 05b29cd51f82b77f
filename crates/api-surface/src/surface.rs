//! Walking a crate's modules from `src/lib.rs` and listing what is reachable from outside.

use std::fmt;
use std::path::{Path, PathBuf};

use quote::ToTokens;
use syn::{Attribute, Item, UseTree, Visibility};

/// Why a crate's source could not be walked.
#[derive(Debug)]
pub enum SurfaceError {
    /// A source file could not be read (a `mod` whose file is missing included).
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A source file is not valid Rust.
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
}

impl fmt::Display for SurfaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Read { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            Self::Parse { path, message } => {
                write!(f, "cannot parse {}: {message}", path.display())
            }
        }
    }
}

impl std::error::Error for SurfaceError {}

/// The public paths of the crate whose root file is `lib_rs`, named from `crate_name` (the
/// library's name, `px_topology`), sorted and without duplicates.
///
/// One line per name: the kind, the path, and the `cfg`s on the way to it, e.g.
/// `struct px_topology::plan::Plan` or `use flasharray::RestArray #[cfg(feature = "rest")]`.
/// Listed: `pub` items in modules that are `pub` all the way from the root, `pub use`
/// re-exports (by the name they export; a glob as `path::*`), and `#[macro_export]` macros at
/// the root. Not listed: items of impls and traits, fields, variants, and anything under
/// `#[cfg(test)]` or `#[cfg(doctest)]`.
///
/// # Errors
/// A file that cannot be read or parsed, a missing module file included.
pub fn public_paths(lib_rs: &Path, crate_name: &str) -> Result<Vec<String>, SurfaceError> {
    let file = parse(lib_rs)?;
    let mut walker = Walker {
        crate_name: crate_name.to_owned(),
        lines: Vec::new(),
    };
    let root = Module {
        path: Vec::new(),
        cfgs: Vec::new(),
        file: lib_rs.to_path_buf(),
        children_dir: parent_dir(lib_rs),
    };
    walker.items(&root, &file.items)?;
    walker.lines.sort();
    walker.lines.dedup();
    Ok(walker.lines)
}

/// Where the walker stands: the module's path, the cfgs gating it, the file it is written in
/// and the directory its `mod x;` files are in.
struct Module {
    path: Vec<String>,
    cfgs: Vec<String>,
    file: PathBuf,
    children_dir: PathBuf,
}

struct Walker {
    crate_name: String,
    lines: Vec<String>,
}

impl Walker {
    fn items(&mut self, module: &Module, items: &[Item]) -> Result<(), SurfaceError> {
        for item in items {
            let attrs = attrs(item);
            if attrs.iter().any(is_test_only) {
                continue;
            }
            let mut cfgs = module.cfgs.clone();
            cfgs.extend(attrs.iter().filter_map(cfg_text));
            if let Item::Macro(mac) = item
                && attrs.iter().any(|a| a.path().is_ident("macro_export"))
                && let Some(ident) = &mac.ident
            {
                self.push("macro", &[], &ident.to_string(), &cfgs);
                continue;
            }
            if !is_pub(item) {
                continue;
            }
            match item {
                Item::Use(item_use) => self.use_tree(module, &cfgs, &[], &item_use.tree),
                Item::Mod(item_mod) => self.module(module, cfgs, item_mod)?,
                _ => {
                    if let Some((kind, name)) = kind_and_name(item) {
                        self.push(kind, &module.path, &name, &cfgs);
                    }
                }
            }
        }
        Ok(())
    }

    /// A `pub mod`: listed, then walked, inline or from its file.
    fn module(
        &mut self,
        parent: &Module,
        cfgs: Vec<String>,
        item: &syn::ItemMod,
    ) -> Result<(), SurfaceError> {
        let name = item.ident.to_string();
        self.push("mod", &parent.path, &name, &cfgs);
        let mut path = parent.path.clone();
        path.push(name.clone());
        if let Some((_, items)) = &item.content {
            let inner = Module {
                path,
                cfgs,
                file: parent.file.clone(),
                children_dir: parent.children_dir.join(&name),
            };
            return self.items(&inner, items);
        }
        let file_path = module_file(parent, &item.attrs, &name);
        let file = parse(&file_path)?;
        let children_dir = if path_attr(&item.attrs).is_some() || is_mod_rs(&file_path) {
            parent_dir(&file_path)
        } else {
            parent_dir(&file_path).join(&name)
        };
        let inner = Module {
            path,
            cfgs,
            file: file_path,
            children_dir,
        };
        self.items(&inner, &file.items)
    }

    /// The names a `pub use` tree exports into `module`; `prefix` is the source path so far,
    /// kept for globs, whose names the walker cannot know.
    fn use_tree(&mut self, module: &Module, cfgs: &[String], prefix: &[String], tree: &UseTree) {
        match tree {
            UseTree::Path(p) => {
                let mut prefix = prefix.to_vec();
                prefix.push(p.ident.to_string());
                self.use_tree(module, cfgs, &prefix, &p.tree);
            }
            UseTree::Name(n) if n.ident == "self" => {
                if let Some(last) = prefix.last() {
                    self.push("use", &module.path, last, cfgs);
                }
            }
            UseTree::Name(n) => self.push("use", &module.path, &n.ident.to_string(), cfgs),
            // `as _` brings a trait into scope without a name: nothing to list.
            UseTree::Rename(r) if r.rename == "_" => {}
            UseTree::Rename(r) => self.push("use", &module.path, &r.rename.to_string(), cfgs),
            UseTree::Glob(_) => {
                let source = prefix.join("::");
                self.push("use", &module.path, &format!("* (from {source}::*)"), cfgs);
            }
            UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(module, cfgs, prefix, tree);
                }
            }
        }
    }

    fn push(&mut self, kind: &str, module_path: &[String], name: &str, cfgs: &[String]) {
        let mut line = format!("{kind} {}", self.crate_name);
        for segment in module_path {
            line.push_str("::");
            line.push_str(segment);
        }
        line.push_str("::");
        line.push_str(name);
        for cfg in cfgs {
            line.push(' ');
            line.push_str(cfg);
        }
        self.lines.push(line);
    }
}

fn parse(path: &Path) -> Result<syn::File, SurfaceError> {
    let text = std::fs::read_to_string(path).map_err(|source| SurfaceError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    syn::parse_file(&text).map_err(|e| SurfaceError::Parse {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// The file of `mod name;` declared in `parent`: its `#[path]` (relative to the directory of the
/// file that declares it), else `name.rs`, else `name/mod.rs` in the parent's module directory.
fn module_file(parent: &Module, attrs: &[Attribute], name: &str) -> PathBuf {
    if let Some(path) = path_attr(attrs) {
        return parent_dir(&parent.file).join(path);
    }
    let flat = parent.children_dir.join(format!("{name}.rs"));
    if flat.exists() {
        return flat;
    }
    parent.children_dir.join(name).join("mod.rs")
}

fn path_attr(attrs: &[Attribute]) -> Option<String> {
    attrs.iter().find_map(|attr| match &attr.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

fn is_mod_rs(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n == "mod.rs" || n == "lib.rs")
}

fn parent_dir(path: &Path) -> PathBuf {
    path.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// `#[cfg(test)]` and `#[cfg(doctest)]`: never part of what a user of the crate sees.
fn is_test_only(attr: &Attribute) -> bool {
    if !attr.path().is_ident("cfg") {
        return false;
    }
    attr.parse_args::<syn::Ident>()
        .is_ok_and(|ident| ident == "test" || ident == "doctest")
}

/// The text of a `cfg` attribute, spaced as written by hand: `#[cfg(feature = "rest")]`.
fn cfg_text(attr: &Attribute) -> Option<String> {
    if !attr.path().is_ident("cfg") {
        return None;
    }
    let tokens = attr.meta.to_token_stream().to_string();
    let tidy = tokens
        .replace(" (", "(")
        .replace("( ", "(")
        .replace(" )", ")")
        .replace(" ,", ",");
    Some(format!("#[{tidy}]"))
}

fn is_pub(item: &Item) -> bool {
    let vis = match item {
        Item::Const(i) => &i.vis,
        Item::Enum(i) => &i.vis,
        Item::ExternCrate(i) => &i.vis,
        Item::Fn(i) => &i.vis,
        Item::Mod(i) => &i.vis,
        Item::Static(i) => &i.vis,
        Item::Struct(i) => &i.vis,
        Item::Trait(i) => &i.vis,
        Item::TraitAlias(i) => &i.vis,
        Item::Type(i) => &i.vis,
        Item::Union(i) => &i.vis,
        Item::Use(i) => &i.vis,
        _ => return false,
    };
    matches!(vis, Visibility::Public(_))
}

fn kind_and_name(item: &Item) -> Option<(&'static str, String)> {
    let (kind, ident) = match item {
        Item::Const(i) => ("const", &i.ident),
        Item::Enum(i) => ("enum", &i.ident),
        Item::ExternCrate(i) => ("extern crate", i.rename.as_ref().map_or(&i.ident, |r| &r.1)),
        Item::Fn(i) => ("fn", &i.sig.ident),
        Item::Static(i) => ("static", &i.ident),
        Item::Struct(i) => ("struct", &i.ident),
        Item::Trait(i) => ("trait", &i.ident),
        Item::TraitAlias(i) => ("trait", &i.ident),
        Item::Type(i) => ("type", &i.ident),
        Item::Union(i) => ("union", &i.ident),
        _ => return None,
    };
    Some((kind, ident.to_string()))
}

fn attrs(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo/src/lib.rs")
    }

    #[test]
    fn lists_every_name_reachable_from_outside_and_nothing_else() {
        let lines = public_paths(&fixture(), "demo").unwrap();
        let expected = [
            "const demo::nested::deeper::DEPTH",
            "enum demo::nested::Colour",
            "fn demo::inline::leaf::grow",
            "fn demo::nested::deeper::dig",
            "fn demo::top",
            "macro demo::shout",
            "mod demo::inline",
            "mod demo::inline::leaf",
            "mod demo::moved #[cfg(feature = \"extra\")]",
            "mod demo::nested",
            "mod demo::nested::deeper",
            "struct demo::Thing",
            "struct demo::inline::Inside",
            "struct demo::moved::Relocated #[cfg(feature = \"extra\")]",
            "trait demo::nested::Paint",
            "type demo::nested::Alias",
            "use demo::Hidden",
            "use demo::Renamed",
            "use demo::nested::* (from deeper::*)",
        ];
        assert_eq!(lines, expected);
    }

    #[test]
    fn a_missing_module_file_is_an_error_naming_it() {
        let dir = std::env::temp_dir().join(format!("api-surface-missing-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lib = dir.join("lib.rs");
        std::fs::write(&lib, "pub mod gone;\n").unwrap();
        let err = public_paths(&lib, "x").unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(err.contains("gone"), "{err}");
    }

    #[test]
    fn cfg_text_reads_as_written() {
        let attr: Attribute = syn::parse_quote!(#[cfg(any(test, feature = "testing"))]);
        assert_eq!(
            cfg_text(&attr).as_deref(),
            Some("#[cfg(any(test, feature = \"testing\"))]")
        );
        assert!(!is_test_only(&attr));
        assert!(is_test_only(&syn::parse_quote!(#[cfg(test)])));
    }
}

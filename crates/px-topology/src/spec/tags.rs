//! YAML tags in a spec. serde-saphyr reads `!foo value` as `value` and drops the tag
//! (a spec read into a JSON value has nowhere to keep it), so a tag an admin or a
//! tool wrote would silently mean nothing. pxfa reads plain YAML only: the core
//! schema's own tags (`!!str`, `!!int`, ...) and the non-specific `!` are fine, any
//! other tag is refused at the field path that carries it.
//!
//! This walks the parser's events once more after serde-saphyr has read the text
//! within its budget, so the walk is over a document already known to be small and
//! shallow.

use serde_saphyr::granit_parser::{Event, Parser, Tag};

/// The core schema namespace (`!!x` is `tag:yaml.org,2002:x`).
const CORE: &str = "tag:yaml.org,2002:";

/// The core tags a spec may carry.
const CORE_TAGS: [&str; 7] = ["str", "int", "float", "bool", "null", "seq", "map"];

/// A tag pxfa does not read, where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnknownTag {
    /// The document's index in the stream, from 0.
    pub(crate) document: usize,
    /// The field path of the tagged node (`spec.storage.capacity`), `document` for a
    /// tag on the root.
    pub(crate) path: String,
    /// The tag as written (`!foo`, `!!python/object`).
    pub(crate) tag: String,
}

impl UnknownTag {
    /// The message for the admin.
    pub(crate) fn message(&self) -> String {
        format!(
            "unknown YAML tag {}: pxfa reads plain YAML and would ignore it; remove the tag \
             (quote the value if it must be a string)",
            self.tag
        )
    }
}

/// One open mapping or sequence, with its path.
enum Frame {
    /// A mapping; `key` is the last key read, `None` while a key is awaited.
    Map { path: String, key: Option<String> },
    /// A sequence and the index of its next item.
    Seq { path: String, index: usize },
}

fn known(tag: &Tag) -> bool {
    match tag.handle() {
        CORE => CORE_TAGS.contains(&tag.suffix()),
        // `! value`: the non-specific tag, a plain string (however the parser
        // splits it into handle and suffix).
        h => format!("{h}{}", tag.suffix()) == "!",
    }
}

fn shown(tag: &Tag) -> String {
    let text = match tag.handle() {
        CORE => format!("!!{}", tag.suffix()),
        h => format!("{h}{}", tag.suffix()),
    };
    if text.chars().all(|c| c.is_ascii_graphic()) {
        text
    } else {
        format!("{text:?}")
    }
}

/// `parent.key` (or `key` at the root), quoting keys that are not plain words.
fn join_key(parent: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'));
    let key = if plain {
        key.to_string()
    } else {
        format!("{key:?}")
    };
    if parent.is_empty() {
        key
    } else {
        format!("{parent}.{key}")
    }
}

/// Where the next node goes, and whether it is a mapping key.
fn next_node_path(stack: &[Frame]) -> (String, bool) {
    match stack.last() {
        None => (String::new(), false),
        Some(Frame::Map { path, key: None }) => (path.clone(), true),
        Some(Frame::Map { path, key: Some(k) }) => (join_key(path, k), false),
        Some(Frame::Seq { path, index }) => (format!("{path}[{index}]"), false),
    }
}

/// The parent moves on once a node (key or value) is complete.
fn node_done(stack: &mut [Frame], key_text: Option<&str>) {
    match stack.last_mut() {
        Some(Frame::Map { key, .. }) => {
            *key = match key {
                None => Some(key_text.unwrap_or("?").to_string()),
                Some(_) => None,
            };
        }
        Some(Frame::Seq { index, .. }) => *index += 1,
        None => {}
    }
}

/// Every tag pxfa does not read in `text`, in document order. A text the parser
/// cannot read gives what was found before the error (serde-saphyr reports the
/// error itself).
pub(crate) fn unknown_tags(text: &str) -> Vec<UnknownTag> {
    let mut out = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut document = 0usize;
    let mut started = false;
    for event in Parser::new_from_str(text) {
        let Ok((event, _)) = event else { break };
        let (tag, scalar, opens) = match &event {
            Event::DocumentStart(..) => {
                if started {
                    document += 1;
                }
                started = true;
                stack.clear();
                continue;
            }
            Event::Scalar(value, _, _, tag) => (tag.clone(), Some(value.to_string()), None),
            Event::SequenceStart(_, _, tag) => (tag.clone(), None, Some(false)),
            Event::MappingStart(_, _, tag) => (tag.clone(), None, Some(true)),
            Event::Alias(_) => (None, Some("*".to_string()), None),
            Event::SequenceEnd | Event::MappingEnd => {
                stack.pop();
                node_done(&mut stack, None);
                continue;
            }
            _ => continue,
        };
        let (parent, is_key) = next_node_path(&stack);
        let here = match (&scalar, is_key) {
            (Some(k), true) => join_key(&parent, k),
            _ => parent,
        };
        if let Some(t) = tag.as_deref()
            && !known(t)
        {
            out.push(UnknownTag {
                document,
                path: if here.is_empty() {
                    "document".to_string()
                } else {
                    here.clone()
                },
                tag: shown(t),
            });
        }
        match opens {
            Some(true) => stack.push(Frame::Map {
                path: here,
                key: None,
            }),
            Some(false) => stack.push(Frame::Seq {
                path: here,
                index: 0,
            }),
            None => node_done(&mut stack, scalar.as_deref()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(text: &str) -> Vec<(usize, String, String)> {
        unknown_tags(text)
            .into_iter()
            .map(|t| (t.document, t.path, t.tag))
            .collect()
    }

    #[test]
    fn finds_tags_at_their_field_paths() {
        let text = "a: !foo 1\nb:\n  c: [x, !bar y]\n  d: !!str 4.20\n  e: ! plain\n\
                    f: !baz {g: 1}\nh:\n- {i: !!python/object x}\n";
        assert_eq!(
            paths(text),
            [
                (0, "a".to_string(), "!foo".to_string()),
                (0, "b.c[1]".to_string(), "!bar".to_string()),
                (0, "f".to_string(), "!baz".to_string()),
                (0, "h[0].i".to_string(), "!!python/object".to_string()),
            ]
        );
    }

    #[test]
    fn tags_on_keys_roots_and_later_documents() {
        assert_eq!(
            paths("!k key: v\n---\n!root {a: 1}\n"),
            [
                (0, "key".to_string(), "!k".to_string()),
                (1, "document".to_string(), "!root".to_string()),
            ]
        );
        assert!(paths("a: 1\nb: [!!int 2, !!bool true, !!null ~]\n").is_empty());
    }
}

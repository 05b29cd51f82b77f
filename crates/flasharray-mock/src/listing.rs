//! List semantics shared by every collection (and by the simulator): filter, sort,
//! limit, applied to models serialized to JSON.

use std::cmp::Ordering;

use flasharray::{Error, Result};
use serde::Serialize;
use serde_json::Value;

use crate::filter::Filter;

/// A parsed sort key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortKey {
    /// Dotted field path (`name`, `space.total_provisioned`).
    pub field: String,
    /// True for a key written with a `-` (`name-` or `-name`).
    pub descending: bool,
}

/// Parses sort keys; descending is a trailing `-` (`name-`, as the SDK writes it) or a
/// leading `-` (as newer docs write it). Both are accepted.
pub fn parse_sort(keys: &[String]) -> Result<Vec<SortKey>> {
    let mut out = Vec::new();
    for raw in keys.iter().flat_map(|k| k.split(',')) {
        let k = raw.trim();
        if k.is_empty() {
            continue;
        }
        let (field, descending) = if let Some(f) = k.strip_suffix('-') {
            (f, true)
        } else if let Some(f) = k.strip_prefix('-') {
            (f, true)
        } else {
            (k, false)
        };
        let valid = !field.is_empty()
            && field
                .split('.')
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        if !valid {
            return Err(Error::api(
                400,
                Some("sort"),
                format!("Invalid sort key {raw:?}."),
            ));
        }
        out.push(SortKey {
            field: field.to_string(),
            descending,
        });
    }
    Ok(out)
}

/// Parses a filter parameter into a 400 answer the way the array refuses one.
pub fn parse_filter(f: Option<&str>) -> Result<Option<Filter>> {
    match f {
        None => Ok(None),
        Some(s) if s.trim().is_empty() => Ok(None),
        Some(s) => Filter::parse(s)
            .map(Some)
            .map_err(|e| Error::api(400, Some("filter"), format!("Invalid filter: {e}."))),
    }
}

fn field<'a>(v: &'a Value, path: &str) -> &'a Value {
    let mut cur = v;
    for p in path.split('.') {
        cur = cur.get(p).unwrap_or(&Value::Null);
    }
    cur
}

fn compare(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Less,
        (_, Value::Null) => Ordering::Greater,
        (Value::Number(x), Value::Number(y)) => match (x.as_u64(), y.as_u64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => x
                .as_f64()
                .unwrap_or(0.0)
                .partial_cmp(&y.as_f64().unwrap_or(0.0))
                .unwrap_or(Ordering::Equal),
        },
        (Value::String(x), Value::String(y)) => x
            .to_ascii_lowercase()
            .cmp(&y.to_ascii_lowercase())
            .then_with(|| x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        _ => a.to_string().cmp(&b.to_string()),
    }
}

/// Applies filter, sort and limit to items already selected by names, ids and
/// `destroyed`. Serializes to JSON only when a filter or sort needs it, so plain
/// listings of huge collections stay cheap.
pub fn refine<T: Serialize>(
    items: Vec<T>,
    filter: Option<&str>,
    sort: &[String],
    limit: Option<usize>,
) -> Result<Vec<T>> {
    let filter = parse_filter(filter)?;
    let sort = parse_sort(sort)?;
    let mut items = if filter.is_none() && sort.is_empty() {
        items
    } else {
        let mut keyed: Vec<(Value, T)> = Vec::with_capacity(items.len());
        for it in items {
            let v = serde_json::to_value(&it)
                .map_err(|e| Error::api(500, None, format!("internal error: {e}")))?;
            if filter.as_ref().is_none_or(|f| f.matches(&v)) {
                keyed.push((v, it));
            }
        }
        if !sort.is_empty() {
            keyed.sort_by(|(a, _), (b, _)| {
                for k in &sort {
                    let o = compare(field(a, &k.field), field(b, &k.field));
                    let o = if k.descending { o.reverse() } else { o };
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                Ordering::Equal
            });
        }
        keyed.into_iter().map(|(_, t)| t).collect()
    };
    if let Some(n) = limit {
        items.truncate(n);
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sort_accepts_both_descending_forms() {
        let k = parse_sort(&[
            "name-".into(),
            "-provisioned".into(),
            "space.total_provisioned".into(),
        ])
        .unwrap();
        assert_eq!(
            k.iter()
                .map(|k| (k.field.as_str(), k.descending))
                .collect::<Vec<_>>(),
            [
                ("name", true),
                ("provisioned", true),
                ("space.total_provisioned", false)
            ]
        );
        assert!(parse_sort(&["na me".into()]).is_err());
    }

    #[test]
    fn refine_filters_sorts_and_limits() {
        let items = vec![
            json!({"name": "b", "size": 2}),
            json!({"name": "A", "size": 3}),
            json!({"name": "c", "size": 1}),
        ];
        let out = refine(items.clone(), Some("size>1"), &["name".into()], None).unwrap();
        assert_eq!(out, vec![items[1].clone(), items[0].clone()]);
        let out = refine(items.clone(), None, &["size-".into()], Some(2)).unwrap();
        assert_eq!(out, vec![items[1].clone(), items[0].clone()]);
        let e = refine(items, Some("size>"), &[], None).unwrap_err();
        assert!(e.to_string().contains("Invalid filter"), "{e}");
    }
}

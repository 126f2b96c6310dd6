//! The tools' output schemas, derived from their result types: every tool declares one,
//! every property in it is described, and a committed snapshot of them all fails on an
//! unreviewed change.
//!
//! After a deliberate change of a result type, review the difference and write the
//! snapshot again: `UPDATE_SNAPSHOTS=1 cargo test -p trust-gate-mcp --test output_schemas`.

use rmcp::model::Tool;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use trust_gate_mcp::GateServer;

fn tools() -> Vec<Tool> {
    let router =
        GateServer::read_tools() + GateServer::write_tools() + GateServer::discovery_tools();
    router.list_all()
}

/// Every tool's output schema, by name.
fn schemas() -> BTreeMap<String, Value> {
    tools()
        .into_iter()
        .map(|t| {
            let schema = t
                .output_schema
                .unwrap_or_else(|| panic!("{} declares no outputSchema", t.name));
            (t.name.to_string(), Value::Object((*schema).clone()))
        })
        .collect()
}

#[test]
fn every_tool_returns_an_object_whose_schema_is_derived() {
    let all = schemas();
    assert_eq!(all.len(), 34, "{:?}", all.keys());
    for (name, schema) in &all {
        // An object at the root: 2025-era clients list only object schemas.
        assert_eq!(schema["type"], "object", "{name}: {schema:#}");
        assert!(schema["properties"].is_object(), "{name}");
    }
}

/// The places in `schema` (at `path`) where a property has no description: a property is
/// described by its own `description`, or, for a tag (`const`), by its variant's.
fn undescribed(path: &str, schema: &Value, out: &mut Vec<String>) {
    let Value::Object(o) = schema else { return };
    if let Some(Value::Object(props)) = o.get("properties") {
        let variant_described = o.contains_key("description");
        for (name, p) in props {
            let described = p
                .get("description")
                .is_some_and(|d| d.as_str().is_some_and(|d| !d.trim().is_empty()));
            let tag = p.get("const").is_some() && variant_described;
            if !described && !tag {
                out.push(format!("{path}.{name}"));
            }
            undescribed(&format!("{path}.{name}"), p, out);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(v) = o.get(key) {
            undescribed(&format!("{path}[{key}]"), v, out);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(list)) = o.get(key) {
            for (i, v) in list.iter().enumerate() {
                undescribed(&format!("{path}.{key}[{i}]"), v, out);
            }
        }
    }
    if let Some(Value::Object(defs)) = o.get("$defs") {
        for (name, d) in defs {
            undescribed(&format!("#/$defs/{name}"), d, out);
        }
    }
}

#[test]
fn every_property_of_every_result_is_described() {
    let mut missing = Vec::new();
    for (name, schema) in schemas() {
        undescribed(&name, &schema, &mut missing);
    }
    assert!(
        missing.is_empty(),
        "properties without a description (a doc comment on the field):\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_walk_finds_a_property_without_a_description() {
    let schema: Value = serde_json::json!({
        "type": "object",
        "properties": {
            "a": {"type": "string", "description": "A"},
            "b": {"$ref": "#/$defs/B"},
        },
        "$defs": {"B": {"type": "object", "properties": {"c": {"type": "integer"}}}},
    });
    let mut missing = Vec::new();
    undescribed("t", &schema, &mut missing);
    assert_eq!(missing, ["t.b", "#/$defs/B.c"]);
}

fn snapshot_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/output-schemas.json")
}

#[test]
fn the_schemas_match_the_reviewed_snapshot() {
    let all: Map<String, Value> = schemas().into_iter().collect();
    let text = serde_json::to_string_pretty(&Value::Object(all)).unwrap() + "\n";
    let path = snapshot_path();
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != text {
        let changed: Vec<String> = {
            let old: Map<String, Value> = serde_json::from_str(&committed).unwrap_or_default();
            let new: Map<String, Value> = serde_json::from_str(&text).unwrap();
            new.iter()
                .filter(|(k, v)| old.get(*k) != Some(v))
                .map(|(k, _)| k.clone())
                .chain(old.keys().filter(|k| !new.contains_key(*k)).cloned())
                .collect()
        };
        panic!(
            "the output schemas differ from {} for {changed:?}: review the change, then write it with UPDATE_SNAPSHOTS=1 cargo test -p trust-gate-mcp --test output_schemas",
            path.display()
        );
    }
}

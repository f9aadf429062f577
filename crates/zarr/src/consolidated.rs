//! Consolidated metadata: every metadata object of a store gathered in one object at its root,
//! so a reader opens the whole tree with one read.
//!
//! - Zarr v2 (zarr-python 2's `consolidate_metadata`, read by zarr-python 2 and 3 and xarray
//!   with `consolidated=True`): the key `.zmetadata`, holding
//!   `{"zarr_consolidated_format": 1, "metadata": {KEY: OBJECT, ...}}` for every `.zgroup`,
//!   `.zattrs` and `.zarray` (the root's too).
//! - Zarr v3 (zarr-python 3's `consolidate_metadata`; not in the v3 specification, an
//!   extension marked `must_understand: false`): the root `zarr.json` holds
//!   `"consolidated_metadata": {"kind": "inline", "must_understand": false, "metadata":
//!   {PATH: NODE, ...}}`, NODE being the `zarr.json` object of every group and array below
//!   the root, PATH its path without the trailing `/zarr.json`.
//!
//! Used by the store writer (pure Zarr output) and by the kerchunk reference writer.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::error::ZarrError;

/// The v2 key of consolidated metadata.
pub const V2_KEY: &str = ".zmetadata";

/// A `.zmetadata` text being built, from the metadata objects' texts as they are written
/// (each embedded as it is, so the consolidated copy is byte for byte the object).
#[derive(Debug)]
pub(crate) struct ConsolidatedV2 {
    text: String,
}

impl ConsolidatedV2 {
    pub(crate) fn new() -> ConsolidatedV2 {
        ConsolidatedV2 {
            text: String::from("{\"zarr_consolidated_format\":1,\"metadata\":{"),
        }
    }

    /// Add the metadata object `key` (`.zgroup`, `v/.zarray`, ...) whose JSON text is `text`.
    ///
    /// # Errors
    /// A key JSON cannot spell (never for a key the writer made).
    pub(crate) fn add(&mut self, key: &str, text: &str) -> Result<(), ZarrError> {
        if !self.text.ends_with('{') {
            self.text.push(',');
        }
        let k = serde_json::to_string(key).map_err(|e| ZarrError::meta(key, e.to_string()))?;
        self.text.push_str(&k);
        self.text.push(':');
        self.text.push_str(text.trim_end());
        Ok(())
    }

    /// The `.zmetadata` text.
    pub(crate) fn finish(mut self) -> String {
        self.text.push_str("}}");
        self.text
    }

    /// The `.zmetadata` text with more members after `metadata` (`members`: JSON text such
    /// as `"record_size":10000`, fsspec's Parquet references).
    pub(crate) fn finish_with(mut self, members: &str) -> String {
        self.text.push_str("},");
        self.text.push_str(members);
        self.text.push('}');
        self.text
    }
}

/// True for the metadata objects a v2 `.zmetadata` holds.
pub(crate) fn is_v2_metadata(key: &str) -> bool {
    let last = key.rsplit('/').next().unwrap_or(key);
    matches!(last, ".zgroup" | ".zattrs" | ".zarray")
}

/// The root `zarr.json` object `root` with the v3 consolidated metadata of `nodes` (path
/// below the root → that node's `zarr.json` object) added or replaced.
pub(crate) fn v3_root(root: &Value, nodes: &BTreeMap<String, Value>) -> Value {
    let mut meta = Map::new();
    for (path, node) in nodes {
        meta.insert(path.clone(), node.clone());
    }
    let cons = json!({"kind": "inline", "must_understand": false, "metadata": meta});
    let mut out = Map::new();
    if let Value::Object(r) = root {
        for (k, v) in r {
            if k == "node_type" && !out.contains_key("consolidated_metadata") {
                out.insert("consolidated_metadata".into(), cons.clone());
            }
            if k != "consolidated_metadata" {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out.entry("consolidated_metadata").or_insert(cons);
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v2_embeds_each_text_under_its_key() {
        let mut c = ConsolidatedV2::new();
        c.add(".zgroup", "{\n  \"zarr_format\": 2\n}\n").unwrap();
        c.add("v/.zarray", "{\"shape\":[2]}").unwrap();
        let t = c.finish();
        let v: Value = serde_json::from_str(&t).unwrap();
        assert_eq!(
            v,
            json!({"zarr_consolidated_format": 1, "metadata": {
                ".zgroup": {"zarr_format": 2}, "v/.zarray": {"shape": [2]}}})
        );
        assert!(is_v2_metadata("a/b/.zattrs") && !is_v2_metadata(".zmetadata"));
        assert!(!is_v2_metadata("a/0.0"));
    }

    #[test]
    fn v3_root_holds_every_node_and_replaces_an_old_one() {
        let root = json!({"zarr_format": 3, "node_type": "group", "attributes": {"t": 1},
                          "consolidated_metadata": {"kind": "inline", "metadata": {"old": {}}}});
        let mut nodes = BTreeMap::new();
        nodes.insert("a".to_string(), json!({"node_type": "array"}));
        nodes.insert("g/b".to_string(), json!({"node_type": "array"}));
        let r = v3_root(&root, &nodes);
        assert_eq!(
            r,
            json!({"zarr_format": 3, "consolidated_metadata": {"kind": "inline",
                "must_understand": false, "metadata": {"a": {"node_type": "array"},
                "g/b": {"node_type": "array"}}}, "node_type": "group", "attributes": {"t": 1}})
        );
        let keys: Vec<&String> = r.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "zarr_format",
                "consolidated_metadata",
                "node_type",
                "attributes"
            ]
        );
    }
}

"""Writes docs/ncdump-json.schema.json, the JSON Schema of `ncdump-rs -j` (docs/json.md), to
stdout. tests/tests/json.rs checks that the committed file is this script's output, so edit
the schema here and run: python3 tests/json/make_schema.py > docs/ncdump-json.schema.json
"""
import json
INTS = {
 "byte": (-128, 127), "short": (-32768, 32767), "int": (-2**31, 2**31-1),
 "int64": (-2**63, 2**63-1), "ubyte": (0, 255), "ushort": (0, 65535),
 "uint": (0, 2**32-1), "uint64": (0, 2**64-1),
}
ATOMIC = ["byte","char","short","int","float","double","ubyte","ushort","uint","int64","uint64","string"]
defs = {}
defs["nonFinite"] = {"description": "NaN, a NaN with another bit pattern (hex bits of the float or double), or an infinity", "type": "string",
  "pattern": "^(NaN|-NaN|Infinity|-Infinity|NaN\\(0x[0-9a-f]{8}\\)|NaN\\(0x[0-9a-f]{16}\\))$"}
defs["hexBytes"] = {"description": "bytes that are not UTF-8, as lower-case hex, two digits per byte", "type": "object",
  "properties": {"hex": {"type": "string", "pattern": "^([0-9a-f]{2})*$"}}, "required": ["hex"], "additionalProperties": False}
defs["text"] = {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/hexBytes"}]}
defs["stringValue"] = {"description": "an NC_STRING value; null is a null string pointer", "anyOf": [{"$ref": "#/$defs/text"}, {"type": "null"}]}
defs["real"] = {"anyOf": [{"type": "number"}, {"$ref": "#/$defs/nonFinite"}]}
for t,(lo,hi) in INTS.items():
    defs[t] = {"type": "integer", "minimum": lo, "maximum": hi}
defs["dimLength"] = {"type": "integer", "minimum": 0, "maximum": 2**64-1}
defs["typeName"] = {"description": "an atomic type name, or a user type: bare when the group or an ancestor defines it, else its full path", "type": "string", "minLength": 1}
defs["anyValue"] = {"description": "a value of a user-defined type: enum member name or number, opaque hex string, vlen array, compound object",
  "type": ["number", "string", "null", "object", "array"],
  "items": {"$ref": "#/$defs/anyValue"}, "additionalProperties": {"$ref": "#/$defs/anyValue"}}
leaf = {t: ("#/$defs/" + t) for t in INTS}
leaf["float"] = leaf["double"] = "#/$defs/real"
leaf["char"] = "#/$defs/text"
leaf["string"] = "#/$defs/stringValue"
for t in ATOMIC:
    name = "nested_" + t
    defs[name] = {"anyOf": [{"$ref": leaf[t]}, {"type": "array", "items": {"$ref": "#/$defs/" + name}}]}
not_one = {"not": {"type": "array", "minItems": 1, "maxItems": 1}}
conds = []
for t in ATOMIC:
    if t == "char":
        data = {"$ref": "#/$defs/text"}
    else:
        data = {"anyOf": [{"$ref": leaf[t]}, {"type": "array", "items": {"$ref": leaf[t]}, "not": {"minItems": 1, "maxItems": 1}}]}
    conds.append({"if": {"properties": {"type": {"const": t}}}, "then": {"properties": {"data": data}}})
conds.append({"if": {"properties": {"type": {"not": {"enum": ATOMIC}}}},
              "then": {"properties": {"data": {"type": "array", "items": {"$ref": "#/$defs/anyValue"}}}}})
defs["typedAttribute"] = {"description": "an attribute with its type: one value bare, none or several as an array (user types: always an array); char as one string",
  "type": "object", "properties": {"type": {"$ref": "#/$defs/typeName"}, "data": True},
  "required": ["type", "data"], "additionalProperties": False, "allOf": conds}
defs["attribute"] = {"description": "bare when the JSON value tells the type: char (string), int (integers), double (finite numbers); else typed",
  "anyOf": [
    {"type": "string"},
    {"$ref": "#/$defs/int"},
    {"type": "array", "items": {"$ref": "#/$defs/int"}, "minItems": 2},
    {"type": "number"},
    {"type": "array", "items": {"type": "number"}, "minItems": 2},
    {"$ref": "#/$defs/typedAttribute"}]}
defs["attributes"] = {"type": "object", "additionalProperties": {"$ref": "#/$defs/attribute"}}
vconds = []
for t in ATOMIC:
    vconds.append({"if": {"properties": {"type": {"const": t}}}, "then": {"properties": {"data": {"$ref": "#/$defs/nested_" + t}}}})
vconds.append({"if": {"properties": {"type": {"not": {"enum": ATOMIC}}}}, "then": {"properties": {"data": {"$ref": "#/$defs/anyValue"}}}})
defs["variable"] = {"type": "object", "properties": {
    "shape": {"description": "dimension names, slowest varying first; absent for a scalar", "type": "array", "items": {"type": "string"}, "minItems": 1},
    "type": {"$ref": "#/$defs/typeName"},
    "attributes": {"$ref": "#/$defs/attributes"},
    "data": {"description": "nested arrays, one level per dimension (char: without the string dimension); absent when not selected (-h, -c, -v, -g)"}},
  "required": ["type"], "additionalProperties": False, "allOf": vconds}
field = {"type": "object", "properties": {"type": {"$ref": "#/$defs/typeName"},
   "shape": {"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 1},
   "offset": {"type": "integer", "minimum": 0}}, "required": ["type", "offset"], "additionalProperties": False}
defs["typeDefinition"] = {"oneOf": [
  {"type": "object", "properties": {"class": {"const": "enum"}, "base": {"enum": list(INTS)},
     "members": {"type": "object", "additionalProperties": {"type": "integer", "minimum": -2**63, "maximum": 2**64-1}}},
   "required": ["class", "base", "members"], "additionalProperties": False},
  {"type": "object", "properties": {"class": {"const": "opaque"}, "size": {"type": "integer", "minimum": 0}},
   "required": ["class", "size"], "additionalProperties": False},
  {"type": "object", "properties": {"class": {"const": "vlen"}, "base": {"$ref": "#/$defs/typeName"}},
   "required": ["class", "base"], "additionalProperties": False},
  {"type": "object", "properties": {"class": {"const": "compound"}, "size": {"type": "integer", "minimum": 0},
     "fields": {"type": "object", "additionalProperties": field}},
   "required": ["class", "size", "fields"], "additionalProperties": False}]}
defs["group"] = {"type": "object", "properties": {
   "types": {"type": "object", "additionalProperties": {"$ref": "#/$defs/typeDefinition"}},
   "dimensions": {"description": "name: current length", "type": "object", "additionalProperties": {"$ref": "#/$defs/dimLength"}},
   "unlimited": {"description": "the dimensions of this group that are unlimited", "type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": True},
   "variables": {"type": "object", "additionalProperties": {"$ref": "#/$defs/variable"}},
   "attributes": {"$ref": "#/$defs/attributes"},
   "groups": {"type": "object", "additionalProperties": {"$ref": "#/$defs/group"}}},
  "additionalProperties": False}
schema = {"$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "urn:ncdump-rs:json:1",
  "title": "ncdump-rs -j output, version 1",
  "description": "A netCDF dataset as ncdump-rs -j writes it; docs/json.md explains every rule. The root object is the root group.",
  "$ref": "#/$defs/group", "$defs": defs}
print(json.dumps(schema, indent=2, ensure_ascii=False))

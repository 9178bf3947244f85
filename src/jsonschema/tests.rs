use serde_json::{json, Value};

use super::*;

fn schema(value: Value) -> Schema {
    Schema::compile(value).unwrap()
}

/// The problems of `instance`, each as `pointer: message`.
fn problems(schema_value: Value, instance: Value) -> Vec<String> {
    schema(schema_value).validate(&instance, 10).iter().map(|p| p.to_string()).collect()
}

fn valid(schema_value: Value, instance: Value) -> bool {
    problems(schema_value, instance).is_empty()
}

fn refused(schema_value: Value) -> String {
    Schema::compile(schema_value).unwrap_err().to_string()
}

#[test]
fn types_one_or_many_and_integers_by_value() {
    assert!(valid(json!({"type": "integer"}), json!(3)));
    assert!(valid(json!({"type": "integer"}), json!(3.0)));
    assert_eq!(
        problems(json!({"type": "integer"}), json!(3.5)),
        ["/: must be of type integer, not a number"]
    );
    assert!(valid(json!({"type": ["string", "null"]}), json!(null)));
    assert_eq!(
        problems(json!({"type": ["string", "null"]}), json!([])),
        ["/: must be of type string or null, not an array"]
    );
    for (name, ok, bad) in [
        ("null", json!(null), json!(0)),
        ("boolean", json!(false), json!("false")),
        ("object", json!({}), json!([])),
        ("array", json!([]), json!({})),
        ("number", json!(1.5), json!("1.5")),
        ("string", json!(""), json!(null)),
    ] {
        assert!(valid(json!({"type": name}), ok), "{name}");
        assert!(!valid(json!({"type": name}), bad), "{name}");
    }
}

#[test]
fn objects_required_properties_and_additional_ones() {
    let s = json!({
        "type": "object",
        "properties": {"verdict": {"enum": ["approve", "reject"]}, "score": {"type": "number"}, "findings": {"type": "array"}},
        "required": ["verdict", "findings"],
        "additionalProperties": false
    });
    assert_eq!(
        problems(s.clone(), json!({"verdict": "maybe", "extra": 1})),
        [
            "/: missing required property \"findings\"",
            "/verdict: must be one of [\"approve\",\"reject\"]",
            "/: property \"extra\" is not allowed",
        ]
    );
    assert!(valid(s, json!({"verdict": "approve", "findings": []})));
    let typed_extra =
        json!({"properties": {"a": true}, "additionalProperties": {"type": "integer"}});
    assert_eq!(
        problems(typed_extra.clone(), json!({"a": "x", "b": "y"})),
        ["/b: must be of type integer, not a string"]
    );
    assert!(valid(typed_extra, json!({"a": "x", "b": 2})));
    // Pointers escape `/` and `~` in names.
    assert_eq!(
        problems(json!({"properties": {"a/b~c": {"type": "string"}}}), json!({"a/b~c": 1})),
        ["/a~1b~0c: must be of type string, not an integer"]
    );
    assert_eq!(
        problems(json!({"minProperties": 2}), json!({"a": 1})),
        ["/: must have at least 2 properties, not 1"]
    );
    assert_eq!(
        problems(json!({"maxProperties": 1}), json!({"a": 1, "b": 2})),
        ["/: must have at most 1 properties, not 2"]
    );
    assert!(valid(json!({"minProperties": 5}), json!("not an object")));
}

#[test]
fn arrays_items_prefix_items_counts_and_uniqueness() {
    let s = json!({"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": {"type": "boolean"}});
    assert!(valid(s.clone(), json!(["a", 1, true, false])));
    assert_eq!(
        problems(s, json!([1, "a", "no"])),
        [
            "/0: must be of type string, not an integer",
            "/1: must be of type integer, not a string",
            "/2: must be of type boolean, not a string"
        ]
    );
    assert_eq!(
        problems(json!({"prefixItems": [true], "items": false}), json!([1, 2])),
        ["/: item 1 is not allowed (at most 1 items)"]
    );
    assert_eq!(
        problems(json!({"minItems": 2}), json!([1])),
        ["/: must have at least 2 items, not 1"]
    );
    assert_eq!(
        problems(json!({"maxItems": 1}), json!([1, 2])),
        ["/: must have at most 1 items, not 2"]
    );
    assert_eq!(
        problems(json!({"uniqueItems": true}), json!([1, {"a": [1]}, 1.0])),
        ["/: items 0 and 2 are equal; the items must be unique"]
    );
    assert!(valid(json!({"uniqueItems": true}), json!([{"a": 1, "b": 2}, {"a": 1, "b": 3}])));
    assert!(!valid(json!({"uniqueItems": true}), json!([{"a": 1, "b": 2}, {"b": 2, "a": 1}])));
    assert!(valid(json!({"uniqueItems": false}), json!([1, 1])));
    // Found in one pass over many items.
    let many: Vec<Value> = (0..200_000).map(|i| json!([i])).chain([json!([17.0])]).collect();
    assert_eq!(
        problems(json!({"uniqueItems": true}), Value::Array(many)),
        ["/: items 17 and 200000 are equal; the items must be unique"]
    );
}

#[test]
fn numbers_bounds_and_multiples() {
    assert_eq!(problems(json!({"minimum": 2}), json!(1)), ["/: must be at least 2"]);
    assert!(valid(json!({"minimum": 2}), json!(2)));
    assert_eq!(problems(json!({"exclusiveMinimum": 2}), json!(2)), ["/: must be greater than 2"]);
    assert_eq!(problems(json!({"maximum": 2.5}), json!(3)), ["/: must be at most 2.5"]);
    assert_eq!(problems(json!({"exclusiveMaximum": 2}), json!(2.0)), ["/: must be less than 2"]);
    assert!(valid(json!({"multipleOf": 0.0001}), json!(0.0075)));
    assert!(!valid(json!({"multipleOf": 0.0001}), json!(0.00751)));
    assert_eq!(problems(json!({"multipleOf": 2}), json!(7)), ["/: must be a multiple of 2"]);
    assert!(
        !valid(json!({"multipleOf": 0.123456789}), json!(1e308)),
        "an overflow is not a multiple"
    );
    // Large numbers are not rounded into multiples.
    assert!(!valid(json!({"multipleOf": 2}), json!(2000000001_u64)));
    assert!(!valid(json!({"multipleOf": 3}), json!(3000000001_i64)));
    assert!(!valid(json!({"multipleOf": 0.01}), json!(5000000.005)));
    assert!(!valid(json!({"multipleOf": 0.01}), json!(123456789.123)));
    assert!(valid(json!({"multipleOf": 0.01}), json!(19.99)));
    // Multiples of a decimal fraction are found exactly, however large.
    for price in [654400.57, 5275752.27, 5000000.01, 123456789.12] {
        assert!(valid(json!({"multipleOf": 0.01}), json!(price)), "{price}");
    }
    assert!(valid(json!({"multipleOf": 1.5}), json!(4.5)));
    assert!(valid(json!({"multipleOf": 1e-7}), json!(3e-6)));
    assert!(!valid(json!({"multipleOf": 1e-7}), json!(3.00000001e-6)));
    assert!(valid(json!({"multipleOf": 7}), json!(-14)));
    assert!(valid(json!({"minimum": 5}), json!("strings are not numbers")));
}

#[test]
fn strings_lengths_in_characters_and_patterns_with_unicode() {
    assert!(valid(json!({"maxLength": 2}), json!("éé")));
    assert_eq!(
        problems(json!({"minLength": 3}), json!("日本")),
        ["/: must be at least 3 characters long, not 2"]
    );
    assert_eq!(
        problems(json!({"maxLength": 1}), json!("ab")),
        ["/: must be at most 1 characters long, not 2"]
    );
    assert!(valid(json!({"pattern": "^[a-z]+-\\d+$"}), json!("abc-12")));
    assert_eq!(
        problems(json!({"pattern": "^[a-z]+$"}), json!("ab1")),
        ["/: must match the pattern \"^[a-z]+$\""]
    );
    // Unanchored by default, and Unicode classes and letters.
    assert!(valid(json!({"pattern": "b"}), json!("abc")));
    assert!(valid(json!({"pattern": "^\\w+ \\d$"}), json!("héllo ٣")));
    assert!(valid(json!({"pattern": "^日本.$"}), json!("日本語")));
    assert!(!valid(json!({"pattern": "^.$"}), json!("日本")));
    assert!(valid(json!({"pattern": "x"}), json!(42)), "a pattern applies to strings only");
}

#[test]
fn const_and_enum_compare_json_by_value() {
    assert!(valid(json!({"const": {"a": [1, 2]}}), json!({"a": [1.0, 2]})));
    assert_eq!(problems(json!({"const": "x"}), json!("y")), ["/: must be \"x\""]);
    assert!(valid(json!({"enum": [null, false, 0]}), json!(0.0)));
    assert!(!valid(json!({"enum": [false]}), json!(0)), "false is not 0");
    assert!(!valid(json!({"const": 1}), json!(true)));
}

#[test]
fn combinators() {
    let any = json!({"anyOf": [{"type": "string"}, {"minimum": 10}]});
    assert!(valid(any.clone(), json!("x")) && valid(any.clone(), json!(12)));
    assert_eq!(problems(any, json!(3)), ["/: must match at least one of the 2 anyOf schemas"]);
    let one = json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]});
    assert!(valid(one.clone(), json!(1)) && valid(one.clone(), json!(2.5)));
    assert_eq!(
        problems(one, json!(3)),
        ["/: must match exactly one of the 2 oneOf schemas, not 2"]
    );
    assert_eq!(
        problems(json!({"allOf": [{"type": "integer"}, {"minimum": 2}]}), json!(1.5)),
        ["/: must be of type integer, not a number", "/: must be at least 2"]
    );
    assert_eq!(
        problems(json!({"not": {"type": "null"}}), json!(null)),
        ["/: must not match the schema in not"]
    );
    assert!(valid(json!({"not": false}), json!(1)));
    assert_eq!(problems(json!(false), json!(1)), ["/: no value is allowed here"]);
    assert!(valid(json!(true), json!({"anything": [1]})));
}

#[test]
fn refs_resolve_into_the_schema_and_recurse_through_a_tree() {
    let tree = json!({
        "$defs": {"node": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            "required": ["name"],
            "additionalProperties": false
        }},
        "$ref": "#/$defs/node"
    });
    let ok = json!({"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]});
    assert!(valid(tree.clone(), ok));
    assert_eq!(
        problems(tree.clone(), json!({"name": "a", "children": [{"children": [{"name": 1}]}]})),
        [
            "/children/0: missing required property \"name\"",
            "/children/0/children/0/name: must be of type string, not an integer"
        ]
    );
    // `#` is the root; `~0` and `~1` are decoded; percent-encoding is not.
    let list = json!({"type": "array", "items": {"anyOf": [{"type": "integer"}, {"$ref": "#"}]}});
    assert!(valid(list.clone(), json!([1, [2, [3]]])));
    assert!(!valid(list, json!([1, ["x"]])));
    let escaped = json!({"$defs": {"a/b": {"type": "integer"}, "c~d": {"type": "string"}}, "properties": {"x": {"$ref": "#/$defs/a~1b"}, "y": {"$ref": "#/$defs/c~0d"}}});
    assert!(valid(escaped.clone(), json!({"x": 1, "y": "s"})));
    assert!(!valid(escaped, json!({"x": "1"})));
    assert_eq!(
        refused(json!({"$defs": {"a b": true}, "$ref": "#/$defs/a%20b"})),
        "$ref \"#/$defs/a%20b\" does not resolve (only \"#\" and \"#/...\" pointers into this schema are supported) (at /$ref)"
    );
    // A $ref beside other keywords: both apply (2020-12).
    let both = json!({"$defs": {"i": {"type": "integer"}}, "$ref": "#/$defs/i", "minimum": 5});
    assert!(
        !valid(both.clone(), json!(3)) && !valid(both.clone(), json!(7.5)) && valid(both, json!(6))
    );
}

#[test]
fn schemas_that_cannot_be_used_are_refused_naming_keyword_and_pointer() {
    let cases = [
        (json!({"properties": {"a": {"patternProperties": {}}}}), "keyword \"patternProperties\" is not supported (at /properties/a/patternProperties)"),
        (json!({"items": {"$id": "x"}}), "keyword \"$id\" is not supported below the root (at /items/$id)"),
        (json!({"if": true}), "keyword \"if\" is not supported (at /if)"),
        (json!({"$ref": "other.json#/a"}), "$ref \"other.json#/a\" does not resolve (only \"#\" and \"#/...\" pointers into this schema are supported) (at /$ref)"),
        (json!({"$ref": "#/$defs/missing"}), "$ref \"#/$defs/missing\" does not resolve (only \"#\" and \"#/...\" pointers into this schema are supported) (at /$ref)"),
        (json!({"type": "text"}), "type must be one of null, boolean, object, array, number, string, integer (at /type)"),
        (json!({"minLength": -1}), "minLength must be a non-negative integer (at /minLength)"),
        (json!({"multipleOf": 0}), "multipleOf must be a number greater than 0 (at /multipleOf)"),
        (json!({"required": ["a", "a"]}), "required must be an array of distinct property names (at /required)"),
        (json!({"anyOf": []}), "anyOf must be a non-empty array of schemas (at /anyOf)"),
        (json!({"properties": {"a": 3}}), "a schema must be an object or a boolean (at /properties/a)"),
        (json!({"pattern": "(unclosed"}), "pattern \"(unclosed\" is not a valid regular expression: unclosed group at position 1 (at /pattern)"),
        (json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}), "$ref loops back to this schema without reaching into the answer (at /$defs/a)"),
        (json!({"$ref": "#"}), "$ref loops back to this schema without reaching into the answer (at /)"),
        (json!(3), "a schema must be an object or a boolean (at /)"),
    ];
    for (value, message) in cases {
        assert_eq!(refused(value.clone()), message, "{value}");
    }
    // Annotations are accepted and change nothing; $id at the root too.
    let annotated = json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "urn:x", "title": "t", "description": "d", "default": 1, "examples": [1], "format": "email", "$comment": "c", "deprecated": true, "readOnly": false, "writeOnly": false});
    assert!(valid(annotated, json!("not an email")));
}

#[test]
fn refs_name_schemas_and_work_is_bounded() {
    assert_eq!(
        refused(json!({"type": "object", "$ref": "#/default", "default": {"if": 1}})),
        "$ref \"#/default\" does not point to a schema (at /$ref)"
    );
    assert_eq!(
        refused(json!({"$ref": "#/properties", "properties": {"type": {"const": 5}}})),
        "$ref \"#/properties\" does not point to a schema (at /$ref)"
    );
    assert!(
        valid(json!({"$ref": "#/$defs/t", "$defs": {"t": true}}), json!(1)),
        "a boolean schema"
    );
    // A $ref chain 3,000 deep: refused, not a stack overflow.
    let mut defs = serde_json::Map::new();
    for i in 0..3000 {
        defs.insert(format!("d{i}"), json!({"$ref": format!("#/$defs/d{}", i + 1)}));
    }
    defs.insert("d3000".into(), json!({"type": "string"}));
    let chain = json!({"$ref": "#/$defs/d0", "$defs": defs});
    assert!(refused(chain).starts_with("$ref chains more than 256 schemas deep"));
    // Nested anyOf doubling at each of 40 levels (2^40 paths): the answer is reported
    // unchecked once the work runs out, instead of a run that does not end.
    let mut defs = serde_json::Map::new();
    for i in 0..40 {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(format!("d{i}"), json!({"anyOf": [{"$ref": next}, {"$ref": next}]}));
    }
    defs.insert("d40".into(), json!({"type": "string"}));
    let wide = json!({"$ref": "#/$defs/d0", "$defs": defs});
    assert_eq!(
        problems(wide, json!(1)),
        ["/: the answer could not be checked: the schema needs more than 1000000 steps for it"]
    );
    // Comparisons against a long enum count too.
    let options: Vec<Value> = (0..100_000).map(|i| json!(i)).collect();
    let items: Vec<Value> = (0..100_000).map(|i| json!(i)).collect();
    assert_eq!(
        problems(json!({"items": {"enum": options}}), Value::Array(items)),
        ["/: the answer could not be checked: the schema needs more than 1000000 steps for it"]
    );
}

#[test]
fn problems_stop_at_the_limit() {
    let s = schema(json!({"items": {"type": "string"}}));
    let many: Vec<Value> = (0..50).map(|i| json!(i)).collect();
    assert_eq!(s.validate(&Value::Array(many), 10).len(), 10);
}

/// The keywords zero supports, as the JSON Schema Test Suite's draft2020-12 files name them.
const SUITE_FILES: &[&str] = &[
    "additionalProperties",
    "allOf",
    "anyOf",
    "boolean_schema",
    "const",
    "defs",
    "enum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "items",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minItems",
    "minLength",
    "minProperties",
    "minimum",
    "multipleOf",
    "not",
    "oneOf",
    "pattern",
    "prefixItems",
    "properties",
    "ref",
    "required",
    "type",
    "uniqueItems",
];

/// The JSON Schema Test Suite (github.com/json-schema-org/JSON-Schema-Test-Suite), when
/// `ZERO_JSON_SCHEMA_SUITE` names a checkout of it: every case of the files above whose schema
/// zero accepts must pass; a case whose schema uses a keyword zero refuses is counted apart.
#[test]
fn the_json_schema_test_suite_passes() {
    let Some(root) = std::env::var_os("ZERO_JSON_SCHEMA_SUITE") else {
        crate::testing::kit::skip(
            "JSON Schema Test Suite",
            crate::testing::kit::Skip::Missing,
            "ZERO_JSON_SCHEMA_SUITE is not set (the suite's draft2020-12 files; .ci/run fetches them)",
        );
        return;
    };
    let dir = std::path::Path::new(&root).join("tests/draft2020-12");
    let (mut passed, mut refused_cases, mut failed) = (0, Vec::new(), Vec::new());
    for file in SUITE_FILES {
        let text = std::fs::read_to_string(dir.join(format!("{file}.json"))).unwrap();
        let groups: Vec<Value> = serde_json::from_str(&text).unwrap();
        for group in groups {
            let description = group["description"].as_str().unwrap_or_default();
            let compiled = match Schema::compile(group["schema"].clone()) {
                Ok(s) => s,
                Err(err) => {
                    refused_cases.push(format!("{file}: {description}: {err}"));
                    continue;
                }
            };
            for case in group["tests"].as_array().unwrap() {
                let expected = case["valid"].as_bool().unwrap();
                let got = compiled.validate(&case["data"], 10).is_empty();
                if got == expected {
                    passed += 1;
                } else {
                    failed.push(format!("{file}: {description}: {}", case["description"]));
                }
            }
        }
    }
    eprintln!(
        "JSON Schema Test Suite: {passed} cases passed; {} groups refused:",
        refused_cases.len()
    );
    for refused in &refused_cases {
        eprintln!("  {refused}");
    }
    assert!(failed.is_empty(), "{} failed:\n{}", failed.len(), failed.join("\n"));
    assert!(passed > 500, "only {passed} cases ran: is {} the suite?", dir.display());
}

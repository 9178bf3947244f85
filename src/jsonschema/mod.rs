//! JSON Schema (draft 2020-12), the keywords a structured answer needs, checked strictly:
//! a schema is compiled once (every keyword known, every value of the right shape, every
//! `$ref` resolved, every `pattern` compiled, no `$ref` loop that never reaches into the
//! answer), then answers are validated against it, each problem named by its JSON pointer.
//!
//! Supported: `type`, `properties`, `required`, `additionalProperties`, `items`,
//! `prefixItems`, `enum`, `const`, `minimum`, `maximum`, `exclusiveMinimum`,
//! `exclusiveMaximum`, `multipleOf`, `minLength`, `maxLength`, `pattern`, `minItems`,
//! `maxItems`, `uniqueItems`, `minProperties`, `maxProperties`, `anyOf`, `oneOf`, `allOf`,
//! `not`, `$ref` (`#` and `#/...`, with `~0`/`~1` decoded), `$defs`, boolean schemas, and the
//! annotations, which change nothing. Any other keyword is refused: a schema that asks for
//! something zero does not check must not pass unchecked.

use std::collections::HashSet;
use std::fmt;

use serde_json::{Map, Value};

use crate::search::regex::Regex;

#[cfg(test)]
mod tests;

/// How deep validation goes through `$ref`s and nested schemas, and how many schemas it may
/// apply in all: a schema that needs more is refused or its answer reported unchecked, never a
/// stack overflow or a run that does not end (nested `anyOf`s double the work per level).
const MAX_DEPTH: usize = 256;
const MAX_WORK: u64 = 1_000_000;

/// Keywords that annotate and are not enforced (`$id` only at the root).
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "format",
    "$schema",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Why a schema cannot be used, with the JSON pointer of the place in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    pub pointer: String,
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at {})", self.message, shown_pointer(&self.pointer))
    }
}

impl std::error::Error for SchemaError {}

/// One way an answer does not match, at a JSON pointer into the answer (`/` for its root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub pointer: String,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", shown_pointer(&self.pointer), self.message)
    }
}

/// The root is written `/`.
fn shown_pointer(pointer: &str) -> &str {
    if pointer.is_empty() {
        "/"
    } else {
        pointer
    }
}

/// A compiled schema.
#[derive(Debug, Clone)]
pub struct Schema {
    root: Value,
}

/// A pointer segment, escaped (`~0`, `~1`).
fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Resolves `#` or `#/a/b` in `root`; `None` when it names nothing.
fn resolve<'v>(root: &'v Value, reference: &str) -> Option<&'v Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    if !pointer.starts_with('/') {
        return None;
    }
    let mut at = root;
    for segment in pointer[1..].split('/') {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        at = match at {
            Value::Object(map) => map.get(&segment)?,
            Value::Array(list) => {
                let plain = !segment.is_empty()
                    && segment.bytes().all(|b| b.is_ascii_digit())
                    && (segment == "0" || !segment.starts_with('0'));
                list.get(segment.parse::<usize>().ok().filter(|_| plain)?)?
            }
            _ => return None,
        };
    }
    Some(at)
}

impl Schema {
    /// Checks a schema and keeps it. Errors name the keyword and its pointer.
    pub fn compile(root: Value) -> Result<Schema, SchemaError> {
        let mut check = Check { refs: Vec::new() };
        check.schema(&root, "", true)?;
        let refs = std::mem::take(&mut check.refs);
        for (pointer, reference) in &refs {
            if resolve(&root, reference).is_none() {
                return Err(SchemaError {
                    pointer: pointer.clone(),
                    message: format!("$ref \"{reference}\" does not resolve (only \"#\" and \"#/...\" pointers into this schema are supported)"),
                });
            }
        }
        // A `$ref` must name a schema (not a `default` or an `enum` value, whose contents were
        // never checked as a schema).
        let mut places = Vec::new();
        collect(&root, String::new(), &mut places);
        let schemas: HashSet<&str> = places.iter().map(|(at, _)| at.as_str()).collect();
        for (pointer, reference) in &refs {
            if !schemas.contains(reference.trim_start_matches('#')) {
                return Err(SchemaError {
                    pointer: pointer.clone(),
                    message: format!("$ref \"{reference}\" does not point to a schema"),
                });
            }
        }
        no_loops(&root)?;
        Ok(Schema { root })
    }

    /// The schema as given.
    pub fn value(&self) -> &Value {
        &self.root
    }

    /// The problems of `instance`, at most `limit` of them (none: it matches).
    pub fn validate(&self, instance: &Value, limit: usize) -> Vec<Problem> {
        let budget = Budget::default();
        let mut run =
            Run { root: &self.root, problems: Vec::new(), limit, depth: 0, budget: &budget };
        run.check(&self.root, instance, "");
        if let Some(why) = budget.exceeded.take() {
            return vec![Problem { pointer: String::new(), message: why }];
        }
        // `allOf` branches may find the same problem twice.
        let mut seen = HashSet::new();
        run.problems.retain(|p| seen.insert(p.to_string()));
        run.problems
    }
}

/// The compile-time walk over a schema.
struct Check {
    /// Every `$ref` met, with where: resolved once the walk is over.
    refs: Vec<(String, String)>,
}

fn bad(pointer: &str, keyword: &str, what: &str) -> SchemaError {
    SchemaError {
        pointer: format!("{pointer}/{}", escape(keyword)),
        message: format!("{keyword} must be {what}"),
    }
}

const TYPES: &[&str] = &["null", "boolean", "object", "array", "number", "string", "integer"];

impl Check {
    fn schema(&mut self, schema: &Value, at: &str, is_root: bool) -> Result<(), SchemaError> {
        let map = match schema {
            Value::Bool(_) => return Ok(()),
            Value::Object(map) => map,
            _ => {
                return Err(SchemaError {
                    pointer: at.to_string(),
                    message: "a schema must be an object or a boolean".to_string(),
                })
            }
        };
        for (keyword, value) in map {
            self.keyword(keyword, value, at, is_root)?;
        }
        Ok(())
    }

    fn keyword(
        &mut self,
        keyword: &str,
        value: &Value,
        at: &str,
        root: bool,
    ) -> Result<(), SchemaError> {
        let here = format!("{at}/{}", escape(keyword));
        let count = || {
            count_of(value).map(|_| ()).ok_or_else(|| bad(at, keyword, "a non-negative integer"))
        };
        let number = || value.as_f64().map(|_| ()).ok_or_else(|| bad(at, keyword, "a number"));
        match keyword {
            k if ANNOTATIONS.contains(&k) => Ok(()),
            "$id" if root => Ok(()),
            "type" => {
                let names: Vec<&Value> = match value {
                    Value::Array(list) if !list.is_empty() => list.iter().collect(),
                    Value::String(_) => vec![value],
                    _ => return Err(bad(at, keyword, "a type name or a non-empty list of them")),
                };
                for name in names {
                    if !name.as_str().is_some_and(|n| TYPES.contains(&n)) {
                        return Err(bad(
                            at,
                            keyword,
                            "one of null, boolean, object, array, number, string, integer",
                        ));
                    }
                }
                Ok(())
            }
            "properties" | "$defs" => {
                let map =
                    value.as_object().ok_or_else(|| bad(at, keyword, "an object of schemas"))?;
                for (name, schema) in map {
                    self.schema(schema, &format!("{here}/{}", escape(name)), false)?;
                }
                Ok(())
            }
            "required" => {
                let list = value.as_array().filter(|l| l.iter().all(Value::is_string));
                let list = list.ok_or_else(|| bad(at, keyword, "an array of property names"))?;
                let unique: HashSet<&str> = list.iter().filter_map(Value::as_str).collect();
                if unique.len() != list.len() {
                    return Err(bad(at, keyword, "an array of distinct property names"));
                }
                Ok(())
            }
            "additionalProperties" | "items" | "not" => self.schema(value, &here, false),
            "prefixItems" | "anyOf" | "oneOf" | "allOf" => {
                let list = value.as_array().filter(|l| !l.is_empty());
                let list = list.ok_or_else(|| bad(at, keyword, "a non-empty array of schemas"))?;
                for (i, schema) in list.iter().enumerate() {
                    self.schema(schema, &format!("{here}/{i}"), false)?;
                }
                Ok(())
            }
            "enum" => value.as_array().map(|_| ()).ok_or_else(|| bad(at, keyword, "an array")),
            "const" => Ok(()),
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => number(),
            "multipleOf" => value
                .as_f64()
                .filter(|m| *m > 0.0)
                .map(|_| ())
                .ok_or_else(|| bad(at, keyword, "a number greater than 0")),
            "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties"
            | "maxProperties" => count(),
            "uniqueItems" => {
                value.as_bool().map(|_| ()).ok_or_else(|| bad(at, keyword, "true or false"))
            }
            "pattern" => {
                let pattern = value.as_str().ok_or_else(|| bad(at, keyword, "a string"))?;
                Regex::new(pattern, false).map(|_| ()).map_err(|err| SchemaError {
                    pointer: here.clone(),
                    message: format!(
                        "pattern {pattern:?} is not a valid regular expression: {err}"
                    ),
                })
            }
            "$ref" => {
                let reference = value.as_str().ok_or_else(|| bad(at, keyword, "a string"))?;
                self.refs.push((here, reference.to_string()));
                Ok(())
            }
            other => Err(SchemaError {
                pointer: here,
                message: format!(
                    "keyword \"{other}\" is not supported{}",
                    if other == "$id" { " below the root" } else { "" }
                ),
            }),
        }
    }
}

/// Refuses a schema whose `$ref`s (through `allOf`, `anyOf`, `oneOf`, `not` and other
/// `$ref`s) lead back to themselves without reaching into the answer: validating would never
/// end.
fn no_loops(root: &Value) -> Result<(), SchemaError> {
    // The in-place children of a schema: what applies to the same instance.
    fn in_place<'v>(root: &'v Value, schema: &'v Value, at: &str) -> Vec<(String, &'v Value)> {
        let Some(map) = schema.as_object() else { return Vec::new() };
        let mut out = Vec::new();
        for keyword in ["allOf", "anyOf", "oneOf"] {
            for (i, s) in
                map.get(keyword).and_then(Value::as_array).into_iter().flatten().enumerate()
            {
                out.push((format!("{at}/{keyword}/{i}"), s));
            }
        }
        if let Some(s) = map.get("not") {
            out.push((format!("{at}/not"), s));
        }
        if let Some(target) = map.get("$ref").and_then(Value::as_str) {
            if let Some(s) = resolve(root, target) {
                out.push((target.trim_start_matches('#').to_string(), s));
            }
        }
        out
    }
    fn visit<'v>(
        root: &'v Value,
        schema: &'v Value,
        at: String,
        path: &mut Vec<String>,
        done: &mut HashSet<String>,
    ) -> Result<(), SchemaError> {
        if path.contains(&at) {
            return Err(SchemaError {
                pointer: at,
                message: "$ref loops back to this schema without reaching into the answer"
                    .to_string(),
            });
        }
        if !done.insert(at.clone()) {
            return Ok(());
        }
        if path.len() >= MAX_DEPTH {
            return Err(SchemaError {
                pointer: at,
                message: format!("$ref chains more than {MAX_DEPTH} schemas deep"),
            });
        }
        path.push(at.clone());
        for (child_at, child) in in_place(root, schema, &at) {
            visit(root, child, child_at, path, done)?;
        }
        path.pop();
        Ok(())
    }
    // Every schema in the document is a starting point (a `$defs` entry may be reached only
    // through a property).
    let mut starts = Vec::new();
    collect(root, String::new(), &mut starts);
    let mut done = HashSet::new();
    for (at, schema) in starts {
        let mut path = Vec::new();
        // A fresh walk per start: `done` only skips what a finished walk cleared.
        visit(root, schema, at, &mut path, &mut done)?;
    }
    Ok(())
}

/// Every subschema of a (compiled) schema, with its pointer.
fn collect<'v>(schema: &'v Value, at: String, out: &mut Vec<(String, &'v Value)>) {
    out.push((at.clone(), schema));
    let Some(map) = schema.as_object() else { return };
    for (keyword, value) in map {
        let here = format!("{at}/{}", escape(keyword));
        match keyword.as_str() {
            "properties" | "$defs" => {
                for (name, s) in value.as_object().into_iter().flatten() {
                    collect(s, format!("{here}/{}", escape(name)), out);
                }
            }
            "additionalProperties" | "items" | "not" => collect(value, here, out),
            "prefixItems" | "anyOf" | "oneOf" | "allOf" => {
                for (i, s) in value.as_array().into_iter().flatten().enumerate() {
                    collect(s, format!("{here}/{i}"), out);
                }
            }
            _ => {}
        }
    }
}

/// A count keyword's value: a non-negative integer, also written as a number (`2.0`).
fn count_of(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        let f = value.as_f64()?;
        (f >= 0.0 && f.fract() == 0.0 && f < 9.0e15).then_some(f as u64)
    })
}

/// Whether `n` is a multiple of `m`: exactly for integers, and for other numbers when the
/// quotient is a whole number but for the rounding of decimal fractions (`0.0075` is a
/// multiple of `0.0001`; `5000000.005` is not one of `0.01`).
fn multiple_of(instance: &Value, divisor: &Value, n: f64, m: f64) -> bool {
    if let (Some(n), Some(m)) = (instance.as_i64(), divisor.as_i64()) {
        return m != 0 && n % m == 0;
    }
    if let (Some(n), Some(m)) = (instance.as_u64(), divisor.as_u64()) {
        return m != 0 && n % m == 0;
    }
    // Both as written (their shortest decimal forms), scaled to integers: exact.
    if let (Some(n), Some(m)) = (decimal(&instance.to_string()), decimal(&divisor.to_string())) {
        let scale = n.1.max(m.1);
        let widen = |(digits, s): (i128, u32)| digits.checked_mul(10_i128.checked_pow(scale - s)?);
        if let (Some(n), Some(m)) = (widen(n), widen(m)) {
            return m != 0 && n % m == 0;
        }
    }
    let q = n / m;
    q.is_finite() && (q - q.round()).abs() <= 1e-9 * q.abs().max(1.0)
}

/// A JSON number's text as an integer and the power of ten it is divided by (`654400.57` is
/// `(65440057, 2)`); `None` when it does not fit.
fn decimal(text: &str) -> Option<(i128, u32)> {
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: i128 = format!("{whole}{fraction}").parse().ok()?;
    let scale = fraction.len() as i32 - exponent;
    if scale >= 0 {
        (scale <= 36).then_some((digits, scale as u32))
    } else {
        Some((digits.checked_mul(10_i128.checked_pow((-scale) as u32)?)?, 0))
    }
}

/// A value's canonical text: equal values (as [`same`] compares them) have the same one.
fn canonical(value: &Value) -> String {
    match value {
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (_, Some(u), _) => u.to_string(),
            (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => (f as i64).to_string(),
            (_, _, Some(f)) => format!("{f:e}"),
            _ => n.to_string(),
        },
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", inner.join(","))
        }
        Value::Object(map) => {
            // A serde_json map iterates in name order.
            let inner: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), canonical(v)))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        other => other.to_string(),
    }
}

/// JSON equality, numbers compared by value (`1` equals `1.0`), objects by their members.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// The JSON type name of a value, as a problem names it.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if is_integer(n) => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn is_integer(n: &serde_json::Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

fn has_type(value: &Value, name: &str) -> bool {
    match (name, value) {
        ("null", Value::Null) | ("boolean", Value::Bool(_)) | ("object", Value::Object(_)) => true,
        ("array", Value::Array(_))
        | ("number", Value::Number(_))
        | ("string", Value::String(_)) => true,
        ("integer", Value::Number(n)) => is_integer(n),
        _ => false,
    }
}

/// A value in a problem: compact JSON, cut when long.
fn shown(value: &Value) -> String {
    crate::text::cut_chars(&value.to_string(), 80)
}

/// The order keywords are checked in, so problems come in a reader's order: what the value
/// is, then what it holds (required members before the members, earlier items first).
const VALIDATION_ORDER: &[&str] = &[
    "$ref",
    "type",
    "const",
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "required",
    "properties",
    "additionalProperties",
    "prefixItems",
    "items",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
];

/// The work one validation may do, and the patterns it compiled.
#[derive(Default)]
struct Budget {
    steps: std::cell::Cell<u64>,
    /// Why the validation stopped before its end.
    exceeded: std::cell::Cell<Option<String>>,
    patterns: std::cell::RefCell<std::collections::HashMap<String, Regex>>,
}

/// One validation.
struct Run<'v> {
    root: &'v Value,
    problems: Vec<Problem>,
    limit: usize,
    /// Schemas applied above this one, through nesting and `$ref`s.
    depth: usize,
    budget: &'v Budget,
}

impl Run<'_> {
    fn problem(&mut self, at: &str, message: String) {
        if self.problems.len() < self.limit {
            self.problems.push(Problem { pointer: at.to_string(), message });
        }
    }

    /// Whether `instance` matches `schema`, without recording problems.
    fn matches(&self, schema: &Value, instance: &Value) -> bool {
        let mut quiet = Run { problems: Vec::new(), limit: 1, ..*self };
        quiet.check(schema, instance, "");
        quiet.problems.is_empty()
    }

    fn full(&self) -> bool {
        self.problems.len() >= self.limit
    }

    /// Counts work done outside `check` (comparisons, text scanned) against the budget.
    fn spend(&self, steps: u64) {
        self.budget.steps.set(self.budget.steps.get().saturating_add(steps));
    }

    fn pattern_matches(&self, pattern: &str, text: &str) -> bool {
        let mut patterns = self.budget.patterns.borrow_mut();
        if !patterns.contains_key(pattern) {
            // Compiled when the schema was: it cannot fail here.
            let Ok(regex) = Regex::new(pattern, false) else { return true };
            patterns.insert(pattern.to_string(), regex);
        }
        patterns.get(pattern).is_some_and(|r| r.is_match(text))
    }

    fn check(&mut self, schema: &Value, instance: &Value, at: &str) {
        let steps = self.budget.steps.get() + 1;
        self.budget.steps.set(steps);
        let stop = if steps > MAX_WORK {
            Some(format!("the answer could not be checked: the schema needs more than {MAX_WORK} steps for it"))
        } else if self.depth > MAX_DEPTH {
            Some(format!("the answer could not be checked: the schema nests more than {MAX_DEPTH} levels deep here ({})", shown_pointer(at)))
        } else {
            None
        };
        if let Some(why) = stop {
            let earlier = self.budget.exceeded.take();
            self.budget.exceeded.set(earlier.or(Some(why)));
            self.problems.push(Problem { pointer: at.to_string(), message: String::new() });
            return;
        }
        self.depth += 1;
        self.check_keywords(schema, instance, at);
        self.depth -= 1;
    }

    fn check_keywords(&mut self, schema: &Value, instance: &Value, at: &str) {
        let map = match schema {
            Value::Bool(true) => return,
            Value::Bool(false) => return self.problem(at, "no value is allowed here".to_string()),
            Value::Object(map) => map,
            _ => return,
        };
        for keyword in VALIDATION_ORDER {
            if self.full() {
                return;
            }
            if let Some(value) = map.get(*keyword) {
                self.keyword(map, keyword, value, instance, at);
            }
        }
    }

    fn keyword(
        &mut self,
        map: &Map<String, Value>,
        keyword: &str,
        value: &Value,
        instance: &Value,
        at: &str,
    ) {
        let num = instance.as_f64().filter(|_| instance.is_number());
        match keyword {
            "$ref" => {
                if let Some(target) = value.as_str().and_then(|r| resolve(self.root, r)) {
                    self.check(target, instance, at);
                }
            }
            "type" => {
                let names: Vec<&str> = match value {
                    Value::String(one) => vec![one.as_str()],
                    Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
                    _ => Vec::new(),
                };
                if !names.iter().any(|n| has_type(instance, n)) {
                    let wanted = names.join(" or ");
                    self.problem(
                        at,
                        format!("must be of type {wanted}, not {}", type_name(instance)),
                    );
                }
            }
            "const" if !same(instance, value) => {
                self.problem(at, format!("must be {}", shown(value)));
            }
            "enum" => {
                let options = value.as_array().map(Vec::as_slice).unwrap_or_default();
                self.spend(options.len() as u64);
                if !options.iter().any(|o| same(instance, o)) {
                    self.problem(at, format!("must be one of {}", shown(value)));
                }
            }
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                let (Some(n), Some(limit)) = (num, value.as_f64()) else { return };
                let (ok, words) = match keyword {
                    "minimum" => (n >= limit, "at least"),
                    "maximum" => (n <= limit, "at most"),
                    "exclusiveMinimum" => (n > limit, "greater than"),
                    _ => (n < limit, "less than"),
                };
                if !ok {
                    self.problem(at, format!("must be {words} {value}"));
                }
            }
            "multipleOf" => {
                let (Some(n), Some(m)) = (num, value.as_f64()) else { return };
                if !multiple_of(instance, value, n, m) {
                    self.problem(at, format!("must be a multiple of {value}"));
                }
            }
            "minLength" | "maxLength" => {
                let (Some(s), Some(limit)) = (instance.as_str(), count_of(value)) else { return };
                let length = s.chars().count() as u64;
                if keyword == "minLength" && length < limit {
                    self.problem(
                        at,
                        format!("must be at least {limit} characters long, not {length}"),
                    );
                } else if keyword == "maxLength" && length > limit {
                    self.problem(
                        at,
                        format!("must be at most {limit} characters long, not {length}"),
                    );
                }
            }
            "pattern" => {
                let (Some(s), Some(pattern)) = (instance.as_str(), value.as_str()) else { return };
                // Linear in the text; a pattern is compiled once per validation.
                self.spend(1 + s.len() as u64 / 64);
                if !self.pattern_matches(pattern, s) {
                    self.problem(at, format!("must match the pattern {pattern:?}"));
                }
            }
            "minItems" | "maxItems" => {
                let (Some(list), Some(limit)) = (instance.as_array(), count_of(value)) else {
                    return;
                };
                let n = list.len() as u64;
                if keyword == "minItems" && n < limit {
                    self.problem(at, format!("must have at least {limit} items, not {n}"));
                } else if keyword == "maxItems" && n > limit {
                    self.problem(at, format!("must have at most {limit} items, not {n}"));
                }
            }
            "uniqueItems" => {
                let Some(list) = instance.as_array().filter(|_| value == &Value::Bool(true)) else {
                    return;
                };
                // Each item by its canonical form (numbers by value, members in name order): one
                // pass, not a comparison of every pair.
                self.spend(list.len() as u64);
                let mut seen: std::collections::HashMap<String, usize> = Default::default();
                for (i, item) in list.iter().enumerate() {
                    if let Some(j) = seen.insert(canonical(item), i) {
                        self.problem(
                            at,
                            format!("items {j} and {i} are equal; the items must be unique"),
                        );
                        return;
                    }
                }
            }
            "minProperties" | "maxProperties" => {
                let (Some(object), Some(limit)) = (instance.as_object(), count_of(value)) else {
                    return;
                };
                let n = object.len() as u64;
                if keyword == "minProperties" && n < limit {
                    self.problem(at, format!("must have at least {limit} properties, not {n}"));
                } else if keyword == "maxProperties" && n > limit {
                    self.problem(at, format!("must have at most {limit} properties, not {n}"));
                }
            }
            "required" => {
                let Some(object) = instance.as_object() else { return };
                for name in value.as_array().into_iter().flatten().filter_map(Value::as_str) {
                    if !object.contains_key(name) {
                        self.problem(at, format!("missing required property {name:?}"));
                    }
                }
            }
            "properties" => {
                let (Some(object), Some(properties)) = (instance.as_object(), value.as_object())
                else {
                    return;
                };
                for (name, schema) in properties {
                    if let Some(member) = object.get(name) {
                        self.check(schema, member, &format!("{at}/{}", escape(name)));
                    }
                }
            }
            "additionalProperties" => {
                let Some(object) = instance.as_object() else { return };
                let declared = map.get("properties").and_then(Value::as_object);
                for (name, member) in object {
                    if declared.is_some_and(|d| d.contains_key(name)) {
                        continue;
                    }
                    let here = format!("{at}/{}", escape(name));
                    if value == &Value::Bool(false) {
                        self.problem(at, format!("property {name:?} is not allowed"));
                    } else {
                        self.check(value, member, &here);
                    }
                }
            }
            "prefixItems" => {
                let (Some(list), Some(schemas)) = (instance.as_array(), value.as_array()) else {
                    return;
                };
                for (i, (item, schema)) in list.iter().zip(schemas).enumerate() {
                    self.check(schema, item, &format!("{at}/{i}"));
                }
            }
            "items" => {
                let Some(list) = instance.as_array() else { return };
                let skip = map.get("prefixItems").and_then(Value::as_array).map_or(0, Vec::len);
                for (i, item) in list.iter().enumerate().skip(skip) {
                    if value == &Value::Bool(false) {
                        self.problem(at, format!("item {i} is not allowed (at most {skip} items)"));
                        return;
                    }
                    self.check(value, item, &format!("{at}/{i}"));
                }
            }
            "allOf" => {
                for schema in value.as_array().into_iter().flatten() {
                    self.check(schema, instance, at);
                }
            }
            "anyOf" => {
                let schemas = value.as_array().map(Vec::as_slice).unwrap_or_default();
                if !schemas.iter().any(|s| self.matches(s, instance)) {
                    self.problem(
                        at,
                        format!("must match at least one of the {} anyOf schemas", schemas.len()),
                    );
                }
            }
            "oneOf" => {
                let schemas = value.as_array().map(Vec::as_slice).unwrap_or_default();
                let matched = schemas.iter().filter(|s| self.matches(s, instance)).count();
                if matched != 1 {
                    self.problem(
                        at,
                        format!(
                            "must match exactly one of the {} oneOf schemas, not {matched}",
                            schemas.len()
                        ),
                    );
                }
            }
            "not" if self.matches(value, instance) => {
                self.problem(at, "must not match the schema in not".to_string());
            }
            _ => {}
        }
    }
}

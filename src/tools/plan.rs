//! update_plan: the model's task plan, kept in memory for the run.

use serde_json::{json, Value};

use super::{ArgError, Args, Outcome, PlanItem};

const STATUSES: &[&str] = &["pending", "in_progress", "completed", "failed"];

pub fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "plan": {
                "type": "array",
                "description": "The whole plan, replacing the previous one.",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "minLength": 1},
                        "content": {"type": "string", "minLength": 1},
                        "status": {"type": "string", "enum": STATUSES},
                        "notes": {"type": "string"},
                    },
                    "required": ["id", "content", "status"],
                    "additionalProperties": false,
                },
            },
        },
        "required": ["plan"],
        "additionalProperties": false,
    })
}

pub(super) fn update_plan(plan: &mut Vec<PlanItem>, args: &Args<'_>) -> Result<Outcome, ArgError> {
    let items = match args.value("plan") {
        Some(Value::Array(items)) => items,
        Some(_) => return Err(ArgError::expected("plan", "an array")),
        None => return Err(ArgError::Required("plan".to_string())),
    };
    let mut next = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let field = |key: &str| -> Result<Option<String>, ArgError> {
            match item.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(ArgError::expected(format!("plan[{i}].{key}"), "a string")),
            }
        };
        if !item.is_object() {
            return Err(ArgError::expected(format!("plan[{i}]"), "an object"));
        }
        let required = |key: &str| -> Result<String, ArgError> {
            field(key)?
                .filter(|s| !s.is_empty())
                .ok_or_else(|| ArgError::Required(format!("plan[{i}].{key}")))
        };
        let status = required("status")?;
        if !STATUSES.contains(&status.as_str()) {
            return Err(ArgError::expected(
                format!("plan[{i}].status"),
                "pending, in_progress, completed or failed",
            ));
        }
        next.push(PlanItem {
            id: required("id")?,
            content: required("content")?,
            status,
            notes: field("notes")?,
        });
    }
    *plan = next;
    Ok(Outcome::ok(render(plan)))
}

fn render(plan: &[PlanItem]) -> String {
    if plan.is_empty() {
        return "Plan is currently empty.".to_string();
    }
    let mut out = String::from("Current Plan:");
    for (i, item) in plan.iter().enumerate() {
        let mark = match item.status.as_str() {
            "in_progress" => "◉",
            "completed" => "✓",
            "failed" => "✕",
            _ => "○",
        };
        out.push_str(&format!("\n{}. {mark} [{}] {}", i + 1, item.status, item.content));
        if let Some(notes) = &item.notes {
            out.push_str(&format!("\n     Notes: {notes}"));
        }
    }
    out
}

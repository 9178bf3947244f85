//! The redaction corpus's secrets, shared by the unit tests (`src/redact/tests.rs`) and the
//! end-to-end tests through `#[path]`. They are built when the tests run, so no literal
//! secret-shaped string is stored in the repository for scanners to trip on.

/// Token-shape prefixes and the fewest characters that must follow.
const SHAPES: &[(&str, usize)] = &[
    ("sk-", 20),
    ("sk-proj-", 20),
    ("sk-ant-api03-", 20),
    ("github_pat_", 20),
    ("ghp_", 20),
    ("gho_", 20),
    ("ghs_", 20),
    ("glpat-", 20),
    ("AIza", 20),
    ("xoxb-", 20),
    ("xoxp-", 20),
    ("sk_live_", 16),
    ("npm_", 30),
    ("hf_", 30),
];

/// Every shape at its minimum length and 27 characters longer, then an AWS key id (AWS's
/// documented example), a second one, a minimal JWT and a longer one.
pub fn shaped_secrets() -> Vec<String> {
    let body = |n: usize| -> String {
        "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF".chars().cycle().take(n).collect()
    };
    let mut out = Vec::new();
    for (prefix, min) in SHAPES {
        out.push(format!("{prefix}{}", body(*min)));
        out.push(format!("{prefix}{}", body(min + 27)));
    }
    out.push("AKIAIOSFODNN7EXAMPLE".to_string());
    out.push("ASIAY34FZKBOKMUTVV7A".to_string());
    out.push("eyJhbGciOiJ.eyJzdWIi.c2lnbmF0".to_string());
    out.push(
        "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2V4YW1wbGUuY29tIiwic3ViIjoiMTIzIn0.c2lnbmF0dXJlLWJ5dGVzLWhlcmUtYW5kLW1vcmU"
            .to_string(),
    );
    out
}

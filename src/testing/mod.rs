//! What only the unit tests use: shared helpers (`kit`), the deterministic fuzzer (`fuzz`),
//! and the regex and glob engines checked against Python's answers (`differential`).

pub mod differential;
pub mod fuzz;
pub mod kit;

//! One `zero exec`, from its plan to its last line: the plan (`plan`), the execution
//! (`exec`), the agent loop (`agent`), live mode (`live`), and the endings from outside the
//! loop (`ending`: interrupts and panics).

pub mod agent;
pub mod ending;
pub mod engine;
pub mod exec;
pub mod instructions;
pub mod limits;
pub mod live;
pub mod open;
pub mod plan;
pub mod record;
pub mod structured;

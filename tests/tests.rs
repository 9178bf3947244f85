//! End-to-end tests: the real `zero` binary against a loopback mock provider.

mod mock;
mod schema;
mod util;

mod cli;
mod faults;
mod inputs;
mod signals;
mod stream;

//! The stream-json protocol: the events zero writes (`events`), the input lines it reads
//! (`input`, with the images they carry, `images`), and the JSON Schema it prints of both
//! (`schema`).

pub mod events;
pub mod images;
pub mod input;
pub mod schema;

//! The profiler: instrumented builds of the user's C that record loop counts, inbound
//! values and loop-carried dependences (`warpwise profile`, `warpwise cc`), the profile file,
//! and applying it to `analyze`'s reports.

pub mod apply;
pub mod driver;
pub mod error;
pub mod instrument;
pub mod model;
pub mod yaml_guard;
pub mod yaml_out;

pub use error::{CompileError, DriverError, ParseError, ProfileError};
pub use instrument::{instrument, instrument_with, Instrumented, LoopSelection, Tracking};
pub use model::{read_profile, Profile};

//! The API's vocabulary, shared by the services and the controller: the one error table,
//! conversions between messages and the twin's types, joint units, and the tick's frames.

pub mod convert;
pub mod deadline;
pub mod status;
pub mod tick;
pub mod units;

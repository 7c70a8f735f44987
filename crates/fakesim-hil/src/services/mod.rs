//! The gRPC services: robot, session, hardware and preview, each translating requests into the
//! controller's motions or reads of the shared state.

mod arms;
pub mod hardware;
mod period;
pub mod preview;
pub mod robot;
pub mod session;

#[cfg(test)]
mod draw_tests;
#[cfg(test)]
mod dynamics_tests;

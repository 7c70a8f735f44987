//! The end-to-end suites, one module per subject, linked into one test binary: each binary
//! links the whole daemon (live view included), so one instead of two dozen saves gigabytes
//! of disk and most of the link time. `cargo test -p fakesim-e2e --test e2e pair::` runs one
//! subject.
mod access;
mod chunk;
mod clock;
mod determinism;
mod dynamics;
mod field;
mod guard;
mod handover;
mod hil;
mod hil_clock;
mod hostile;
mod lease;
mod lease_table;
mod mapping_units;
mod pair;
mod pair_moves;
mod preview;
mod preview_gate;
mod real_arms;
mod robot_calls_in_episode;
mod robot_refusals;
mod robot_verbs;
mod scripted_hand;
mod server;
mod session;
mod silence;
mod so100;
mod tick_images;
mod trace;
mod virtual_bus;

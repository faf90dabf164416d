//! The integration tests, in one binary (one link instead of one per file): each module
//! runs the program or the library from the outside.

mod common;
mod kgp_common;

mod analysis;
mod architecture;
mod check;
mod cli_doc;
mod cluster_doc;
mod containment;
mod docs_run;
mod events;
mod first_hour;
mod kgp;
mod kgp_cli;
mod protocol_doc;
mod ratings;
mod rules;
mod sandbox;
mod settings;
mod solve_cli;
mod solver_pv;
mod sprt_workers;
mod supervisor;
mod tournament;
mod web;

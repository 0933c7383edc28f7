//! The runner's integration tests, one module per concern, in one test
//! binary: each binary of its own would link and LTO-optimise the shared
//! dependencies again (release profile, one codegen unit).

mod common;

mod adapter_shared;
mod async_adapters;
mod bad_input;
mod build_times;
mod bus_faults;
mod canon_export;
mod cleanup;
mod closed_stdout;
mod cold_start_messages;
mod compare;
mod coverage;
mod critcmp_export;
mod damaged_records;
mod doc_links;
mod faults;
mod fd_passing;
mod floor_notes;
mod fuzz_input;
mod history;
mod host_build;
mod hostile_input;
mod html_report;
mod idle_connections;
mod in_flight;
mod instructions;
mod interop;
mod ipc_costs;
mod ipc_run;
mod list_catalogue;
mod matrix_smoke;
mod matrix_validation;
mod opt_in_ops;
mod own_lockfiles;
mod patch_rows;
mod program_adapters;
mod program_parsers;
mod props;
mod provenance;
mod raw_samples;
mod real_clients;
mod report_snapshots;
mod resume;
mod roles;
mod rounds;
mod scaled_cells;
mod sdbus_row;
mod shared_build;
mod spread;
mod unavailable_in;
mod writers;

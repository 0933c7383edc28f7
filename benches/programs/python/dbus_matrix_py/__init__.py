"""The dbus-matrix adapter contract for Python adapters.

The contract is defined in the harness (benches/harness/src/contract.rs,
ipc.rs, payload.rs, digest.rs); this package speaks it for adapters that are
programs, not Cargo packages. `canon` holds the canonical values, the digest
and the service; `contract` the commands, exit codes and protocol words;
`timing` the raw samples a `bench` writes.
"""

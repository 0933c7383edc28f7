//! The workspace-hack crate of cargo-hakari: no code, only dependencies.
//! Every package of the workspace but harness and lockfile depends on it, so
//! that a package built alone (`cargo build -p adapter-zbus-5`, as the flake
//! and scripts/build.sh build the adapters) resolves each dependency with the
//! same features as the whole workspace and reuses the shared dependency
//! build (runner/tests/shared_build.rs; docs/nix.md, "The build graph").
//! Regenerate with `cargo hakari generate && cargo hakari manage-deps`.

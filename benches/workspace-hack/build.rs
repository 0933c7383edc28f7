//! cargo-hakari's build script: present so that cargo considers the
//! workspace-hack's build dependencies (the features the workspace's build
//! scripts and proc macros need).
fn main() {}

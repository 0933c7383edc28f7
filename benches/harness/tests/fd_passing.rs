//! `call/fd-passing/<size>`: the scenario ids, the client's memfd, and the
//! server's read, which must see the whole content whatever the shared file
//! offset (a server reading from the offset the client left gets nothing).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::fd::AsFd;

use harness::ipc::fd_passing::{self, FD_INTERFACE, FD_SIZES, READ_FD};
use harness::ipc::{IpcOp, Method, INTERFACE};
use harness::scenario;

#[test]
fn every_size_is_an_opt_in_scenario_with_its_floor() {
    assert_eq!(FD_SIZES, [4096, 1048576]);
    for n in FD_SIZES {
        let id = format!("call/fd-passing/{n}");
        let s = scenario::find(&id).unwrap_or_else(|| panic!("{id} is not a scenario"));
        assert_eq!(s.ipc_op(), Some(IpcOp::FdPassing(n)));
        assert_eq!(
            scenario::floor_of(IpcOp::FdPassing(n)),
            Some(format!("baseline/raw-socket/{n}"))
        );
        assert!(IpcOp::FdPassing(n).opt_in());
        assert_eq!(harness::ipc::needs_bus(IpcOp::FdPassing(n)), None);
    }
    assert_eq!(
        harness::ipc::not_implemented(IpcOp::FdPassing(4096)),
        "this adapter does not implement call/fd-passing yet"
    );
    // ReadFd is not on the benchmark interface: no server's table changes.
    assert_ne!(FD_INTERFACE, INTERFACE);
    assert!(harness::ipc::interface_methods().iter().all(|(m, _, _)| *m != READ_FD));
    assert!(!Method::ALL.iter().any(|m| m.member() == READ_FD));
}

#[test]
fn the_server_reads_the_whole_memfd_from_offset_zero() {
    for n in FD_SIZES {
        let fd = fd_passing::payload_memfd(n).unwrap();
        let want = IpcOp::FdPassing(n).expected_digest("");
        assert_eq!(fd_passing::fd_digest(&fd_passing::fd_payload(n)), want);
        // Twice: the read leaves nothing behind that changes the next one.
        for _ in 0..2 {
            assert_eq!(fd_passing::read_fd_digest(fd.as_fd()).unwrap(), want, "{n}");
        }
        // The fd is still the caller's, open, at the offset the client left (the end).
        let mut file = File::from(fd);
        assert_eq!(file.stream_position().unwrap(), n as u64);
        // The fault the pread guards against: reading from the shared offset gets nothing.
        let mut from_offset = Vec::new();
        file.read_to_end(&mut from_offset).unwrap();
        assert_ne!(fd_passing::fd_digest(&from_offset), want);
        // Wrong or short content changes the digest.
        file.seek(SeekFrom::Start(0)).unwrap();
        let mut all = Vec::new();
        file.read_to_end(&mut all).unwrap();
        assert_eq!(all, fd_passing::fd_payload(n));
        assert_ne!(fd_passing::fd_digest(&all[..n - 1]), want);
        all[n / 2] ^= 1;
        assert_ne!(fd_passing::fd_digest(&all), want);
    }
    assert_ne!(
        IpcOp::FdPassing(4096).expected_digest(""),
        IpcOp::FdPassing(1048576).expected_digest("")
    );
}

#[test]
fn a_negative_fd_is_an_error_not_a_panic() {
    assert!(fd_passing::read_raw_fd_digest(-1).is_err());
}

#[test]
fn a_file_over_the_read_limit_is_an_error_and_never_read() {
    let fd = fd_passing::payload_memfd(16).unwrap();
    let file = File::from(fd);
    // Sparse: a terabyte a client could pass for nothing.
    file.set_len(1 << 40).unwrap();
    let e = fd_passing::read_fd_digest(file.as_fd()).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
    assert!(e.to_string().contains("1099511627776 bytes"), "{e}");
    // The largest scenario size itself is read.
    file.set_len(fd_passing::FD_READ_LIMIT as u64).unwrap();
    assert!(fd_passing::read_fd_digest(file.as_fd()).is_ok());
}

//! Children that die with the process that started them, even when it is
//! SIGKILLed and cannot clean up: `PR_SET_PDEATHSIG(SIGKILL)` in the child.
//!
//! The kernel sends the signal when the *thread* that forked the child ends,
//! so spawn only from threads that outlive the child (the runner spawns from
//! its main thread). The setting is not inherited across fork: a child that
//! starts processes of its own must tie them in turn (the dbus-broker chain in
//! `launch.rs` does, with `setpriv --pdeathsig`), or they must exec.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// Makes the process `cmd` starts receive SIGKILL when this one dies.
pub fn die_with_parent(cmd: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: prctl, getppid and raise are async-signal-safe and touch no
    // memory of the parent.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before the prctl: nobody is left to kill us then.
            if libc::getppid() != parent {
                libc::raise(libc::SIGKILL);
            }
            Ok(())
        });
    }
}

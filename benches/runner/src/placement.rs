//! CPU placement of the processes of an IPC cell: `--pin client=0,server=1,bus=1`
//! pins the benchmarking client, the server (and subscribers) and the bus
//! daemon to given cores. Unpinned by default; recorded in the results.

use std::os::unix::process::CommandExt;
use std::process::Command;

use anyhow::{bail, Context, Result};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    pub client: Option<usize>,
    pub server: Option<usize>,
    pub bus: Option<usize>,
}

impl Placement {
    pub fn parse(spec: &str) -> Result<Placement> {
        let mut p = Placement::default();
        if spec == "none" {
            return Ok(p);
        }
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        for part in spec.split(',') {
            let (role, cpu) = part
                .split_once('=')
                .with_context(|| format!("expected ROLE=CPU in {part:?}"))?;
            let slot = match role.trim() {
                "client" => &mut p.client,
                "server" => &mut p.server,
                "bus" => &mut p.bus,
                other => bail!("unknown role {other:?}: use client, server and bus"),
            };
            if slot.is_some() {
                bail!("role {} is given twice", role.trim());
            }
            let cpu: usize = cpu
                .trim()
                .parse()
                .with_context(|| format!("{cpu:?} is not a CPU number"))?;
            if cpu >= cpus {
                bail!("CPU {cpu} does not exist here ({cpus} CPUs: 0..{})", cpus - 1);
            }
            *slot = Some(cpu);
        }
        Ok(p)
    }

    /// How the results file records it.
    pub fn describe(&self) -> String {
        let role = |name: &str, cpu: Option<usize>| cpu.map(|c| format!("{name}={c}"));
        let parts: Vec<String> = [
            role("client", self.client),
            role("server", self.server),
            role("bus", self.bus),
        ]
        .into_iter()
        .flatten()
        .collect();
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(",")
        }
    }
}

fn cpu_set(cpu: usize) -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET only write inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        set
    }
}

/// Makes the child started by `cmd` run on `cpu` only.
pub fn pin_command(cmd: &mut Command, cpu: Option<usize>) {
    if let Some(cpu) = cpu {
        let set = cpu_set(cpu);
        // SAFETY: sched_setaffinity is async-signal-safe; it runs in the child before exec.
        unsafe {
            cmd.pre_exec(move || {
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

/// Pins every thread of a running process (the bus daemon) to `cpu`.
pub fn pin_process(pid: u32, cpu: usize) -> Result<()> {
    let set = cpu_set(cpu);
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).with_context(|| format!("process {pid} is gone"))?;
    for task in tasks.flatten() {
        let tid: i32 = task.file_name().to_string_lossy().parse().unwrap_or(0);
        // SAFETY: plain syscall on a thread id read from /proc.
        if unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
            bail!("pinning thread {tid} of {pid}: {}", std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_describes() {
        let p = Placement::parse("client=0,bus=0").unwrap();
        assert_eq!(
            p,
            Placement {
                client: Some(0),
                server: None,
                bus: Some(0)
            }
        );
        assert_eq!(p.describe(), "client=0,bus=0");
        assert_eq!(Placement::parse("none").unwrap().describe(), "none");
        assert!(Placement::parse("client=9999").is_err());
        assert!(Placement::parse("gpu=0").is_err());
        assert!(Placement::parse("client").is_err());
        assert!(Placement::parse("client=0,client=0").is_err());
        assert!(Placement::parse("server=0,bus=0,server=0").is_err());
    }

    #[test]
    fn a_pinned_child_runs_on_its_cpu() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "grep Cpus_allowed_list /proc/self/status"]);
        pin_command(&mut cmd, Some(0));
        let out = String::from_utf8(cmd.output().unwrap().stdout).unwrap();
        assert!(out.trim().ends_with("\t0"), "{out}");
    }
}

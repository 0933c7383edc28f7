//! CPU placement of the processes of an IPC cell, a declared dimension of
//! every IPC cell: `one-cpu` (the profiles' default) runs client, server
//! (and subscribers) and bus daemon of a cell on one CPU, so that a cell
//! measures the work of the library and the bus rather than cross-CPU
//! wake-ups (~30 µs each on a VM: docs/placement.md has the measured
//! comparison); `none` leaves them to the scheduler; `client=0,server=1,bus=1`
//! pins each to a given CPU. The run records the policy, each cell the CPUs.

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
        // The CPUs this process may use (taskset, a container), not their count.
        let allowed = allowed_cpus();
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
            if let Some(allowed) = allowed.as_deref().filter(|a| !a.contains(&cpu)) {
                bail!(
                    "CPU {cpu} is not one this process may run on (allowed: {})",
                    describe_cpus(allowed)
                );
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

/// How a run places its IPC cells (`run --pin`, a profile's `placement`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlacementPolicy {
    /// `none`: the scheduler places every process.
    Unpinned,
    /// `one-cpu`: every process of a cell on one CPU; worker `i` of a run
    /// with `jobs` workers uses CPU `i mod CPUs`, so workers do not share one.
    OneCpu,
    /// `client=C,server=S,bus=B`: each role on its given CPU (one worker only).
    Fixed(Placement),
}

pub const ONE_CPU: &str = "one-cpu";

impl PlacementPolicy {
    pub fn parse(spec: &str) -> Result<PlacementPolicy> {
        Ok(match spec.trim() {
            "none" => PlacementPolicy::Unpinned,
            ONE_CPU => PlacementPolicy::OneCpu,
            fixed => PlacementPolicy::Fixed(
                Placement::parse(fixed).context("use none, one-cpu, or ROLE=CPU,… (roles client, server, bus)")?,
            ),
        })
    }

    /// How the results file records it (the run's and the plan's `placement`).
    pub fn describe(&self) -> String {
        match self {
            PlacementPolicy::Unpinned => "none".into(),
            PlacementPolicy::OneCpu => ONE_CPU.into(),
            PlacementPolicy::Fixed(p) => p.describe(),
        }
    }

    /// Whether a run of `jobs` workers can keep this placement: fixed CPUs
    /// would put two workers' cells on the same CPUs at once.
    pub fn allows_jobs(&self, jobs: u32) -> bool {
        jobs <= 1 || !matches!(self, PlacementPolicy::Fixed(_))
    }

    /// The CPUs the cells of worker `worker` run on.
    pub fn for_worker(&self, worker: usize) -> Placement {
        match self {
            PlacementPolicy::Unpinned => Placement::default(),
            PlacementPolicy::Fixed(p) => *p,
            PlacementPolicy::OneCpu => {
                let cpu = allowed_cpus().map_or(0, |cpus| cpus[worker % cpus.len()]);
                Placement {
                    client: Some(cpu),
                    server: Some(cpu),
                    bus: Some(cpu),
                }
            }
        }
    }
}

/// CPUs as `Cpus_allowed_list` writes them: `0-3,8`.
fn describe_cpus(cpus: &[usize]) -> String {
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for &c in cpus {
        match ranges.last_mut() {
            Some((_, end)) if *end + 1 == c => *end = c,
            _ => ranges.push((c, c)),
        }
    }
    let one = |&(a, b): &(usize, usize)| if a == b { a.to_string() } else { format!("{a}-{b}") };
    ranges.iter().map(one).collect::<Vec<_>>().join(",")
}

/// The CPUs this process may run on (a container or `taskset` may allow
/// fewer than the machine has), in order.
fn allowed_cpus() -> Option<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes inside it.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        set
    };
    // SAFETY: CPU_ISSET reads inside the set.
    let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect();
    (!cpus.is_empty()).then_some(cpus)
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
    fn policies_parse_describe_and_place_workers() {
        assert_eq!(PlacementPolicy::parse("none").unwrap(), PlacementPolicy::Unpinned);
        assert_eq!(PlacementPolicy::parse("one-cpu").unwrap().describe(), "one-cpu");
        let fixed = PlacementPolicy::parse("client=0,bus=0").unwrap();
        assert_eq!(fixed.describe(), "client=0,bus=0");
        assert!(PlacementPolicy::parse("two-cpus").is_err());
        assert!(!fixed.allows_jobs(2) && fixed.allows_jobs(1));
        assert!(PlacementPolicy::OneCpu.allows_jobs(2) && PlacementPolicy::Unpinned.allows_jobs(2));
        assert_eq!(PlacementPolicy::Unpinned.for_worker(1), Placement::default());
        let cpus = allowed_cpus().unwrap();
        for worker in 0..3 {
            let p = PlacementPolicy::OneCpu.for_worker(worker);
            let cpu = cpus[worker % cpus.len()];
            assert_eq!((p.client, p.server, p.bus), (Some(cpu), Some(cpu), Some(cpu)));
        }
        if cpus.len() > 1 {
            assert_ne!(
                PlacementPolicy::OneCpu.for_worker(0),
                PlacementPolicy::OneCpu.for_worker(1),
                "two workers on one CPU"
            );
        }
    }

    #[test]
    fn cpu_lists_are_written_as_the_kernel_writes_them() {
        assert_eq!(describe_cpus(&[0, 1, 2, 3, 8]), "0-3,8");
        assert_eq!(describe_cpus(&[1]), "1");
        assert_eq!(describe_cpus(&[0, 2, 3]), "0,2-3");
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

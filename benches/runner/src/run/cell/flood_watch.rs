//! What a flood cell did to the bus (issue 31, items 1 and 2: `signal/burst/<n>`
//! and `property/changed-storm/<n>`, [`harness::ipc::storm::is_flood`]): the bus
//! daemon's peak resident memory over the cell's first round (its `VmHWM`
//! reset through `/proc/PID/clear_refs` when the round starts, read when it
//! ends, costs window included), whether the daemon logged a disconnection
//! meanwhile (its lines quoted, as a failed bus cell quotes them), and the
//! client's CPU per update where costs were counted. Each is a note on the
//! measurement; the subscriber's own peak memory is the harness's note (read
//! by the client process before it exits).

use harness::results::Measurement;

use crate::measure::costs;
use crate::run::bus_session::BusSession;

/// The state of the bus when a flood cell's round began.
pub(super) struct FloodWatch {
    /// The daemon's log length then ([`BusSession::log_len`]).
    mark: usize,
    /// The daemon's processes, and whether each one's `VmHWM` was reset.
    pids: Vec<u32>,
    reset: bool,
}

/// Resets the daemon's peak memory (`echo 5 > /proc/PID/clear_refs`, Linux
/// 4.0+, for a process of the same user) and marks its log; `None` on a bus
/// the run did not start (no daemon process or log of its own to read).
pub(super) fn start(session: &BusSession) -> Option<FloodWatch> {
    let pids = session.bus_pids();
    if pids.is_empty() {
        return None;
    }
    let reset = pids
        .iter()
        .all(|p| std::fs::write(format!("/proc/{p}/clear_refs"), "5").is_ok());
    Some(FloodWatch {
        mark: session.log_len(),
        pids,
        reset,
    })
}

/// The notes of a finished flood round of `n` signals (`None` for a size the id does not carry).
pub(super) fn finish(w: &FloodWatch, session: &BusSession, n: Option<usize>, m: &mut Measurement) {
    m.verification_notes.extend(notes(w, session, n, m));
}

fn notes(w: &FloodWatch, session: &BusSession, n: Option<usize>, m: &Measurement) -> Vec<String> {
    let mut notes = Vec::new();
    let peak: Option<u64> = w.pids.iter().map(|&p| costs::read_memory(p).map(|m| m.hwm_kib)).sum();
    notes.push(match (peak, w.reset) {
        (Some(k), true) => format!("the bus daemon's peak resident memory over the cell (VmHWM, reset at its start): {k} kB"),
        (Some(k), false) => format!(
            "the bus daemon's peak resident memory since it started (VmHWM; /proc/PID/clear_refs refused the reset): {k} kB"
        ),
        (None, _) => "the bus daemon's peak resident memory could not be read (its /proc/PID/status is gone)".into(),
    });
    notes.push(disconnect_note(&session.log_since(w.mark)));
    let per_op = m
        .costs
        .as_ref()
        .and_then(|c| c.process("client"))
        .map(|p| p.cpu_ns_per_op);
    if let Some(rate) = n.and_then(|n| carried_rate_note(n, m.wall.median_ns.point)) {
        notes.push(rate);
    }
    if let (Some(cpu), Some(n)) = (per_op, n.filter(|&n| n > 0)) {
        notes.push(format!(
            "the client process's CPU per signal of the flood: {:.2} µs (emitter and subscriber together: its CPU per operation / {n})",
            cpu / n as f64 / 1e3
        ));
    }
    notes
}

/// The rate the library carried (issue 31, item 2: "the highest rate a library
/// sustains"): the emitter sends the n signals back to back and the operation
/// ends when the subscriber holds every one, verified, so n over the median
/// operation is the rate from emitter to subscriber at which nothing was lost.
fn carried_rate_note(n: usize, median_ns: f64) -> Option<String> {
    (n > 0 && median_ns > 0.0).then(|| {
        format!(
            "the rate carried from emitter to subscriber, nothing lost: {:.0} signals/s ({n} sent back to back over the median operation)",
            n as f64 * 1e9 / median_ns
        )
    })
}

/// Whether the daemon said it disconnected anyone, in its own words.
fn disconnect_note(said: &str) -> String {
    if said.is_empty() {
        "the bus disconnected no one: the daemon logged nothing during the cell, and the client's connections stayed up"
            .into()
    } else if said.to_lowercase().contains("disconnect") {
        format!("the bus disconnected a peer during the cell; the daemon logged: {said}")
    } else {
        format!("the bus logged no disconnection during the cell; it logged: {said}")
    }
}

#[cfg(test)]
mod tests {
    use super::{carried_rate_note, disconnect_note};

    #[test]
    fn the_carried_rate_is_the_signals_over_the_median_operation() {
        let note = carried_rate_note(1000, 25e6).unwrap();
        assert!(note.contains(": 40000 signals/s (1000 sent"), "{note}");
        assert_eq!(carried_rate_note(0, 25e6), None);
        assert_eq!(carried_rate_note(100, 0.0), None);
    }

    #[test]
    fn the_daemons_words_decide_what_the_note_says() {
        assert!(disconnect_note("").starts_with("the bus disconnected no one"));
        let busd = "Disconnecting `:busd.2`, as it failed to receive a message within 100ms";
        assert!(disconnect_note(busd).starts_with("the bus disconnected a peer"));
        assert!(disconnect_note(busd).ends_with(busd));
        let broker = "Peer :1.5 is being disconnected as it does not have the resources to receive a reply or unicast signal it expects.";
        assert!(disconnect_note(broker).contains("disconnected a peer"));
        assert!(disconnect_note("Failed to set fd limit").starts_with("the bus logged no disconnection"));
    }
}

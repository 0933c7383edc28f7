//! The raw-sample form of a `bench` result, for adapters that cannot run
//! criterion (every adapter that is not Rust): samples of (iterations,
//! elapsed ns), no statistics. The runner turns them into a [`Measurement`]
//! with the one method of [`WallTime::from_raw_samples`].

use serde::{Deserialize, Serialize};

use crate::results::{AllocCost, Estimate, Measurement, WallTime};
use crate::stats;

/// One sample: `iterations` operations, back to back, took `elapsed_ns`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RawSample {
    pub iterations: u64,
    pub elapsed_ns: f64,
}

/// What a non-Rust adapter writes to `bench --result FILE`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawMeasurement {
    pub raw_samples: Vec<RawSample>,
    /// Bytes processed per operation (the wire message length).
    pub throughput_bytes: u64,
    /// Allowed differences seen when verifying before timing.
    pub verification_notes: Vec<String>,
    /// Heap use per operation, when the adapter's language can count it.
    #[serde(default)]
    pub alloc: Option<AllocCost>,
    /// Why `alloc` is absent: required when it is (no silent null).
    #[serde(default)]
    pub alloc_unavailable: Option<String>,
    /// As [`Measurement::cut`]: one sample of one operation over the cell budget.
    #[serde(default)]
    pub cut: Option<String>,
}

/// A raw-sample result that cannot be turned into figures.
#[derive(Debug, thiserror::Error)]
pub enum RawSampleError {
    #[error("no samples")]
    Empty,
    #[error("sample {index}: {iterations} iterations in {elapsed_ns} ns is not a time (iterations must be at least 1, the time finite and not negative)")]
    Invalid {
        index: usize,
        iterations: u64,
        elapsed_ns: f64,
    },
    #[error("no allocation counts and no `alloc_unavailable` saying why")]
    SilentAlloc,
    #[error("the result is neither a measurement nor raw samples: {0}")]
    Json(#[from] serde_json::Error),
}

impl WallTime {
    /// Figures from raw samples, by criterion's own method: the time per
    /// iteration of each sample (elapsed / iterations); median and mean of
    /// those, the sample standard deviation, and 95% intervals of median and
    /// mean by a percentile bootstrap with `resamples` resamples and a fixed
    /// seed ([`stats::bootstrap_interval`]).
    pub fn from_raw_samples(samples: &[RawSample], resamples: usize) -> Result<WallTime, RawSampleError> {
        if samples.is_empty() {
            return Err(RawSampleError::Empty);
        }
        if let Some((index, s)) = samples
            .iter()
            .enumerate()
            .find(|(_, s)| s.iterations == 0 || !s.elapsed_ns.is_finite() || s.elapsed_ns < 0.0)
        {
            return Err(RawSampleError::Invalid {
                index,
                iterations: s.iterations,
                elapsed_ns: s.elapsed_ns,
            });
        }
        let per_iteration: Vec<f64> = samples.iter().map(|s| s.elapsed_ns / s.iterations as f64).collect();
        let (mean, sd) = stats::mean_and_sd(&per_iteration);
        let estimate = |point: f64, (lower, upper): (f64, f64)| Estimate { point, lower, upper };
        Ok(WallTime {
            median_ns: estimate(
                stats::median(&per_iteration),
                stats::bootstrap_interval(&per_iteration, resamples, stats::median_in_place),
            ),
            mean_ns: estimate(mean, stats::bootstrap_interval(&per_iteration, resamples, stats::mean)),
            std_dev_ns: sd,
            samples: samples.len(),
            iterations: samples.iter().map(|s| s.iterations).sum(),
            sample_ns: per_iteration,
            round_medians_ns: Vec::new(),
        })
    }
}

/// Reading what `bench --result FILE` wrote, whichever form.
pub struct BenchResult;

impl BenchResult {
    /// A Rust adapter's [`Measurement`] as it is; raw samples (an object with
    /// `raw_samples`) turned into one with [`WallTime::from_raw_samples`].
    pub fn from_json(bytes: &[u8], resamples: usize) -> Result<Measurement, RawSampleError> {
        let value: serde_json::Value = serde_json::from_slice(bytes)?;
        if value.get("raw_samples").is_none() {
            return Ok(serde_json::from_value(value)?);
        }
        let raw: RawMeasurement = serde_json::from_value(value)?;
        if raw.alloc.is_none() && raw.alloc_unavailable.is_none() {
            return Err(RawSampleError::SilentAlloc);
        }
        Ok(Measurement {
            wall: WallTime::from_raw_samples(&raw.raw_samples, resamples)?,
            throughput_bytes: raw.throughput_bytes,
            alloc: raw.alloc,
            alloc_unavailable: raw.alloc_unavailable,
            instructions_per_op: None,
            verification_notes: raw.verification_notes,
            floor_ratio: None,
            costs: None,
            ipc_instructions: None,
            cut: raw.cut,
            placement: None,
            connection_memory: None,
        })
    }
}

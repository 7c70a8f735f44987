//! What a finished run reports: the policy-validation report and `summary.json` around it.

use super::results::TaskInfo;
use super::run::{Run, Tally};
use crate::tasks;
use fakesim_twin::Look;
use fakesim_twin::Watch;
use fakesim_twin::joints::Joint;
use serde::Serialize;
use std::collections::BTreeMap;

/// The policy-validation part of `summary.json`: success, stop reasons, safety refusals,
/// joint-limit hits and the minimum clearance of the tool over the table.
#[derive(Debug, Serialize)]
pub(super) struct Validation<'a> {
    success: bool,
    stop_reasons: &'a Tally,
    safety_refusals: u64,
    joint_limit_hits: BTreeMap<&'static str, u64>,
    joint_limit_hits_total: u64,
    /// Null before the twin took any sample.
    min_table_clearance_m: Option<f64>,
    samples: u64,
}

impl<'a> Validation<'a> {
    /// The report of `run`, judged `success`, as the twin watched it.
    pub(super) fn of(success: bool, run: &'a Run, watch: &Watch) -> Self {
        Validation {
            success,
            stop_reasons: &run.calls,
            safety_refusals: run.safety_events,
            joint_limit_hits: Joint::ALL
                .iter()
                .zip(watch.joint_limit_hits)
                .map(|(joint, hits)| (joint.label(), hits))
                .collect(),
            joint_limit_hits_total: watch.joint_limit_hits.iter().sum(),
            min_table_clearance_m: watch.lowest_tool_z.map(|z| z - tasks::TABLE_Z),
            samples: watch.samples,
        }
    }
}

/// `summary.json`.
#[derive(Debug, Serialize)]
pub(super) struct Summary<'a> {
    run: &'a str,
    /// `stopped` or `interrupted`.
    status: &'a str,
    task: TaskInfo,
    steps: u64,
    /// Ticks, or null for no budget.
    max_steps: Option<u64>,
    calls: Calls<'a>,
    duration_s: f64,
    success: bool,
    validation: &'a Validation<'a>,
    /// The seed's look (lights, colours, camera poses, backdrop brightness), when the twin
    /// has variations.
    #[serde(skip_serializing_if = "Option::is_none")]
    variation: Option<&'a Look>,
}

/// The call counts of `summary.json`.
#[derive(Debug, Serialize)]
struct Calls<'a> {
    total: u64,
    by_stop_reason: &'a Tally,
}

impl<'a> Summary<'a> {
    /// The summary of `run`, ended as `status`, with its `validation` report.
    pub(super) fn of(run: &'a Run, status: &'a str, validation: &'a Validation<'a>) -> Self {
        Summary {
            run: &run.id,
            status,
            task: TaskInfo::new(&run.task_ref, run.task),
            steps: run.step,
            max_steps: run.budget.ticks(),
            calls: Calls {
                total: run.total_calls(),
                by_stop_reason: &run.calls,
            },
            duration_s: run.started.elapsed().as_secs_f64(),
            success: validation.success,
            validation,
            variation: run.look.as_ref(),
        }
    }
}

//! The preview thread: previews asked for through [`crate::TwinHandle::preview`] run here, on
//! scratch data of its own, so a long one never holds the physics thread.

use super::parts::PartMap;
use super::{PreviewJob, PreviewReport, Scratch};
use crate::error::TwinError;
use crate::handle::guarded;
use crate::lifeline::Lifeline;
use crate::worker::{Jobs, Worker};
use fakesim_arm::ArmSpec;
use mujoco_rs::prelude::*;
use std::sync::Arc;
use tokio::sync::oneshot;

/// Where a preview's report goes.
type Reply = oneshot::Sender<Result<PreviewReport, TwinError>>;

/// Sends previews to the preview thread; [`PreviewQueue::stop`] ends it.
pub(crate) struct PreviewQueue {
    worker: Worker<(PreviewJob, Reply)>,
}

impl PreviewQueue {
    /// Starts the preview thread on `model`, a model of `arms`; the thread holds `lifeline`.
    pub fn spawn(model: &Arc<MjModel>, arms: &[&'static ArmSpec], lifeline: Lifeline) -> Result<Self, TwinError> {
        let parts = PartMap::each_arm(model, arms)?;
        let model = model.clone();
        let worker = Worker::spawn("preview", lifeline, move |jobs: Jobs<(PreviewJob, Reply)>| {
            let mut scratch = Scratch::new(&model, parts);
            for (job, reply) in jobs {
                let report = guarded("preview", || job.run(&mut scratch)).and_then(|report| report);
                // The caller may have given up waiting; nothing to do then.
                let _ = reply.send(report);
            }
        })
        .map_err(|e| TwinError::Scene(format!("cannot start the preview thread: {e}")))?;
        Ok(PreviewQueue { worker })
    }

    /// Ends the preview thread after the previews already queued and waits for it.
    pub fn stop(&self) {
        self.worker.stop();
    }

    /// Runs one preview and returns its report.
    pub async fn run(&self, job: PreviewJob) -> Result<PreviewReport, TwinError> {
        let (reply, report) = oneshot::channel();
        self.worker.send((job, reply))?;
        report.await.map_err(|_| TwinError::Stopped)?
    }
}

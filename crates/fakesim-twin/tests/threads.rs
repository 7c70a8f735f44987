//! The twin's threads: a panicking job is answered as a fault and survived, shutdown joins
//! both threads, after which every call answers `Stopped`, and the end of a thread is reported
//! to whoever watches for it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_twin::{TwinConfig, TwinError, TwinHandle};

#[tokio::test(flavor = "multi_thread")]
async fn a_panicking_job_is_answered_as_a_fault_reported_and_survived() {
    let twin = TwinHandle::spawn(TwinConfig::default()).unwrap();
    let mut faults = twin.faults();
    let before = twin.with_sim(|sim| sim.time()).await.unwrap();

    let error = twin
        .with_sim(|_| -> f64 { panic!("injected by the test") })
        .await
        .unwrap_err();
    assert_eq!(
        error,
        TwinError::Fault {
            thread: "physics",
            message: "injected by the test".into()
        }
    );
    let fault = faults.recv().await.unwrap();
    assert_eq!(
        (fault.thread, fault.message.as_str()),
        ("physics", "injected by the test")
    );

    let after = twin
        .with_sim(|sim| {
            sim.step(10).unwrap();
            sim.time()
        })
        .await
        .unwrap();
    assert!(after > before, "the physics thread kept serving");
    twin.shutdown();
}

#[tokio::test(flavor = "multi_thread")]
async fn shutdown_joins_the_three_threads_and_later_calls_are_stopped() {
    let twin = TwinHandle::spawn(TwinConfig::default()).unwrap();
    let other = twin.clone();
    let watcher = twin.clone();
    let ended = tokio::spawn(async move { watcher.thread_ended().await });
    // A GL context exists, so the render thread has something to free.
    let rendered = twin.render("agentview", 16, 16, false).await;
    assert!(
        matches!(rendered, Ok(_) | Err(TwinError::RenderUnavailable(_))),
        "{rendered:?}"
    );
    tokio::task::spawn_blocking(move || {
        twin.shutdown();
        twin.shutdown();
    })
    .await
    .unwrap();
    assert_eq!(other.with_sim(|sim| sim.time()).await, Err(TwinError::Stopped));
    assert_eq!(other.render("agentview", 16, 16, false).await, Err(TwinError::Stopped));
    assert_eq!(
        ended.await.unwrap(),
        "preview",
        "the preview thread ends first and is reported"
    );
}

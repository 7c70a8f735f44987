//! Without a usable EGL driver rendering fails with an error that says so, and physics keeps
//! working. The test hides every EGL vendor from libglvnd for this process only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_twin::{TwinConfig, TwinError, TwinHandle};

#[tokio::test]
async fn rendering_without_egl_is_refused_and_physics_goes_on() {
    hide_egl_vendors();
    let twin = TwinHandle::spawn(TwinConfig::default()).unwrap();
    let err = twin.render("agentview", 32, 32, false).await.unwrap_err();
    match &err {
        TwinError::RenderUnavailable(reason) => assert!(reason.contains("EGL"), "{reason}"),
        other => panic!("expected RenderUnavailable, got {other:?}"),
    }
    let again = twin.render("agentview", 32, 32, false).await.unwrap_err();
    assert!(matches!(again, TwinError::RenderUnavailable(_)));
    let time = twin
        .try_with_sim(|sim| sim.step(50).map(|()| sim.time()))
        .await
        .unwrap();
    assert!(time > 0.0, "physics still steps");
}

/// Points libglvnd at no vendor, before anything in this process loads EGL.
fn hide_egl_vendors() {
    #[allow(unsafe_code)]
    // SAFETY: this test binary holds this one test, and no other thread runs or reads the
    // environment yet (the twin's threads start after this call).
    unsafe {
        std::env::set_var("__EGL_VENDOR_LIBRARY_FILENAMES", "/nonexistent/egl_vendor.json");
        std::env::set_var("__EGL_VENDOR_LIBRARY_DIRS", "/nonexistent");
    }
}

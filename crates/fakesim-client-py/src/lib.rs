//! `fakesim_hil._native`: the Python client's hot unary calls on `fakesim_client::Calls`, each
//! blocking its calling thread with the GIL released.

use fakesim_client::{Calls, SetupError, Target, Tls};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::time::Duration;

create_exception!(
    _native,
    CallError,
    PyException,
    "A failed call: args are the gRPC code (int), the message and the grpc-status-details-bin bytes."
);

/// Unary calls to one daemon (`Calls(target, ca_pem=None, cert_pem=None, key_pem=None)`); a
/// target this route cannot dial raises ValueError.
#[pyclass(name = "Calls", frozen, module = "fakesim_hil._native")]
struct PyCalls {
    calls: Calls,
}

#[pymethods]
impl PyCalls {
    #[new]
    #[pyo3(signature = (target, ca_pem=None, cert_pem=None, key_pem=None))]
    fn new(
        target: &str,
        ca_pem: Option<Vec<u8>>,
        cert_pem: Option<Vec<u8>>,
        key_pem: Option<Vec<u8>>,
    ) -> PyResult<Self> {
        let identity = match (cert_pem, key_pem) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            _ => {
                return Err(PyValueError::new_err(
                    "a client certificate needs both its chain and its key",
                ));
            }
        };
        let tls = match (ca_pem, identity) {
            (Some(ca_pem), identity) => Some(Tls { ca_pem, identity }),
            (None, None) => None,
            (None, Some(_)) => return Err(PyValueError::new_err("a client certificate needs TLS: give ca_pem too")),
        };
        let calls = Calls::new(target, tls).map_err(|error: SetupError| PyValueError::new_err(error.to_string()))?;
        Ok(PyCalls { calls })
    }

    /// Runs the call to `path` with a serialized request (`timeout_s` None: no deadline) and
    /// returns the serialized answer; a failure raises `CallError`.
    #[pyo3(signature = (path, request, timeout_s, metadata))]
    fn unary<'py>(
        &self,
        py: Python<'py>,
        path: &str,
        request: &[u8],
        timeout_s: Option<f64>,
        metadata: Vec<(String, String)>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let timeout = timeout_s
            .map(|seconds| Duration::try_from_secs_f64(seconds.max(0.0)))
            .transpose()
            .map_err(|error| PyValueError::new_err(format!("bad timeout: {error}")))?;
        let answer = py.detach(|| self.calls.unary(path, request, timeout, &metadata));
        match answer {
            Ok(answer) => Ok(PyBytes::new(py, &answer)),
            Err(status) => Err(CallError::new_err((
                status.code() as i32,
                status.message().to_owned(),
                PyBytes::new(py, status.details()).unbind(),
            ))),
        }
    }

    /// Closes the idle connections (one in a call closes when its call ends); later calls fail.
    fn close(&self) {
        self.calls.close();
    }
}

/// Whether `target` is a form this route dials (else grpcio takes it).
#[pyfunction]
fn supports(target: &str) -> bool {
    Target::parse(target).is_some()
}

/// The module.
#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyCalls>()?;
    module.add_function(wrap_pyfunction!(supports, module)?)?;
    module.add("CallError", module.py().get_type::<CallError>())?;
    Ok(())
}

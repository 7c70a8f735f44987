//! A throwaway certificate authority for TLS tests: a CA, a server certificate for
//! `localhost`/`127.0.0.1` and a client certificate, all generated in memory; the daemon's files
//! live in a temporary directory (nothing is committed).

use anyhow::Context;
use fakesim_hil::TlsFiles;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use tempfile::TempDir;
use tonic::transport::{Certificate, ClientTlsConfig, Identity};

/// The name the server certificate is issued for and clients check.
pub const SERVER_NAME: &str = "localhost";

/// A CA with one server and one client certificate.
pub struct TestPki {
    dir: TempDir,
    ca_pem: String,
    client_cert_pem: String,
    client_key_pem: String,
}

/// A certificate signed by `ca` for `names`, with its key, both PEM.
fn leaf(
    ca: &CertifiedIssuer<'_, KeyPair>,
    names: &[&str],
    usage: ExtendedKeyUsagePurpose,
) -> anyhow::Result<(String, String)> {
    let mut params = CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>())?;
    params.distinguished_name.push(DnType::CommonName, names[0]);
    params.extended_key_usages = vec![usage];
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, ca)?;
    Ok((cert.pem(), key.serialize_pem()))
}

impl TestPki {
    /// Generates the CA and both certificates, and writes the daemon's files.
    pub fn generate() -> anyhow::Result<Self> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
        params
            .distinguished_name
            .push(DnType::CommonName, "fakesim-hil test CA");
        let ca = CertifiedIssuer::self_signed(params, KeyPair::generate()?)?;
        let (server_cert, server_key) = leaf(&ca, &[SERVER_NAME, "127.0.0.1"], ExtendedKeyUsagePurpose::ServerAuth)?;
        let (client_cert_pem, client_key_pem) =
            leaf(&ca, &["fakesim-test-client"], ExtendedKeyUsagePurpose::ClientAuth)?;
        let dir = tempfile::tempdir().context("cannot create the certificate directory")?;
        let ca_pem = ca.pem();
        for (name, text) in [
            ("server.pem", &server_cert),
            ("server.key", &server_key),
            ("ca.pem", &ca_pem),
        ] {
            std::fs::write(dir.path().join(name), text).with_context(|| format!("cannot write {name}"))?;
        }
        Ok(TestPki {
            dir,
            ca_pem,
            client_cert_pem,
            client_key_pem,
        })
    }

    /// The daemon's TLS files; with `client_certs`, client certificates from this CA are accepted.
    pub fn daemon_files(&self, client_certs: bool) -> TlsFiles {
        TlsFiles {
            cert: self.dir.path().join("server.pem"),
            key: self.dir.path().join("server.key"),
            client_ca: client_certs.then(|| self.dir.path().join("ca.pem")),
        }
    }

    /// A client's TLS settings trusting this CA; with `client_cert`, showing the client certificate.
    pub fn client(&self, client_cert: bool) -> ClientTlsConfig {
        if client_cert {
            self.client_showing_certificate_of(self)
        } else {
            self.trusting()
        }
    }

    /// A client's TLS settings trusting this CA and showing the client certificate of `other`.
    pub fn client_showing_certificate_of(&self, other: &TestPki) -> ClientTlsConfig {
        self.trusting()
            .identity(Identity::from_pem(&other.client_cert_pem, &other.client_key_pem))
    }

    fn trusting(&self) -> ClientTlsConfig {
        ClientTlsConfig::new()
            .ca_certificate(Certificate::from_pem(&self.ca_pem))
            .domain_name(SERVER_NAME)
    }
}

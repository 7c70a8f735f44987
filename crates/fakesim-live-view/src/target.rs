//! Where the live view goes: `--live-view spawn|connect[=ADDR]|serve[=ADDR[,GRPC_PORT]]|save=PATH.rrd`.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::str::FromStr;

/// Port of a viewer's gRPC endpoint when none is given (Rerun's own default).
pub const DEFAULT_GRPC_PORT: u16 = 9876;
/// Port the web viewer is served on when none is given (Rerun's own default).
pub const DEFAULT_WEB_PORT: u16 = 9090;

/// The destination of the live view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Start the `rerun` viewer found on `PATH` (or reuse one already listening) and stream to it.
    Spawn,
    /// Stream to a running viewer's gRPC endpoint.
    Connect(SocketAddr),
    /// Serve the recording over gRPC and the web viewer over HTTP, on loopback only.
    Serve {
        /// Where the web viewer is served (port 0: any free port, logged at start).
        web: SocketAddr,
        /// The port of the gRPC endpoint the web viewer reads from, on the same address.
        grpc_port: u16,
    },
    /// Write a recording file (`.rrd`), complete once the daemon stops.
    Save(PathBuf),
}

/// A `--live-view` value that names no target, or one the daemon refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Not one of the four forms.
    #[error("--live-view {0:?}: expected spawn, connect[=HOST:PORT], serve[=HOST:PORT[,GRPC_PORT]] or save=PATH.rrd")]
    Unknown(String),
    /// An address that does not parse.
    #[error("--live-view {value:?}: {what} is not a HOST:PORT address or port")]
    Address {
        /// The whole value.
        value: String,
        /// Which part.
        what: &'static str,
    },
    /// Serving off loopback: Rerun's servers have no TLS and no authentication.
    #[error(
        "--live-view serve on {0}: the served viewer has no TLS and no authentication, so it binds \
         loopback only (127.0.0.1 or ::1); reach it from elsewhere through an SSH tunnel"
    )]
    NotLoopback(IpAddr),
    /// The gRPC port of `serve` must be known to point the web viewer at it.
    #[error("--live-view serve: the gRPC port must be given (not 0), the web viewer is pointed at it")]
    GrpcPortZero,
    /// `save=` without a path.
    #[error("--live-view save= needs a file path, e.g. save=session.rrd")]
    NoPath,
}

impl FromStr for Target {
    type Err = TargetError;

    fn from_str(value: &str) -> Result<Self, TargetError> {
        let (name, argument) = match value.split_once('=') {
            Some((name, argument)) => (name, Some(argument)),
            None => (value, None),
        };
        let address = |text: &str, what| {
            text.parse::<SocketAddr>().map_err(|_| TargetError::Address {
                value: value.to_owned(),
                what,
            })
        };
        let loopback = |port| SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        match (name, argument) {
            ("spawn", None) => Ok(Target::Spawn),
            ("connect", None) => Ok(Target::Connect(loopback(DEFAULT_GRPC_PORT))),
            ("connect", Some(addr)) => Ok(Target::Connect(address(addr, "the viewer's address")?)),
            ("serve", None) => Ok(Target::Serve {
                web: loopback(DEFAULT_WEB_PORT),
                grpc_port: DEFAULT_GRPC_PORT,
            }),
            ("serve", Some(spec)) => {
                let (web, grpc) = match spec.split_once(',') {
                    Some((web, grpc)) => (web, Some(grpc)),
                    None => (spec, None),
                };
                let web = address(web, "the web viewer's address")?;
                let grpc_port = match grpc {
                    Some(port) => port.parse::<u16>().map_err(|_| TargetError::Address {
                        value: value.to_owned(),
                        what: "the gRPC port",
                    })?,
                    None => DEFAULT_GRPC_PORT,
                };
                if !web.ip().is_loopback() {
                    return Err(TargetError::NotLoopback(web.ip()));
                }
                if grpc_port == 0 {
                    return Err(TargetError::GrpcPortZero);
                }
                Ok(Target::Serve { web, grpc_port })
            }
            ("save", Some("")) => Err(TargetError::NoPath),
            ("save", Some(path)) => Ok(Target::Save(PathBuf::from(path))),
            _ => Err(TargetError::Unknown(value.to_owned())),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Spawn => f.write_str("spawn"),
            Target::Connect(addr) => write!(f, "connect={addr}"),
            Target::Serve { web, grpc_port } => write!(f, "serve={web},{grpc_port}"),
            Target::Save(path) => write!(f, "save={}", path.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_four_forms_parse_and_print_back() {
        for text in [
            "spawn",
            "connect=127.0.0.1:9877",
            "connect=[::1]:9876",
            "serve=127.0.0.1:0,9000",
            "serve=[::1]:8080,9001",
            "save=runs/live.rrd",
        ] {
            let target: Target = text.parse().unwrap();
            assert_eq!(target.to_string(), text);
            assert_eq!(target.to_string().parse::<Target>().unwrap(), target);
        }
        assert_eq!(
            "connect".parse::<Target>().unwrap(),
            Target::Connect("127.0.0.1:9876".parse().unwrap())
        );
        assert_eq!(
            "serve".parse::<Target>().unwrap(),
            Target::Serve {
                web: "127.0.0.1:9090".parse().unwrap(),
                grpc_port: 9876
            }
        );
        assert_eq!(
            "serve=127.0.0.1:7000".parse::<Target>().unwrap(),
            Target::Serve {
                web: "127.0.0.1:7000".parse().unwrap(),
                grpc_port: 9876
            }
        );
    }

    #[test]
    fn serving_off_loopback_and_malformed_values_are_refused_with_the_reason() {
        let refused = |text: &str| text.parse::<Target>().unwrap_err().to_string();
        assert!(
            refused("serve=0.0.0.0:9090").contains("loopback only"),
            "{}",
            refused("serve=0.0.0.0:9090")
        );
        assert!(refused("serve=192.168.1.4:9090,9876").contains("no TLS and no authentication"));
        assert!(refused("serve=127.0.0.1:9090,0").contains("must be given (not 0)"));
        assert!(refused("serve=127.0.0.1:9090,x").contains("the gRPC port"));
        assert!(refused("connect=somewhere").contains("the viewer's address"));
        assert!(refused("save=").contains("needs a file path"));
        assert!(refused("save").contains("expected spawn"));
        assert!(refused("spawn=now").contains("expected spawn"));
        assert!(refused("rerun").contains("expected spawn"));
    }
}

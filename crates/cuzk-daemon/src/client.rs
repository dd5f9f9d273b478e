//! A client for the daemon's gRPC API over a unix socket or TCP (with the
//! bearer token and optional TLS), used by the `cuzk` client subcommands
//! and the tests.

use crate::proto::key_service_client::KeyServiceClient;
use crate::proto::proof_service_client::ProofServiceClient;
use std::path::PathBuf;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The address tried, why it failed (every cause) and how to give
    /// another.
    #[error(
        "connecting to {target}: {}; is a daemon running there? (point to another with \
         --daemon unix:PATH or --daemon http://HOST:PORT)",
        causes(.source)
    )]
    Connect {
        target: String,
        #[source]
        source: tonic::transport::Error,
    },
    #[error(
        "target {0:?}: expected unix:PATH, a socket path, http://HOST:PORT or https://HOST:PORT"
    )]
    BadTarget(String),
    #[error("the token is not a valid header value")]
    BadToken,
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// An error and its causes on one line ("transport error: No such file or
/// directory"): tonic's transport error alone says only its category.
fn causes(e: &dyn std::error::Error) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        cause = c.source();
    }
    line
}

/// Adds `authorization: Bearer <token>` to every call.
#[derive(Clone)]
pub struct TokenInterceptor(Option<MetadataValue<Ascii>>);

impl tonic::service::Interceptor for TokenInterceptor {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(v) = &self.0 {
            req.metadata_mut().insert("authorization", v.clone());
        }
        Ok(req)
    }
}

pub type DaemonClient = ProofServiceClient<InterceptedService<Channel, TokenInterceptor>>;
pub type KeyClient = KeyServiceClient<InterceptedService<Channel, TokenInterceptor>>;

#[derive(Clone, Debug, Default)]
pub struct ConnectOptions {
    /// `unix:/path`, `/path`, `./path`, `http://host:port` or `https://host:port`.
    pub target: String,
    pub token: Option<String>,
    /// PEM CA certificate to trust for https targets.
    pub tls_ca: Option<PathBuf>,
    /// Name to check the server certificate against (default: the host).
    pub tls_domain: Option<String>,
    pub max_message_bytes: Option<usize>,
}

pub async fn connect(opts: &ConnectOptions) -> Result<DaemonClient, ClientError> {
    let (channel, token) = open(opts).await?;
    let mut c = ProofServiceClient::with_interceptor(channel, token);
    if let Some(m) = opts.max_message_bytes {
        c = c.max_decoding_message_size(m).max_encoding_message_size(m);
    }
    Ok(c)
}

/// A client of the daemon's KeyService (verifying keys).
pub async fn connect_keys(opts: &ConnectOptions) -> Result<KeyClient, ClientError> {
    let (channel, token) = open(opts).await?;
    let mut c = KeyServiceClient::with_interceptor(channel, token);
    if let Some(m) = opts.max_message_bytes {
        c = c.max_decoding_message_size(m).max_encoding_message_size(m);
    }
    Ok(c)
}

/// The channel to the daemon and the token every call carries.
async fn open(opts: &ConnectOptions) -> Result<(Channel, TokenInterceptor), ClientError> {
    let t = opts.target.as_str();
    let connect_err = |source| ClientError::Connect {
        target: t.to_owned(),
        source,
    };
    let unix_path = t
        .strip_prefix("unix:")
        .or_else(|| (t.starts_with('/') || t.starts_with("./")).then_some(t));
    let channel = if let Some(path) = unix_path {
        let path = PathBuf::from(path);
        // The URI is required by the API but unused: the connector below
        // decides where to connect.
        Endpoint::from_static("http://localhost")
            .connect_with_connector(tower::service_fn(move |_: tonic::transport::Uri| {
                let p = path.clone();
                async move {
                    let s = tokio::net::UnixStream::connect(p).await?;
                    Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(s))
                }
            }))
            .await
            .map_err(connect_err)?
    } else if t.starts_with("http://") || t.starts_with("https://") {
        let mut ep = Endpoint::from_shared(t.to_owned()).map_err(connect_err)?;
        if t.starts_with("https://") {
            let mut tls = ClientTlsConfig::new();
            if let Some(ca) = &opts.tls_ca {
                let pem = std::fs::read(ca).map_err(|source| ClientError::Io {
                    path: ca.clone(),
                    source,
                })?;
                tls = tls.ca_certificate(Certificate::from_pem(pem));
            }
            if let Some(d) = &opts.tls_domain {
                tls = tls.domain_name(d.clone());
            }
            ep = ep.tls_config(tls).map_err(connect_err)?;
        }
        ep.connect().await.map_err(connect_err)?
    } else {
        return Err(ClientError::BadTarget(t.to_owned()));
    };
    let token = match &opts.token {
        Some(tok) => Some(
            format!("Bearer {tok}")
                .parse::<MetadataValue<Ascii>>()
                .map_err(|_| ClientError::BadToken)?,
        ),
        None => None,
    };
    Ok((channel, TokenInterceptor(token)))
}

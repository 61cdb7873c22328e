//! TLS on the controller listener and on the connections this node makes to its peers (issue
//! 11), as Kafka's `SslTransportLayer` gives them: the handshake before the first Kafka frame,
//! the client's principal from its certificate (`SslPrincipalMapper`, `User:` prefix), and the
//! request pipeline unchanged above a boxed byte stream.

use std::fmt;
use std::io;
use std::sync::Arc;

use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

use kraftwerk_tls::{PrincipalError, SslPrincipalMapper, ANONYMOUS};

/// A connection's byte stream: plain TCP or TLS over it.
pub trait Stream: AsyncRead + AsyncWrite + Unpin + Send + Sync + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + Sync + 'static> Stream for T {}

/// A boxed [`Stream`].
pub type BoxStream = Box<dyn Stream>;

/// The listener side: the rustls server configuration built from the listener's `ssl.*` keys
/// and its `ssl.principal.mapping.rules`.
#[derive(Clone)]
pub struct ServerTls {
    /// From `kraftwerk_tls::server_config`.
    pub config: Arc<rustls::ServerConfig>,
    /// From `ssl.principal.mapping.rules`.
    pub mapper: Arc<SslPrincipalMapper>,
}

impl fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ServerTls")
    }
}

impl PartialEq for ServerTls {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.config, &other.config) && Arc::ptr_eq(&self.mapper, &other.mapper)
    }
}

impl Eq for ServerTls {}

/// Why an inbound TLS connection was not accepted.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AcceptError {
    /// The handshake failed (no or untrusted client certificate, protocol or cipher mismatch,
    /// not TLS at all).
    #[error("TLS handshake failed: {0}")]
    Handshake(io::Error),
    /// The certificate's subject matched no `ssl.principal.mapping.rules` rule, or did not
    /// parse.
    #[error("no principal for the client certificate: {0}")]
    Principal(PrincipalError),
}

/// Runs the server handshake and names the client: `User:` + its mapped certificate subject,
/// or `User:ANONYMOUS` without a certificate (`ssl.client.auth=none` or `requested`).
pub(crate) async fn accept(
    tls: &ServerTls,
    tcp: TcpStream,
) -> Result<(BoxStream, String), AcceptError> {
    let stream = tokio_rustls::TlsAcceptor::from(tls.config.clone())
        .accept(tcp)
        .await
        .map_err(AcceptError::Handshake)?;
    let leaf = stream
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|chain| chain.first());
    let principal = match leaf {
        Some(der) => tls.mapper.principal(der).map_err(AcceptError::Principal)?,
        None => ANONYMOUS.to_owned(),
    };
    Ok((Box::new(stream), principal))
}

/// The client side: the rustls client configuration of the controller listener's `ssl.*`
/// keys, as Java's Raft client uses the controller listener's channel builder.
#[derive(Clone)]
pub struct ClientTls {
    /// From `kraftwerk_tls::client_config`.
    pub config: Arc<rustls::ClientConfig>,
}

impl fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ClientTls")
    }
}

/// Runs the client handshake with `host` (a name or an IP literal: what the peer's certificate
/// must name when `ssl.endpoint.identification.algorithm=https`).
pub(crate) async fn connect(tls: &ClientTls, host: &str, tcp: TcpStream) -> io::Result<BoxStream> {
    let name = ServerName::try_from(host.to_owned()).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{host}` is not a host name for TLS: {e}"),
        )
    })?;
    let stream = tokio_rustls::TlsConnector::from(tls.config.clone())
        .connect(name, tcp)
        .await?;
    Ok(Box::new(stream))
}

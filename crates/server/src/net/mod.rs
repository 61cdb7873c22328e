//! The tokio side of the wire protocol: the inbound [`Listener`] (one task per connection,
//! ApiVersions and Envelope handled here, everything else given to a [`RequestHandler`]) and the
//! outbound [`PeerClient`] (Raft RPCs and ControllerRegistration to other controllers).

mod connection;
pub mod listener;
pub mod peer;
pub mod quotas;
pub mod sasl;
pub mod tls;

pub use listener::{
    BoxFuture, FeaturesFn, ForwardedContext, HandlerError, HandlerResult, Listener, ListenerConfig,
    RequestContext, RequestHandler, ShutdownReport,
};
pub use peer::{PeerClient, PeerClientConfig, PeerError, PeerNode};
pub use quotas::{ConnectionLimits, ConnectionQuotas, Refused};
pub use sasl::{ClientSasl, ListenerSasl};
pub use tls::{BoxStream, ClientTls, ServerTls};

#[cfg(test)]
mod tests;

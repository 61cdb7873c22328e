//! Checks shared by the controller's request handling, so that no request gets as far as the
//! write path with records that cannot be written (issue 9). Each follows the Java code that
//! bounds the same thing:
//!
//! * [`strings`]: every string of a request fits Kafka's STRING / COMPACT_STRING (at most
//!   32,767 bytes of UTF-8). Java's generated readers refuse a longer one while decoding the
//!   request, so no Java handler ever sees it; `Controller::handle` answers such a request
//!   INVALID_REQUEST before any handler runs. Every metadata record string is a COMPACT_STRING
//!   with the same limit, so a record built from checked strings encodes.
//! * [`limits`]: the bounds Java's handlers put on the work a client chooses (records per
//!   atomic result, `BoundedList`), with the errors Java answers when they are exceeded.
//! * [`batch`]: what one result may write — every record encodes, an atomic result fits one
//!   batch (10,000 records, 8 MiB), any other record fits a batch alone — checked on every
//!   handler's result before it leaves the controller (Java's `QuorumController.appendRecords`
//!   and `BatchAccumulator`). Record arrays (listeners, features, replicas, directories) have
//!   no count limit of their own in Kafka's encoding (a compact array holds up to 2³² − 2
//!   elements); the batch bytes bound them.

pub mod batch;
pub mod limits;
pub mod strings;

pub use strings::{StringCheck, MAX_STRING_BYTES};

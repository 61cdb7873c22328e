//! The `raft` target: a script of Raft RPCs, responses, send failures and clock ticks into a
//! `RaftCore` (node 1 of voters 1, 2, 3) on in-memory storage.
//!
//! The input is a sequence of operations, each an op byte and its operands. By `op & 0x7f`
//! modulo 5:
//! - 0 `request`: a request frame (4-byte size, header, body; the size is cut to what is left)
//!   decoded against the served table; a Raft RPC goes to the core.
//! - 1 `response`, 2 `response to the newest`: a version selector byte, then a response frame
//!   for the oldest (newest) request the core sent and nobody answered yet. The request is
//!   adapted to version `max - selector % width` of its api, as the peer client does (a request
//!   that does not fit that version fails with UNSUPPORTED_VERSION); the response is decoded at
//!   it (a response that does not decode fails the send: the connection is closed).
//! - 3 `failure`: the oldest send fails (selector byte: disconnected, timeout, unsupported).
//! - 4 `tick`: two bytes of milliseconds to advance, then a poll.
//!
//! With bit 7 of the op set, record batches in a Fetch or FetchSnapshot response get their CRCs
//! fixed first ([`crate::records::fix_crcs`]), so mutations reach the follower's batch checks.
//!
//! Every answer of the core must adapt to and encode at the request's version, and every
//! request it sends must encode at the newest version. `RaftCore` errors are fatal and typed:
//! the script stops there. A panic anywhere is a finding.

use std::collections::{BTreeMap, VecDeque};

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::ResponseKind;
use kraftwerk_protocol::codec::{
    decode_request, decode_response, encode_request_frame, encode_response, request_header,
};
use kraftwerk_protocol::{adapt_request_for_version, adapt_response_for_version, InboundRequest};
use kraftwerk_raft::testing::{MemLog, MemQuorumStateStore};
use kraftwerk_raft::{
    Endpoint, InboundId, Input, OutboundId, Output, RaftConfig, RaftCore, RaftRequest,
    RaftResponse, SendFailure,
};
use uuid::Uuid;

use crate::apis::served_table;

/// This node's id.
pub const NODE_ID: i32 = 1;
/// The voters.
pub const VOTERS: [i32; 3] = [1, 2, 3];
/// The cluster id the core accepts.
pub const CLUSTER_ID: &str = "MkU3OEVBNTcwNTJENDM2Qg";
/// Bit of an op byte that asks for the CRCs of fetched batches to be fixed.
pub const FIX_CRCS: u8 = 0x80;

/// The operations of a script (the op byte modulo 5).
pub mod op {
    /// A request frame.
    pub const REQUEST: u8 = 0;
    /// A response to the oldest outstanding send.
    pub const RESPONSE: u8 = 1;
    /// A response to the newest outstanding send.
    pub const RESPONSE_NEWEST: u8 = 2;
    /// The oldest outstanding send fails.
    pub const FAILURE: u8 = 3;
    /// The clock advances.
    pub const TICK: u8 = 4;
}

/// Runs one input.
pub fn run(data: &[u8]) {
    let mut harness = Harness::new();
    let mut input = data;
    while let Some((&op, rest)) = input.split_first() {
        input = rest;
        if harness.step(op, &mut input).is_err() {
            return; // a fatal RaftError: the node stops
        }
    }
}

/// A fatal `RaftError` (its text was printed to a string: that must not panic either).
pub struct Fatal;

/// The core and what the driver keeps: the clock and the sends not yet answered.
pub struct Harness {
    core: RaftCore<MemLog, MemQuorumStateStore>,
    now_ms: u64,
    next_inbound: u64,
    /// Sends without an answer, oldest first.
    outstanding: VecDeque<(OutboundId, RaftRequest)>,
    /// The version of every request fed and not answered yet.
    versions: BTreeMap<InboundId, i16>,
}

impl Harness {
    /// A fresh node 1 at time 0.
    pub fn new() -> Harness {
        let voters: BTreeMap<i32, Endpoint> = VOTERS
            .iter()
            .map(|&id| {
                let endpoint = Endpoint {
                    host: "localhost".into(),
                    port: 9092 + id as u16,
                };
                (id, endpoint)
            })
            .collect();
        let config = RaftConfig::new(
            NODE_ID,
            CLUSTER_ID,
            Uuid::from_u64_pair(1, 1),
            voters,
            "CONTROLLER",
        );
        let core = RaftCore::new(config, MemLog::new(), MemQuorumStateStore::new(), 42, 0)
            .expect("a fresh core starts");
        Harness {
            core,
            now_ms: 0,
            next_inbound: 0,
            outstanding: VecDeque::new(),
            versions: BTreeMap::new(),
        }
    }

    /// The core, for seed builders that look at what it sent.
    pub fn core(&self) -> &RaftCore<MemLog, MemQuorumStateStore> {
        &self.core
    }

    /// The requests sent and not answered yet, oldest first.
    pub fn outstanding(&self) -> impl Iterator<Item = &RaftRequest> {
        self.outstanding.iter().map(|(_, r)| r)
    }

    /// Runs one operation, taking its operands off the front of `input`.
    pub fn step(&mut self, op: u8, input: &mut &[u8]) -> Result<(), Fatal> {
        let fix = op & FIX_CRCS != 0;
        match (op & !FIX_CRCS) % 5 {
            op::REQUEST => {
                let frame = take_frame(input);
                self.request(frame)
            }
            kind @ (op::RESPONSE | op::RESPONSE_NEWEST) => {
                let selector = take(input, 1).first().copied().unwrap_or(0);
                let frame = take_frame(input);
                self.response(kind == op::RESPONSE_NEWEST, selector, frame, fix)
            }
            op::FAILURE => {
                let failure = match take(input, 1).first().copied().unwrap_or(0) % 3 {
                    0 => SendFailure::Disconnected,
                    1 => SendFailure::Timeout,
                    _ => SendFailure::UnsupportedVersion,
                };
                match self.outstanding.pop_front() {
                    Some((id, _)) => self.feed(Input::SendFailed { id, failure }),
                    None => Ok(()),
                }
            }
            _ => {
                let ms = take(input, 2);
                let ms = ms.iter().fold(0u64, |acc, &b| acc << 8 | b as u64);
                self.now_ms += ms;
                let result = self.core.poll(self.now_ms);
                self.outcome(result)
            }
        }
    }

    fn request(&mut self, frame: Bytes) -> Result<(), Fatal> {
        let Ok(InboundRequest::Request(request)) = decode_request(frame, served_table()) else {
            return Ok(());
        };
        let api_version = request.version();
        let Ok(raft) = RaftRequest::from_kind(request.body) else {
            return Ok(());
        };
        self.next_inbound += 1;
        let id = InboundId(self.next_inbound);
        self.versions.insert(id, api_version);
        self.feed(Input::Request {
            id,
            api_version,
            request: raft,
        })
    }

    fn response(
        &mut self,
        newest: bool,
        selector: u8,
        frame: Bytes,
        fix: bool,
    ) -> Result<(), Fatal> {
        let sent = if newest {
            self.outstanding.pop_back()
        } else {
            self.outstanding.pop_front()
        };
        let Some((id, request)) = sent else {
            return Ok(());
        };
        let api = request.api_key();
        let range = served_table()
            .range(api)
            .expect("the core sends served apis");
        let width = (range.max_version - range.min_version + 1) as u8;
        let version = range.max_version - (selector % width) as i16;
        let mut kind = request.into_kind();
        if adapt_request_for_version(&mut kind, version).is_err() {
            let failure = SendFailure::UnsupportedVersion;
            return self.feed(Input::SendFailed { id, failure });
        }
        let header = request_header(api, version, 1, "kraftwerk-fuzz");
        if let Err(e) = encode_request_frame(&header, &kind) {
            panic!("{api:?} v{version} request adapted from the core's does not encode: {e}");
        }
        let Ok((_, _, mut body)) = decode_response(api, version, frame) else {
            let failure = SendFailure::Disconnected;
            return self.feed(Input::SendFailed { id, failure });
        };
        if fix {
            fix_response_crcs(&mut body);
        }
        match RaftResponse::from_kind(body) {
            Ok(response) => self.feed(Input::Response { id, response }),
            Err(_) => unreachable!("decode_response decodes the request's api"),
        }
    }

    fn feed(&mut self, input: Input) -> Result<(), Fatal> {
        let result = self.core.handle(self.now_ms, input);
        self.outcome(result)
    }

    fn outcome(&mut self, result: Result<(), kraftwerk_raft::RaftError>) -> Result<(), Fatal> {
        if let Err(e) = result {
            drop(e.to_string());
            return Err(Fatal);
        }
        for output in self.core.take_outputs() {
            match output {
                Output::Send { id, request, .. } => {
                    check_send(&request);
                    self.outstanding.push_back((id, request));
                }
                Output::Respond { id, response } => self.check_answer(id, response),
            }
        }
        Ok(())
    }

    fn check_answer(&mut self, id: InboundId, response: RaftResponse) {
        let version = self
            .versions
            .remove(&id)
            .expect("an answer to a request we fed");
        let api = response.api_key();
        let mut kind = response.into_kind();
        if let Err(e) = adapt_response_for_version(&mut kind, version) {
            panic!("the core's {api:?} answer does not adapt to the request's v{version}: {e}");
        }
        if let Err(e) = encode_response(api, version, 1, &kind) {
            panic!("the core's {api:?} answer does not encode at the request's v{version}: {e}");
        }
    }
}

impl Default for Harness {
    fn default() -> Self {
        Harness::new()
    }
}

/// A request the core sends must fit the newest version of its api.
fn check_send(request: &RaftRequest) {
    let api = request.api_key();
    let version = served_table().range(api).expect("a served api").max_version;
    let mut kind = request.clone().into_kind();
    if let Err(e) = adapt_request_for_version(&mut kind, version) {
        panic!("the core's {api:?} request does not adapt to v{version}: {e}");
    }
    let header = request_header(api, version, 1, "kraftwerk-fuzz");
    if let Err(e) = encode_request_frame(&header, &kind) {
        panic!("the core's {api:?} request does not encode at v{version}: {e}");
    }
}

fn fix_response_crcs(body: &mut ResponseKind) {
    let fix = |bytes: &mut Bytes| {
        let mut copy = BytesMut::from(&bytes[..]);
        crate::records::fix_crcs(&mut copy);
        *bytes = copy.freeze();
    };
    match body {
        ResponseKind::Fetch(r) => {
            for partition in r.responses.iter_mut().flat_map(|t| t.partitions.iter_mut()) {
                if let Some(records) = partition.records.as_mut() {
                    fix(records);
                }
            }
        }
        ResponseKind::FetchSnapshot(r) => {
            for partition in r.topics.iter_mut().flat_map(|t| t.partitions.iter_mut()) {
                fix(&mut partition.unaligned_records);
            }
        }
        _ => {}
    }
}

/// The next `n` bytes (fewer at the end).
fn take<'a>(input: &mut &'a [u8], n: usize) -> &'a [u8] {
    let (head, tail) = input.split_at(n.min(input.len()));
    *input = tail;
    head
}

/// A frame's payload: a 4-byte big-endian size, then that many bytes (cut to what is left).
fn take_frame(input: &mut &[u8]) -> Bytes {
    let size = take(input, 4);
    let size = size.iter().fold(0usize, |acc, &b| acc << 8 | b as usize);
    Bytes::copy_from_slice(take(input, size))
}

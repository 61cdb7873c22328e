//! Kafka's record formats as KRaft uses them, byte for byte:
//! - [`codec`]: Kafka's primitive encodings (varints, compact strings, tagged fields);
//! - [`batch`]: record batch v2 (CRC-32C), built and parsed with the Java KRaft reader's rules;
//! - [`control`]: KRaft control records (LeaderChange, SnapshotHeader/Footer, KRaftVersion, Voters);
//! - [`metadata`]: the metadata records (`ApiMessageAndVersion` frames) of `__cluster_metadata`;
//! - [`metadata_version`]: the metadata.version table and feature levels.

pub mod batch;
pub mod codec;
pub mod control;
pub mod metadata;
pub mod metadata_version;

#[cfg(test)]
mod java_vectors;

package dev.kraftwerk.compat;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.KRaftVersionRecord;
import org.apache.kafka.common.message.LeaderChangeMessage;
import org.apache.kafka.common.message.SnapshotFooterRecord;
import org.apache.kafka.common.message.SnapshotHeaderRecord;
import org.apache.kafka.common.message.VotersRecord;
import org.apache.kafka.common.metadata.BrokerRegistrationChangeRecord;
import org.apache.kafka.common.metadata.ClientQuotaRecord;
import org.apache.kafka.common.metadata.ConfigRecord;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.metadata.MetadataRecordType;
import org.apache.kafka.common.metadata.NoOpRecord;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.raft.Batch;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Whole record batches: {@code rust/rust.log} (kraftwerk's batches as a segment holds them) is
 * read with Kafka's KRaft reader ({@code RecordsIterator} with CRC checks and its record rules,
 * {@code MetadataRecordSerde}) and every batch is rebuilt byte for byte by Kafka's own
 * {@code BatchBuilder} / {@code MemoryRecordsBuilder}; {@code java/java.log} is the reverse.
 * Kafka's batch classes are reached through {@code Batches}, the per-release adapter of
 * {@code src/release/records-*} (4.3 moved them to {@code org.apache.kafka.common.record.internal}).
 */
class RecordBatchTest {
    static VotersRecord fixedVoters() {
        VotersRecord v = new VotersRecord();
        for (int id = 1; id <= 2; id++) {
            VotersRecord.Voter voter = new VotersRecord.Voter().setVoterId(id)
                .setVoterDirectoryId(new Uuid(0, id == 1 ? 0x11 : 0x22))
                .setKRaftVersionFeature(new VotersRecord.KRaftVersionFeature()
                    .setMinSupportedVersion((short) 0).setMaxSupportedVersion((short) 1));
            voter.endpoints().add(new VotersRecord.Endpoint().setName("CONTROLLER")
                .setHost("controller-" + id).setPort(id == 1 ? 9093 : 9094));
            v.voters().add(voter);
        }
        return v;
    }

    /** The same fixed records as crates/records/src/java_vectors.rs, built with Kafka's setters. */
    static List<ApiMessageAndVersion> fixedRecords() {
        RegisterBrokerRecord.BrokerEndpointCollection eps = new RegisterBrokerRecord.BrokerEndpointCollection();
        eps.add(new RegisterBrokerRecord.BrokerEndpoint().setName("PLAINTEXT").setHost("localhost")
            .setPort(9092).setSecurityProtocol((short) 0));
        RegisterBrokerRecord.BrokerFeatureCollection fs = new RegisterBrokerRecord.BrokerFeatureCollection();
        fs.add(new RegisterBrokerRecord.BrokerFeature().setName("metadata.version")
            .setMinSupportedVersion((short) 7).setMaxSupportedVersion((short) 27));
        Uuid topicId = new Uuid(0, 0x7091c);
        List<ClientQuotaRecord.EntityData> entity = List.of(
            new ClientQuotaRecord.EntityData().setEntityType("user").setEntityName(null));
        return List.of(
            new ApiMessageAndVersion(new FeatureLevelRecord().setName("metadata.version").setFeatureLevel((short) 27), (short) 0),
            new ApiMessageAndVersion(new RegisterBrokerRecord().setBrokerId(1).setIncarnationId(new Uuid(0, 0xabcd))
                .setBrokerEpoch(100).setEndPoints(eps).setFeatures(fs).setRack("rack-a").setFenced(false)
                .setLogDirs(List.of(new Uuid(0, 0x1d))), (short) 3),
            new ApiMessageAndVersion(new TopicRecord().setName("foo").setTopicId(topicId), (short) 0),
            new ApiMessageAndVersion(new PartitionRecord().setPartitionId(0).setTopicId(topicId).setReplicas(List.of(1, 2))
                .setIsr(List.of(1)).setLeader(1).setLeaderEpoch(3).setPartitionEpoch(4)
                .setDirectories(List.of(new Uuid(0, 0x1d), new Uuid(0, 0x2d))).setEligibleLeaderReplicas(List.of(2)), (short) 2),
            new ApiMessageAndVersion(new PartitionChangeRecord().setPartitionId(0).setTopicId(topicId).setLeader(2)
                .setIsr(List.of(1, 2)), (short) 2),
            new ApiMessageAndVersion(new ConfigRecord().setResourceType((byte) 2).setResourceName("foo")
                .setName("retention.ms").setValue(null), (short) 0),
            new ApiMessageAndVersion(new ClientQuotaRecord().setEntity(entity).setKey("producer_byte_rate")
                .setValue(1.5).setRemove(false), (short) 0),
            new ApiMessageAndVersion(new BrokerRegistrationChangeRecord().setBrokerId(1).setBrokerEpoch(100)
                .setFenced((byte) -1), (short) 2),
            new ApiMessageAndVersion(new NoOpRecord(), (short) 0));
    }

    @Test
    void kafkasRecordsIteratorAcceptsRustBatchesAndRebuildsThemIdentically() throws Exception {
        byte[] all = Files.readAllBytes(Vectors.rust("rust.log"));
        Failures failures = new Failures("rust.log read by Kafka's RecordsIterator (" + Batches.RECORDS_PACKAGE + ")");

        // 1. Every batch: valid CRC, magic 2, no compression, not transactional, contiguous,
        //    and every record in KRaft's shape (timestampDelta 0, no headers, null data keys).
        long next = 0;
        List<BatchView> raw = new ArrayList<>();
        List<Integer> positions = new ArrayList<>();
        int position = 0;
        boolean crcOk = true;
        for (BatchView batch : Batches.parse(all)) {
            String at = "batch at offset " + batch.baseOffset() + " (byte " + position + ")";
            if (!batch.valid()) {
                failures.add(at + ": CRC does not match (stored " + batch.checksum() + ")");
                crcOk = false;
                position += batch.sizeInBytes();
                continue;
            }
            failures.passed();
            failures.check(batch.magic() == 2 && batch.uncompressed() && !batch.transactional() && batch.createTime()
                && batch.noProducer(), at + ": attributes/producer fields");
            failures.check(batch.baseOffset() == next, at + ": not contiguous (expected " + next + ")");
            failures.check(batch.maxTimestamp() == firstTimestamp(batch), at + ": max timestamp differs from the records'");
            for (BatchView.RecordView r : batch.records()) {
                failures.check(r.timestamp() == firstTimestamp(batch) && r.headers() == 0
                    && (batch.control() ? r.hasKey() : !r.hasKey()) && r.hasValue(),
                    at + ": record " + r.offset() + " breaks KRaft's record rules");
            }
            next = batch.nextOffset();
            raw.add(batch);
            positions.add(position);
            position += batch.sizeInBytes();
        }
        failures.check(position == all.length, "rust.log: " + (all.length - position) + " bytes after the last batch");
        if (!crcOk) {
            failures.assertNone(); // RecordsIterator would only repeat it, as an exception
        }

        // 2. Kafka's KRaft reader (strict rules, CRC checks, MetadataRecordSerde), then a rebuild.
        List<Batch<ApiMessageAndVersion>> read = Batches.readKraft(all);
        assertEquals(raw.size(), read.size(), "RecordsIterator must return every batch");
        int dataRecords = 0;
        int controlRecords = 0;
        for (int i = 0; i < read.size(); i++) {
            Batch<ApiMessageAndVersion> b = read.get(i);
            byte[] ours = new byte[raw.get(i).sizeInBytes()];
            System.arraycopy(all, positions.get(i), ours, 0, ours.length);
            byte[] theirs;
            if (!b.controlRecords().isEmpty()) {
                List<ApiMessage> messages = new ArrayList<>();
                b.controlRecords().forEach(c -> messages.add(c.message()));
                controlRecords += messages.size();
                theirs = Batches.control(b.baseOffset(), b.epoch(), b.appendTimestamp(), messages);
            } else {
                dataRecords += b.records().size();
                theirs = Batches.data(b.baseOffset(), b.epoch(), b.appendTimestamp(), b.records());
            }
            String diff = Vectors.firstDifference(ours, theirs);
            failures.check(diff == null, "batch at offset " + b.baseOffset() + " ("
                + (b.controlRecords().isEmpty() ? "data" : "control") + "): Kafka's builder writes it differently: " + diff);
        }

        // 3. Field values of the fixed batches.
        Batch<ApiMessageAndVersion> first = read.get(0);
        LeaderChangeMessage lc = (LeaderChangeMessage) first.controlRecords().get(0).message();
        failures.check(lc.leaderId() == 1 && lc.version() == 0, "LeaderChange leader id / version: " + lc);
        failures.check(lc.voters().stream().map(LeaderChangeMessage.Voter::voterId).toList().equals(List.of(1, 2, 3)), "LeaderChange voters");
        failures.check(lc.grantingVoters().stream().map(LeaderChangeMessage.Voter::voterId).toList().equals(List.of(1, 3)), "LeaderChange granting voters");
        failures.check(((KRaftVersionRecord) first.controlRecords().get(1).message()).kRaftVersion() == 1, "KRaftVersion");
        failures.check(first.controlRecords().get(2).message().equals(fixedVoters()), "Voters record");
        failures.check(first.epoch() == 5 && first.appendTimestamp() == 1000, "first batch epoch/time");
        Batch<ApiMessageAndVersion> second = read.get(1);
        failures.check(second.baseOffset() == 3, "data base offset");
        failures.check(second.records().equals(fixedRecords()),
            "fixed records differ from Kafka-built ones:\n" + second.records() + "\n" + fixedRecords());
        System.out.printf("compat: rust.log: %d bytes, %d batches, %d data records, %d control records%n",
            all.length, read.size(), dataRecords, controlRecords);
        failures.assertNone();
    }

    private static long firstTimestamp(BatchView batch) {
        return batch.records().isEmpty() ? batch.maxTimestamp() : batch.records().get(0).timestamp();
    }

    @Test
    void writeKafkaBatches() throws Exception {
        Random random = Vectors.random("batches");
        LeaderChangeMessage lc = new LeaderChangeMessage().setVersion((short) 0).setLeaderId(1)
            .setVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(1), new LeaderChangeMessage.Voter().setVoterId(2)))
            .setGrantingVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(1)));
        List<byte[]> parts = new ArrayList<>();
        parts.add(Batches.control(0, 7, 5000, List.of(lc,
            new KRaftVersionRecord().setVersion((short) 0).setKRaftVersion((short) 1), fixedVoters())));
        parts.add(Batches.data(3, 7, 5001, fixedRecords()));
        long next = 3 + fixedRecords().size();
        // Random records of every type and version Kafka knows, in batches of random sizes.
        List<ApiMessageAndVersion> more = new ArrayList<>();
        for (int i = 0; i < Math.max(1, Vectors.samples() / 2); i++) {
            for (MetadataRecordType t : MetadataRecordType.values()) {
                SpecRandom gen = new SpecRandom(SpecRandom.metadataSchema(t.id()), random);
                Class<? extends ApiMessage> cls = t.newMetadataRecord().getClass();
                for (short v = t.lowestSupportedVersion(); v <= t.highestSupportedVersion(); v++) {
                    more.add(new ApiMessageAndVersion(SpecRandom.read(cls, gen.randomJson(v), v), v));
                }
            }
        }
        int epoch = 7;
        for (int from = 0; from < more.size(); ) {
            int n = Math.min(more.size() - from, 1 + random.nextInt(60));
            parts.add(Batches.data(next, epoch, 6000 + next, more.subList(from, from + n)));
            next += n;
            from += n;
            if (random.nextInt(5) == 0) {
                epoch++;
                parts.add(Batches.control(next, epoch, 6000 + next, List.of(
                    new LeaderChangeMessage().setLeaderId(random.nextInt(5)).setVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(0))),
                    new KRaftVersionRecord().setKRaftVersion((short) random.nextInt(2)))));
                next += 2;
            }
        }
        parts.add(Batches.control(next, epoch, 9000, List.of(new SnapshotHeaderRecord().setVersion((short) 0).setLastContainedLogTimestamp(8999))));
        parts.add(Batches.control(next + 1, epoch, 9000, List.of(new SnapshotFooterRecord().setVersion((short) 0))));
        ByteBuffer out = ByteBuffer.allocate(parts.stream().mapToInt(p -> p.length).sum());
        parts.forEach(out::put);
        Files.write(Vectors.java("java.log"), out.array());
        // Kafka's own reader must accept what Kafka's builders wrote (a check of this test).
        assertEquals(parts.size(), Batches.readKraft(out.array()).size(), "RecordsIterator must return every batch Kafka wrote");
    }
}

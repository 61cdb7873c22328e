import java.io.File;
import java.nio.ByteBuffer;
import java.nio.file.*;
import java.util.*;
import kafka.raft.KafkaMetadataLog;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.message.LeaderChangeMessage;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.record.*;
import org.apache.kafka.common.utils.*;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.raft.*;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.KRaftVersion;
import org.apache.kafka.server.common.OffsetAndEpoch;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.snapshot.*;

/**
 * read <partition dir>: opens the directory with Kafka's KafkaMetadataLog (which runs
 *   recoverSnapshots, its "Inconsistent snapshot state" check and truncateToLatestSnapshot) and
 *   prints the log and every snapshot as FileRawSnapshotReader + RecordsSnapshotReader read it.
 * write <partition dir>: writes a log with 600-byte segments and snapshots with KafkaMetadataLog
 *   and RecordsSnapshotWriter, moves the log start with deleteBeforeSnapshot, and closes it.
 * The output format is shared with kraftwerk-log's src/tests/java_snapshots.rs, so the two
 * outputs can be compared with diff.
 */
public class JavaSnapshots {
    static final TopicPartition TP = new TopicPartition("__cluster_metadata", 0);

    static KafkaMetadataLog open(File dir, KafkaScheduler scheduler, int segmentBytes) {
        Map<String, Object> props = new HashMap<>();
        props.put("internal.metadata.log.segment.bytes", segmentBytes);
        MetadataLogConfig config = new MetadataLogConfig(new AbstractConfig(MetadataLogConfig.CONFIG_DEF, props));
        return KafkaMetadataLog.apply(TP, Uuid.METADATA_TOPIC_ID, dir, Time.SYSTEM, scheduler, config, 1);
    }

    static String id(OffsetAndEpoch id) {
        return id.offset() + "-" + id.epoch();
    }

    static String id(Optional<OffsetAndEpoch> id) {
        return id.map(JavaSnapshots::id).orElse("none");
    }

    static Uuid topicId(int i) {
        return new Uuid(0x1000 + i, 0x2000 + i);
    }

    /** Topic and partition records for topics 0..topics, as a controller snapshot holds them. */
    static List<ApiMessageAndVersion> metadata(int topics) {
        List<ApiMessageAndVersion> out = new ArrayList<>();
        for (int t = 0; t < topics; t++) {
            out.add(new ApiMessageAndVersion(new TopicRecord().setName("topic-" + t).setTopicId(topicId(t)), (short) 0));
            for (int p = 0; p < 2; p++) {
                out.add(new ApiMessageAndVersion(new PartitionRecord().setPartitionId(p).setTopicId(topicId(t))
                    .setReplicas(List.of(1, 2, 3)).setIsr(List.of(1, 2, 3)).setLeader(1 + p).setLeaderEpoch(t)
                    .setPartitionEpoch(t), (short) 0));
            }
        }
        return out;
    }

    static void leaderChange(KafkaMetadataLog log, int epoch, long ts) {
        LeaderChangeMessage msg = new LeaderChangeMessage().setVersion((short) 0).setLeaderId(1)
            .setVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(1)))
            .setGrantingVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(1)));
        log.initializeLeaderEpoch(epoch);
        log.appendAsLeader(MemoryRecords.withLeaderChangeMessage(log.endOffset().offset(), ts, epoch, ByteBuffer.allocate(256), msg), epoch);
    }

    static void data(KafkaMetadataLog log, int epoch, int records, long ts) {
        SimpleRecord[] rs = new SimpleRecord[records];
        for (int i = 0; i < records; i++) {
            byte[] value = new byte[40];
            Arrays.fill(value, (byte) (i + epoch));
            rs[i] = new SimpleRecord(ts, null, value);
        }
        log.appendAsLeader(MemoryRecords.withRecords(log.endOffset().offset(), Compression.NONE, epoch, rs), epoch);
    }

    static void snapshot(KafkaMetadataLog log, int topics, long ts) {
        long hw = log.endOffset().offset();
        log.updateHighWatermark(new LogOffsetMetadata(hw));
        OffsetAndEpoch snapshotId = new OffsetAndEpoch(hw, log.lastFetchedEpoch());
        RawSnapshotWriter raw = log.createNewSnapshot(snapshotId).get();
        try (RecordsSnapshotWriter<ApiMessageAndVersion> writer = new RecordsSnapshotWriter.Builder()
                .setLastContainedLogTimestamp(ts).setTime(Time.SYSTEM).setMaxBatchSize(1024)
                .setRawSnapshotWriter(raw).setKraftVersion(KRaftVersion.KRAFT_VERSION_0)
                .build(MetadataRecordSerde.INSTANCE)) {
            for (ApiMessageAndVersion r : metadata(topics)) writer.append(List.of(r));
            writer.freeze();
        }
    }

    public static void main(String[] args) throws Exception {
        File dir = new File(args[1]);
        KafkaScheduler scheduler = new KafkaScheduler(1);
        scheduler.startup();
        if (args[0].equals("write")) {
            KafkaMetadataLog log = open(dir, scheduler, 600);
            long ts = 1_700_000_000_000L;
            leaderChange(log, 1, ts);
            for (int i = 0; i < 6; i++) data(log, 1, 1 + i % 3, ts + i);
            snapshot(log, 2, ts + 5);
            leaderChange(log, 3, ts + 100);
            for (int i = 0; i < 5; i++) data(log, 3, 2, ts + 100 + i);
            snapshot(log, 3, ts + 104);
            data(log, 3, 2, ts + 105);
            log.flush(true);
            OffsetAndEpoch second = log.latestSnapshotId().get();
            if (!log.deleteBeforeSnapshot(second)) throw new IllegalStateException("deleteBeforeSnapshot did nothing");
            // Closed before the scheduled deletion of the older snapshot runs: its
            // .checkpoint.deleted file stays, as after a crash.
            log.close();
        } else {
            KafkaMetadataLog log = open(dir, scheduler, Integer.MAX_VALUE);
            describe(log, dir.toPath());
            log.close();
        }
        scheduler.shutdown();
    }

    static void describe(KafkaMetadataLog log, Path dir) throws Exception {
        System.out.println("startOffset=" + log.startOffset() + " endOffset=" + log.endOffset().offset()
            + " lastFetchedEpoch=" + log.lastFetchedEpoch());
        System.out.println("earliestSnapshot=" + id(log.earliestSnapshotId()) + " latestSnapshot=" + id(log.latestSnapshotId()));
        StringBuilder epochs = new StringBuilder();
        for (int e = -1; e <= 6; e++) epochs.append(" ").append(e).append(":").append(id(log.endOffsetForEpoch(e)));
        System.out.println("endOffsetForEpoch" + epochs);
        long offset = log.startOffset();
        StringBuilder sb = new StringBuilder();
        while (offset < log.endOffset().offset()) {
            LogFetchInfo info = log.read(offset, Isolation.UNCOMMITTED);
            long before = offset;
            for (RecordBatch b : info.records.batches()) {
                b.ensureValid();
                if (b.lastOffset() < offset) continue;
                sb.append(" ").append(b.baseOffset()).append("-").append(b.lastOffset()).append("@").append(b.partitionLeaderEpoch())
                  .append(b.isControlBatch() ? "c" : "");
                offset = b.lastOffset() + 1;
            }
            if (offset == before) throw new IllegalStateException("no progress at " + offset);
        }
        System.out.println("batches" + sb);
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path p : files) {
                Optional<SnapshotPath> parsed = Snapshots.parse(p);
                if (parsed.isPresent()) names.add(p.getFileName().toString());
            }
        }
        Collections.sort(names);
        for (String name : names) {
            SnapshotPath parsed = Snapshots.parse(dir.resolve(name)).get();
            System.out.println("file " + name + " id=" + id(parsed.snapshotId()) + " partial=" + parsed.partial() + " deleted=" + parsed.deleted());
            if (parsed.partial() || parsed.deleted()) continue;
            Optional<RawSnapshotReader> raw = log.readSnapshot(parsed.snapshotId());
            if (raw.isEmpty()) {
                System.out.println("  not in KafkaMetadataLog's catalog");
                continue;
            }
            describeSnapshot(raw.get());
        }
    }

    static void describeSnapshot(RawSnapshotReader raw) {
        StringBuilder sb = new StringBuilder();
        try (RecordsSnapshotReader<ApiMessageAndVersion> reader = RecordsSnapshotReader.of(raw, MetadataRecordSerde.INSTANCE,
                BufferSupplier.create(), 8 * 1024 * 1024, true, new LogContext())) {
            while (reader.hasNext()) {
                Batch<ApiMessageAndVersion> batch = reader.next();
                sb.append("  batch ").append(batch.baseOffset()).append("-").append(batch.lastOffset()).append("@").append(batch.epoch());
                for (ControlRecord c : batch.controlRecords()) sb.append(" ").append(c.type());
                for (ApiMessageAndVersion r : batch.records()) {
                    sb.append(" ").append(r.message().apiKey()).append(":").append(r.version());
                    if (r.message() instanceof TopicRecord t) sb.append(":").append(t.name());
                    if (r.message() instanceof PartitionRecord p) sb.append(":").append(p.partitionId()).append("/").append(p.leader());
                }
                sb.append("\n");
            }
            System.out.println("  size=" + raw.sizeInBytes() + " lastContainedLogTimestamp=" + reader.lastContainedLogTimestamp()
                + " lastContainedLogOffset=" + reader.lastContainedLogOffset() + " lastContainedLogEpoch=" + reader.lastContainedLogEpoch());
        }
        System.out.print(sb);
    }
}

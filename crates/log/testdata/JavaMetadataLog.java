import java.io.File;
import java.nio.ByteBuffer;
import java.util.*;
import kafka.raft.KafkaMetadataLog;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.message.LeaderChangeMessage;
import org.apache.kafka.common.record.*;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.raft.*;
import org.apache.kafka.server.util.KafkaScheduler;

/** write <partition dir>: writes a metadata log with Kafka's KafkaMetadataLog.
 *  read <partition dir>: opens a metadata log with KafkaMetadataLog and prints what it sees. */
public class JavaMetadataLog {
    static final TopicPartition TP = new TopicPartition("__cluster_metadata", 0);

    static KafkaMetadataLog open(File dir, KafkaScheduler scheduler, int segmentBytes) {
        Map<String, Object> props = new HashMap<>();
        props.put("internal.metadata.log.segment.bytes", segmentBytes);
        MetadataLogConfig config = new MetadataLogConfig(new AbstractConfig(MetadataLogConfig.CONFIG_DEF, props));
        return KafkaMetadataLog.apply(TP, Uuid.METADATA_TOPIC_ID, dir, Time.SYSTEM, scheduler, config, 1);
    }

    static void leaderChange(KafkaMetadataLog log, int epoch, long ts) {
        LeaderChangeMessage msg = new LeaderChangeMessage().setVersion((short) 0).setLeaderId(1)
            .setVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(1)))
            .setGrantingVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(1)));
        long offset = log.endOffset().offset();
        log.initializeLeaderEpoch(epoch);
        log.appendAsLeader(MemoryRecords.withLeaderChangeMessage(offset, ts, epoch, ByteBuffer.allocate(256), msg), epoch);
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

    public static void main(String[] args) throws Exception {
        File dir = new File(args[1]);
        KafkaScheduler scheduler = new KafkaScheduler(1);
        scheduler.startup();
        if (args[0].equals("write")) {
            KafkaMetadataLog log = open(dir, scheduler, Integer.parseInt(args[2]));
            long ts = 1_700_000_000_000L;
            leaderChange(log, 1, ts);
            for (int i = 0; i < 6; i++) data(log, 1, 1 + i % 3, ts + i);
            log.flush(true);
            leaderChange(log, 3, ts + 100);
            for (int i = 0; i < 5; i++) data(log, 3, 2, ts + 100 + i);
            log.flush(true);
            log.updateHighWatermark(new LogOffsetMetadata(log.endOffset().offset()));
            leaderChange(log, 4, ts + 200);
            data(log, 4, 3, ts + 201);
            log.flush(true);
            log.close();
            log = open(dir, scheduler, Integer.parseInt(args[2]));
            describe(log);
            log.close();
        } else {
            KafkaMetadataLog log = open(dir, scheduler, Integer.MAX_VALUE);
            describe(log);
            log.close();
        }
        scheduler.shutdown();
    }

    static void describe(KafkaMetadataLog log) {
        System.out.println("endOffset=" + log.endOffset().offset() + " lastFetchedEpoch=" + log.lastFetchedEpoch() + " startOffset=" + log.startOffset());
        for (int e = -1; e <= 6; e++) {
            System.out.println("endOffsetForEpoch(" + e + ")=" + log.endOffsetForEpoch(e));
        }
        long offset = log.startOffset();
        StringBuilder sb = new StringBuilder();
        while (offset < log.endOffset().offset()) {
            LogFetchInfo info = log.read(offset, Isolation.UNCOMMITTED);
            long before = offset;
            for (RecordBatch b : info.records.batches()) {
                b.ensureValid();
                sb.append(b.baseOffset()).append("-").append(b.lastOffset()).append("@").append(b.partitionLeaderEpoch())
                  .append(b.isControlBatch() ? "c" : "").append(" ");
                offset = b.lastOffset() + 1;
            }
            if (offset == before) throw new IllegalStateException("no progress at " + offset);
        }
        System.out.println("batches=" + sb.toString().trim());
    }
}

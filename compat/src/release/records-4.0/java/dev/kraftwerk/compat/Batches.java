package dev.kraftwerk.compat;

import java.lang.reflect.Constructor;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.KRaftVersionRecord;
import org.apache.kafka.common.message.LeaderChangeMessage;
import org.apache.kafka.common.message.SnapshotFooterRecord;
import org.apache.kafka.common.message.SnapshotHeaderRecord;
import org.apache.kafka.common.message.VotersRecord;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.raft.Batch;
import org.apache.kafka.raft.internals.BatchBuilder;
import org.apache.kafka.raft.internals.RecordsIterator;
import org.apache.kafka.server.common.ApiMessageAndVersion;

/**
 * Kafka's record-batch classes for Kafka 4.0 to 4.2, where they live in
 * {@code org.apache.kafka.common.record} (4.3 moved them to {@code common.record.internal}:
 * {@code src/release/records-4.3} is the same adapter with those imports). The tests see Kafka's
 * batches only through this class and {@link BatchView}.
 */
final class Batches {
    static final int MAX_BATCH_BYTES = 8 * 1024 * 1024;
    /** Where this Kafka keeps {@code MemoryRecords}, for the run's log. */
    static final String RECORDS_PACKAGE = MemoryRecords.class.getPackageName();

    private Batches() {}

    /** Every batch of a segment's bytes as Kafka's {@code MemoryRecords} sees it. */
    static List<BatchView> parse(byte[] segment) {
        List<BatchView> out = new ArrayList<>();
        for (MutableRecordBatch b : MemoryRecords.readableRecords(ByteBuffer.wrap(segment)).batches()) {
            boolean valid = b.isValid();
            List<BatchView.RecordView> records = new ArrayList<>();
            if (valid) { // the records of a batch with a bad CRC are not read
                for (Record r : b) {
                    records.add(new BatchView.RecordView(r.offset(), r.timestamp(), r.headers().length, r.hasKey(), r.hasValue()));
                }
            }
            out.add(new BatchView(b.baseOffset(), b.nextOffset(), b.sizeInBytes(), valid, b.checksum(), b.magic(),
                b.compressionType() == CompressionType.NONE, b.isTransactional(), b.timestampType() == TimestampType.CREATE_TIME,
                b.producerId() == RecordBatch.NO_PRODUCER_ID, b.maxTimestamp(), b.isControlBatch(), records));
        }
        return out;
    }

    /** The batches of a segment's bytes read by Kafka's KRaft reader ({@code RecordsIterator}:
     * CRC checks, KRaft's record rules, {@code MetadataRecordSerde}); throws what it throws. */
    @SuppressWarnings("unchecked")
    static List<Batch<ApiMessageAndVersion>> readKraft(byte[] segment) throws Exception {
        MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(segment));
        List<Batch<ApiMessageAndVersion>> out = new ArrayList<>();
        try (RecordsIterator<ApiMessageAndVersion> it = (RecordsIterator<ApiMessageAndVersion>) newRecordsIterator(records)) {
            while (it.hasNext()) {
                out.add(it.next());
            }
        }
        return out;
    }

    /** {@code RecordsIterator}'s constructor gained a {@code LogContext} in 4.1 (and 4.4 moved
     * {@code BufferSupplier} and {@code LogContext} to {@code utils.internals}): the arguments
     * after the first five are made from the constructor's own parameter types. */
    static Object newRecordsIterator(Object records) throws Exception {
        for (Constructor<?> c : RecordsIterator.class.getConstructors()) {
            Class<?>[] p = c.getParameterTypes();
            if (p.length == 5 || p.length == 6) {
                Object[] args = {records, MetadataRecordSerde.INSTANCE, p[2].getMethod("create").invoke(null), MAX_BATCH_BYTES, true, null};
                if (p.length == 6) {
                    args[5] = p[5].getConstructor().newInstance(); // LogContext()
                }
                return c.newInstance(java.util.Arrays.copyOf(args, p.length));
            }
        }
        throw new IllegalStateException("no known RecordsIterator constructor in " + RecordsIterator.class);
    }

    /** A data batch as the KRaft leader writes it ({@code BatchBuilder}, no compression). */
    static byte[] data(long base, int epoch, long time, List<ApiMessageAndVersion> records) {
        BatchBuilder<ApiMessageAndVersion> b = new BatchBuilder<>(ByteBuffer.allocate(1 << 20),
            MetadataRecordSerde.INSTANCE, Compression.NONE, base, time, epoch, MAX_BATCH_BYTES);
        ObjectSerializationCache cache = new ObjectSerializationCache();
        for (ApiMessageAndVersion r : records) {
            b.appendRecord(r, cache);
        }
        return Vectors.bytes(b.build().buffer());
    }

    /** A control batch as KRaft writes it ({@code MemoryRecordsBuilder}'s control appenders). */
    static byte[] control(long base, int epoch, long time, List<ApiMessage> messages) {
        ByteBuffer buf = ByteBuffer.allocate(1 << 16);
        try (MemoryRecordsBuilder b = new MemoryRecordsBuilder(buf, RecordBatch.CURRENT_MAGIC_VALUE, Compression.NONE,
                TimestampType.CREATE_TIME, base, time, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH,
                RecordBatch.NO_SEQUENCE, false, true, epoch, buf.capacity())) {
            for (ApiMessage m : messages) {
                if (m instanceof LeaderChangeMessage lc) {
                    b.appendLeaderChangeMessage(time, lc);
                } else if (m instanceof KRaftVersionRecord kv) {
                    b.appendKRaftVersionMessage(time, kv);
                } else if (m instanceof VotersRecord v) {
                    b.appendVotersMessage(time, v);
                } else if (m instanceof SnapshotHeaderRecord h) {
                    b.appendSnapshotHeaderMessage(time, h);
                } else if (m instanceof SnapshotFooterRecord f) {
                    b.appendSnapshotFooterMessage(time, f);
                } else {
                    throw new IllegalArgumentException("not a KRaft control record: " + m);
                }
            }
            return Vectors.bytes(b.build().buffer());
        }
    }
}

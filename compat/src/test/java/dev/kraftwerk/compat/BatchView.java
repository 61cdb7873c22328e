package dev.kraftwerk.compat;

import java.util.List;

/**
 * One record batch as Kafka's {@code MutableRecordBatch} reports it, taken by {@code Batches}
 * (the per-release adapter under {@code src/release/records-*}) so that the tests compile
 * against every Kafka release whatever package its record classes are in.
 *
 * @param uncompressed    {@code compressionType() == CompressionType.NONE}
 * @param createTime      {@code timestampType() == TimestampType.CREATE_TIME}
 * @param noProducer      {@code producerId() == RecordBatch.NO_PRODUCER_ID}
 * @param records         the batch's records; empty when its CRC does not match ({@code valid} false)
 */
record BatchView(long baseOffset, long nextOffset, int sizeInBytes, boolean valid, long checksum, byte magic,
                 boolean uncompressed, boolean transactional, boolean createTime, boolean noProducer,
                 long maxTimestamp, boolean control, List<RecordView> records) {
    /** One record of a batch, as Kafka's {@code Record} reports it. */
    record RecordView(long offset, long timestamp, int headers, boolean hasKey, boolean hasValue) {}
}

package dev.kraftwerk.compat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.kafka.common.message.KRaftVersionRecord;
import org.apache.kafka.common.message.LeaderChangeMessage;
import org.apache.kafka.common.message.SnapshotFooterRecord;
import org.apache.kafka.common.message.SnapshotHeaderRecord;
import org.apache.kafka.common.message.VotersRecord;
import org.apache.kafka.common.metadata.MetadataRecordType;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.junit.jupiter.api.Test;

/**
 * Metadata records (data record values, {@code ApiMessageAndVersion} frames) and KRaft control
 * record values, one by one, both ways:
 * <ul>
 *   <li>{@code rust/metadata.tsv}, {@code rust/control.tsv}: Rust-encoded random values of every
 *       type and version; Kafka decodes them, re-encodes them byte for byte, and finds the same
 *       field values as the JSON Rust wrote ({@link FieldCheck});</li>
 *   <li>{@code java/metadata.tsv}, {@code java/control.tsv}: random values of every type and
 *       version this Kafka knows, with their canonical field lines, for the Rust reader.</li>
 * </ul>
 */
class MetadataRecordsTest {
    static final Map<Integer, Class<? extends ApiMessage>> CONTROL_TYPES = Map.of(
        2, LeaderChangeMessage.class,
        3, SnapshotHeaderRecord.class,
        4, SnapshotFooterRecord.class,
        5, KRaftVersionRecord.class,
        6, VotersRecord.class);

    static byte[] serialize(ApiMessageAndVersion record) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = MetadataRecordSerde.INSTANCE.recordSize(record, cache);
        ByteBuffer buf = ByteBuffer.allocate(size);
        MetadataRecordSerde.INSTANCE.write(record, cache, new ByteBufferAccessor(buf));
        return buf.array();
    }

    static byte[] serialize(Message message, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = message.size(cache, version);
        ByteBuffer buf = ByteBuffer.allocate(size);
        message.write(new ByteBufferAccessor(buf), cache, version);
        return buf.array();
    }

    /** Decodes a whole buffer as {@code messageClass} at {@code version}; trailing bytes fail. */
    static <T extends Message> T decode(Class<T> messageClass, byte[] bytes, short version) throws Exception {
        T message = messageClass.getConstructor().newInstance();
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        message.read(new ByteBufferAccessor(buf), version);
        if (buf.hasRemaining()) {
            throw new IllegalStateException(buf.remaining() + " bytes left after the message");
        }
        return message;
    }

    @Test
    void rustMetadataRecordsDecodeInKafkaWithTheSameFields() {
        Failures failures = new Failures("Rust metadata records read by Kafka " + System.getProperty("kafka.version"));
        Map<String, Integer> seen = new TreeMap<>();
        Releases.Skipped newer = new Releases.Skipped("Rust metadata records");
        for (String[] row : Vectors.readTsv(Vectors.rust("metadata.tsv"))) {
            short apiKey = Short.parseShort(row[0]);
            short version = Short.parseShort(row[1]);
            byte[] bytes = Vectors.unhex(row[2]);
            if (!Releases.shouldCheck(Releases.Kind.metadata, apiKey, version, "metadata record " + apiKey + " v" + version,
                    failures, newer)) {
                continue;
            }
            MetadataRecordType type = MetadataRecordType.fromId(apiKey);
            String what = type + " v" + version;
            seen.merge(apiKey + " v" + version, 1, Integer::sum);
            ApiMessageAndVersion decoded;
            try {
                decoded = MetadataRecordSerde.INSTANCE.read(new ByteBufferAccessor(ByteBuffer.wrap(bytes)), bytes.length);
            } catch (Exception e) {
                failures.add(what + ": Kafka cannot read Rust's bytes " + row[2] + ": " + e);
                continue;
            }
            if (decoded.version() != version || decoded.message().apiKey() != apiKey) {
                failures.add(what + ": Kafka read it as api key " + decoded.message().apiKey() + " v" + decoded.version());
                continue;
            }
            String diff = Vectors.firstDifference(bytes, serialize(decoded));
            failures.check(diff == null, what + ": Kafka re-encodes differently: " + diff + "; Rust bytes " + row[2]);
            String fields = FieldCheck.compare(decoded.message(), version, row[3]);
            failures.check(fields == null, what + ": " + fields + "; Rust JSON " + row[3]);
        }
        for (MetadataRecordType type : MetadataRecordType.values()) {
            for (short v = type.lowestSupportedVersion(); v <= type.highestSupportedVersion(); v++) {
                failures.check(seen.getOrDefault(type.id() + " v" + v, 0) > 0,
                    "Rust wrote no " + type + " v" + v + " vectors");
            }
        }
        newer.print();
        failures.assertNone();
    }

    @Test
    void rustControlRecordsDecodeInKafkaWithTheSameFields() throws Exception {
        Failures failures = new Failures("Rust control records read by Kafka");
        Map<Integer, Integer> seen = new TreeMap<>();
        for (String[] row : Vectors.readTsv(Vectors.rust("control.tsv"))) {
            int type = Integer.parseInt(row[0]);
            byte[] bytes = Vectors.unhex(row[1]);
            Class<? extends ApiMessage> cls = CONTROL_TYPES.get(type);
            String what = (cls == null ? "control type " + type : cls.getSimpleName()) + " v0";
            if (cls == null) {
                failures.add(what + ": not a KRaft control record type");
                continue;
            }
            seen.merge(type, 1, Integer::sum);
            ApiMessage decoded;
            try {
                decoded = decode(cls, bytes, (short) 0);
            } catch (Exception e) {
                failures.add(what + ": Kafka cannot read Rust's bytes " + row[1] + ": " + e);
                continue;
            }
            String diff = Vectors.firstDifference(bytes, serialize(decoded, (short) 0));
            failures.check(diff == null, what + ": Kafka re-encodes differently: " + diff);
            String fields = FieldCheck.compare(decoded, (short) 0, row[2]);
            failures.check(fields == null, what + ": " + fields + "; Rust JSON " + row[2]);
        }
        for (int type : CONTROL_TYPES.keySet()) {
            failures.check(seen.getOrDefault(type, 0) > 0, "Rust wrote no control records of type " + type);
        }
        failures.assertNone();
    }

    @Test
    void writeKafkaMetadataRecords() {
        Random random = Vectors.random("metadata");
        List<String> lines = new ArrayList<>();
        Failures failures = new Failures("Kafka-encoded metadata records written");
        for (MetadataRecordType type : MetadataRecordType.values()) {
            SpecRandom gen = new SpecRandom(SpecRandom.metadataSchema(type.id()), random);
            Class<? extends ApiMessage> cls = type.newMetadataRecord().getClass();
            for (short v = type.lowestSupportedVersion(); v <= type.highestSupportedVersion(); v++) {
                for (int i = 0; i < Vectors.samples() * 2; i++) {
                    ApiMessage message = SpecRandom.read(cls, gen.randomJson(v), v);
                    FieldCheck.addUnknownTags(message, random);
                    ApiMessageAndVersion record = new ApiMessageAndVersion(message, v);
                    byte[] bytes = serialize(record);
                    // Our own generator must produce values Kafka round-trips.
                    ApiMessageAndVersion back = MetadataRecordSerde.INSTANCE.read(
                        new ByteBufferAccessor(ByteBuffer.wrap(bytes)), bytes.length);
                    failures.check(back.equals(record), type + " v" + v + ": Kafka's own round trip changed " + record);
                    String canonical = String.join(" ", Canonical.lines(SpecRandom.write(message, v), message));
                    lines.add(type.id() + "\t" + v + "\t" + Vectors.hex(bytes) + "\t" + canonical);
                }
            }
        }
        Vectors.writeLines(Vectors.java("metadata.tsv"), lines);
        failures.assertNone();
    }

    @Test
    void writeKafkaControlRecords() throws Exception {
        Random random = Vectors.random("control");
        List<String> lines = new ArrayList<>();
        for (Map.Entry<Integer, Class<? extends ApiMessage>> e : new TreeMap<>(CONTROL_TYPES).entrySet()) {
            SpecRandom gen = new SpecRandom("common/message/" + e.getValue().getSimpleName() + ".json", random);
            for (int i = 0; i < Vectors.samples() * 2; i++) {
                ApiMessage message = SpecRandom.read(e.getValue(), gen.randomJson((short) 0), (short) 0);
                FieldCheck.addUnknownTags(message, random);
                byte[] bytes = serialize(message, (short) 0);
                String canonical = String.join(" ", Canonical.lines(SpecRandom.write(message, (short) 0), message));
                lines.add(e.getKey() + "\t" + Vectors.hex(bytes) + "\t" + canonical);
            }
        }
        Vectors.writeLines(Vectors.java("control.tsv"), lines);
    }
}

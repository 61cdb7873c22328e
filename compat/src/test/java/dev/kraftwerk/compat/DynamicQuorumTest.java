package dev.kraftwerk.compat;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.common.message.KRaftVersionRecord;
import org.apache.kafka.common.message.VotersRecord;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.metadata.properties.MetaProperties;
import org.apache.kafka.metadata.properties.PropertiesUtils;
import org.apache.kafka.raft.DynamicVoters;
import org.apache.kafka.server.common.MetadataVersion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dynamic quorums (KIP-853) as {@code kraftwerk format} writes them
 * (src/cli/format/java_vectors.rs: random {@code --initial-controllers} lists and
 * {@code --no-initial-controllers}, node 1, listener {@code CONTROLLER}), against Kafka's own
 * classes of the release under test:
 * <ul>
 *   <li>the VotersRecord kraftwerk builds equals, byte for byte, the one of
 *       {@code DynamicVoters.parse(list).toVoterSet("CONTROLLER").toVotersRecord(0)}, and Kafka
 *       reads kraftwerk's bytes into an equal message; the KRaftVersionRecord(1) likewise;</li>
 *   <li>Kafka's {@code Formatter} (set up as {@code StorageTool} sets it up for these options)
 *       writes the same files into the same directories, the same bytes once the clock is out
 *       (batch timestamps, CRCs, the SnapshotHeader's LastContainedLogTimestamp), and the same
 *       metadata directory id when node 1 is an initial controller.</li>
 * </ul>
 */
class DynamicQuorumTest {
    static final String CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg";

    @TempDir
    Path tmp;

    /** {@link DiskFormatsTest#withoutClock} plus the SnapshotHeader's clock field. */
    static byte[] withoutClock(byte[] file) {
        byte[] out = DiskFormatsTest.withoutClock(file);
        if (out.length < 61 + 12) {
            return out;
        }
        // First record of the first batch: length, attributes, timestampDelta, offsetDelta,
        // keyLength, key, valueLength (varints; the key is 4 bytes), then the value
        // SnapshotHeaderRecord v0: version int16, LastContainedLogTimestamp int64.
        ByteBuffer b = ByteBuffer.wrap(out);
        b.position(61);
        readVarint(b);
        b.get();
        readVarint(b);
        readVarint(b);
        int keyLength = readVarint(b);
        byte[] key = new byte[Math.max(keyLength, 0)];
        b.get(key);
        readVarint(b);
        if (key.length == 4 && key[3] == 3 && b.remaining() >= 10) { // ControlRecordType.SNAPSHOT_HEADER
            int at = b.position() + 2;
            java.util.Arrays.fill(out, at, at + 8, (byte) 0);
        }
        return out;
    }

    static int readVarint(ByteBuffer b) {
        int value = 0;
        int shift = 0;
        byte x;
        do {
            x = b.get();
            value |= (x & 0x7f) << shift;
            shift += 7;
        } while ((x & 0x80) != 0);
        return (value >>> 1) ^ -(value & 1);
    }

    static TreeSet<String> files(Path root) throws Exception {
        try (Stream<Path> s = Files.walk(root)) {
            return s.filter(Files::isRegularFile).map(p -> root.relativize(p).toString())
                .filter(p -> !p.equals("controller.properties"))
                .collect(Collectors.toCollection(TreeSet::new));
        }
    }

    static Uuid directoryId(Path dir) throws Exception {
        MetaProperties meta = new MetaProperties.Builder(
            PropertiesUtils.readPropertiesFile(dir.resolve("meta.properties").toString())).build();
        return meta.directoryId().orElseThrow();
    }

    @Test
    void rustDynamicQuorumFormatMatchesKafkasFormatter() throws Exception {
        Failures failures = new Failures("Rust dynamic-quorum format (VotersRecord, KRaftVersionRecord, "
            + "bootstrap snapshot) against DynamicVoters, VoterSet and Formatter");
        for (String[] row : Vectors.readTsv(Vectors.rust("dynamic-quorum.tsv"))) {
            String what = "dynamic-quorum case " + row[0] + " (" + (row[1].equals("-") ? "--no-initial-controllers" : row[1]) + ")";
            Optional<DynamicVoters> voters = row[1].equals("-") ? Optional.empty() : Optional.of(DynamicVoters.parse(row[1]));
            // The control records.
            byte[] kraft = MetadataRecordsTest.serialize(new KRaftVersionRecord().setVersion((short) 0).setKRaftVersion((short) 1), (short) 0);
            failures.check(Vectors.hex(kraft).equals(row[4]), what + ": KRaftVersionRecord " + row[4] + ", Kafka's " + Vectors.hex(kraft));
            if (voters.isPresent()) {
                VotersRecord expected = voters.get().toVoterSet("CONTROLLER").toVotersRecord((short) 0);
                byte[] javaBytes = MetadataRecordsTest.serialize(expected, (short) 0);
                byte[] rustBytes = Vectors.unhex(row[3]);
                String diff = Vectors.firstDifference(javaBytes, rustBytes);
                failures.check(diff == null, what + ": VotersRecord differs from Kafka's: " + diff);
                try {
                    VotersRecord read = new VotersRecord(new ByteBufferAccessor(ByteBuffer.wrap(rustBytes)), (short) 0);
                    failures.check(read.equals(expected), what + ": Kafka reads " + read + ", built " + expected);
                } catch (RuntimeException e) {
                    failures.add(what + ": Kafka cannot read the VotersRecord: " + e);
                }
            }
            // The directories Kafka's Formatter writes.
            Path rust = Vectors.rust("dynamic-quorum/" + row[0]);
            Path java = Files.createDirectories(tmp.resolve(row[0]));
            MetadataVersion mv = MetadataVersion.fromFeatureLevel(Short.parseShort(row[2]));
            Bootstraps.formatDynamic(1, CLUSTER_ID, List.of(java.resolve("d").toString(), java.resolve("m").toString()),
                java.resolve("m").toString(), "CONTROLLER", mv, voters);
            TreeSet<String> javaFiles = files(java);
            failures.check(javaFiles.equals(files(rust)), what + ": Kafka writes " + javaFiles + ", kraftwerk " + files(rust));
            for (String file : javaFiles) {
                if (file.endsWith("meta.properties") || !Files.exists(rust.resolve(file))) {
                    continue;
                }
                String diff = Vectors.firstDifference(withoutClock(Files.readAllBytes(java.resolve(file))),
                    withoutClock(Files.readAllBytes(rust.resolve(file))));
                failures.check(diff == null, what + ": " + file + " differs from Kafka's (clock aside): " + diff);
            }
            if (voters.isPresent() && voters.get().voters().containsKey(1)) {
                failures.check(directoryId(java.resolve("m")).equals(directoryId(rust.resolve("m"))),
                    what + ": metadata directory.id " + directoryId(rust.resolve("m")) + ", Kafka's " + directoryId(java.resolve("m")));
            }
        }
        failures.assertNone();
    }
}

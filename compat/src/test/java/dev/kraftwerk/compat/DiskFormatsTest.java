package dev.kraftwerk.compat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.UserScramCredentialRecord;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;
import org.apache.kafka.metadata.properties.MetaProperties;
import org.apache.kafka.metadata.properties.MetaPropertiesVersion;
import org.apache.kafka.metadata.properties.PropertiesUtils;
import org.apache.kafka.raft.ElectionState;
import org.apache.kafka.raft.FileQuorumStateStore;
import org.apache.kafka.raft.ReplicaKey;
import org.apache.kafka.raft.generated.QuorumStateData;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.KRaftVersion;
import org.apache.kafka.server.common.MetadataVersion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The files of a metadata log directory that are not segments: {@code quorum-state}
 * ({@code FileQuorumStateStore}), {@code meta.properties} ({@code PropertiesUtils} +
 * {@code MetaProperties}) and {@code bootstrap.checkpoint} ({@code Bootstraps}: Kafka's
 * {@code BootstrapDirectory}, or from 4.4 on {@code BootstrapMetadata.fromDirectory} and {@code BatchFileWriter}).
 * Rust-written files (crates/log/tests/java_vectors.rs) are read by Kafka, compared field by
 * field with what Rust says they hold, and written back by Kafka: the bytes must match, except
 * for what Kafka stamps with the clock (the date comment, batch timestamps and their CRCs).
 * Kafka-written files go the other way.
 */
class DiskFormatsTest {
    static final String[] FEATURES = {"kraft.version", "transaction.version", "group.version",
        "eligible.leader.replicas.version", "share.version", "streams.version"};

    @TempDir
    Path tmp;

    static String dash(Object value) {
        return value == null ? "-" : value.toString();
    }

    static String undash(String text) {
        return text.equals("-") ? null : text;
    }

    // ---- quorum-state ----------------------------------------------------------------------

    /** The file with its currentVoters (a set in Kafka) sorted, to tell order from content. */
    static String votersSorted(String json) throws Exception {
        ObjectNode node = (ObjectNode) SpecRandom.MAPPER.readTree(json);
        JsonNode voters = node.get("currentVoters");
        if (voters != null) {
            List<JsonNode> list = new ArrayList<>();
            voters.forEach(list::add);
            list.sort((a, b) -> Integer.compare(a.get("voterId").asInt(), b.get("voterId").asInt()));
            ArrayNode sorted = node.putArray("currentVoters");
            list.forEach(sorted::add);
        }
        return node.toString();
    }

    @Test
    void rustQuorumStateReadAndRewrittenByKafka() throws Exception {
        Failures failures = new Failures("Rust quorum-state files read by Kafka's FileQuorumStateStore");
        int orderOnly = 0;
        for (String[] row : Vectors.readTsv(Vectors.rust("quorum-state.tsv"))) {
            Path file = Vectors.rust("quorum-state/" + row[0] + "/quorum-state");
            short kraftVersion = Short.parseShort(row[1]);
            String what = "quorum-state case " + row[0] + " (kraft.version " + kraftVersion + ")";
            ElectionState state;
            try {
                state = new FileQuorumStateStore(file.toFile()).readElectionState().orElseThrow();
            } catch (RuntimeException e) {
                failures.add(what + ": Kafka cannot read it: " + e);
                continue;
            }
            int voted = Integer.parseInt(row[4]);
            Optional<Uuid> dir = Optional.ofNullable(undash(row[5])).map(Uuid::fromString);
            Set<Integer> voters = undash(row[6]) == null ? Set.of()
                : Arrays.stream(row[6].split(",")).map(Integer::valueOf).collect(Collectors.toSet());
            Optional<ReplicaKey> key = state.optionalVotedKey();
            boolean same = state.epoch() == Integer.parseInt(row[2])
                && state.leaderIdOrSentinel() == Integer.parseInt(row[3])
                && (voted < 0 ? key.isEmpty() : key.isPresent() && key.get().id() == voted && key.get().directoryId().equals(dir))
                && new HashSet<>(state.toQuorumStateData((short) 0).currentVoters().stream()
                    .map(QuorumStateData.Voter::voterId).toList()).equals(voters);
            failures.check(same, what + ": Kafka reads " + state + ", Rust wrote " + String.join(" ", row));
            Path again = tmp.resolve("qs-" + row[0]);
            new FileQuorumStateStore(again.toFile()).writeElectionState(state, KRaftVersion.fromFeatureLevel(kraftVersion));
            String ours = Files.readString(file);
            String theirs = Files.readString(again);
            if (!ours.equals(theirs) && votersSorted(ours).equals(votersSorted(theirs))) {
                orderOnly++; // the voters are a HashSet in Kafka: any order reads the same
                continue;
            }
            failures.check(ours.equals(theirs), what + ": Kafka writes it differently: "
                + Vectors.firstDifference(ours.getBytes(StandardCharsets.UTF_8), theirs.getBytes(StandardCharsets.UTF_8))
                + "\n    Rust:  " + ours + "\n    Kafka: " + theirs);
        }
        if (orderOnly > 0) {
            System.out.println("compat: " + orderOnly + " Rust quorum-state files list the voters in another order than Kafka's HashSet");
        }
        failures.assertNone();
    }

    @Test
    void writeKafkaQuorumState() {
        Random random = Vectors.random("quorum-state");
        List<String> lines = new ArrayList<>();
        for (int c = 0; c < Vectors.samples(); c++) {
            short kraftVersion = (short) (c % 2);
            int leader = random.nextInt(3) == 0 ? -1 : nodeId(random);
            int voted = random.nextBoolean() ? -1 : nodeId(random);
            Uuid dir = kraftVersion == 1 && voted >= 0 && random.nextInt(3) != 0 ? new Uuid(random.nextLong(), random.nextLong()) : Uuid.ZERO_UUID;
            List<QuorumStateData.Voter> voters = new ArrayList<>();
            if (kraftVersion == 0) {
                Set<Integer> ids = new HashSet<>();
                for (int i = random.nextInt(6); i > 0; i--) {
                    ids.add(nodeId(random));
                }
                ids.forEach(id -> voters.add(new QuorumStateData.Voter().setVoterId(id)));
            }
            QuorumStateData data = new QuorumStateData().setLeaderEpoch(random.nextInt(4) == 0 ? random.nextInt(Integer.MAX_VALUE) : random.nextInt(100))
                .setLeaderId(leader).setVotedId(voted).setVotedDirectoryId(dir).setCurrentVoters(voters);
            ElectionState state = ElectionState.fromQuorumStateData(data);
            Path file = Vectors.java("quorum-state/" + c + "/quorum-state");
            new FileQuorumStateStore(file.toFile()).writeElectionState(state, KRaftVersion.fromFeatureLevel(kraftVersion));
            // The voters in the order the file lists them.
            List<String> written = state.toQuorumStateData((short) 0).currentVoters().stream()
                .map(v -> Integer.toString(v.voterId())).toList();
            lines.add(c + "\t" + kraftVersion + "\t" + state.epoch() + "\t" + state.leaderIdOrSentinel() + "\t" + voted
                + "\t" + (dir.equals(Uuid.ZERO_UUID) ? "-" : dir.toString())
                + "\t" + (kraftVersion == 1 || written.isEmpty() ? "-" : String.join(",", written)));
        }
        Vectors.writeLines(Vectors.java("quorum-state.tsv"), lines);
    }

    /** Mostly small node ids, sometimes anything non-negative. */
    static int nodeId(Random random) {
        return random.nextInt(4) == 0 ? random.nextInt(Integer.MAX_VALUE) : random.nextInt(16);
    }

    // ---- meta.properties -------------------------------------------------------------------

    /** The text without its second line, the date Properties.store writes (in the JVM's zone). */
    static String withoutDate(String text) {
        List<String> lines = new ArrayList<>(Arrays.asList(text.split("\n", -1)));
        if (lines.size() > 1 && lines.get(1).startsWith("#")) {
            lines.remove(1);
        }
        return String.join("\n", lines);
    }

    @Test
    void rustMetaPropertiesReadAndRewrittenByKafka() throws Exception {
        Failures failures = new Failures("Rust meta.properties read by Kafka's MetaProperties");
        for (String[] row : Vectors.readTsv(Vectors.rust("meta-properties.tsv"))) {
            Path file = Vectors.rust("meta-properties/" + row[0] + "/meta.properties");
            String what = "meta.properties case " + row[0];
            MetaProperties meta;
            try {
                meta = new MetaProperties.Builder(PropertiesUtils.readPropertiesFile(file.toString())).build();
            } catch (Exception e) {
                failures.add(what + ": Kafka cannot read it: " + e);
                continue;
            }
            String clusterId = undash(row[2]) == null ? null : new String(Vectors.unhex(row[2]), StandardCharsets.UTF_8);
            boolean same = meta.version().number() == Integer.parseInt(row[1])
                && meta.clusterId().equals(Optional.ofNullable(clusterId))
                && meta.nodeId().equals(undash(row[3]) == null ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(row[3])))
                && meta.directoryId().equals(Optional.ofNullable(undash(row[4])).map(Uuid::fromString));
            failures.check(same, what + ": Kafka reads " + meta + ", Rust wrote " + String.join(" ", row));
            // Kafka writes UTF-8 but reads ISO-8859-1, so non-ASCII text changes on every round
            // trip: compare what each side writes for what it read.
            Path again = tmp.resolve("mp-" + row[0]);
            PropertiesUtils.writePropertiesFile(meta.toProperties(), again.toString(), false);
            String ours = withoutDate(Files.readString(Vectors.rust("meta-properties/" + row[0] + "/rewritten/meta.properties")));
            String theirs = withoutDate(Files.readString(again));
            failures.check(ours.equals(theirs), what + ": Kafka writes it differently (date line aside):\n    Rust:  "
                + ours.replace("\n", "\\n") + "\n    Kafka: " + theirs.replace("\n", "\\n"));
        }
        failures.assertNone();
    }

    static final String[] TEXT = {"a", "Z", "0", "-", "_", " ", "=", ":", "#", "!", "\\", "é", "✓", "𝄞", "\t", "\u0001"};

    static String text(Random random) {
        StringBuilder sb = new StringBuilder();
        for (int i = 1 + random.nextInt(12); i > 0; i--) {
            sb.append(TEXT[random.nextInt(TEXT.length)]);
        }
        return sb.toString();
    }

    static Uuid directoryId(Random random) {
        return new Uuid(random.nextLong() | 1L << 40, random.nextLong()); // never a reserved id
    }

    @Test
    void writeKafkaMetaProperties() throws Exception {
        Random random = Vectors.random("meta.properties");
        List<String> lines = new ArrayList<>();
        for (int c = 0; c < Vectors.samples(); c++) {
            MetaProperties.Builder b = new MetaProperties.Builder();
            if (random.nextInt(4) == 0) {
                b.setVersion(MetaPropertiesVersion.V0);
                if (random.nextBoolean()) {
                    b.setClusterId(text(random));
                }
                if (random.nextBoolean()) {
                    b.setNodeId(nodeId(random));
                }
                if (random.nextBoolean()) {
                    b.setDirectoryId(directoryId(random));
                }
            } else {
                b.setVersion(MetaPropertiesVersion.V1).setClusterId(text(random)).setNodeId(nodeId(random));
                if (random.nextInt(5) != 0) {
                    b.setDirectoryId(directoryId(random));
                }
            }
            Path file = Vectors.java("meta-properties/" + c + "/meta.properties");
            PropertiesUtils.writePropertiesFile(b.build().toProperties(), file.toString(), false);
            // What Kafka reads back (ISO-8859-1) and what it writes for that (UTF-8).
            MetaProperties meta = new MetaProperties.Builder(PropertiesUtils.readPropertiesFile(file.toString())).build();
            Path rewritten = Vectors.java("meta-properties/" + c + "/rewritten/meta.properties");
            PropertiesUtils.writePropertiesFile(meta.toProperties(), rewritten.toString(), false);
            lines.add(c + "\t" + meta.version().number()
                + "\t" + meta.clusterId().map(s -> Vectors.hex(s.getBytes(StandardCharsets.UTF_8))).orElse("-")
                + "\t" + (meta.nodeId().isPresent() ? Integer.toString(meta.nodeId().getAsInt()) : "-")
                + "\t" + meta.directoryId().map(Uuid::toString).orElse("-"));
        }
        Vectors.writeLines(Vectors.java("meta-properties.tsv"), lines);
    }

    // ---- bootstrap.checkpoint --------------------------------------------------------------

    static Map<String, Short> features(String text) {
        Map<String, Short> out = new LinkedHashMap<>();
        if (undash(text) != null) {
            for (String pair : text.split(",")) {
                String[] kv = pair.split("=");
                out.put(kv[0], Short.valueOf(kv[1]));
            }
        }
        return out;
    }

    static List<ApiMessageAndVersion> frames(String text) {
        List<ApiMessageAndVersion> out = new ArrayList<>();
        if (undash(text) != null) {
            for (String hex : text.split(" ")) {
                byte[] b = Vectors.unhex(hex);
                out.add(MetadataRecordSerde.INSTANCE.read(new ByteBufferAccessor(ByteBuffer.wrap(b)), b.length));
            }
        }
        return out;
    }

    /** A batch file with every batch's CRC and timestamps zeroed: what is left once the clock is out. */
    static byte[] withoutClock(byte[] file) {
        byte[] out = file.clone();
        ByteBuffer b = ByteBuffer.wrap(out);
        for (int pos = 0; pos + 12 <= out.length; pos += 12 + b.getInt(pos + 8)) {
            Arrays.fill(out, pos + 17, pos + 21, (byte) 0);
            Arrays.fill(out, pos + 27, pos + 43, (byte) 0);
        }
        return out;
    }

    @Test
    void rustBootstrapReadAndRewrittenByKafka() throws Exception {
        Failures failures = new Failures("Rust bootstrap.checkpoint read by Kafka (" + Bootstraps.HOW + ")");
        Map<String, Integer> unknownToKafka = new TreeMap<>();
        for (String[] row : Vectors.readTsv(Vectors.rust("bootstrap.tsv"))) {
            Path dir = Vectors.rust("bootstrap/" + row[0]);
            String what = "bootstrap.checkpoint case " + row[0] + " (metadata.version level " + row[1] + ")";
            short level = Short.parseShort(row[1]);
            if (level > MetadataVersion.latestTesting().featureLevel()) {
                unknownToKafka.merge("level " + level, 1, Integer::sum); // newer than this release
                continue;
            }
            MetadataVersion mv;
            try {
                mv = MetadataVersion.fromFeatureLevel(level);
            } catch (IllegalArgumentException e) {
                failures.add(what + ": not a metadata.version level of Kafka " + Releases.version() + ": " + e);
                continue;
            }
            BootstrapMetadata read;
            try {
                read = Bootstraps.read(dir);
            } catch (Exception e) {
                failures.add(what + ": Kafka cannot read it: " + e);
                continue;
            }
            List<ApiMessageAndVersion> expected = new ArrayList<>(BootstrapMetadata.fromVersions(mv, features(row[2]), "compat").records());
            expected.addAll(frames(row[3]));
            failures.check(read.records().equals(expected) && read.metadataVersion() == mv,
                what + ": Kafka reads " + read.records() + " at " + read.metadataVersion() + ", Kafka's fromVersions gives " + expected);
            Path again = Files.createDirectories(tmp.resolve("bs-" + row[0]));
            Bootstraps.write(again, read);
            String diff = Vectors.firstDifference(withoutClock(Files.readAllBytes(dir.resolve("bootstrap.checkpoint"))),
                withoutClock(Files.readAllBytes(again.resolve("bootstrap.checkpoint"))));
            failures.check(diff == null, what + ": Kafka writes it differently (timestamps and CRCs aside): " + diff);
        }
        if (!unknownToKafka.isEmpty()) {
            System.out.println("compat: NOT CHECKED on Kafka " + Releases.version() + " (Rust bootstrap.checkpoint files, "
                + "metadata.version levels above its newest, " + MetadataVersion.latestTesting() + "): " + unknownToKafka);
        }
        failures.assertNone();
    }

    @Test
    void writeKafkaBootstrap() throws Exception {
        Random random = Vectors.random("bootstrap");
        List<MetadataVersion> production = Arrays.stream(MetadataVersion.values()).filter(MetadataVersion::isProduction).toList();
        List<String> lines = new ArrayList<>();
        for (int c = 0; c < Vectors.samples(); c++) {
            MetadataVersion mv = production.get(random.nextInt(production.size()));
            Map<String, Short> features = new LinkedHashMap<>();
            for (String f : FEATURES) {
                if (random.nextBoolean()) {
                    features.put(f, (short) random.nextInt(3));
                }
            }
            List<ApiMessageAndVersion> records = new ArrayList<>(BootstrapMetadata.fromVersions(mv, features, "compat").records());
            List<String> extra = new ArrayList<>();
            for (int i = random.nextInt(3) == 0 ? 1 + random.nextInt(3) : 0; i > 0; i--) {
                byte[] salt = new byte[8];
                random.nextBytes(salt);
                ApiMessageAndVersion scram = new ApiMessageAndVersion(new UserScramCredentialRecord().setName("user-" + i)
                    .setMechanism((byte) (1 + random.nextInt(2))).setSalt(salt).setStoredKey(new byte[32])
                    .setServerKey(new byte[32]).setIterations(4096 + random.nextInt(10000)), (short) 0);
                records.add(scram);
                extra.add(Vectors.hex(MetadataRecordsTest.serialize(scram)));
            }
            Path dir = Vectors.java("bootstrap/" + c + "/x").getParent();
            Bootstraps.write(dir, BootstrapMetadata.fromRecords(records, "compat"));
            String featureText = features.isEmpty() ? "-"
                : features.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(","));
            lines.add(c + "\t" + mv.featureLevel() + "\t" + featureText + "\t" + (extra.isEmpty() ? "-" : String.join(" ", extra)));
        }
        Vectors.writeLines(Vectors.java("bootstrap.tsv"), lines);
    }
}

package dev.kraftwerk.compat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.metadata.MetadataRecordType;

/**
 * The Kafka release under test ({@code -Dkafka.version}) and {@code compat/release-versions.txt}:
 * the metadata record and RPC versions that arrived after Kafka 4.0, with the first release
 * line that has them. A version is checked exactly on every release from its line on; on older
 * releases it is left out, and the run says so ({@link Skipped}).
 */
final class Releases {
    /** The two kinds of versioned messages the table lists. */
    enum Kind { metadata, rpc }

    /** One row: {@code kind apiKey version} arrives in release line {@code since}. */
    record Since(Kind kind, short apiKey, short version, String since, String name) {
        /** Whether the release under test is older than this row's line. */
        boolean newerThanRelease() {
            return compareLines(since, line()) > 0;
        }
    }

    private static List<Since> table;

    private Releases() {}

    /** The release under test, e.g. {@code 4.3.1}. */
    static String version() {
        return System.getProperty("kafka.version", "4.1.2");
    }

    /** Its release line, e.g. {@code 4.3}. */
    static String line() {
        String[] p = version().split("[.-]");
        return p[0] + "." + p[1];
    }

    /** Compares release lines ({@code 4.3} before {@code 4.10}). */
    static int compareLines(String a, String b) {
        String[] x = a.split("\\.");
        String[] y = b.split("\\.");
        int c = Integer.compare(Integer.parseInt(x[0]), Integer.parseInt(y[0]));
        return c != 0 ? c : Integer.compare(Integer.parseInt(x[1]), Integer.parseInt(y[1]));
    }

    /** Every row of compat/release-versions.txt. */
    static synchronized List<Since> table() {
        if (table == null) {
            String file = System.getProperty("compat.releaseVersions", "release-versions.txt");
            List<Since> rows = new ArrayList<>();
            try {
                for (String line : Files.readAllLines(Paths.get(file))) {
                    if (line.isBlank() || line.startsWith("#")) {
                        continue;
                    }
                    String[] f = line.trim().split("\\s+", 5);
                    rows.add(new Since(Kind.valueOf(f[0]), Short.parseShort(f[1]), Short.parseShort(f[2]), f[3],
                        f.length > 4 ? f[4] : ""));
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            table = List.copyOf(rows);
        }
        return table;
    }

    /** The row of a version, if the table lists it. */
    static Optional<Since> since(Kind kind, int apiKey, int version) {
        return table().stream().filter(s -> s.kind == kind && s.apiKey == apiKey && s.version == version).findFirst();
    }

    /** Whether the table says the version arrives after the release under test. */
    static boolean newerThanRelease(Kind kind, int apiKey, int version) {
        return since(kind, apiKey, version).map(Since::newerThanRelease).orElse(false);
    }

    /**
     * Decides whether a vector at {@code kind apiKey version} is checked against this release:
     * true when Kafka knows the version and the table agrees; false (counted in {@code skipped})
     * when the table says the version is newer than the release and Kafka indeed lacks it. A
     * disagreement between the table and the jars is a failure.
     */
    static boolean shouldCheck(Kind kind, int apiKey, int version, String what, Failures failures, Skipped skipped) {
        boolean kafkaKnows = kafkaKnows(kind, apiKey, version);
        boolean newer = newerThanRelease(kind, apiKey, version);
        if (kafkaKnows && !newer) {
            return true;
        }
        if (!kafkaKnows && newer) {
            skipped.add(what + " (from Kafka " + since(kind, apiKey, version).get().since() + ")");
            return false;
        }
        failures.add(kafkaKnows
            ? what + ": Kafka " + version() + " has it, but release-versions.txt says it arrives in "
                + since(kind, apiKey, version).get().since()
            : what + ": Kafka " + version() + " does not know it, and release-versions.txt does not list it as newer");
        return false;
    }

    /** Whether this Kafka's {@code MetadataRecordType} / {@code ApiMessageType} has the version. */
    static boolean kafkaKnows(Kind kind, int apiKey, int version) {
        try {
            if (kind == Kind.metadata) {
                MetadataRecordType t = MetadataRecordType.fromId((short) apiKey);
                return version >= t.lowestSupportedVersion() && version <= t.highestSupportedVersion();
            }
            ApiMessageType t = ApiMessageType.fromApiKey((short) apiKey);
            return version >= t.lowestSupportedVersion() && version <= t.highestSupportedVersion(true);
        } catch (UnsupportedVersionException | IllegalArgumentException e) {
            return false; // an api key this Kafka does not have
        }
    }

    /** Vectors left out because their version is newer than the release, printed loudly. */
    static final class Skipped {
        private final String what;
        private final Map<String, Integer> counts = new TreeMap<>();

        Skipped(String what) {
            this.what = what;
        }

        void add(String key) {
            counts.merge(key, 1, Integer::sum);
        }

        /** Prints one {@code compat: NOT CHECKED} line when anything was left out. */
        void print() {
            if (!counts.isEmpty()) {
                int n = counts.values().stream().mapToInt(Integer::intValue).sum();
                System.out.println("compat: NOT CHECKED on Kafka " + version() + " (" + what + ", newer than this release per "
                    + "release-versions.txt): " + n + " vectors of " + counts);
            }
        }
    }
}

package dev.kraftwerk.compat;

import org.junit.jupiter.api.Test;

/**
 * {@code compat/release-versions.txt} against the jars under test: every listed record or RPC
 * version must be known to this Kafka exactly when the release is at or after the row's line,
 * so a wrong row (which would leave a version unchecked on a release that has it) fails here.
 */
class ReleaseTableTest {
    @Test
    void releaseTableMatchesThisKafka() {
        Failures failures = new Failures("release-versions.txt against Kafka " + Releases.version());
        int newer = 0;
        for (Releases.Since row : Releases.table()) {
            boolean knows = Releases.kafkaKnows(row.kind(), row.apiKey(), row.version());
            failures.check(knows != row.newerThanRelease(), row.kind() + " " + row.apiKey() + " v" + row.version()
                + " (" + row.name() + ", listed from " + row.since() + "): Kafka " + Releases.version()
                + (knows ? " has it" : " does not have it"));
            newer += row.newerThanRelease() ? 1 : 0;
        }
        System.out.printf("compat: Kafka %s (line %s): %d of %d release-versions.txt rows are newer than it%n",
            Releases.version(), Releases.line(), newer, Releases.table().size());
        failures.assertNone();
    }
}

package dev.kraftwerk.compat;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Collects mismatches so one run reports every api/record and version that differs (the first
 * few in full), instead of stopping at the first.
 */
final class Failures {
    private static final int SHOWN = 25;
    private final String what;
    private final List<String> messages = new ArrayList<>();
    private int checks;

    Failures(String what) {
        this.what = what;
    }

    void check(boolean ok, String message) {
        checks++;
        if (!ok) {
            messages.add(message);
        }
    }

    void add(String message) {
        checks++;
        messages.add(message);
    }

    void passed() {
        checks++;
    }

    int checks() {
        return checks;
    }

    /** Fails the test with the collected messages, if any; prints a one-line summary. */
    void assertNone() {
        if (messages.isEmpty()) {
            System.out.printf("compat: %s: %d checks passed%n", what, checks);
            return;
        }
        StringBuilder sb = new StringBuilder();
        sb.append(what).append(": ").append(messages.size()).append(" of ").append(checks).append(" checks failed");
        for (int i = 0; i < Math.min(SHOWN, messages.size()); i++) {
            sb.append("\n  - ").append(messages.get(i));
        }
        if (messages.size() > SHOWN) {
            java.nio.file.Path all = Vectors.java("failures/" + what.replaceAll("[^A-Za-z0-9.]+", "-") + ".txt");
            Vectors.writeLines(all, messages);
            sb.append("\n  ... and ").append(messages.size() - SHOWN).append(" more, all in ").append(all);
        }
        fail(sb.toString());
    }
}

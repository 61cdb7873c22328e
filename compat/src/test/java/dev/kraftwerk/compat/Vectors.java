package dev.kraftwerk.compat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Where the vectors live and how they are written: {@code <vectors>/rust/...} is written by the
 * Rust vector tests and read here, {@code <vectors>/java/...} is written here and read by Rust.
 *
 * <p>Vector files are tab-separated text, one vector per line, bytes in lowercase hex, so that a
 * failing line can be pasted into a bug report. The layouts are documented in compat/README.md.
 */
final class Vectors {
    private Vectors() {}

    static final HexFormat HEX = HexFormat.of();

    static Path root() {
        String dir = System.getProperty("vectors");
        if (dir == null || dir.isEmpty()) {
            dir = "target/vectors";
        }
        return Paths.get(dir).toAbsolutePath();
    }

    /** A file written by the Rust side; fails the test with a hint when it is missing. */
    static Path rust(String name) {
        Path p = root().resolve("rust").resolve(name);
        if (!Files.exists(p)) {
            fail("missing Rust vectors " + p + ": run compat/run (it writes them before calling Maven)");
        }
        return p;
    }

    /** A file (or directory) this side writes, parents created. */
    static Path java(String name) {
        Path p = root().resolve("java").resolve(name);
        try {
            Files.createDirectories(p.getParent());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return p;
    }

    static long seed() {
        return Long.getLong("compat.seed", 20251129L);
    }

    static int samples() {
        return Integer.getInteger("compat.samples", 40);
    }

    /** A generator for one named stream, so adding a test does not shift the others' values. */
    static Random random(String stream) {
        return new Random(seed() * 31 + stream.hashCode());
    }

    static String hex(byte[] bytes) {
        return HEX.formatHex(bytes);
    }

    static byte[] unhex(String text) {
        return HEX.parseHex(text);
    }

    static byte[] bytes(ByteBuffer buffer) {
        ByteBuffer b = buffer.duplicate();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    /** The lines of a TSV vector file, split on tabs. */
    static List<String[]> readTsv(Path path) {
        try {
            List<String[]> rows = new ArrayList<>();
            for (String line : Files.readAllLines(path, StandardCharsets.UTF_8)) {
                if (!line.isEmpty()) {
                    rows.add(line.split("\t", -1));
                }
            }
            return rows;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void writeLines(Path path, List<String> lines) {
        try {
            Files.write(path, lines, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Null when equal, else a message naming the first differing byte offset and a few bytes of
     * context from both sides.
     */
    static String firstDifference(byte[] expected, byte[] actual) {
        int n = Math.min(expected.length, actual.length);
        int at = 0;
        while (at < n && expected[at] == actual[at]) {
            at++;
        }
        if (at == n && expected.length == actual.length) {
            return null;
        }
        int from = Math.max(0, at - 4);
        return String.format("first differing byte at offset %d (lengths %d vs %d); from offset %d: %s vs %s",
            at, expected.length, actual.length, from,
            window(expected, from), window(actual, from));
    }

    private static String window(byte[] b, int from) {
        int to = Math.min(b.length, from + 16);
        return from >= to ? "<end>" : HEX.formatHex(b, from, to);
    }
}

package dev.kraftwerk.compat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.types.RawTaggedField;

/**
 * "Same fields" for a message decoded from Rust bytes, given the JSON the Rust side wrote for the
 * value it encoded:
 * <ol>
 *   <li>every field Kafka's {@code XJsonConverter.write(message, version)} emits (all fields of the
 *       version except tagged ones at their default) has the same value in Rust's JSON, compared
 *       through {@link Canonical} lines, unknown tagged fields of the message included;</li>
 *   <li>Kafka's {@code XJsonConverter.read(rustJson, version)} (given the fields of the version
 *       only) builds a message equal to the
 *       decoded one (compared as JSON at the version, and at the highest version when the value
 *       fits it, so that defaults of fields the version lacks count too).</li>
 * </ol>
 * Together with byte-identical re-encoding this pins every field: a Rust value that differs in
 * an omitted default tagged field or a field the version lacks would have changed the bytes.
 */
final class FieldCheck {
    private FieldCheck() {}

    /** Null when the fields agree, else what differs. */
    static String compare(Message decoded, short version, String rustJsonText) {
        JsonNode rustJson;
        try {
            rustJson = SpecRandom.MAPPER.readTree(rustJsonText);
        } catch (IOException e) {
            return "Rust JSON does not parse: " + e.getMessage();
        }
        List<String> javaLines = Canonical.lines(SpecRandom.write(decoded, version), decoded);
        List<String> rustLines = Canonical.lines(rustJson);
        String missing = Canonical.firstMissing(javaLines, rustLines);
        if (missing != null) {
            return "fields differ: " + missing;
        }
        Message fromRust;
        try {
            JsonNode fitted = new SpecRandom(SpecRandom.schemaOf(decoded), new Random(0)).onlyVersion(rustJson, version);
            fromRust = SpecRandom.read(decoded.getClass(), fitted, version);
        } catch (RuntimeException e) {
            return "Kafka's JSON converter rejects Rust's JSON: " + e;
        }
        // At the vector's version, and at the highest version when the value fits it (fields
        // with closed version ranges, common in RPCs, may not): there the defaults of the fields
        // this version lacks are compared too.
        for (short v : new short[] {version, decoded.highestSupportedVersion()}) {
            JsonNode expected;
            try {
                expected = SpecRandom.write(decoded, v);
            } catch (RuntimeException e) {
                continue; // the decoded value itself does not fit version v
            }
            JsonNode actual;
            try {
                actual = SpecRandom.write(fromRust, v);
            } catch (RuntimeException e) {
                return "Rust's JSON read by Kafka's converter does not fit v" + v + ": " + e;
            }
            if (!expected.equals(actual)) {
                return "Rust's JSON read by Kafka's converter gives " + actual + " at v" + v + ", the bytes give " + expected;
            }
        }
        return null;
    }

    /** Adds 0-2 unknown tagged fields (tags 100+, ascending, as a Kafka writer requires). */
    static void addUnknownTags(Message message, Random random) {
        if (random.nextInt(4) != 0) {
            return;
        }
        int n = 1 + random.nextInt(2);
        int tag = 100 + random.nextInt(5);
        for (int i = 0; i < n; i++) {
            byte[] data = new byte[random.nextInt(6)];
            random.nextBytes(data);
            message.unknownTaggedFields().add(new RawTaggedField(tag, data));
            tag += 1 + random.nextInt(3);
        }
    }
}

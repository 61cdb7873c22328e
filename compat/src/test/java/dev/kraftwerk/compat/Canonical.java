package dev.kraftwerk.compat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.types.RawTaggedField;

/**
 * A canonical, order-free rendering of a message's JSON as {@code path=value} lines, the form in
 * which the Java and Rust sides compare field values.
 *
 * <ul>
 *   <li>objects: {@code parent.key}; arrays: {@code path#=length}, then {@code path[i]};</li>
 *   <li>{@code null}, {@code true}, {@code false};</li>
 *   <li>integers in decimal; floating-point numbers as {@code d:} + the hex of their IEEE bits;</li>
 *   <li>text (strings, base64url uuids, base64 bytes) as {@code s:} + the hex of its UTF-8.</li>
 * </ul>
 *
 * <p>Fields of type {@code records} are left out: Kafka's converters write them as an empty
 * binary (KIP-673). The message's own unknown tagged fields (top level only) are appended as
 * {@code _unknownTaggedFields#=n}, {@code _unknownTaggedFields[i].tag=}, {@code .data=s:} + hex of
 * the base64 of the data. The Rust side (crates/records/src/java_vectors/debug_json.rs) renders
 * its values the same way.
 */
final class Canonical {
    private Canonical() {}

    static List<String> lines(JsonNode json, Message message) {
        List<String> out = new ArrayList<>();
        flatten("", json, out);
        // Record data is written as an empty binary by Kafka's converters (KIP-673).
        java.util.Set<String> records = new SpecRandom(SpecRandom.schemaOf(message), new java.util.Random(0)).recordsFields();
        out.removeIf(line -> {
            String key = line.substring(0, line.indexOf('='));
            return records.contains(key.substring(key.lastIndexOf('.') + 1));
        });
        List<RawTaggedField> unknown = message.unknownTaggedFields();
        out.add("_unknownTaggedFields#=" + unknown.size());
        for (int i = 0; i < unknown.size(); i++) {
            String p = "_unknownTaggedFields[" + i + "]";
            out.add(p + ".tag=" + unknown.get(i).tag());
            String base64 = java.util.Base64.getEncoder().encodeToString(unknown.get(i).data());
            out.add(p + ".data=s:" + Vectors.hex(base64.getBytes(StandardCharsets.UTF_8)));
        }
        return out;
    }

    static List<String> lines(JsonNode json) {
        List<String> out = new ArrayList<>();
        flatten("", json, out);
        return out;
    }

    private static void flatten(String path, JsonNode node, List<String> out) {
        if (node.isObject()) {
            Iterator<Map.Entry<String, JsonNode>> it = node.fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                flatten(path.isEmpty() ? e.getKey() : path + "." + e.getKey(), e.getValue(), out);
            }
        } else if (node.isArray()) {
            out.add(path + "#=" + node.size());
            for (int i = 0; i < node.size(); i++) {
                flatten(path + "[" + i + "]", node.get(i), out);
            }
        } else if (node.isNull()) {
            out.add(path + "=null");
        } else if (node.isBoolean()) {
            out.add(path + "=" + node.booleanValue());
        } else if (node.isFloatingPointNumber()) {
            out.add(path + "=d:" + Long.toHexString(Double.doubleToRawLongBits(node.doubleValue())));
        } else if (node.isIntegralNumber()) {
            out.add(path + "=" + node.bigIntegerValue());
        } else if (node.isTextual()) {
            out.add(path + "=s:" + Vectors.hex(node.textValue().getBytes(StandardCharsets.UTF_8)));
        } else {
            throw new IllegalArgumentException("unexpected JSON node " + node.getNodeType() + " at " + path);
        }
    }

    /** The first of {@code expected}'s lines missing from {@code actual}, or null. */
    static String firstMissing(List<String> expected, List<String> actual) {
        java.util.Set<String> have = new java.util.HashSet<>(actual);
        for (String line : expected) {
            if (!have.contains(line)) {
                String key = line.substring(0, line.indexOf('='));
                String theirs = actual.stream().filter(l -> l.startsWith(key + "=")).findFirst().orElse("<absent>");
                return "Java has " + line + ", Rust has " + theirs;
            }
        }
        return null;
    }
}

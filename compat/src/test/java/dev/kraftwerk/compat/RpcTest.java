package dev.kraftwerk.compat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.junit.jupiter.api.Test;

/**
 * Raft and controller RPCs, requests and responses with their headers, at every version listed
 * in compat/rpc-versions.txt that both Kafka and kafka-protocol know:
 * <ul>
 *   <li>{@code rust/rpc.tsv}: frames (header + body, no size prefix) kraftwerk's codec encoded
 *       from random values; Kafka's {@code *Data} classes read them with a
 *       {@code ByteBufferAccessor} and must write back identical bytes;</li>
 *   <li>{@code java/rpc.tsv}: frames of random messages Kafka's classes wrote, for kraftwerk's
 *       codec to decode and re-encode.</li>
 * </ul>
 * Line format: {@code name, api key, version, request|response, hex, header fields, body fields},
 * the fields as JSON (Rust, from the value's Debug text) or canonical lines (Kafka), compared as
 * for metadata records ({@link FieldCheck}).
 */
class RpcTest {
    /** A listed api: {@code listedMin..listedMax} from the file, {@code min..max} cut to what this
     * Kafka knows (empty when it lacks the api). */
    record Api(String name, short key, short listedMin, short listedMax, short min, short max) {}

    /** The listed apis with their ranges cut to what this Kafka knows. */
    static List<Api> apis() {
        String file = System.getProperty("compat.rpcVersions", "rpc-versions.txt");
        List<Api> out = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(Paths.get(file))) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] f = line.trim().split("\\s+");
                short key = Short.parseShort(f[1]);
                short listedMin = Short.parseShort(f[2]);
                short listedMax = Short.parseShort(f[3]);
                short min = listedMin;
                while (min <= listedMax && !Releases.kafkaKnows(Releases.Kind.rpc, key, min)) {
                    min++;
                }
                short max = min;
                while (max < listedMax && Releases.kafkaKnows(Releases.Kind.rpc, key, max + 1)) {
                    max++;
                }
                out.add(min > listedMax ? new Api(f[0], key, listedMin, listedMax, (short) 0, (short) -1)
                    : new Api(f[0], key, listedMin, listedMax, min, max));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    static String schema(Message message) {
        String cls = message.getClass().getSimpleName();
        return "common/message/" + cls.substring(0, cls.length() - "Data".length()) + ".json";
    }

    static byte[] frame(Message header, short headerVersion, Message body, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = header.size(cache, headerVersion) + body.size(cache, version);
        ByteBuffer buf = ByteBuffer.allocate(size);
        ByteBufferAccessor out = new ByteBufferAccessor(buf);
        header.write(out, cache, headerVersion);
        body.write(out, cache, version);
        return buf.array();
    }

    /** A frame read by Kafka's classes; {@code problem} is null when it was read and written
     * back identically. */
    record Decoded(Message header, short headerVersion, ApiMessage body, String problem) {}

    /** Reads a frame as Kafka's network layer would and writes it back. */
    static Decoded roundTrip(ApiMessageType type, short version, boolean request, byte[] bytes) {
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        ByteBufferAccessor in = new ByteBufferAccessor(buf);
        Message header;
        short headerVersion;
        ApiMessage body;
        try {
            if (request) {
                headerVersion = type.requestHeaderVersion(version);
                RequestHeaderData h = new RequestHeaderData(in, headerVersion);
                if (h.requestApiKey() != type.apiKey() || h.requestApiVersion() != version) {
                    return new Decoded(h, headerVersion, null,
                        "header names api " + h.requestApiKey() + " v" + h.requestApiVersion());
                }
                header = h;
                body = type.newRequest();
            } else {
                headerVersion = type.responseHeaderVersion(version);
                header = new ResponseHeaderData(in, headerVersion);
                body = type.newResponse();
            }
            body.read(in, version);
        } catch (RuntimeException e) {
            return new Decoded(null, (short) 0, null, "Kafka cannot read it: " + e);
        }
        if (buf.hasRemaining()) {
            return new Decoded(header, headerVersion, body, buf.remaining() + " bytes left after the body");
        }
        String diff = Vectors.firstDifference(bytes, frame(header, headerVersion, body, version));
        return new Decoded(header, headerVersion, body, diff == null ? null : "Kafka writes it back differently: " + diff);
    }

    @Test
    void rustFramesRoundTripThroughKafkasClasses() {
        Failures failures = new Failures("Rust RPC frames read and rewritten by Kafka " + System.getProperty("kafka.version"));
        Set<String> seen = new HashSet<>();
        Releases.Skipped newer = new Releases.Skipped("Rust RPC frames");
        for (String[] row : Vectors.readTsv(Vectors.rust("rpc.tsv"))) {
            short key = Short.parseShort(row[1]);
            short version = Short.parseShort(row[2]);
            boolean request = row[3].equals("request");
            if (!Releases.shouldCheck(Releases.Kind.rpc, key, version, row[0] + " v" + version, failures, newer)) {
                continue;
            }
            ApiMessageType type = ApiMessageType.fromApiKey(key);
            seen.add(key + " " + version + " " + row[3]);
            String what = row[0] + " v" + version + " " + row[3];
            Decoded d = roundTrip(type, version, request, Vectors.unhex(row[4]));
            failures.check(d.problem() == null, what + ": " + d.problem() + "; Rust bytes " + row[4]);
            if (d.body() != null) {
                String header = FieldCheck.compare(d.header(), d.headerVersion(), row[5]);
                failures.check(header == null, what + " header: " + header + "; Rust JSON " + row[5]);
                String body = FieldCheck.compare(d.body(), version, row[6]);
                failures.check(body == null, what + ": " + body + "; Rust JSON " + row[6]);
            }
        }
        for (Api api : apis()) {
            for (short v = api.listedMin; v <= api.listedMax; v++) {
                if (v < api.min || v > api.max) { // rpc-versions.txt lists it, this Kafka lacks it
                    Releases.shouldCheck(Releases.Kind.rpc, api.key, v, api.name + " v" + v + " (rpc-versions.txt)",
                        failures, newer);
                    continue;
                }
                for (String kind : List.of("request", "response")) {
                    failures.check(seen.contains(api.key + " " + v + " " + kind),
                        "Rust wrote no " + api.name + " v" + v + " " + kind + " vectors (does kafka-protocol lack the version?)");
                }
            }
        }
        newer.print();
        failures.assertNone();
    }

    /** Values Kafka's readers interpret specially are kept out of the random data. */
    static void tweak(ApiMessage body, short version) {
        // An ApiVersions response carrying UNSUPPORTED_VERSION is read at v0 by every client
        // (ApiVersionsResponse.parse, KIP-511), whatever version was asked for.
        if (body instanceof ApiVersionsResponseData && version > 0) {
            ApiVersionsResponseData r = (ApiVersionsResponseData) body;
            if (r.errorCode() == Errors.UNSUPPORTED_VERSION.code()) {
                r.setErrorCode((short) 0);
            }
        }
    }

    @Test
    void writeKafkaFrames() {
        Random random = Vectors.random("rpc");
        List<String> lines = new ArrayList<>();
        List<String> ranges = new ArrayList<>();
        Failures failures = new Failures("Kafka RPC frames written");
        for (Api api : apis()) {
            if (api.min > api.max) {
                continue; // an api this Kafka does not have (rustFramesRoundTripThroughKafkasClasses says why)
            }
            ApiMessageType type = ApiMessageType.fromApiKey(api.key);
            ranges.add(api.key + "\t" + api.min + "\t" + api.max);
            for (short v = api.min; v <= api.max; v++) {
                for (boolean request : new boolean[] {true, false}) {
                    ApiMessage prototype = request ? type.newRequest() : type.newResponse();
                    SpecRandom gen = new SpecRandom(schema(prototype), random);
                    short headerVersion = request ? type.requestHeaderVersion(v) : type.responseHeaderVersion(v);
                    for (int i = 0; i < Vectors.samples(); i++) {
                        ApiMessage body = SpecRandom.read(prototype.getClass(), gen.randomJson(v), v);
                        tweak(body, v);
                        if (gen.isFlexible(v)) {
                            FieldCheck.addUnknownTags(body, random);
                        }
                        Message header;
                        if (request) {
                            RequestHeaderData h = new RequestHeaderData().setRequestApiKey(api.key)
                                .setRequestApiVersion(v).setCorrelationId(random.nextInt())
                                .setClientId(random.nextInt(5) == 0 ? null : gen.string());
                            if (headerVersion >= 2) {
                                FieldCheck.addUnknownTags(h, random);
                            }
                            header = h;
                        } else {
                            header = new ResponseHeaderData().setCorrelationId(random.nextInt());
                        }
                        byte[] bytes = frame(header, headerVersion, body, v);
                        String self = roundTrip(type, v, request, bytes).problem();
                        failures.check(self == null, api.name + " v" + v + ": Kafka's own round trip: " + self);
                        lines.add(api.name + "\t" + api.key + "\t" + v + "\t" + (request ? "request" : "response")
                            + "\t" + Vectors.hex(bytes)
                            + "\t" + String.join(" ", Canonical.lines(SpecRandom.write(header, headerVersion), header))
                            + "\t" + String.join(" ", Canonical.lines(SpecRandom.write(body, v), body)));
                    }
                }
            }
        }
        Vectors.writeLines(Vectors.java("rpc.tsv"), lines);
        Vectors.writeLines(Vectors.java("rpc-ranges.tsv"), ranges);
        failures.assertNone();
    }
}

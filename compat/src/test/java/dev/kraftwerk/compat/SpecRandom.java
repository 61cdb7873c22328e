package dev.kraftwerk.compat;

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BinaryNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Message;

/**
 * Random messages of any Kafka message or metadata record type at any version, driven by the
 * type's JSON schema as shipped inside Kafka's jars ({@code common/message/*.json},
 * {@code common/metadata/*.json}).
 *
 * <p>A random JSON document is generated in the format of Kafka's generated
 * {@code *JsonConverter} classes (camelCase keys, uuids as base64 text, bytes as binary), with
 * exactly the fields the version has, null only where the version allows it, and tagged fields
 * left out (= default) a third of the time. Kafka's own {@code XJsonConverter.read(node, version)}
 * then builds the message object, so every value is one Kafka's classes accept.
 */
final class SpecRandom {
    static final JsonMapper MAPPER = JsonMapper.builder().enable(JsonReadFeature.ALLOW_JAVA_COMMENTS).build();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final Map<String, JsonNode> SPECS = new HashMap<>();
    private static final Map<Short, String> METADATA_SCHEMAS = new HashMap<>();

    private final JsonNode spec;
    private final Map<String, JsonNode> commonStructs = new HashMap<>();
    private final Random random;

    /** @param resource e.g. "common/message/FetchRequest.json" */
    SpecRandom(String resource, Random random) {
        this.spec = spec(resource);
        this.random = random;
        for (JsonNode s : spec.path("commonStructs")) {
            commonStructs.put(s.get("name").asText(), s);
        }
    }

    static synchronized JsonNode spec(String resource) {
        return SPECS.computeIfAbsent(resource, r -> {
            try (InputStream in = SpecRandom.class.getClassLoader().getResourceAsStream(r)) {
                if (in == null) {
                    throw new IllegalStateException("no schema " + r + " on the class path (Kafka jars)");
                }
                return MAPPER.readTree(in);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    /**
     * The schema resource of the metadata record with {@code apiKey}: the file names do not
     * always match the record names (ZkMigrationRecord.json holds ZkMigrationStateRecord).
     */
    static synchronized String metadataSchema(short apiKey) {
        if (METADATA_SCHEMAS.isEmpty()) {
            try {
                java.net.URL jar = org.apache.kafka.common.metadata.MetadataRecordType.class
                    .getProtectionDomain().getCodeSource().getLocation();
                try (java.util.zip.ZipFile zip = new java.util.zip.ZipFile(new java.io.File(jar.toURI()))) {
                    zip.stream().map(java.util.zip.ZipEntry::getName)
                        .filter(n -> n.startsWith("common/metadata/") && n.endsWith(".json"))
                        .forEach(n -> {
                            JsonNode s = spec(n);
                            if (s.has("apiKey") && "metadata".equals(s.path("type").asText())) {
                                METADATA_SCHEMAS.put((short) s.get("apiKey").asInt(), n);
                            }
                        });
                }
            } catch (IOException | java.net.URISyntaxException e) {
                throw new IllegalStateException(e);
            }
        }
        String resource = METADATA_SCHEMAS.get(apiKey);
        if (resource == null) {
            throw new IllegalStateException("no metadata record schema with api key " + apiKey);
        }
        return resource;
    }

    /** Whether {@code version} is in a schema version string ("0+", "1-3", "2", "none"). */
    static boolean inVersions(String versions, short version) {
        if (versions == null || versions.equals("none")) {
            return false;
        }
        if (versions.endsWith("+")) {
            return version >= Short.parseShort(versions.substring(0, versions.length() - 1));
        }
        int dash = versions.indexOf('-');
        if (dash > 0) {
            return version >= Short.parseShort(versions.substring(0, dash))
                && version <= Short.parseShort(versions.substring(dash + 1));
        }
        return version == Short.parseShort(versions);
    }

    boolean isFlexible(short version) {
        return inVersions(spec.path("flexibleVersions").asText("none"), version);
    }

    /** A random JSON document for the whole message at {@code version}. */
    ObjectNode randomJson(short version) {
        return randomStruct(spec.get("fields"), version);
    }

    private ObjectNode randomStruct(JsonNode fields, short version) {
        ObjectNode node = NODES.objectNode();
        for (JsonNode field : fields) {
            if (!inVersions(field.get("versions").asText(), version)) {
                continue;
            }
            if (inVersions(field.path("taggedVersions").asText("none"), version) && random.nextInt(3) == 0) {
                continue; // left at its default: not written
            }
            node.set(camelCase(field.get("name").asText()), randomValue(field, version));
        }
        return node;
    }

    private JsonNode randomValue(JsonNode field, short version) {
        boolean nullable = inVersions(field.path("nullableVersions").asText("none"), version);
        String type = field.get("type").asText();
        if (nullable && random.nextInt(4) == 0) {
            return NODES.nullNode();
        }
        if (type.startsWith("[]")) {
            String element = type.substring(2);
            ArrayNode array = NODES.arrayNode();
            int n = random.nextInt(4);
            for (int i = 0; i < n; i++) {
                array.add(isPrimitive(element) ? primitive(element) : randomStruct(structFields(field, element), version));
            }
            return array;
        }
        return isPrimitive(type) ? primitive(type) : randomStruct(structFields(field, type), version);
    }

    private JsonNode structFields(JsonNode field, String type) {
        if (field.has("fields")) {
            return field.get("fields");
        }
        JsonNode common = commonStructs.get(type);
        if (common == null) {
            throw new IllegalStateException("no struct " + type + " in " + spec.get("name"));
        }
        return common.get("fields");
    }

    private static boolean isPrimitive(String type) {
        switch (type) {
            case "bool": case "int8": case "int16": case "uint16": case "int32": case "uint32": case "int64":
            case "float64": case "string": case "bytes": case "records": case "uuid":
                return true;
            default:
                return false;
        }
    }

    private JsonNode primitive(String type) {
        switch (type) {
            case "bool":
                return NODES.booleanNode(random.nextBoolean());
            case "int8":
                return NODES.numberNode((short) (byte) integer(Byte.MIN_VALUE, Byte.MAX_VALUE));
            case "int16":
                return NODES.numberNode((short) integer(Short.MIN_VALUE, Short.MAX_VALUE));
            case "uint16":
                return NODES.numberNode((int) integer(0, 0xffff));
            case "int32":
                return NODES.numberNode((int) integer(Integer.MIN_VALUE, Integer.MAX_VALUE));
            case "uint32":
                return NODES.numberNode(integer(0, 0xffffffffL));
            case "int64":
                return NODES.numberNode(integer(Long.MIN_VALUE, Long.MAX_VALUE));
            case "float64":
                return NODES.numberNode(float64());
            case "string":
                return NODES.textNode(string());
            case "bytes":
            case "records":
                return new BinaryNode(bytes());
            case "uuid":
                return NODES.textNode(uuid().toString());
            default:
                throw new IllegalArgumentException(type);
        }
    }

    /** Small values, -1, the boundaries, and anything in between. */
    private long integer(long min, long max) {
        switch (random.nextInt(6)) {
            case 0: return Math.max(min, Math.min(max, random.nextInt(4)));
            case 1: return min < 0 ? -1 : max;
            case 2: return min;
            case 3: return max;
            default:
                long span = max - min;
                if (span <= 0) { // the whole long range
                    return random.nextLong();
                }
                return min + Math.floorMod(random.nextLong(), span + 1);
        }
    }

    private double float64() {
        switch (random.nextInt(5)) {
            case 0: return 0.0;
            case 1: return -0.0;
            case 2: return 1.5;
            default:
                double d = Double.longBitsToDouble(random.nextLong());
                return Double.isFinite(d) ? d : 2.5e-300;
        }
    }

    private static final String[] CHARS = {"a", "Z", "0", ".", "-", "_", " ", "é", "✓", "𝄞", "\"", "\\", "\n", "\u0001", "/"};

    String string() {
        int n = random.nextInt(12);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            sb.append(CHARS[random.nextInt(CHARS.length)]);
        }
        return sb.toString();
    }

    byte[] bytes() {
        byte[] b = new byte[random.nextInt(16)];
        random.nextBytes(b);
        return b;
    }

    Uuid uuid() {
        switch (random.nextInt(5)) {
            case 0: return Uuid.ZERO_UUID;
            case 1: return Uuid.METADATA_TOPIC_ID;
            default: return new Uuid(random.nextLong(), random.nextLong());
        }
    }

    /**
     * The camelCase names of the schema's {@code records} fields. Kafka's JSON converters write
     * them as an empty binary (KIP-673 keeps record data out of request logs), so their content
     * is compared through the bytes only.
     */
    java.util.Set<String> recordsFields() {
        java.util.Set<String> out = new java.util.HashSet<>();
        collectRecordsFields(spec.get("fields"), out);
        commonStructs.values().forEach(c -> collectRecordsFields(c.get("fields"), out));
        return out;
    }

    private static void collectRecordsFields(JsonNode fields, java.util.Set<String> out) {
        for (JsonNode field : fields) {
            if (field.get("type").asText().equals("records")) {
                out.add(camelCase(field.get("name").asText()));
            }
            if (field.has("fields")) {
                collectRecordsFields(field.get("fields"), out);
            }
        }
    }

    /** The schema resource of any generated message class. */
    static String schemaOf(Message message) {
        if (message instanceof org.apache.kafka.common.protocol.ApiMessage
                && message.getClass().getPackageName().equals("org.apache.kafka.common.metadata")) {
            return metadataSchema(((org.apache.kafka.common.protocol.ApiMessage) message).apiKey());
        }
        String name = message.getClass().getSimpleName();
        if (name.endsWith("Data")) {
            name = name.substring(0, name.length() - "Data".length());
        }
        return "common/message/" + name + ".json";
    }

    /**
     * {@code json} with only the fields {@code version} has, recursively: a JSON document that
     * renders every field of a value (as the Rust side's does) made acceptable to
     * {@code XJsonConverter.read}, which refuses nested structs the version lacks.
     */
    JsonNode onlyVersion(JsonNode json, short version) {
        return onlyVersion(json, spec.get("fields"), version);
    }

    private JsonNode onlyVersion(JsonNode json, JsonNode fields, short version) {
        if (!json.isObject()) {
            return json;
        }
        ObjectNode out = NODES.objectNode();
        for (JsonNode field : fields) {
            String name = camelCase(field.get("name").asText());
            if (!inVersions(field.get("versions").asText(), version) || !json.has(name)) {
                continue;
            }
            JsonNode value = json.get(name);
            String type = field.get("type").asText();
            String element = type.startsWith("[]") ? type.substring(2) : type;
            if (!isPrimitive(element) && !value.isNull()) {
                JsonNode structFields = structFields(field, element);
                if (value.isArray()) {
                    ArrayNode items = NODES.arrayNode();
                    value.forEach(item -> items.add(onlyVersion(item, structFields, version)));
                    value = items;
                } else {
                    value = onlyVersion(value, structFields, version);
                }
            }
            out.set(name, value);
        }
        return out;
    }

    static String camelCase(String name) {
        return Character.toLowerCase(name.charAt(0)) + name.substring(1);
    }

    // ---- Kafka's generated JSON converters, by reflection on the message class name ----------

    private static Class<?> converter(Class<?> messageClass) {
        try {
            return Class.forName(messageClass.getName() + "JsonConverter");
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("no JSON converter for " + messageClass.getName(), e);
        }
    }

    /** {@code XJsonConverter.read(node, version)}. */
    @SuppressWarnings("unchecked")
    static <T extends Message> T read(Class<T> messageClass, JsonNode node, short version) {
        try {
            Method m = converter(messageClass).getMethod("read", JsonNode.class, short.class);
            return (T) m.invoke(null, node, version);
        } catch (InvocationTargetException e) {
            throw rethrow(e);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code XJsonConverter.write(message, version)}, serialized and parsed back so that binary
     * values become base64 text exactly as a JSON file written by another program would hold. */
    static JsonNode write(Message message, short version) {
        try {
            Method m = converter(message.getClass()).getMethod("write", message.getClass(), short.class);
            JsonNode node = (JsonNode) m.invoke(null, message, version);
            return MAPPER.readTree(node.toString());
        } catch (InvocationTargetException e) {
            throw rethrow(e);
        } catch (ReflectiveOperationException | IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static RuntimeException rethrow(InvocationTargetException e) {
        Throwable cause = e.getCause();
        if (cause instanceof RuntimeException) {
            return (RuntimeException) cause;
        }
        return new IllegalStateException(cause);
    }
}

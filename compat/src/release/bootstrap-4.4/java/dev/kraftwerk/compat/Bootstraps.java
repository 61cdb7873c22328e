package dev.kraftwerk.compat;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.raft.DynamicVoters;
import org.apache.kafka.metadata.util.BatchFileWriter;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * {@code bootstrap.checkpoint} from Kafka 4.4 on: {@code BootstrapDirectory} is gone (KIP-1170
 * moved the bootstrap records into the {@code 00000000000000000000-0000000000.checkpoint}
 * snapshot; {@code bootstrap.checkpoint} is only read, as the legacy source).
 * {@code BootstrapMetadata.fromDirectory} reads it; no 4.4 class writes it any more, so it is
 * written with {@code BatchFileWriter}, the writer 4.0 to 4.3's
 * {@code BootstrapDirectory.writeBinaryFile} used (one record per append, then close).
 */
final class Bootstraps {
    /** How this release reads and writes the file, for the run's log. */
    static final String HOW = "BootstrapMetadata.fromDirectory / BatchFileWriter (4.4 has no bootstrap.checkpoint writer)";

    private Bootstraps() {}

    /** What a controller of this release bootstraps from, given the directory. */
    static BootstrapMetadata read(Path dir) {
        return BootstrapMetadata.fromDirectory(dir);
    }

    /** Writes {@code dir/bootstrap.checkpoint}. */
    static void write(Path dir, BootstrapMetadata metadata) throws Exception {
        try (BatchFileWriter w = BatchFileWriter.open(dir.resolve(BootstrapMetadata.BINARY_BOOTSTRAP_FILENAME))) {
            for (ApiMessageAndVersion r : metadata.records()) {
                w.append(r);
            }
        }
    }

    /**
     * Formats {@code dirs} for a controller of a dynamic quorum with Kafka's own {@code Formatter},
     * as {@code kafka-storage format --initial-controllers} (or {@code --no-initial-controllers}
     * when {@code voters} is empty) sets it up; 4.4 writes the bootstrap snapshot for every controller.
     */
    static void formatDynamic(int nodeId, String clusterId, List<String> dirs, String metadataDir, String listener,
            MetadataVersion mv, Optional<DynamicVoters> voters) throws Exception {
        Formatter formatter = new Formatter()
            .setPrintStream(new PrintStream(OutputStream.nullOutputStream()))
            .setNodeId(nodeId)
            .setClusterId(clusterId)
            .setDirectories(dirs)
            .setMetadataLogDirectory(metadataDir)
            .setControllerListenerName(listener)
            .setReleaseVersion(mv)
            .setHasDynamicQuorum(true)
            .setWriteBootstrapSnapshot(true);
        voters.ifPresent(formatter::setInitialControllers);
        formatter.run();
    }
}

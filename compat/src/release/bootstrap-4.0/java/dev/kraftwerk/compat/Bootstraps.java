package dev.kraftwerk.compat;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.metadata.bootstrap.BootstrapDirectory;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.raft.DynamicVoters;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * {@code bootstrap.checkpoint} read and written by Kafka 4.0 to 4.3's {@code BootstrapDirectory}
 * (4.4 removed the class, KIP-1170: {@code src/release/bootstrap-4.4}).
 */
final class Bootstraps {
    /** How this release reads and writes the file, for the run's log. */
    static final String HOW = "BootstrapDirectory.read / writeBinaryFile";

    private Bootstraps() {}

    /** What a controller of this release bootstraps from, given the directory. */
    static BootstrapMetadata read(Path dir) throws Exception {
        return new BootstrapDirectory(dir.toString()).read();
    }

    /** Writes {@code dir/bootstrap.checkpoint}. */
    static void write(Path dir, BootstrapMetadata metadata) throws Exception {
        new BootstrapDirectory(dir.toString()).writeBinaryFile(metadata);
    }

    /**
     * Formats {@code dirs} for a controller of a dynamic quorum with Kafka's own {@code Formatter},
     * as {@code kafka-storage format --initial-controllers} (or {@code --no-initial-controllers}
     * when {@code voters} is empty) sets it up.
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
            .setHasDynamicQuorum(true);
        voters.ifPresent(formatter::setInitialControllers);
        formatter.run();
    }
}

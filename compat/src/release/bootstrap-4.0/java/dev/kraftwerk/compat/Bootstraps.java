package dev.kraftwerk.compat;

import java.nio.file.Path;
import org.apache.kafka.metadata.bootstrap.BootstrapDirectory;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;

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
}

import java.io.File;
import java.nio.file.Files;
import java.util.*;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.raft.*;
import org.apache.kafka.server.common.KRaftVersion;

public class QuorumStateCheck {
    public static void main(String[] args) throws Exception {
        if (args[0].equals("write")) {
            File dir = new File(args[1]);
            dir.mkdirs();
            Uuid dirId = Uuid.fromString("J8aAPcfLQt2bqs1JT_rMgQ");
            Set<Integer> voters = new TreeSet<>(List.of(1, 2, 3));
            write(dir, "v0-unknown-leader", ElectionState.withUnknownLeader(5, voters), KRaftVersion.KRAFT_VERSION_0);
            write(dir, "v0-voted", ElectionState.withVotedCandidate(6, ReplicaKey.of(2, ReplicaKey.NO_DIRECTORY_ID), voters), KRaftVersion.KRAFT_VERSION_0);
            write(dir, "v0-leader", ElectionState.withElectedLeader(7, 3, Optional.empty(), voters), KRaftVersion.KRAFT_VERSION_0);
            write(dir, "v0-leader-and-vote", ElectionState.withElectedLeader(8, 3, Optional.of(ReplicaKey.of(3, ReplicaKey.NO_DIRECTORY_ID)), voters), KRaftVersion.KRAFT_VERSION_0);
            write(dir, "v1-unknown-leader", ElectionState.withUnknownLeader(5, Set.of()), KRaftVersion.KRAFT_VERSION_1);
            write(dir, "v1-voted-dir", ElectionState.withVotedCandidate(6, ReplicaKey.of(2, dirId), Set.of()), KRaftVersion.KRAFT_VERSION_1);
            write(dir, "v1-voted-nodir", ElectionState.withVotedCandidate(6, ReplicaKey.of(2, ReplicaKey.NO_DIRECTORY_ID), Set.of()), KRaftVersion.KRAFT_VERSION_1);
            write(dir, "v1-leader-and-vote", ElectionState.withElectedLeader(9, 2, Optional.of(ReplicaKey.of(2, dirId)), Set.of()), KRaftVersion.KRAFT_VERSION_1);
        } else {
            for (int i = 1; i < args.length; i++) {
                File f = new File(args[i]);
                try {
                    Optional<ElectionState> s = new FileQuorumStateStore(f).readElectionState();
                    System.out.println(f.getName() + " => " + s);
                } catch (Throwable t) {
                    System.out.println(f.getName() + " => ERROR " + t + (t.getCause() != null ? " / " + t.getCause() : ""));
                }
            }
        }
    }

    static void write(File dir, String name, ElectionState state, KRaftVersion v) throws Exception {
        File f = new File(dir, name);
        new FileQuorumStateStore(f).writeElectionState(state, v);
        System.out.println(name + "\t" + new String(Files.readAllBytes(f.toPath()), "UTF-8").replace("\n", "\\n") + "\t" + state);
    }
}

// Generates partition_change_vectors.txt: random PartitionChangeBuilder cases and the
// PartitionChangeRecord Kafka's own builder produces for each. kraftwerk's Rust builder must
// produce the same (partition_change::tests::java_vectors).
//
// Run with the Kafka 4.1.2 jars (from the repository root):
//   java -cp "<kafka-4.1.2-libs>/*" crates/controller/testdata/PartitionChangeVectors.java \
//       > crates/controller/testdata/partition_change_vectors.txt
//
// Line format: `<case fields> => <result>`, fields `key=value` separated by spaces; lists are
// comma-separated, `_` is an empty list, `null` an absent field. Directory codes: `M`
// (MIGRATING), `U` (UNASSIGNED), `d<n>` = Uuid(0xD1, n) (broker n's default directory),
// `x<n>` = Uuid(0xD2, n).
import java.util.*;
import java.util.stream.*;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.DirectoryId;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.controller.PartitionChangeBuilder;
import org.apache.kafka.metadata.LeaderRecoveryState;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;

public class PartitionChangeVectors {
    static final Random RANDOM = new Random(20261129L);
    static final MetadataVersion[] MVS = {
        MetadataVersion.IBP_3_5_IV2, MetadataVersion.IBP_3_7_IV2, MetadataVersion.IBP_4_0_IV1, MetadataVersion.IBP_4_1_IV1
    };

    static Uuid dir(String code) {
        switch (code.charAt(0)) {
            case 'M': return DirectoryId.MIGRATING;
            case 'U': return DirectoryId.UNASSIGNED;
            case 'd': return new Uuid(0xD1, Long.parseLong(code.substring(1)));
            default: return new Uuid(0xD2, Long.parseLong(code.substring(1)));
        }
    }

    static String code(Uuid u) {
        if (u.equals(DirectoryId.MIGRATING)) return "M";
        if (u.equals(DirectoryId.UNASSIGNED)) return "U";
        return (u.getMostSignificantBits() == 0xD1 ? "d" : "x") + u.getLeastSignificantBits();
    }

    static String ints(Collection<Integer> l) {
        if (l == null) return "null";
        return l.isEmpty() ? "_" : l.stream().map(String::valueOf).collect(Collectors.joining(","));
    }

    static String ints(int[] a) {
        return ints(Arrays.stream(a).boxed().collect(Collectors.toList()));
    }

    static List<Integer> subset(List<Integer> from, double p) {
        return from.stream().filter(x -> RANDOM.nextDouble() < p).collect(Collectors.toList());
    }

    static int[] arr(List<Integer> l) {
        return l.stream().mapToInt(Integer::intValue).toArray();
    }

    public static void main(String[] args) {
        int cases = 3000;
        for (int c = 0; c < cases; c++) {
            MetadataVersion mv = MVS[RANDOM.nextInt(MVS.length)];
            boolean elr = mv.isElrSupported() && RANDOM.nextBoolean();
            int minIsr = 1 + RANDOM.nextInt(3);
            PartitionChangeBuilder.Election election = PartitionChangeBuilder.Election.values()[RANDOM.nextInt(3)];
            // Brokers use ids from a wide range so Java's HashSet order is exercised.
            List<Integer> pool = new ArrayList<>(List.of(1, 2, 3, 4, 5, 17, 33, 100));
            Collections.shuffle(pool, RANDOM);
            int rf = 1 + RANDOM.nextInt(4);
            List<Integer> replicas = new ArrayList<>(pool.subList(0, rf));
            List<Integer> removing = new ArrayList<>();
            List<Integer> adding = new ArrayList<>();
            if (RANDOM.nextInt(5) == 0 && rf >= 2) {
                removing.add(replicas.get(0));
                adding.add(replicas.get(rf - 1));
            }
            List<Integer> isr = subset(replicas, 0.7);
            List<Integer> elrList = elr ? subset(replicas.stream().filter(r -> !isr.contains(r)).collect(Collectors.toList()), 0.5) : new ArrayList<>();
            List<Integer> lke = new ArrayList<>();
            if (elr && RANDOM.nextInt(3) == 0) lke.add(replicas.get(RANDOM.nextInt(rf)));
            int leader = isr.isEmpty() || RANDOM.nextInt(6) == 0 ? -1 : isr.get(RANDOM.nextInt(isr.size()));
            LeaderRecoveryState lrs = RANDOM.nextInt(6) == 0 ? LeaderRecoveryState.RECOVERING : LeaderRecoveryState.RECOVERED;
            List<String> dirs = new ArrayList<>();
            boolean migrating = !mv.isDirectoryAssignmentSupported() || RANDOM.nextInt(4) == 0;
            for (int r : replicas) dirs.add(migrating ? "M" : (RANDOM.nextInt(4) == 0 ? "U" : "d" + r));
            int le = RANDOM.nextInt(10), pe = le + RANDOM.nextInt(10);
            List<Integer> accept = subset(pool, 0.6);
            List<Integer> tisr = RANDOM.nextInt(4) == 0 ? null : subset(replicas, 0.6);
            List<Integer> unclean = elr && RANDOM.nextInt(4) == 0 ? List.of(replicas.get(RANDOM.nextInt(rf))) : null;
            LeaderRecoveryState tlrs = RANDOM.nextInt(8) == 0 ? LeaderRecoveryState.RECOVERED : null;
            String setdir = mv.isDirectoryAssignmentSupported() && RANDOM.nextInt(6) == 0 ? replicas.get(RANDOM.nextInt(rf)) + ":x" + RANDOM.nextInt(3) : null;

            PartitionRegistration partition = new PartitionRegistration.Builder()
                .setReplicas(arr(replicas)).setDirectories(dirs.stream().map(PartitionChangeVectors::dir).toArray(Uuid[]::new))
                .setIsr(arr(isr)).setRemovingReplicas(arr(removing)).setAddingReplicas(arr(adding))
                .setLeader(leader).setLeaderRecoveryState(lrs).setLeaderEpoch(le).setPartitionEpoch(pe)
                .setElr(arr(elrList)).setLastKnownElr(arr(lke)).build();
            Set<Integer> acceptSet = new HashSet<>(accept);
            PartitionChangeBuilder builder = new PartitionChangeBuilder(partition, Uuid.ONE_UUID, 0, acceptSet::contains, mv, minIsr)
                .setElection(election).setEligibleLeaderReplicasEnabled(elr)
                .setDefaultDirProvider(b -> new Uuid(0xD1, b));
            if (tisr != null) builder.setTargetIsr(tisr);
            if (unclean != null) builder.setUncleanShutdownReplicas(unclean);
            if (tlrs != null) builder.setTargetLeaderRecoveryState(tlrs);
            if (setdir != null) {
                String[] parts = setdir.split(":");
                builder.setDirectory(Integer.parseInt(parts[0]), dir(parts[1]));
            }
            StringBuilder line = new StringBuilder();
            line.append("mv=").append(mv.featureLevel()).append(" elr=").append(elr ? 1 : 0).append(" min=").append(minIsr)
                .append(" election=").append(election.name().charAt(0)).append(" accept=").append(ints(accept))
                .append(" replicas=").append(ints(replicas)).append(" dirs=").append(String.join(",", dirs))
                .append(" isr=").append(ints(isr)).append(" removing=").append(ints(removing)).append(" adding=").append(ints(adding))
                .append(" elrs=").append(ints(elrList)).append(" lke=").append(ints(lke)).append(" leader=").append(leader)
                .append(" lrs=").append(lrs.value()).append(" le=").append(le).append(" pe=").append(pe)
                .append(" tisr=").append(tisr == null ? "same" : ints(tisr))
                .append(" unclean=").append(unclean == null ? "none" : ints(unclean))
                .append(" tlrs=").append(tlrs == null ? "same" : String.valueOf(tlrs.value()))
                .append(" setdir=").append(setdir == null ? "none" : setdir);
            line.append(" => ");
            Optional<ApiMessageAndVersion> built = builder.build();
            if (built.isEmpty()) {
                line.append("none");
            } else {
                PartitionChangeRecord r = (PartitionChangeRecord) built.get().message();
                line.append("version=").append(built.get().version())
                    .append(" isr=").append(ints(r.isr())).append(" leader=").append(r.leader())
                    .append(" replicas=").append(ints(r.replicas())).append(" removing=").append(ints(r.removingReplicas()))
                    .append(" adding=").append(ints(r.addingReplicas())).append(" lrs=").append(r.leaderRecoveryState())
                    .append(" dirs=").append(r.directories() == null ? "null" : r.directories().stream().map(PartitionChangeVectors::code).collect(Collectors.joining(",")))
                    .append(" elr=").append(ints(r.eligibleLeaderReplicas())).append(" lke=").append(ints(r.lastKnownElr()));
            }
            System.out.println(line);
        }
    }
}

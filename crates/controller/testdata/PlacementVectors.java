// Generates placement_vectors.txt: random clusters placed by Kafka's own StripedReplicaPlacer
// with a seeded java.util.Random; kraftwerk's placer must produce the same assignments
// (placement::tests::java_vectors).
//
//   java -cp "<kafka-4.1.2-libs>/*" crates/controller/testdata/PlacementVectors.java \
//       > crates/controller/testdata/placement_vectors.txt
//
// Line format: `seed=<n> partitions=<n> rf=<n> brokers=<id:rack:f|u,...> => <result>` where a
// rack of `-` means none, and the result is `error=<message>` or partitions separated by `;`,
// each a comma-separated replica list.
import java.util.*;
import java.util.stream.*;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.metadata.placement.*;

public class PlacementVectors {
    public static void main(String[] args) {
        Random random = new Random(20261129L);
        String[] rackPool = {"a", "b", "c", "rack-1", "zz", "Rack9"};
        for (int c = 0; c < 1500; c++) {
            int numBrokers = 1 + random.nextInt(9);
            int numRacks = random.nextInt(4);
            List<UsableBroker> brokers = new ArrayList<>();
            List<Integer> ids = new ArrayList<>();
            for (int i = 0; i < numBrokers; i++) ids.add(1 + i * (1 + random.nextInt(3)) + random.nextInt(20) * 17);
            ids = ids.stream().distinct().collect(Collectors.toList());
            Collections.shuffle(ids, random);
            StringBuilder desc = new StringBuilder();
            for (int id : ids) {
                Optional<String> rack = numRacks == 0 || random.nextInt(8) == 0 ? Optional.empty() : Optional.of(rackPool[random.nextInt(numRacks + 2)]);
                boolean fenced = random.nextInt(5) == 0;
                brokers.add(new UsableBroker(id, rack, fenced));
                if (desc.length() > 0) desc.append(",");
                desc.append(id).append(":").append(rack.orElse("-")).append(":").append(fenced ? "f" : "u");
            }
            long seed = random.nextLong();
            int partitions = 1 + random.nextInt(25);
            short rf = (short) (random.nextInt(6) == 0 ? 0 : 1 + random.nextInt(4));
            ClusterDescriber cluster = new ClusterDescriber() {
                public Iterator<UsableBroker> usableBrokers() { return brokers.iterator(); }
                public Uuid defaultDir(int b) { return Uuid.ZERO_UUID; }
            };
            String result;
            try {
                TopicAssignment assignment = new StripedReplicaPlacer(new Random(seed)).place(new PlacementSpec(0, partitions, rf), cluster);
                result = assignment.assignments().stream()
                    .map(a -> a.replicas().stream().map(String::valueOf).collect(Collectors.joining(",")))
                    .collect(Collectors.joining(";"));
            } catch (Exception e) {
                result = "error=" + e.getMessage();
            }
            System.out.println("seed=" + seed + " partitions=" + partitions + " rf=" + rf + " brokers=" + desc + " => " + result);
        }
    }
}

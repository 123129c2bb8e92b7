// Reference peer for the leader-latch interoperability test: Curator 5.4's LeaderLatch, as
// ElasticJob uses it. Usage: CuratorLatchHolder CONNECT_STRING NAMESPACE LATCH_PATH
// Prints "leader" once it holds the latch, keeps it until stdin closes, then releases it,
// prints "released" and exits.
import java.io.InputStream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorLatchHolder {
  public static void main(String[] args) throws Exception {
    CuratorFramework client = CuratorFrameworkFactory.builder()
        .connectString(args[0]).namespace(args[1]).sessionTimeoutMs(4000)
        .connectionTimeoutMs(5000).retryPolicy(new ExponentialBackoffRetry(100, 3)).build();
    client.start();
    client.blockUntilConnected();
    LeaderLatch latch = new LeaderLatch(client, args[2]);
    latch.start();
    latch.await();
    System.out.println("leader");
    System.out.flush();
    InputStream in = System.in;
    while (in.read() != -1) {
    }
    latch.close();
    System.out.println("released");
    System.out.flush();
    client.close();
    System.exit(0);
  }
}

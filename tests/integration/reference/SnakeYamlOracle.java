// Reference oracle for the config YAML test: SnakeYAML 1.33, as ElasticJob uses it.
// Each stdin line is a YAML document as hex-encoded UTF-8. The oracle loads it, orders the
// keys (top level and nested maps) alphabetically, dumps it with dumpAsMap and default
// options, and prints the result as hex-encoded UTF-8 ("ERROR <message>" if it cannot load).
// A line "pojo <hex>" instead loads the document as ElasticJob 3.0.5 does
// (yaml.loadAs(text, JobConfigurationPOJO.class): an unknown top-level key fails) into a mirror
// of JobConfigurationPOJO's properties, and prints, hex-encoded, "jobName=<name>" then one
// "\n<key>=<value>" per props entry read as a String by Properties.getProperty, sorted.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.Constructor;

public class SnakeYamlOracle {
  // The properties of ElasticJob 3.0.5's JobConfigurationPOJO, with its types.
  public static class JobConfigurationPOJO {
    public String jobName;
    public String cron;
    public String timeZone;
    public int shardingTotalCount;
    public String shardingItemParameters;
    public String jobParameter;
    public boolean monitorExecution;
    public boolean failover;
    public boolean misfire;
    public int maxTimeDiffSeconds = -1;
    public int reconcileIntervalMinutes;
    public String jobShardingStrategyType;
    public String jobExecutorThreadPoolSizeProviderType;
    public String jobErrorHandlerType;
    public Collection<String> jobListenerTypes;
    public Collection<Object> jobExtraConfigurations;
    public String description;
    public Properties props = new Properties();
    public boolean disabled;
    public boolean overwrite;
    public String label;
    public boolean staticSharding;
  }

  static String loadPojo(String doc) {
    JobConfigurationPOJO pojo = new Yaml(new Constructor(JobConfigurationPOJO.class)).loadAs(doc, JobConfigurationPOJO.class);
    StringBuilder sb = new StringBuilder("jobName=" + pojo.jobName);
    for (String key : new java.util.TreeSet<>(pojo.props.stringPropertyNames())) {
      sb.append("\n").append(key).append("=").append(pojo.props.getProperty(key));
    }
    return sb.toString();
  }

  static String hex(byte[] b) {
    StringBuilder sb = new StringBuilder();
    for (byte x : b) sb.append(String.format("%02x", x & 0xff));
    return sb.toString();
  }

  static byte[] unhex(String s) {
    byte[] out = new byte[s.length() / 2];
    for (int i = 0; i < out.length; i++) out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    return out;
  }

  @SuppressWarnings("unchecked")
  static Object sorted(Object o) {
    if (o instanceof Map) {
      TreeMap<String, Object> t = new TreeMap<>();
      for (Map.Entry<Object, Object> e : ((Map<Object, Object>) o).entrySet()) {
        t.put(String.valueOf(e.getKey()), sorted(e.getValue()));
      }
      return t;
    }
    return o;
  }

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      try {
        String t = line.trim();
        if (t.startsWith("pojo ")) {
          String doc = new String(unhex(t.substring(5)), StandardCharsets.UTF_8);
          System.out.println(hex(loadPojo(doc).getBytes(StandardCharsets.UTF_8)));
          continue;
        }
        String doc = new String(unhex(t), StandardCharsets.UTF_8);
        Object loaded = new Yaml().load(doc);
        String dumped = new Yaml().dumpAsMap(sorted(loaded));
        System.out.println(hex(dumped.getBytes(StandardCharsets.UTF_8)));
      } catch (Exception e) {
        System.out.println("ERROR " + e.toString().replace('\n', ' '));
      }
    }
  }
}

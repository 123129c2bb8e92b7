// Reference oracle for the config YAML test: SnakeYAML 1.33, as ElasticJob uses it.
// Each stdin line is a YAML document as hex-encoded UTF-8. The oracle loads it, orders the
// keys (top level and nested maps) alphabetically, dumps it with dumpAsMap and default
// options, and prints the result as hex-encoded UTF-8 ("ERROR <message>" if it cannot load).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import org.yaml.snakeyaml.Yaml;

public class SnakeYamlOracle {
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
        String doc = new String(unhex(line.trim()), StandardCharsets.UTF_8);
        Object loaded = new Yaml().load(doc);
        String dumped = new Yaml().dumpAsMap(sorted(loaded));
        System.out.println(hex(dumped.getBytes(StandardCharsets.UTF_8)));
      } catch (Exception e) {
        System.out.println("ERROR " + e.toString().replace('\n', ' '));
      }
    }
  }
}

// Reference oracle for String.hashCode: each stdin line is a hex-encoded UTF-8 string; prints
// its Java hashCode.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

public class JavaStringOracle {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    StringBuilder out = new StringBuilder();
    while ((line = in.readLine()) != null) {
      byte[] b = new byte[line.length() / 2];
      for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(line.substring(2 * i, 2 * i + 2), 16);
      out.append(new String(b, StandardCharsets.UTF_8).hashCode()).append('\n');
    }
    System.out.print(out);
  }
}

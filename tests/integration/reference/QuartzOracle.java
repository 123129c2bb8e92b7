// Reference oracle for the cron differential test: runs Quartz 2.3.2's own CronExpression.
// (A tab inside an expression is sent as U+0001.) A line "#OFFSET<TAB>ZONE<TAB>EPOCH_MS" asks
// for the zone's UTC offset in milliseconds instead, to check both sides use the same tzdata.
// Reads lines "EXPRESSION<TAB>ZONE<TAB>FROM_EPOCH_MS<TAB>N" from stdin and prints, per line,
// "INVALID" when Quartz rejects the expression, "THROWS" when it accepts it but fails to
// compute, else up to N fire times as epoch milliseconds separated by spaces (fewer when the
// expression stops firing), "NONE" when there is no next fire time at all, or "HANGS" when
// Quartz does not answer within two seconds (it loops forever on some inputs).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Date;
import java.util.TimeZone;
import org.quartz.CronExpression;

public class QuartzOracle {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(System.out, false, "UTF-8");
    String line;
    while ((line = in.readLine()) != null) {
      final String l = line;
      final String[] result = new String[1];
      Thread t = new Thread(() -> result[0] = answer(l));
      t.setDaemon(true);
      t.start();
      t.join(2000);
      if (t.isAlive()) {
        t.stop();  // Quartz loops forever on some inputs; nothing else stops a busy loop
        out.println("HANGS");
      } else {
        out.println(result[0]);
      }
    }
    out.flush();
    System.exit(0);
  }

  static String answer(String line) {
    {
      String[] parts = line.split("\t", -1);
      if (parts[0].equals("#OFFSET")) {  // "#OFFSET<TAB>ZONE<TAB>EPOCH_MS": the zone's UTC offset
        return String.valueOf(TimeZone.getTimeZone(parts[1]).getOffset(Long.parseLong(parts[2])));
      }
      CronExpression cron;
      try {
        cron = new CronExpression(parts[0].replace('\u0001', '\t'));
      } catch (Exception e) {
        return "INVALID";
      }
      cron.setTimeZone(TimeZone.getTimeZone(parts[1]));
      long from = Long.parseLong(parts[2]);
      int n = Integer.parseInt(parts[3]);
      StringBuilder sb = new StringBuilder();
      try {
        Date d = new Date(from);
        for (int i = 0; i < n; i++) {
          d = cron.getNextValidTimeAfter(d);
          if (d == null) break;
          if (sb.length() > 0) sb.append(' ');
          sb.append(d.getTime());
        }
      } catch (Exception e) {
        return "THROWS";
      }
      return sb.length() == 0 ? "NONE" : sb.toString();
    }
  }
}

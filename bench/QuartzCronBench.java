// The Quartz side of the cron side-by-side (bench/cron_vs_quartz.sh): Quartz 2.3.2's own
// CronExpression.getNextValidTimeAfter on the lines of FILE ("EXPR<TAB>ZONE<TAB>FROM_MS", a
// tab inside an expression as U+0001), the same walk as bench/cron_mix_bench.cc: K fire
// times chained from FROM_MS per line, over the whole file, until S seconds have passed,
// after W seconds of warm-up for the JIT. Lines Quartz rejects, throws on or loops forever on
// (checked once, two seconds each) are left out; --kept OUT writes the lines kept, so that the
// C++ side times exactly the same cases.
//   java -cp /usr/share/java/quartz2.jar bench/QuartzCronBench.java FILE
//        [--chain K] [--seconds S] [--warmup W] [--kept OUT]
import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.TimeZone;
import org.quartz.CronExpression;

public class QuartzCronBench {
  static final class Case {
    String line;
    CronExpression cron;
    Date from;
  }

  public static void main(String[] args) throws Exception {
    String file = args[0];
    int chain = 6;
    double seconds = 2;
    double warmup = 3;
    String kept = null;
    for (int i = 1; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--chain": chain = Integer.parseInt(args[i + 1]); break;
        case "--seconds": seconds = Double.parseDouble(args[i + 1]); break;
        case "--warmup": warmup = Double.parseDouble(args[i + 1]); break;
        case "--kept": kept = args[i + 1]; break;
        default: throw new IllegalArgumentException(args[i]);
      }
    }
    List<Case> cases = new ArrayList<>();
    int dropped = 0;
    try (BufferedReader in = new BufferedReader(
             new InputStreamReader(new FileInputStream(file), StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        String[] p = line.split("\t", -1);
        if (p.length < 3) continue;
        Case c = new Case();
        c.line = line;
        try {
          c.cron = new CronExpression(p[0].replace('\u0001', '\t'));
        } catch (Exception e) {
          ++dropped;
          continue;
        }
        c.cron.setTimeZone(TimeZone.getTimeZone(p[1]));
        c.from = new Date(Long.parseLong(p[2]));
        if (!answers(c, chain)) {
          ++dropped;
          continue;
        }
        cases.add(c);
      }
    }
    if (kept != null) {
      try (PrintStream out = new PrintStream(kept, "UTF-8")) {
        for (Case c : cases) out.println(c.line);
      }
    }
    run(cases, chain, warmup);
    long[] r = run(cases, chain, seconds);
    System.out.printf("{\"impl\":\"quartz-2.3.2\",\"cases\":%d,\"dropped\":%d,\"calls\":%d,"
            + "\"fired\":%d,\"ns_per_call\":%.1f}%n",
        cases.size(), dropped, r[0], r[1], (double) r[2] / r[0]);
    System.exit(0);
  }

  // Whether Quartz computes the chain within two seconds without throwing.
  static boolean answers(Case c, int chain) throws InterruptedException {
    final boolean[] ok = new boolean[1];
    Thread t = new Thread(() -> {
      try {
        Date d = c.from;
        for (int k = 0; k < chain && d != null; ++k) d = c.cron.getNextValidTimeAfter(d);
        ok[0] = true;
      } catch (Exception e) {
        ok[0] = false;
      }
    });
    t.setDaemon(true);
    t.start();
    t.join(2000);
    if (t.isAlive()) {
      t.stop();  // Quartz loops forever on some inputs; nothing else stops a busy loop
      return false;
    }
    return ok[0];
  }

  // {calls, fired, elapsed ns}
  static long[] run(List<Case> cases, int chain, double seconds) {
    long calls = 0;
    long fired = 0;
    long start = System.nanoTime();
    long end = start + (long) (seconds * 1e9);
    do {
      for (Case c : cases) {
        Date d = c.from;
        for (int k = 0; k < chain; ++k) {
          d = c.cron.getNextValidTimeAfter(d);
          ++calls;
          if (d == null) break;
          ++fired;
        }
      }
    } while (System.nanoTime() < end);
    return new long[] {calls, fired, System.nanoTime() - start};
  }
}

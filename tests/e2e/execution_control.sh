#!/usr/bin/env bash
# End to end on a real ZooKeeper, two `elasticjob run` hosts started two seconds apart, three
# jobs (docs/scheduling.md):
#   rate   fixedRate 2s, 2 items: both hosts run their item at the same epoch-aligned instants
#          (k x 2 s), not two seconds after each one's start;
#   hang   a script whose first run would sleep a minute, timeoutMs 1000: reported failed with the cause
#          `timeout after 1000 ms` about a second after it started, and its process is gone;
#   stopme 2 items sleeping a minute, one per host, started by `job trigger`: `job stop
#          --item 1` ends the item on the host that holds it within a second, not the other;
#          a stop of every run ends the other;
#   delay  fixedDelay 2s, 2 items, item 1 sleeping 1.5 s and item 0 0.2 s: every fire begins
#          2 s after the slower item of the previous fire ended (whichever host ran it),
#          never while an item of the previous fire runs, and fires split across the hosts;
#   at     `job trigger at --at (now + 4 s) --param P`, then host 1 killed -9: the run happens
#          once, on host 2, with P (last, as it kills a host);
#   retry  a script that fails its first three runs, maxRetries 2: three attempts, one failure
#          reported (its third attempt's), then the next fire succeeds at once.
# Usage: execution_control.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
e2e_start_zookeeper 2000
marker="ej-hang-$$"
cat > "$dir/jobs.yaml" <<YAML
elasticjob:
  jobs:
    rate:
      elasticJobType: SCRIPT
      fixedRate: 2s
      shardingTotalCount: 2
      props:
        script.command.line: "/bin/sh -c 'date +%s%3N >> $dir/rate.times'"
    hang:
      elasticJobType: SCRIPT
      fixedRate: 3s
      timeoutMs: 1000
      shardingTotalCount: 1
      props:
        script.command.line: "/bin/bash -c 'if [ ! -e $dir/hung ]; then touch $dir/hung; exec -a $marker sleep 60; fi'"
    stopme:
      elasticJobType: SCRIPT
      fixedRate: 1h
      shardingTotalCount: 2
      props:
        script.command.line: "/bin/bash -c 'echo started >> $dir/stop.started; exec -a $marker-stop sleep 60'"
    delay:
      elasticJobType: SCRIPT
      fixedDelay: 2s
      shardingTotalCount: 2
      props:
        script.command.line: "/bin/sh $dir/delay.sh"
    at:
      elasticJobType: SCRIPT
      cron: 0 0 0 1 1 ? 2099
      shardingTotalCount: 1
      props:
        script.command.line: "/bin/sh -c 'echo \$0 >> $dir/at.runs'"
    retry:
      elasticJobType: SCRIPT
      fixedRate: 4s
      maxRetries: 2
      retryIntervalMs: 100
      shardingTotalCount: 1
      props:
        script.command.line: "/bin/sh -c 'n=\$(cat $dir/retry.count 2>/dev/null | wc -l); echo x >> $dir/retry.count; [ \$n -ge 3 ]'"
YAML
cat > "$dir/delay.sh" <<SH
case "\$1" in *'"shardingItem":1'*) pause=1.5 ;; *) pause=0.2 ;; esac
echo "start \$(date +%s%3N) \$ELASTICJOB_PREFERRED_NETWORK_IP" >> $dir/delay.log
sleep \$pause
echo "end \$(date +%s%3N) \$ELASTICJOB_PREFERRED_NETWORK_IP" >> $dir/delay.log
SH
e2e_start_host 1 10.7.0.1 "$dir/jobs.yaml" "$url"
grep -q "job 'rate' scheduled (SCRIPT, fixedRate 2s)" "$dir/1.log" || fail "no fixedRate in: $(head -3 "$dir/1.log")"
# The second host starts at another offset within the period.
wait_for_lines "$dir/1.log" "job=rate" 1 10 || fail "rate never ran on host 1"
e2e_start_host 2 10.7.0.2 "$dir/jobs.yaml" "$url"
wait_for_lines "$dir/2.log" "job=rate" 2 15 || fail "rate did not run twice on host 2"

# rate: every start within 400 ms after a multiple of 2 s since the epoch, on both hosts.
late=$(awk '{ if ($1 % 2000 > 400) print $1 % 2000 }' "$dir/rate.times")
[[ -z "$late" ]] || fail "rate starts off the common instants (ms past a multiple of 2 s): $late"

# hang: one failure, by timeout, and the process gone.
wait_for_lines_in "job=hang" 1 40 "$dir/1.log" "$dir/2.log" || fail "hang was never reported"
line=$(grep -h "job=hang" "$dir/1.log" "$dir/2.log" | head -1)
[[ "$line" == *'outcome=FAILURE error="timeout after 1000 ms"'* ]] || fail "hang: $line"
ms=$(echo "$line" | sed 's/.*duration_ms=\([0-9]*\).*/\1/')
((ms >= 1000 && ms < 2500)) || fail "hang reported after ${ms} ms, expected about 1000"
pgrep -f "^$marker" > /dev/null && fail "the timed-out script still runs"

# retry: three attempts, one failure reported, then a success at the next fire.
wait_for_lines_in "job=retry" 2 15 "$dir/1.log" "$dir/2.log" || fail "retry was not reported twice"
reports=$(grep -h "job=retry" "$dir/1.log" "$dir/2.log")
[[ "$(echo "$reports" | grep -c FAILURE)" == 1 ]] || fail "retry failures: $reports"
[[ "$(echo "$reports" | sed -n 1p)" == *'outcome=FAILURE error="'*'exited with 1 (attempt 3 of 3)"'* ]] ||
  fail "retry's first report: $reports"
[[ "$(echo "$reports" | sed -n 2p)" == *outcome=SUCCESS* ]] || fail "retry's second report: $reports"

# stopme: trigger, then stop item 1 (on whichever host holds it) from the CLI.
"$EJ" job trigger stopme --registry "$url" > /dev/null || fail "cannot trigger stopme"
touch "$dir/stop.started"
wait_for_lines "$dir/stop.started" started 2 5 || fail "stopme's two items did not start"
t0=$(date +%s%3N)
"$EJ" job stop stopme --item 1 --registry "$url" > /dev/null || fail "job stop failed"
wait_for_lines_in "job=stopme item=1" 1 5 "$dir/1.log" "$dir/2.log" || fail "item 1 was not stopped"
t1=$(date +%s%3N)
((t1 - t0 < 1000)) || fail "stop to item ended took $((t1 - t0)) ms"
echo "stop request (CLI start) to item 1 reported: $((t1 - t0)) ms"
line=$(grep -h "job=stopme item=1" "$dir/1.log" "$dir/2.log")
[[ "$line" == *'outcome=FAILURE error="cancelled: stopped by an operator'* ]] || fail "stopme item 1: $line"
grep -qh "job=stopme item=0" "$dir/1.log" "$dir/2.log" && fail "item 0 was stopped too"
"$EJ" job stop stopme --registry "$url" > /dev/null || fail "job stop (all) failed"
wait_for_lines_in "job=stopme item=0" 1 5 "$dir/1.log" "$dir/2.log" || fail "item 0 was not stopped"
pgrep -f "^$marker-stop" > /dev/null && fail "a stopped script still runs"

# delay: at least three fires with both hosts; each begins 2 s after the previous fire's
# last end (50 ms of slack for the registry's clock read), none while the previous one runs.
touch "$dir/delay.log"
wait_for_lines "$dir/delay.log" " 10.7.0.2" 6 30 || fail "delay never ran on host 2"
check=$(sort -k2,2n "$dir/delay.log" | awk '
  $1 == "start" {
    if (running == 0) { if (last_end > 0 && $2 - last_end < 1950) print "gap " $2 - last_end; first = $2; fires++ }
    else if ($2 - first > 500) print "overlap at " $2
    running++; hosts[fires] = hosts[fires] " " $3
  }
  $1 == "end" { running--; last_end = $2 }
  END { for (f in hosts) if (hosts[f] ~ /10.7.0.1/ && hosts[f] ~ /10.7.0.2/) both++; print "both " both + 0 }')
[[ "$check" == "both "* ]] || fail "delay: $check"
(( ${check#both } >= 2 )) || fail "delay: fewer than two fires on both hosts: $check"

# at: scheduled from the CLI, then a host dies; the run happens once, at its time, with P.
at_ms=$(($(date +%s%3N) + 4000))
at_iso=$(date -u -d "@$((at_ms / 1000)).$(printf %03d $((at_ms % 1000)))" +%Y-%m-%dT%H:%M:%S.%3NZ)
"$EJ" job trigger at --at "$at_iso" --param once-only --registry "$url" > /dev/null ||
  fail "cannot schedule the run at $at_iso"
kill -9 -- "-${PID[1]}"
unset "PID[1]"
touch "$dir/at.runs"
wait_for_lines "$dir/at.runs" once-only 1 15 || fail "the run at $at_iso did not happen"
ran_ms=$(date +%s%3N)
((ran_ms >= at_ms)) || fail "the run at $at_ms happened early, at $ran_ms"
wait_for_lines "$dir/2.log" "job=at" 1 5 || fail "host 2 did not report the run"
[[ "$(grep -c "job=at" "$dir/2.log")" == 1 && "$(wc -l < "$dir/at.runs")" == 1 ]] ||
  fail "the run at a time ran $(wc -l < "$dir/at.runs") times"

e2e_on_failure() { tail -n 20 "$dir/1.log" "$dir/2.log"; cat "$dir/rate.times" "$dir/retry.count" "$dir/delay.log"; }
e2e_finish "fixedRate fired at the cluster's instants on two hosts; fixedDelay waited for the slower host's item, then its delay; a hanging script ended at its timeout; a failing item retried twice, then failed once; job stop ended one item on another host within a second, then the rest; a run --at ran once after a host died"

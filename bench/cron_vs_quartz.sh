#!/usr/bin/env bash
# Cron next fire time, elasticjob-cpp against Quartz 2.3.2 on the JVM, side by side in one run:
#   bash bench/cron_vs_quartz.sh CRON_MIX_BENCH [BASE_CRON_MIX_BENCH]
# CRON_MIX_BENCH is a Release build's build/release/bench/cron_mix_bench; a second one (an
# older commit's) is timed in the same rounds. The mix (bench/cron_mix.h) is printed by the
# first binary; Quartz (bench/QuartzCronBench.java) drops what it rejects or loops on and
# writes the cases it kept, which every side then times: six fire times chained from each
# case's start, case after case, for RUN_SECONDS seconds (3) (Quartz after WARMUP seconds (3) of JIT
# warm-up). ROUNDS (3) rounds, the sides alternating within each. Prints ns per call per round,
# the medians and the ratios. Needs java and /usr/share/java/quartz2.jar (libquartz2-java).
set -euo pipefail
NEW=${1:?usage: cron_vs_quartz.sh CRON_MIX_BENCH [BASE_CRON_MIX_BENCH]}
OLD=${2:-}
ROUNDS=${ROUNDS:-3}
SECONDS_PER_RUN=${RUN_SECONDS:-3}
WARMUP=${WARMUP:-3}
QUARTZ_JAR=${QUARTZ_JAR:-/usr/share/java/quartz2.jar}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

"$NEW" print > "$WORK/mix.tsv"
java -cp "$QUARTZ_JAR" "$HERE/QuartzCronBench.java" "$WORK/mix.tsv" --kept "$WORK/kept.tsv" \
  --seconds 0.1 --warmup 0.1 2>/dev/null > /dev/null
echo "mix: $(wc -l < "$WORK/mix.tsv") expressions, $(wc -l < "$WORK/kept.tsv") kept (Quartz answers them)"

ns() { sed -n 's/.*"ns_per_call":\([0-9.]*\).*/\1/p'; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
: > "$WORK/new" ; : > "$WORK/old" ; : > "$WORK/quartz"
for ((r = 1; r <= ROUNDS; r++)); do
  "$NEW" run "$WORK/kept.tsv" --seconds "$SECONDS_PER_RUN" | ns >> "$WORK/new"
  if [[ -n "$OLD" ]]; then "$OLD" run "$WORK/kept.tsv" --seconds "$SECONDS_PER_RUN" | ns >> "$WORK/old"; fi
  java -cp "$QUARTZ_JAR" "$HERE/QuartzCronBench.java" "$WORK/kept.tsv" --seconds "$SECONDS_PER_RUN" \
    --warmup "$WARMUP" 2>/dev/null | ns >> "$WORK/quartz"
  echo "round $r: new $(tail -1 "$WORK/new") ns${OLD:+, base $(tail -1 "$WORK/old") ns}, quartz $(tail -1 "$WORK/quartz") ns"
done
n=$(median < "$WORK/new"); q=$(median < "$WORK/quartz")
echo
echo "| ns per next-fire call, median of $ROUNDS | value | Quartz / it |"
echo "|---|---|---|"
echo "| Quartz 2.3.2 (JVM) | $q | 1.0 |"
if [[ -n "$OLD" ]]; then
  o=$(median < "$WORK/old")
  echo "| base ($OLD) | $o | $(awk -v a="$q" -v b="$o" 'BEGIN {printf "%.1f", a / b}') |"
fi
echo "| new ($NEW) | $n | $(awk -v a="$q" -v b="$n" 'BEGIN {printf "%.1f", a / b}') |"

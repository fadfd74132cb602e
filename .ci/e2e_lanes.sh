#!/usr/bin/env bash
# CI's QEMU tier in two lanes at once (`deno task e2e:ci`). One QEMU case alone
# keeps the two cores a little over half busy (much of a case is waiting: trial
# deadlines, watchdogs, DHCP, reboots), so two cases side by side finish the
# tier sooner than one after the other (docs/decisions.md, "CI's QEMU tier in
# two lanes"). Lane A holds the upgrade case, the longest, with the two arm64
# cases (they share the arm64 sysroot cache, so they never build at once)
# and the ESP's write-cut case (12 s; lane B is the longer);
# lane B holds every other e2e/*_test.ts, so a new case lands there unless it
# is added to LANE_A. Each lane is one `deno test`; its log is
# printed whole when it ends (never interleaved, so .ci/tally.sh reads both
# summaries), and the tier fails if either lane does.
set -u
cd "$(dirname "$0")/.."

LANE_A=(
  e2e/node_upgrade_test.ts
  e2e/node_boot_arm64_test.ts
  e2e/node_rpi3_test.ts
  e2e/esp_write_cut_test.ts
)
LANE_B=()
for f in e2e/*_test.ts; do
  case " ${LANE_A[*]} " in *" $f "*) ;; *) LANE_B+=("$f") ;; esac
done

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
now() { date +%s.%N; }
t0=$(now)

run_lane() { # name files...
  local name=$1
  shift
  deno test -A "$@" >"$logs/$name.log" 2>&1
  echo $? >"$logs/$name.rc"
  printf '%s\n' "$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')" >"$logs/$name.s"
}

echo "lane A: ${LANE_A[*]}"
echo "lane B: ${LANE_B[*]}"
run_lane A "${LANE_A[@]}" &
run_lane B "${LANE_B[@]}" &

# Print each lane's log as soon as it ends, the first to finish first.
printed=""
while [ "${#printed}" -lt 2 ]; do
  for lane in A B; do
    case "$printed" in *"$lane"*) continue ;; esac
    if [ -f "$logs/$lane.s" ]; then
      cat "$logs/$lane.log"
      printf '== e2e lane %s: %s s (exit %s)\n' "$lane" "$(cat "$logs/$lane.s")" "$(cat "$logs/$lane.rc")"
      printed="$printed$lane"
    fi
  done
  [ "${#printed}" -lt 2 ] && sleep 5
done
wait
[ "$(cat "$logs/A.rc")" = 0 ] && [ "$(cat "$logs/B.rc")" = 0 ]

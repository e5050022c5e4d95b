#!/usr/bin/env bash
# Runs the stages of `make test` (the Makefile's TEST_STAGES) and reports how long each took.
#
#   run.sh STEP...
#
# The steps run one after the other. A step is one make target, or several joined by commas, which
# then run side by side: `e2e,test-cluster,test-measures+fuzz` runs three lanes at once, and a lane
# written `a+b` runs a, then b. Side by side is for stages that mostly wait (servers, timeouts, the
# network): on two cores they overlap each other and a CPU-bound lane, where one after the other
# they would leave the CPU idle. A stage named in TEST_NICE_STAGES runs at nice 10 in a step of
# several lanes, so that a CPU-bound lane takes only the CPU the waiting ones leave and does not slow
# their time-sensitive checks.
#
# Each line a side-by-side stage prints is prefixed with its name, as it comes. A failing lane stops
# at its failing stage; the others run to their end, then the step fails naming every failed stage.
# Environment: MAKE (the make to run targets with), TEST_NICE_STAGES (space-separated stage names).
set -euo pipefail

MAKE=${MAKE:-make}
read -r -a nice_stages <<<"${TEST_NICE_STAGES:-}"

is_nice() {
  local s
  for s in "${nice_stages[@]}"; do [[ "$s" == "$1" ]] && return 0; done
  return 1
}

# run_stage NAME [NICE]: runs `make NAME`, then reports its wall time and the CPU time (user+sys) of
# everything it ran and waited for: on a shared machine the CPU time is the steadier figure, and
# side by side the two show how much a stage waits.
run_stage() {
  local name=$1 niced=${2:-} rc=0 times real user sys
  local -a cmd=("$MAKE" --no-print-directory "$name")
  [[ -z "$niced" ]] || cmd=(nice -n 10 "${cmd[@]}")
  times=$(mktemp)
  # bash's time keyword reports on the group's stderr; make's own stderr goes to stdout.
  { TIMEFORMAT='%0R %0U %0S'; time "${cmd[@]}" 2>&1 || rc=$?; } 2>"$times"
  read -r real user sys <"$times" || true
  rm -f "$times"
  if ((rc == 0)); then
    echo "make test: $name passed in $real s (CPU $((user + sys)) s)"
  else
    echo "make test: $name FAILED (exit $rc) after $real s (CPU $((user + sys)) s)"
  fi
  return "$rc"
}

# run_lane LANE: the stages of LANE (joined by +) one after the other, each line prefixed with the
# name of its stage; stops at the first that fails.
run_lane() {
  local lane=$1 stage niced
  local -a stages
  IFS=+ read -r -a stages <<<"$lane"
  for stage in "${stages[@]}"; do
    niced=""
    ((lane_count > 1)) && is_nice "$stage" && niced=1
    set +e
    run_stage "$stage" "$niced" 2>&1 | sed -u "s/^/[$stage] /"
    local rc=${PIPESTATUS[0]}
    set -e
    ((rc == 0)) || return "$rc"
  done
}

# Each lane in a process group of its own (job control), so that an interrupt ends every lane's
# make and whatever it started.
set -m
lane_pids=()
stop_lanes() {
  local pid
  for pid in "${lane_pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap 'stop_lanes; exit 130' INT
trap 'stop_lanes; exit 143' TERM

for step in "$@"; do
  IFS=, read -r -a lanes <<<"$step"
  if ((${#lanes[@]} == 1)) && [[ "$step" != *+* ]]; then
    run_stage "$step"
    continue
  fi
  start=$(date +%s)
  lane_count=${#lanes[@]}
  echo "make test: side by side: ${lanes[*]}"
  lane_pids=()
  for lane in "${lanes[@]}"; do
    # Background jobs under job control keep the terminal as stdin: a stage
    # that read it would stop (SIGTTIN) and the wait below would never end.
    run_lane "$lane" </dev/null &
    lane_pids+=("$!")
  done
  failed=()
  for i in "${!lanes[@]}"; do
    wait "${lane_pids[$i]}" || failed+=("${lanes[$i]}")
  done
  lane_pids=()
  if ((${#failed[@]})); then
    echo "make test: FAILED: ${failed[*]} (side by side with: ${lanes[*]})"
    exit 1
  fi
  echo "make test: side by side ${lanes[*]}: all passed in $(($(date +%s) - start)) s"
done

#!/bin/sh
# hcclrun behaviour, one case per ctest entry: hcclrun_cases.sh <path to hcclrun> <case>.
# Each case runs hcclrun on tiny shell programs and checks its output and exit status.
HCCLRUN="$1"
CASE="$2"
T=$(mktemp -d /tmp/hcclrun_test.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL [$CASE]: $*"; echo "--- stdout"; cat "$T/out" 2>/dev/null; echo "--- stderr"; cat "$T/err" 2>/dev/null; exit 1; }
expect_line() { grep -qxF -- "$2" "$1" || fail "missing line '$2' in $1"; }
run() { "$HCCLRUN" "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"; }
rc() { cat "$T/rc"; }
elapsed_below() {  # elapsed_below <seconds> <command...>: runs the command, fails if it took longer
  limit=$1; shift
  start=$(date +%s%N); "$@"; end=$(date +%s%N)
  [ $(( (end - start) / 1000000 )) -lt $(( limit * 1000 )) ] || fail "took $(( (end - start) / 1000000 )) ms (limit ${limit} s)"
}

case "$CASE" in
env)  # every rank sees its own RANK and the shared launcher variables
  run -n 4 -- sh -c 'echo "R=$RANK W=$WORLD_SIZE L=$LOCAL_RANK LW=$LOCAL_WORLD_SIZE A=$MASTER_ADDR H=$HOSTCCL_STORE_HOSTED"; echo "P=$MASTER_PORT"'
  [ "$(rc)" = 0 ] || fail "exit $(rc)"
  for r in 0 1 2 3; do expect_line "$T/out" "[$r] R=$r W=4 L=$r LW=4 A=127.0.0.1 H=1"; done
  [ "$(grep -c '^\[[0-3]\] P=[0-9][0-9]*$' "$T/out")" = 4 ] || fail "MASTER_PORT missing"
  [ "$(grep '^\[[0-3]\] P=' "$T/out" | sed 's/^\[.\] //' | sort -u | wc -l)" = 1 ] || fail "ranks disagree on MASTER_PORT"
  ;;
prefix)  # multi-line output, a partial last line and an empty line are each prefixed
  run -n 2 sh -c 'printf "a\nb\n\nlast-no-newline"'
  [ "$(rc)" = 0 ] || fail "exit $(rc)"
  for r in 0 1; do
    expect_line "$T/out" "[$r] a"; expect_line "$T/out" "[$r] b"; expect_line "$T/out" "[$r] "
    expect_line "$T/out" "[$r] last-no-newline"
  done
  [ "$(wc -l <"$T/out")" = 8 ] || fail "expected 8 lines"
  ;;
streams)  # stdout stays stdout and stderr stays stderr
  run -n 2 sh -c 'echo "to-out $RANK"; echo "to-err $RANK" >&2'
  [ "$(rc)" = 0 ] || fail "exit $(rc)"
  expect_line "$T/out" "[0] to-out 0"; expect_line "$T/out" "[1] to-out 1"
  expect_line "$T/err" "[0] to-err 0"; expect_line "$T/err" "[1] to-err 1"
  grep -q to-err "$T/out" && fail "stderr leaked into stdout"
  grep -q to-out "$T/err" && fail "stdout leaked into stderr"
  ;;
fail_kills_rest)  # rank 2 exits 7: the others (sleeping, with a child) are ended quickly
  elapsed_below 10 run -n 4 sh -c 'if [ "$RANK" = 2 ]; then sleep 0.3; exit 7; fi; sleep 60 & wait'
  [ "$(rc)" = 7 ] || fail "exit $(rc), expected 7"
  grep -q "rank 2 (pid [0-9]*) exited with status 7" "$T/err" || fail "no message naming rank 2"
  ;;
signal_death)  # a rank killed by a signal: 128+signal and a message naming the signal
  elapsed_below 10 run -n 2 sh -c 'if [ "$RANK" = 1 ]; then kill -KILL $$; fi; sleep 60 & wait'
  [ "$(rc)" = 137 ] || fail "exit $(rc), expected 137"
  grep -q "rank 1 (pid [0-9]*) was killed by signal 9" "$T/err" || fail "no message naming rank 1's signal"
  ;;
term_ignored)  # a rank that ignores SIGTERM is SIGKILLed after the grace period
  elapsed_below 15 run -n 2 sh -c 'if [ "$RANK" = 0 ]; then exit 1; fi; trap "" TERM; while :; do sleep 0.1; done'
  [ "$(rc)" = 1 ] || fail "exit $(rc), expected 1"
  ;;
bind)  # --bind core: rank r on the (r mod k)-th allowed CPU; none: unbound; auto: binds only when N > k
  allowed=$(grep Cpus_allowed_list /proc/self/status | cut -f2)
  k=$(nproc)
  run -n $((k + 1)) --bind core -- sh -c 'grep Cpus_allowed_list /proc/self/status | cut -f2'
  [ "$(rc)" = 0 ] || fail "exit $(rc)"
  [ "$(grep -c '^\[[0-9]*\] [0-9]*$' "$T/out")" = $((k + 1)) ] || fail "a rank is not bound to one CPU"
  r0=$(grep '^\[0\] ' "$T/out" | cut -d' ' -f2); rk=$(grep "^\[$k\] " "$T/out" | cut -d' ' -f2)
  [ "$r0" = "$rk" ] || fail "rank $k should share rank 0's CPU ($r0), got $rk"
  [ "$(sed 's/^\[[0-9]*\] //' "$T/out" | sort -u | wc -l)" = "$k" ] || fail "ranks 0..k-1 should use k distinct CPUs"
  run -n $((k + 1)) --bind none -- sh -c 'grep Cpus_allowed_list /proc/self/status | cut -f2'
  [ "$(sed 's/^\[[0-9]*\] //' "$T/out" | sort -u)" = "$allowed" ] || fail "--bind none changed the CPU list"
  run -n "$k" -- sh -c 'grep Cpus_allowed_list /proc/self/status | cut -f2'
  [ "$(sed 's/^\[[0-9]*\] //' "$T/out" | sort -u)" = "$allowed" ] || fail "auto bound $k ranks on $k CPUs"
  run -n $((k + 1)) -- sh -c 'grep Cpus_allowed_list /proc/self/status | cut -f2'
  [ "$(grep -c '^\[[0-9]*\] [0-9]*$' "$T/out")" = $((k + 1)) ] || fail "auto did not bind $((k + 1)) ranks on $k CPUs"
  run -n 2 --bind sideways true
  [ "$(rc)" = 2 ] || fail "--bind sideways: exit $(rc), expected 2"
  ;;
timeout)  # --timeout ends everything with 124
  elapsed_below 10 run -n 3 --timeout 0.5 sh -c 'sleep 60 & wait'
  [ "$(rc)" = 124 ] || fail "exit $(rc), expected 124"
  grep -q "timeout" "$T/err" || fail "no timeout message"
  ;;
success_all)  # every rank exits 0 -> 0, even when they finish at different times
  run -n 3 sh -c 'sleep 0.$RANK; exit 0'
  [ "$(rc)" = 0 ] || fail "exit $(rc)"
  ;;
usage)  # usage errors exit 2 and print the help
  for args in "" "-n" "-n 0" "-n x prog" "-n 2" "--bogus -n 2 true" "-n 2 --timeout -1 true"; do
    # shellcheck disable=SC2086
    run $args
    [ "$(rc)" = 2 ] || fail "'hcclrun $args' exited $(rc), expected 2"
    grep -q "usage: hcclrun" "$T/err" || fail "'hcclrun $args' printed no usage"
  done
  run --help
  [ "$(rc)" = 0 ] || fail "--help exited $(rc)"
  run -n2 --np=2 --timeout=5 -- true
  [ "$(rc)" = 0 ] || fail "alternative spellings exited $(rc)"
  ;;
exec_missing)  # a program that does not exist: 127 and a message
  run -n 2 /nonexistent/program
  [ "$(rc)" = 127 ] || fail "exit $(rc), expected 127"
  grep -q "cannot execute '/nonexistent/program'" "$T/err" || fail "no exec error message"
  ;;
forward_sigterm)  # SIGTERM to hcclrun reaches every rank (their trap runs) and hcclrun exits 143
  "$HCCLRUN" -n 2 sh -c 'trap "echo trapped $RANK; exit 3" TERM; echo up; sleep 30 & wait' >"$T/out" 2>"$T/err" &
  pid=$!
  for i in $(seq 100); do [ "$(grep -c up "$T/out")" = 2 ] && break; sleep 0.05; done
  kill -TERM $pid
  wait $pid; echo $? >"$T/rc"
  [ "$(rc)" = 143 ] || fail "exit $(rc), expected 143"
  expect_line "$T/out" "[0] trapped 0"; expect_line "$T/out" "[1] trapped 1"
  ;;
*) fail "unknown case" ;;
esac
echo "PASS [$CASE]"

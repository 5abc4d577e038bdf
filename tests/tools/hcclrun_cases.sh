#!/bin/sh
# hcclrun behaviour, one case per ctest entry: hcclrun_cases.sh <path to hcclrun> <case>.
# Each case runs hcclrun on tiny shell programs and checks its output and exit status.
HCCLRUN="$1"
CASE="$2"
T=$(mktemp -d /tmp/hcclrun_test.XXXXXX)
# Ranks that record their pid in $T/pid.<rank> are killed on the way out whatever happened (an old
# hcclrun that dies leaves them running).
cleanup() { for f in "$T"/pid.*; do [ -f "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT
trap "exit 1" HUP INT TERM PIPE
fail() { echo "FAIL [$CASE]: $*"; echo "--- stdout"; cat "$T/out" 2>/dev/null; echo "--- stderr"; cat "$T/err" 2>/dev/null; exit 1; }
expect_line() { grep -qxF -- "$2" "$1" || fail "missing line '$2' in $1"; }
run() { "$HCCLRUN" "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"; }
rc() { cat "$T/rc"; }
alive() {  # alive <pid>: the process exists and is not a zombie
  [ -d "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}
wait_lines() {  # wait_lines <count> <pattern> <file>: up to 20 s for count lines matching pattern
  for i in $(seq 400); do [ "$(grep -c -- "$2" "$3")" -ge "$1" ] && return 0; sleep 0.05; done
  fail "timed out waiting for $1 lines matching '$2' in $3"
}
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
fail_together)  # ranks that fail at about the same time each get to say why (0.2 s before SIGTERM)
  run -n 3 sh -c 'if [ "$RANK" = 1 ]; then echo "why $RANK"; exit 3; fi; sleep 0.05; echo "why $RANK"; exit 1'
  [ "$(rc)" = 3 ] || fail "exit $(rc), expected the first failure's 3"
  for r in 0 1 2; do expect_line "$T/out" "[$r] why $r"; done
  [ "$(grep -c 'terminating the other' "$T/err")" = 1 ] || fail "expected one failure message"
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
bind)  # --bind core: rank r on the (r mod k)-th allowed CPU; none: unbound; auto: binds when N >= k
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
  [ "$(grep -c '^\[[0-9]*\] [0-9]*$' "$T/out")" = "$k" ] || fail "auto did not bind $k ranks on $k CPUs"
  [ "$(sed 's/^\[[0-9]*\] //' "$T/out" | sort -u | wc -l)" = "$k" ] || fail "auto: $k ranks on $k CPUs should use $k distinct CPUs"
  if [ "$k" -gt 1 ]; then
    run -n $((k - 1)) -- sh -c 'grep Cpus_allowed_list /proc/self/status | cut -f2'
    [ "$(sed 's/^\[[0-9]*\] //' "$T/out" | sort -u)" = "$allowed" ] || fail "auto bound $((k - 1)) ranks on $k CPUs"
  fi
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
secret_env)  # a 128-bit store secret and job id per launch, hex, shared by the ranks, new each time;
  # an exported job id is kept (one job, one hcclrun per host), an inherited secret never is
  HOSTCCL_STORE_SECRET=inherited HOSTCCL_JOB_ID=shared-job run -n 2 -- sh -c 'echo "S=$HOSTCCL_STORE_SECRET J=$HOSTCCL_JOB_ID"'
  [ "$(rc)" = 0 ] || fail "exit $(rc)"
  [ "$(grep -c '^\[[0-1]\] S=[0-9a-f]\{32\} J=shared-job$' "$T/out")" = 2 ] || fail "exported job id not kept or secret inherited"
  HOSTCCL_STORE_SECRET=inherited run -n 3 -- sh -c 'echo "S=$HOSTCCL_STORE_SECRET J=$HOSTCCL_JOB_ID"'
  [ "$(rc)" = 0 ] || fail "exit $(rc)"
  [ "$(grep -c '^\[[0-2]\] S=[0-9a-f]\{32\} J=[0-9a-f]\{32\}$' "$T/out")" = 3 ] || fail "secret or job id missing or malformed"
  [ "$(sed 's/^\[.\] //' "$T/out" | sort -u | wc -l)" = 1 ] || fail "ranks disagree on the secret or job id"
  first=$(sed -n 's/^\[0\] //p' "$T/out")
  s=$(echo "$first" | sed 's/^S=\([^ ]*\) J=\(.*\)$/\1/'); j=$(echo "$first" | sed 's/^S=\([^ ]*\) J=\(.*\)$/\2/')
  [ "$s" != "$j" ] || fail "the job id equals the secret"
  run -n 1 -- sh -c 'echo "S=$HOSTCCL_STORE_SECRET J=$HOSTCCL_JOB_ID"'
  second=$(sed -n 's/^\[0\] //p' "$T/out")
  [ "$first" != "$second" ] || fail "two launches got the same secret and job id"
  case "$second" in *"$s"*|*"$j"*) fail "a value was reused by the next launch" ;; esac
  ;;
die_with_hcclrun)  # SIGKILL of hcclrun: every rank and its child are gone within 5 s instead of running on
  # Ranks 0 and 1 are shells whose child is the work (a wrapper script); rank 2 is the work itself.
  "$HCCLRUN" -n 3 sh -c 'if [ "$RANK" = 2 ]; then echo $$ >"$0/tmp.$RANK" && mv "$0/tmp.$RANK" "$0/pid.$RANK"; echo up; exec sleep 60; fi
    sleep 60 & echo $! >"$0/tmp.c$RANK" && mv "$0/tmp.c$RANK" "$0/pid.c$RANK"
    echo $$ >"$0/tmp.$RANK" && mv "$0/tmp.$RANK" "$0/pid.$RANK"; echo up; wait' "$T" >"$T/out" 2>"$T/err" &
  pid=$!
  wait_lines 3 up "$T/out"
  procs="0 1 2 c0 c1"
  for r in $procs; do [ -f "$T/pid.$r" ] || fail "process $r wrote no pid"; done
  kill -KILL $pid
  wait $pid 2>/dev/null
  start=$(date +%s%N)
  for i in $(seq 100); do
    left=""; for r in $procs; do alive "$(cat "$T/pid.$r")" && left="$left $r"; done
    [ -z "$left" ] && break
    sleep 0.05
  done
  [ -z "$left" ] || fail "process(es)$left (c = a rank's child) still running 5 s after hcclrun was SIGKILLed"
  echo "ranks and their children gone $(( ($(date +%s%N) - start) / 1000000 )) ms after hcclrun's SIGKILL was reaped"
  ;;
forward_user_signals)  # SIGUSR1/SIGUSR2 reach every rank and stop nothing; SIGQUIT stops the job
  # (`&` would start hcclrun with SIGQUIT ignored, which it then leaves ignored: undo that)
  env --default-signal=QUIT "$HCCLRUN" -n 2 sh -c 'echo $$ >"$0/tmp.$RANK" && mv "$0/tmp.$RANK" "$0/pid.$RANK"
    ulimit -c 0; trap "echo usr1 \$RANK" USR1; trap "echo usr2 \$RANK" USR2; trap "echo quit \$RANK; exit 4" QUIT
    echo up; while :; do sleep 0.05; done' "$T" >"$T/out" 2>"$T/err" &
  pid=$!
  wait_lines 2 up "$T/out"
  kill -USR1 $pid; wait_lines 2 "usr1" "$T/out"
  kill -USR2 $pid; wait_lines 2 "usr2" "$T/out"
  kill -USR1 $pid; wait_lines 4 "usr1" "$T/out"
  alive $pid || fail "hcclrun died of a user signal"
  kill -QUIT $pid
  wait $pid; echo $? >"$T/rc"
  [ "$(rc)" = 131 ] || fail "exit $(rc), expected 131"
  for r in 0 1; do
    expect_line "$T/out" "[$r] usr1 $r"; expect_line "$T/out" "[$r] usr2 $r"; expect_line "$T/out" "[$r] quit $r"
  done
  grep -q "after signal 3 (.*), 2 of 2 running rank(s) ended by themselves" "$T/err" || fail "no report after SIGQUIT"
  ;;
*) fail "unknown case" ;;
esac
echo "PASS [$CASE]"

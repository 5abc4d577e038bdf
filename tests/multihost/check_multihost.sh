#!/usr/bin/env bash
# check_multihost.sh [--expect-wrong] N RIG [RIG ARGS...]: runs the rig (scripts/netns_rig.sh) with
# INIT logging and checks what the N ranks of multihost_reduce printed, so that a run which
# silently fell back to one host, or printed nothing, fails:
#   default:        the rig succeeded, N ranks report a communicator spanning several hosts over
#                   TCP, and N ranks report "<k> of <k> cases passed, 0 wrong";
#   --expect-wrong: (run with --perturb-rank) the rig exited 1, N ranks spanned several hosts, and
#                   some root reported differing elements: proves the comparison can fail.
# Exit: 77 when the rig skipped (ctest SKIP_RETURN_CODE), else 0 pass / 1 fail.
set -uo pipefail
expect_wrong=0
[[ "${1:-}" == --expect-wrong ]] && { expect_wrong=1; shift; }
n="$1"
shift
out="$(mktemp /tmp/check_multihost.XXXXXX)"
trap 'rm -f "$out"' EXIT
HOSTCCL_LOG_LEVEL=INFO HOSTCCL_LOG_SUBSYS=INIT "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
((rc == 77)) && exit 77
spanning=$(grep -c 'TCP transport, several hosts' "$out")
if ((expect_wrong)); then
  differ=$(grep -c 'root recvBuf: [0-9]* of [0-9]* elements differ' "$out")
  if ((rc != 1 || spanning != n || differ == 0)); then
    echo "check_multihost: expected rig status 1, $n ranks on several hosts and reported differences; got status $rc, $spanning, $differ" >&2
    exit 1
  fi
  echo "check_multihost: the perturbed input was caught ($differ wrong case(s) reported by roots)"
  exit 0
fi
clean=$(grep -Ec 'multihost_reduce: rank [0-9]+ of [0-9]+ .*: ([0-9]+) of \1 cases passed, 0 wrong$' "$out")
if ((rc != 0 || spanning != n || clean != n)); then
  echo "check_multihost: expected rig status 0, $n ranks on several hosts over TCP and $n clean reports; got status $rc, $spanning, $clean" >&2
  exit 1
fi
echo "check_multihost: $n ranks on several hosts over TCP, all cases passed"

#!/usr/bin/env bash
# check_collectives.sh RIG BIN_DIR: every collective's hccl_test tool across the netns rig
# (scripts/netns_rig.sh: 2 hosts x 2 ranks over TCP between network namespaces), bit-exact checks
# on, at sizes on both sides of the small-message thresholds and of the streaming-copy size, and
# the rooted ones with their root on the second host. Every rank must report a communicator spanning
# several hosts, and the operator must have run its several-hosts plan ("node") at least once (the
# largest size), so a run that silently fell back to one host or to plain TCP fails.
# Exit: 77 when the rig skipped (no root or no iproute2), else 0 pass / 1 fail.
set -uo pipefail
rig="$1" bin="$2"
out="$(mktemp /tmp/check_collectives.XXXXXX)"
trap 'rm -f "$out"' EXIT
sizes="8,96K,5M"
nsizes=3
fail=0
# tool and its extra arguments
cases=(
  "HcclAllReduce all_reduce_test"
  "HcclBroadcast broadcast_test -r 3"
  "HcclAllGather all_gather_test"
  "HcclAllGatherV all_gatherv_test"
  "HcclReduceScatter reduce_scatter_test"
  "HcclReduceScatterV reduce_scatterv_test"
  "HcclScatter scatter_test -r 3"
  "HcclScatter scatter_test -r 0"
  "HcclAlltoAll alltoall_test"
  "HcclAlltoAllV alltoallv_test"
  "HcclAlltoAllVC alltoallvc_test"
)
for c in "${cases[@]}"; do
  read -r api tool args <<<"$c"
  [[ -x "$bin/$tool" ]] || { echo "check_collectives: $bin/$tool not built" >&2; fail=1; continue; }
  # shellcheck disable=SC2086
  "$rig" -q --hosts 2 --ranks-per-host 2 --timeout 100 -e HOSTCCL_LOG_LEVEL=INFO -e HOSTCCL_LOG_SUBSYS=INIT,COLL \
    -- "$bin/$tool" --sizes "$sizes" -n 2 -w 1 $args >"$out" 2>&1
  rc=$?
  ((rc == 77)) && { echo "check_collectives: rig skipped"; exit 77; }
  ok=$(grep -Ec '^\[[0-9]+\] +[0-9]+ +\| .*\| +success$' "$out")
  bad=$(grep -Ec '\| +(failed|fail)' "$out")
  spanning=$(grep -c 'TCP transport, several hosts' "$out")
  plans=$(grep -Eo "$api #[0-9]+ [^:]*: [a-z_]+ \(" "$out" | sed -E 's/.*: ([a-z_]+) \(/\1/' | sort -u | tr '\n' ' ')
  if ((rc != 0 || ok != nsizes || bad != 0 || spanning != 4)) || [[ " $plans" != *" node "* ]]; then
    echo "FAIL $tool $args: rig status $rc, $ok of $nsizes sizes checked ok, $bad failed, $spanning of 4 ranks on several hosts, $api ran: $plans" >&2
    tail -30 "$out" >&2
    fail=1
    continue
  fi
  echo "ok   $tool $args: $nsizes sizes bit-exact on 2 hosts x 2 ranks; $api ran: $plans"
done
exit $fail

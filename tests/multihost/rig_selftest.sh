#!/usr/bin/env bash
# rig_selftest.sh RIG: checks scripts/netns_rig.sh itself with shell programs (no library):
#   1. each rank runs in its host's namespace (eth0 has the host's address) with the right RANK,
#      WORLD_SIZE, LOCAL_RANK, HOSTCCL_NODE_ID and HCCL_IF_IP;
#   2. a failing rank's status comes back and the other ranks (sleeping) are terminated quickly;
#   3. the timeout kills hung ranks with status 124;
#   4. --rate puts a tbf shaper on the host's link;
#   5. nothing is left behind: no namespace of these runs survives.
# Exit: 77 when the rig skips, 0 pass, 1 fail.
set -uo pipefail
rig="$1"
fail() { echo "rig_selftest: FAIL: $*" >&2; exit 1; }
before=$(ip netns list 2>/dev/null | grep -c '^hostccl-rig-' || true)

out=$("$rig" -q -H 3 -n 2 -t 30 -- /bin/sh -c \
  'echo "id $RANK $WORLD_SIZE $LOCAL_RANK $HOSTCCL_NODE_ID $HCCL_IF_IP $(ip -4 -o addr show dev eth0 | awk "{print \$4}")"' 2>&1)
rc=$?
((rc == 77)) && { echo "$out"; exit 77; }
((rc == 0)) || fail "identity run exited $rc: $out"
for g in 0 1 2 3 4 5; do
  h=$((g / 2)); l=$((g % 2))
  grep -qx "\[$g\] id $g 6 $l rig-h$h 10.200.0.$((h + 1)) 10.200.0.$((h + 1))/24" <<<"$out" ||
    fail "rank $g: wrong identity in: $out"
done

start=$SECONDS
out=$("$rig" -q -H 2 -n 2 -t 60 -- /bin/sh -c 'if [ "$RANK" = 3 ]; then exit 7; fi; exec sleep 50' 2>&1)
rc=$?
((rc == 7)) || fail "failing rank: rig exited $rc, expected 7: $out"
((SECONDS - start < 20)) || fail "the other ranks were not terminated promptly ($((SECONDS - start)) s)"

out=$("$rig" -q -H 2 -n 1 -t 2 -- /bin/sleep 50 2>&1)
rc=$?
((rc == 124)) || fail "timeout: rig exited $rc, expected 124: $out"

out=$("$rig" -q -H 2 -n 1 --rate 100mbit -t 30 -- /bin/sh -c 'tc qdisc show dev eth0' 2>&1)
rc=$?
((rc == 0)) && grep -q "tbf.*rate 100Mbit" <<<"$out" || fail "shaping: rig exited $rc: $out"

after=$(ip netns list 2>/dev/null | grep -c '^hostccl-rig-' || true)
((after <= before)) || fail "namespaces left behind: $(ip netns list | grep '^hostccl-rig-')"
echo "rig_selftest: identity, failure propagation, timeout, shaping and teardown OK"

#!/usr/bin/env bash
# netns_rig.sh: a multi-host test rig on one machine. K network namespaces ("hosts") are joined by
# veth pairs to a bridge in a private rig namespace; host i has the address <subnet>.(i+1)/24 on
# its eth0 (only inside the namespaces: no traffic leaves this machine and the root namespace is
# never touched). M ranks per host are started inside the hosts' namespaces with the hcclrun /
# torchrun environment (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR =
# host 0's address, MASTER_PORT) plus HCCL_IF_IP = the host's address and HOSTCCL_NODE_ID =
# rig-h<i> (the namespaces share a hostname and boot id, so hostccl could not tell them apart),
# and HOSTCCL_TCP_BUSY_POLL_US=0 when the rig holds more ranks than this machine has CPUs.
# Output lines are prefixed with "[rank] "; when a rank fails the others are terminated; every
# rank's exit status is collected. EVERYTHING (processes, namespaces, veths, bridge, temp dir) is
# torn down on exit, failure, timeout or signal; names are unique per run (rig pid + random), so
# parallel runs don't collide, and namespaces left by a killed rig (dead pid) are removed at start.
#
# Exit status: 0 every rank succeeded; the first failing rank's status; 124 timeout; 77 the rig
# cannot run here (not root, no iproute2/tc, namespaces refused: ctest SKIP_RETURN_CODE 77);
# 2 usage error. Needs bash, iproute2 (ip; tc with tbf for --rate, netem for --delay) and
# util-linux (unshare, for --launcher ompi). See docs/multihost.md.
set -uo pipefail

readonly kPrefix="hostccl-rig"
SELF="$(readlink -f "${BASH_SOURCE[0]}")"

usage() {
  cat <<'EOF'
usage: netns_rig.sh [options] [--] PROGRAM [ARGS...]
  -H, --hosts K            number of hosts (namespaces), 1..200 (default 2)
  -n, --ranks-per-host M   ranks started on each host (default 2)
      --rate RATE          shape every host's link to RATE in each direction (tc tbf, e.g.
                           1gbit, 100mbit): a host can neither send nor receive faster
      --delay DELAY        one-way delay added on each host's uplink (tc netem, e.g. 1ms), so a
                           host-to-host packet is delayed by DELAY (needs sch_netem)
  -t, --timeout SEC        kill every rank and fail (exit 124) after SEC seconds (default 300)
      --port P             MASTER_PORT (default 29500; namespaces have their own port space)
      --subnet A.B.C       the /24 used inside the namespaces (default 10.200.0)
  -e, --env NAME=VALUE     extra environment for every rank (repeatable)
      --launcher rig|ompi  rig (default): the rig starts each rank itself; ompi: mpirun.openmpi
                           runs in host 0 and starts the remote ranks through this script as its
                           rsh agent (-np K*M, M slots per host; the environment of -e is passed)
      --ompi-arg ARG       extra mpirun.openmpi argument (repeatable; --launcher ompi only)
  -q, --quiet              don't print the rig's own progress lines
  -h, --help
In ARGS, {ranktable} is replaced by the path of a version "1.0" rank table the rig writes (one
server per host, server_id rig-h<i>, host_ip = the host's address, device_id = local rank); its
path is also exported as RANK_TABLE_FILE. Every rank also gets HOSTCCL_RIG_HOST=<i>.
EOF
}

log() { ((quiet)) || echo "rig: $*" >&2; }
die() { echo "rig: $*" >&2; exit 2; }
skip() { echo "rig: SKIPPED: $*" >&2; exit 77; }

# --- rsh agent mode (called by mpirun.openmpi inside host 0): run a command inside the host that
# owns the address, with its own UTS namespace and hostname so Open MPI sees distinct nodes.
if [[ "${1:-}" == "--rsh-agent" ]]; then
  shift
  while [[ "${1:-}" == -* ]]; do shift; done  # options an ssh-style agent may be given
  target="${1:?rsh agent: no host}"
  shift
  [[ -n "${HOSTCCL_RIG_NS:-}" && -n "${HOSTCCL_RIG_SUBNET:-}" ]] || { echo "rsh agent: not inside a rig" >&2; exit 255; }
  [[ "$target" == "$HOSTCCL_RIG_SUBNET".* ]] || { echo "rsh agent: $target is not a rig host" >&2; exit 255; }
  idx=$(( ${target##*.} - 1 ))
  exec ip netns exec "${HOSTCCL_RIG_NS}-h${idx}" unshare --uts /bin/sh -c "hostname rig-h${idx} && exec /bin/sh -c \"\$0\"" "$*"
fi

hosts=2 ranks_per_host=2 rate="" delay="" timeout=300 port=29500 subnet="10.200.0" quiet=0 launcher=rig
extra_env=() ompi_args=()
while (($#)); do
  case "$1" in
    -H|--hosts) hosts="${2:?}"; shift 2 ;;
    -n|--ranks-per-host) ranks_per_host="${2:?}"; shift 2 ;;
    --rate) rate="${2:?}"; shift 2 ;;
    --delay) delay="${2:?}"; shift 2 ;;
    -t|--timeout) timeout="${2:?}"; shift 2 ;;
    --port) port="${2:?}"; shift 2 ;;
    --subnet) subnet="${2:?}"; shift 2 ;;
    -e|--env) [[ "${2:-}" == *=* ]] || die "--env wants NAME=VALUE, got '${2:-}'"; extra_env+=("$2"); shift 2 ;;
    --launcher) launcher="${2:?}"; shift 2 ;;
    --ompi-arg) ompi_args+=("${2?}"); shift 2 ;;
    -q|--quiet) quiet=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    -*) usage >&2; die "unknown option '$1'" ;;
    *) break ;;
  esac
done
(($#)) || { usage >&2; die "no program given"; }
[[ "$hosts" =~ ^[0-9]+$ ]] && ((hosts >= 1 && hosts <= 200)) || die "--hosts $hosts: expected 1..200"
[[ "$ranks_per_host" =~ ^[0-9]+$ ]] && ((ranks_per_host >= 1)) || die "--ranks-per-host $ranks_per_host: expected >= 1"
[[ "$timeout" =~ ^[0-9]+$ ]] && ((timeout >= 1)) || die "--timeout $timeout: expected seconds >= 1"
[[ "$port" =~ ^[0-9]+$ ]] && ((port >= 1 && port <= 65535)) || die "--port $port: expected 1..65535"
[[ "$subnet" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "--subnet $subnet: expected A.B.C"
[[ "$launcher" == rig || "$launcher" == ompi ]] || die "--launcher $launcher: expected rig or ompi"
prog="$1"
shift
prog_args=("$@")

# --- can the rig run here?
(($(id -u) == 0)) || skip "network namespaces need root (running as uid $(id -u))"
command -v ip >/dev/null || skip "'ip' (iproute2) is not installed"
if [[ -n "$rate$delay" ]]; then command -v tc >/dev/null || skip "'tc' (iproute2) is needed for --rate/--delay"; fi
if [[ "$launcher" == ompi ]]; then
  command -v mpirun.openmpi >/dev/null || skip "mpirun.openmpi (openmpi-bin) is not installed"
  command -v unshare >/dev/null || skip "'unshare' (util-linux) is needed for --launcher ompi"
fi

# Remove what earlier rigs left behind when they were killed outright (their pid is gone).
for stale in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${kPrefix}-[0-9]*-" || true); do
  owner="${stale#"${kPrefix}-"}"
  owner="${owner%%-*}"
  if ! kill -0 "$owner" 2>/dev/null; then
    for p in $(ip netns pids "$stale" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
    ip netns del "$stale" 2>/dev/null && log "removed stale namespace $stale"
  fi
done

run_id="${kPrefix}-$$-$(printf '%04x' $((RANDOM)))"
rig_ns="${run_id}-br"
work="$(mktemp -d "/tmp/${run_id}.XXXXXX")"
created_ns=()
pipe_pids=()

# Kills every process inside the rig's namespaces with signal $1.
signal_hosts() {
  local ns p
  for ns in "${created_ns[@]}"; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill "-$1" "$p" 2>/dev/null; done
  done
}

teardown() {
  local rc=$?
  trap - EXIT INT TERM HUP
  signal_hosts KILL
  local p
  for p in "${pipe_pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  wait 2>/dev/null
  local ns
  for ns in "${created_ns[@]}"; do ip netns del "$ns" 2>/dev/null; done  # also removes the veths/bridge
  rm -rf "$work"
  exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

host_ns() { echo "${run_id}-h$1"; }
host_ip() { echo "${subnet}.$(($1 + 1))"; }

# --- shaping parameters: tbf with a bucket of 10 ms at the rate (at least 64 KiB, one GSO
# packet) and 100 ms of queue, so TCP, not the shaper, decides the pace.
tbf=()
if [[ -n "$rate" ]]; then
  [[ "${rate,,}" =~ ^([0-9]+)([kmg]?)bit$ ]] || die "--rate $rate: expected <N>bit, <N>kbit, <N>mbit or <N>gbit"
  case "${BASH_REMATCH[2]}" in k) mult=1000 ;; m) mult=1000000 ;; g) mult=1000000000 ;; *) mult=1 ;; esac
  rate_bps=$((BASH_REMATCH[1] * mult))
  ((rate_bps >= 8000)) || die "--rate $rate: at least 8kbit"
  burst=$((rate_bps / 8 / 100))
  ((burst < 65536)) && burst=65536
  tbf=(tbf rate "$rate_bps"bit burst "$burst" latency 100ms)
fi

# --- namespaces, bridge, veths
ip netns add "$rig_ns" 2>"$work/err" || skip "cannot create a network namespace: $(cat "$work/err")"
created_ns+=("$rig_ns")
ip -n "$rig_ns" link add br0 type bridge || die "cannot create a bridge in $rig_ns"
ip -n "$rig_ns" link set br0 up
for ((i = 0; i < hosts; i++)); do
  ns="$(host_ns "$i")"
  ip netns add "$ns" || die "cannot create namespace $ns"
  created_ns+=("$ns")
  # The host end is created directly in the host namespace: no name ever exists in the root one.
  ip -n "$rig_ns" link add "h$i" type veth peer name eth0 netns "$ns" || die "cannot create the veth pair of host $i"
  ip -n "$rig_ns" link set "h$i" master br0 up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$(host_ip "$i")/24" dev eth0
  ip -n "$ns" link set eth0 up
  if [[ -n "$rate$delay" ]]; then
    # Uplink (host -> bridge): delay (netem) then rate (tbf); downlink (bridge -> host): rate.
    parent=(root)
    if [[ -n "$delay" ]]; then
      tc -n "$ns" qdisc add dev eth0 root handle 1: netem limit 100000 delay "$delay" 2>"$work/err" ||
        skip "cannot add a delay (tc netem delay $delay; the kernel needs CONFIG_NET_SCH_NETEM): $(cat "$work/err")"
      parent=(parent 1:1)
    fi
    if [[ -n "$rate" ]]; then
      tc -n "$ns" qdisc add dev eth0 "${parent[@]}" "${tbf[@]}" 2>"$work/err" &&
        tc -n "$rig_ns" qdisc add dev "h$i" root "${tbf[@]}" 2>>"$work/err" ||
        skip "cannot shape with tc ${tbf[*]} (the kernel needs CONFIG_NET_SCH_TBF): $(cat "$work/err")"
    fi
  fi
done
# Wait (bounded, 5 s) until every bridge port forwards (immediate without STP, but be sure).
for ((t = 0; t < 50; t++)); do
  [[ "$(ip -n "$rig_ns" -d link show master br0 | grep -c 'state forwarding')" -ge "$hosts" ]] && break
  sleep 0.1
done
log "$run_id: $hosts host(s) x $ranks_per_host rank(s), subnet ${subnet}.0/24${rate:+, rate $rate}${delay:+, delay $delay}"

# --- rank table (version 1.0, one server per host)
ranktable="$work/ranktable.json"
{
  printf '{\n  "status": "completed",\n  "version": "1.0",\n  "server_count": "%d",\n  "server_list": [\n' "$hosts"
  for ((i = 0; i < hosts; i++)); do
    printf '    { "server_id": "rig-h%d", "host_ip": "%s",\n      "device": [\n' "$i" "$(host_ip "$i")"
    for ((l = 0; l < ranks_per_host; l++)); do
      sep=","; ((l == ranks_per_host - 1)) && sep=""
      printf '        { "device_id": "%d", "device_ip": "%s", "rank_id": "%d" }%s\n' \
        "$l" "$(host_ip "$i")" $((i * ranks_per_host + l)) "$sep"
    done
    sep=","; ((i == hosts - 1)) && sep=""
    printf '      ] }%s\n' "$sep"
  done
  printf '  ]\n}\n'
} >"$ranktable"
for ((a = 0; a < ${#prog_args[@]}; a++)); do prog_args[a]="${prog_args[a]//\{ranktable\}/$ranktable}"; done

world=$((hosts * ranks_per_host))
# Launcher variables of an enclosing job must not leak into the ranks (first match wins there).
scrub=(-u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE -u OMPI_COMM_WORLD_LOCAL_RANK
       -u OMPI_COMM_WORLD_LOCAL_SIZE -u PMI_RANK -u PMI_SIZE -u MPI_LOCALRANKID -u MPI_LOCALNRANKS
       -u SLURM_PROCID -u SLURM_NTASKS -u SLURM_LOCALID -u SLURM_NNODES -u HOSTCCL_STORE_HOSTED)

# Starts one output-prefixing pipeline running "$@" and writing its status to $work/rc.<label>.
start_prefixed() {
  local label="$1"
  shift
  {
    "$@" </dev/null 2>&1
    echo $? >"$work/rc.$label.tmp" && mv "$work/rc.$label.tmp" "$work/rc.$label"
  } | awk -v p="[$label] " '{ print p $0; fflush() }' &
  pipe_pids+=($!)
}

# The emulated hosts share this machine's CPUs. hostccl's TCP waits poll without blocking for a
# while when a host's ranks fit on its cores (HOSTCCL_TCP_BUSY_POLL_US=auto), which is right on
# real hosts but here would take the CPUs the other "hosts" need: with more ranks in the whole rig
# than CPUs, tell it so (a later -e HOSTCCL_TCP_BUSY_POLL_US=... still wins).
cpu_env=()
((world > $(nproc))) && cpu_env=(HOSTCCL_TCP_BUSY_POLL_US=0)

labels=()
if [[ "$launcher" == rig ]]; then
  for ((i = 0; i < hosts; i++)); do
    for ((l = 0; l < ranks_per_host; l++)); do
      g=$((i * ranks_per_host + l))
      start_prefixed "$g" ip netns exec "$(host_ns "$i")" env "${scrub[@]}" \
        RANK="$g" WORLD_SIZE="$world" LOCAL_RANK="$l" LOCAL_WORLD_SIZE="$ranks_per_host" GROUP_RANK="$i" \
        MASTER_ADDR="$(host_ip 0)" MASTER_PORT="$port" HCCL_IF_IP="$(host_ip "$i")" \
        HOSTCCL_NODE_ID="rig-h$i" HOSTCCL_RIG_HOST="$i" RANK_TABLE_FILE="$ranktable" \
        "${cpu_env[@]}" "${extra_env[@]}" "$prog" "${prog_args[@]}"
      labels+=("$g")
    done
  done
else
  host_list=""
  for ((i = 0; i < hosts; i++)); do host_list+="${host_list:+,}$(host_ip "$i"):$ranks_per_host"; done
  xs=()
  for kv in "${cpu_env[@]}" "${extra_env[@]}"; do xs+=(-x "$kv"); done
  # mpirun runs in host 0 under its own hostname; remote daemons come through the rsh agent mode.
  start_prefixed mpirun ip netns exec "$(host_ns 0)" env "${scrub[@]}" HOSTCCL_RIG_NS="$run_id" \
    HOSTCCL_RIG_SUBNET="$subnet" unshare --uts /bin/sh -c 'hostname rig-h0 && exec "$@"' sh \
    mpirun.openmpi --allow-run-as-root -np "$world" --host "$host_list" \
    --mca plm_rsh_agent "$SELF --rsh-agent" --mca btl_tcp_if_include "${subnet}.0/24" \
    --mca oob_tcp_if_include "${subnet}.0/24" "${xs[@]}" "${ompi_args[@]}" "$prog" "${prog_args[@]}"
  labels+=(mpirun)
fi

# --- wait: all done, or the first failure (terminate the rest), or the timeout
deadline=$((SECONDS + timeout))
first_fail="" status=0 killed_at=0
while :; do
  done_count=0
  for lb in "${labels[@]}"; do
    [[ -f "$work/rc.$lb" ]] || continue
    done_count=$((done_count + 1))
    rc=$(<"$work/rc.$lb")
    if [[ "$rc" != 0 && -z "$first_fail" ]]; then
      first_fail="$lb" status="$rc"
      if ((done_count < ${#labels[@]})); then
        log "rank $lb exited with status $rc; terminating the other rank(s)"
        signal_hosts TERM
        killed_at=$SECONDS
      fi
    fi
  done
  ((done_count == ${#labels[@]})) && break
  if ((killed_at > 0 && SECONDS - killed_at >= 3)); then signal_hosts KILL; fi
  if ((SECONDS >= deadline)); then
    log "timeout after ${timeout} s; killing every rank"
    signal_hosts KILL
    status=124
    first_fail="${first_fail:-timeout}"
    sleep 0.5
    break
  fi
  sleep 0.1
done
for p in "${pipe_pids[@]}"; do wait "$p" 2>/dev/null; done
summary=""
for lb in "${labels[@]}"; do summary+=" $lb:$( [[ -f "$work/rc.$lb" ]] && cat "$work/rc.$lb" || echo '?')"; done
log "exit status by rank:$summary"
exit "$status"

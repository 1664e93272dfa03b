#!/usr/bin/env bash
# Fake hosts for multi-node tests on one machine: network namespaces node1..N, each with its own
# hostname, so MPI sees N nodes (MPI_Comm_split_type(SHARED) gives a group per "host") and Open
# MPI's ranks on different "hosts" talk over TCP. Needs root, iproute2 and util-linux.
#
#   tools/netns.sh up [N]              create node1..N (10.210.0.1..N) joined by a bridge
#   tools/netns.sh down                remove them
#   tools/netns.sh exec NODE CMD...    run CMD "on" NODE (its netns, hostname and /etc/hosts)
#   tools/netns.sh rsh [-x] NODE CMD...  the ssh stand-in mpirun launches remote daemons with
#   tools/netns.sh mpirun -n N PROG... Open MPI's mpirun on node1, N ranks over node1 and node2
#   tools/netns.sh mpiexec -n N PROG... the same with MPICH's Hydra, hosts isolated (below)
#
# FERROMPI_NETNS_HOSTS=node1:2,node2:1,node3:1 places the ranks instead (its slots must add up
# to N). FERROMPI_NETNS_MPIRUN (Open MPI 5's mpirun) and FERROMPI_NETNS_MPIEXEC (another Hydra
# mpiexec, MPICH 5's) stand in for Debian's launchers. FERROMPI_NETNS_ISOLATE=1 (`mpiexec`'s
# default; 0 turns it off) also gives each host its own IPC and PID namespace, /dev/shm and
# boot_id: UCX decides "same host" by boot_id, so without it MPICH uses shared memory between
# the fake hosts instead of TCP.
#
# Learned from ../shared/envlab (its measured pitfalls): the bridge lives in its own namespace
# and the root namespace only gets a blackhole route for the subnet, so nothing leaves the
# machine; commands enter a namespace with nsenter + unshare (not `ip netns exec`, which
# remounts /sys).
set -euo pipefail
self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
net=10.210.0
switch=ferrompi-sw

down() {
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^(node[0-9]+|$switch)$" || true); do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$ns"
    rm -rf "/etc/netns/$ns"
  done
  ip route del blackhole "$net.0/24" 2>/dev/null || true
}

up() {
  local n=${1:-2} hosts="127.0.0.1 localhost" i
  down
  ip route replace blackhole "$net.0/24"
  ip netns add $switch
  ip netns exec $switch ip link add br0 type bridge
  ip netns exec $switch ip link set br0 up
  for i in $(seq 1 "$n"); do hosts+=$'\n'"$net.$i node$i"; done
  for i in $(seq 1 "$n"); do
    ip netns add "node$i"
    ip netns exec $switch ip link add "veth$i" type veth peer name eth0
    ip netns exec $switch ip link set eth0 netns "node$i"
    ip netns exec $switch ip link set "veth$i" master br0 up
    ip netns exec "node$i" ip link set lo up
    ip netns exec "node$i" ip addr add "$net.$i/24" dev eth0
    ip netns exec "node$i" ip link set eth0 up
    mkdir -p "/etc/netns/node$i"
    printf '%s\n' "$hosts" > "/etc/netns/node$i/hosts"
    : > "/etc/netns/node$i/resolv.conf"
  done
  echo "netns: node1..node$n up ($net.1-$n)"
}

on() {
  local node=$1 isolate=()
  shift
  [[ ${FERROMPI_NETNS_ISOLATE:-0} != 1 ]] || isolate=(--ipc --pid --fork --kill-child --mount-proc)
  exec nsenter --net="/run/netns/$node" -- unshare --uts --mount --propagation private "${isolate[@]}" -- \
    /bin/sh -c 'for f in hosts resolv.conf; do mount --bind /etc/netns/$0/$f /etc/$f; done
                if [ "${FERROMPI_NETNS_ISOLATE:-0}" = 1 ]; then
                  mount -t tmpfs -o size=2g tmpfs /dev/shm
                  cat /proc/sys/kernel/random/uuid > /dev/shm/.boot_id
                  mount --bind /dev/shm/.boot_id /proc/sys/kernel/random/boot_id
                fi
                hostname "$0"; exec "$@"' "$node" "$@"
}

# hosts N: the --host list for N ranks (FERROMPI_NETNS_HOSTS, else node1 and node2 halves).
hosts() {
  local ranks=$1 spec=${FERROMPI_NETNS_HOSTS:-} total=0 h
  if [[ -z $spec ]]; then
    spec="node1:$(((ranks + 1) / 2))"
    ((ranks / 2 == 0)) || spec+=",node2:$((ranks / 2))"
  fi
  for h in ${spec//,/ }; do total=$((total + ${h#*:})); done
  ((total == ranks)) || { echo "netns.sh: $spec holds $total ranks, not $ranks" >&2; exit 2; }
  echo "$spec"
}

case ${1:-} in
  up) shift; up "$@" ;;
  down) down ;;
  exec) shift; on "$@" ;;
  rsh)
    shift
    while [[ ${1:-} == -* ]]; do shift; done # ssh options mpirun passes (-x)
    node=$1; shift
    on "$node" /bin/sh -c "$*" ;;
  mpirun | mpiexec)
    launcher=$1
    shift
    [[ ${1:-} == -n ]] || { echo "netns.sh $launcher -n N PROG..." >&2; exit 2; }
    ranks=$2
    shift 2
    spec=$(hosts "$ranks")
    if [[ $launcher == mpirun ]]; then
      # osc ^ucx: Open MPI 4.1.4's osc/ucx claims windows between hosts that UCX has no
      # transport for here, and MPI_Win_allocate fails with MPI_ERR_WIN (C does the same).
      if [[ -n ${FERROMPI_NETNS_MPIRUN:-} ]]; then
        # Open MPI 5 (PRRTE): the same settings under PRRTE's names; without --oversubscribe,
        # with which PRRTE 3 put every rank on node1.
        on node1 "$FERROMPI_NETNS_MPIRUN" --allow-run-as-root \
          --prtemca plm_ssh_agent "$self rsh" --prtemca oob_tcp_if_include eth0 \
          --mca btl_tcp_if_include eth0 --mca osc ^ucx --host "$spec" -n "$ranks" "$@"
      else
        on node1 mpirun.openmpi --allow-run-as-root --oversubscribe --mca plm_rsh_agent "$self rsh" \
          --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 --mca osc ^ucx \
          --host "$spec" -n "$ranks" "$@"
      fi
    else
      export FERROMPI_NETNS_ISOLATE=${FERROMPI_NETNS_ISOLATE:-1}
      on node1 "${FERROMPI_NETNS_MPIEXEC:-mpiexec.mpich}" -launcher ssh \
        -launcher-exec "$(dirname "$self")/netns-rsh" -hosts "$spec" -n "$ranks" "$@"
    fi
    ;;
  *) sed -n '2,19p' "$self"; exit 2 ;;
esac

#!/usr/bin/env bash
# A real Slurm on this machine whose nodes are the fake hosts of tools/netns.sh: munged,
# slurmctld and a slurmd in node1, a slurmd in every other nodeK, each with its own host name,
# so jobs see distinct nodes and MPI traffic between them crosses the fake network. Needs root.
#
#   tools/slurm.sh up [N]       netns hosts node1..N (default 2) and Slurm on them (~1 s)
#   tools/slurm.sh down         stop Slurm and remove the hosts
#   tools/slurm.sh exec CMD...  run a Slurm client (srun, sinfo, scontrol, ...) on node1
#   tools/slurm.sh run [salloc options] [--mpi=TYPE] -n N PROG [ARGS...]
#                               salloc with those options and `-n N`, then srun --mpi=TYPE
#                               PROG in it: a launcher for the test harness, e.g.
#                               FERROMPI_MPIEXEC="tools/slurm.sh run -N 2 -c 2 --mem=300 --mpi=pmix"
#
# Nodes advertise CPUS_PER_NODE (default 4) CPUs and MEM_PER_NODE (default 2000) MiB, more than
# this machine has (SlurmdParameters=config_overrides). Learned from ../shared/envlab
# (slurm-netns-up.sh and its README, section 2): the config choices below are the ones it
# measured to work without systemd; the comments say why each is there.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lab=${FERROMPI_SLURMLAB:-/tmp/ferrompi-slurm}
conf=$lab/etc/slurm.conf
netns=$here/netns.sh

on_node() { # on_node NODE CMD...: a command on a fake host, with this Slurm's config
  local node=$1
  shift
  "$netns" exec "$node" env SLURM_CONF="$conf" "$@"
}

down() {
  local f pid
  for f in "$lab"/run/*.pid "$lab"/munge/munged.pid; do
    [[ -s $f ]] || continue
    pid=$(cat "$f")
    kill "$pid" 2>/dev/null || true
    rm -f "$f"
  done
  "$netns" down
}

up() {
  local n=${1:-2} cpus=${CPUS_PER_NODE:-4} mem=${MEM_PER_NODE:-2000} i state=""
  if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v srun >/dev/null; then
    if [[ ${FERROMPI_INSTALL:-0} != 1 ]]; then
      echo "slurm.sh: Slurm is missing: rerun with --install (FERROMPI_INSTALL=1), or:" \
        "apt-get install munge slurmd slurmctld slurm-client" >&2
      return 1
    fi
    echo "slurm.sh: installing munge and Slurm" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      munge slurmd slurmctld slurm-client > /dev/null
  fi
  down
  "$netns" up "$n" > /dev/null
  rm -rf "$lab"
  mkdir -p "$lab"/{etc,log,run,state}
  chmod 755 "$lab"
  for i in $(seq 1 "$n"); do mkdir -p "$lab"/{spool,tmp}/node"$i"; done
  chmod 1777 "$lab"/tmp/*
  # munge: its own socket (a path-bound unix socket reaches into every network namespace).
  install -d -o munge -g munge -m 0755 "$lab/munge"
  if [[ ! -s /etc/munge/munge.key ]]; then
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
    chown munge:munge /etc/munge/munge.key
    chmod 400 /etc/munge/munge.key
  fi
  local sock=$lab/munge/munge.socket
  runuser -u munge -- /usr/sbin/munged --socket="$sock" --pid-file="$lab/munge/munged.pid" \
    --log-file="$lab/munge/munged.log" --seed-file="$lab/munge/munged.seed" --force
  for i in $(seq 50); do [[ -S $sock ]] && break; sleep 0.1; done
  cat > "$conf" << CONF
ClusterName=ferrompi
SlurmctldHost=node1(10.210.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$lab/state
SlurmdSpoolDir=$lab/spool/%n
# per-node TmpFS: mpi/pmix makes its directories there, and nodes share this machine's /tmp
TmpFS=$lab/tmp/%n
SlurmctldPidFile=$lab/run/slurmctld.pid
SlurmdPidFile=$lab/run/slurmd-%n.pid
SlurmctldLogFile=$lab/log/slurmctld.log
SlurmdLogFile=$lab/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# without a default every job without --mem takes the whole node's memory
DefMemPerCPU=100
# refuse impossible requests instead of leaving them pending forever
EnforcePartLimits=ALL
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MailProg=/bin/true
# a task that dies ends its step at once instead of leaving the others in a collective
KillOnBadExit=1
KillWait=5
MinJobAge=30
SlurmdTimeout=30
NodeName=node[1-$n] NodeAddr=10.210.0.[1-$n] CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=node[1-$n] Default=YES MaxTime=INFINITE State=UP
CONF
  on_node node1 slurmctld -i -f "$conf"
  for i in $(seq 1 "$n"); do on_node node"$i" slurmd -f "$conf"; done
  for i in $(seq 150); do
    state=$(on_node node1 sinfo -h -o '%T' 2> /dev/null | sort -u | tr '\n' ' ')
    [[ $state == "idle " ]] && break
    sleep 0.2
  done
  [[ $state == "idle " ]] || { echo "slurm.sh: nodes not idle: $state" >&2; tail -5 "$lab"/log/*.log >&2; exit 1; }
  echo "slurm: $n nodes idle (node1..node$n, $cpus CPUs and $mem MiB each)"
}

run() {
  local alloc=() step=() ranks=""
  while (($#)) && [[ $1 == -* ]]; do
    case $1 in
      --mpi=*) step+=("$1"); shift ;;
      -n) ranks=$2; shift 2 ;;
      -N | -c) alloc+=("$1" "$2"); shift 2 ;;
      *) alloc+=("$1"); shift ;;
    esac
  done
  [[ -n $ranks ]] || { echo "slurm.sh run: -n N is required" >&2; exit 2; }
  # Open MPI 4.1.4's osc/ucx fails MPI_Win_allocate between hosts here (as in netns.sh).
  export OMPI_MCA_osc=${OMPI_MCA_osc:-^ucx} OMPI_MCA_btl_tcp_if_include=${OMPI_MCA_btl_tcp_if_include:-eth0}
  # --export=ALL (srun's default) hands the harness's variables to every task.
  on_node node1 salloc -Q "${alloc[@]}" -n "$ranks" srun "${step[@]}" "$@"
}

case ${1:-} in
  up) shift; up "$@" ;;
  down) down ;;
  exec) shift; on_node node1 "$@" ;;
  run) shift; run "$@" ;;
  *) sed -n '2,16p' "$0"; exit 2 ;;
esac

# A one-node Slurm cluster for the tests, on this machine: munged and slurmctld / slurmd as
# daemons with their configuration, state and sockets in a temporary directory, stopped by
# slurm_cluster_stop (set as an EXIT trap by the caller). Sourced by tests/slurm/slurm_test.sh.
#   slurm_cluster_start DIR   starts it (root needed: slurmd runs jobs as their user); returns 1
#                             with the reason in $slurm_why where Slurm cannot start here
#   slurm_cluster_stop        stops the daemons this shell started (by their pid files)

slurm_why=""

slurm_cluster_start() {
  local dir=$1 host port
  for tool in munged mungekey slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
    command -v "$tool" >/dev/null || { slurm_why="no $tool (Debian packages slurm-wlm and munge)"; return 1; }
  done
  [ "$(id -u)" -eq 0 ] || { slurm_why="slurmd needs root to start jobs"; return 1; }
  slurm_dir=$dir
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
  chmod 700 "$dir/munge"
  mungekey --create --keyfile="$dir/munge/munge.key" 2>"$dir/log/mungekey.err" ||
    { slurm_why="mungekey failed: $(cat "$dir/log/mungekey.err")"; return 1; }
  munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" \
    --force 2>"$dir/log/munged.err" || { slurm_why="munged does not start: $(cat "$dir/log/munged.err")"; return 1; }
  host=$(hostname -s)
  port=$((20000 + $$ % 20000))
  cat >"$dir/slurm.conf" <<CONF
ClusterName=ktunetest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MinJobAge=600
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$SLURM_CONF" 2>"$dir/log/slurmctld.err" ||
    { slurm_why="slurmctld does not start: $(cat "$dir/log/slurmctld.err")"; return 1; }
  slurmd -f "$SLURM_CONF" 2>"$dir/log/slurmd.err" ||
    { slurm_why="slurmd does not start: $(cat "$dir/log/slurmd.err")"; return 1; }
  local state=""
  for _ in $(seq 60); do
    state=$(sinfo -h -N -o %t 2>/dev/null || true)
    [ "$state" = idle ] && return 0
    sleep 0.5
  done
  slurm_why="the node did not come up (sinfo: '$state'); slurmctld.log: $(tail -3 "$dir/log/slurmctld.log" 2>/dev/null)"
  return 1
}

slurm_cluster_stop() {
  local dir=${slurm_dir:-}
  [ -n "$dir" ] || return 0
  for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    [ -s "$pidfile" ] || continue
    local pid
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
}

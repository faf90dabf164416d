# A one-node Slurm on this machine, for the tests of the recipes (sourced by test-slurm.sh
# and test-slurm-sprt.sh after test-common.sh, which defines log, skip and fail; they
# define TASKS (the node's CPUs) and SLURM_PORT (slurmctld's port; slurmd takes the next)).
#
# - Installs Debian's slurm-wlm and munge when they are missing (needs root and apt).
# - Starts munged (unless one answers), then slurmctld and slurmd with a minimal slurm.conf
#   in the temporary folder $WORK; stops what it started when the shell exits, and cancels
#   $JOB when one was submitted.
# - Defines task_state K: array task K's state and exit code, as "STATE EXIT" (e.g.
#   "COMPLETED 0:0").
if ! command -v sbatch >/dev/null || ! command -v slurmctld >/dev/null ||
    ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
    [ "$(id -u)" = 0 ] || skip "Slurm is not installed and this is not root (apt-get install slurm-wlm munge)"
    command -v apt-get >/dev/null || skip "Slurm is not installed and there is no apt-get"
    log "installing slurm-wlm and munge"
    export DEBIAN_FRONTEND=noninteractive
    if ! { apt-get update -qq && apt-get install -y -qq slurm-wlm munge >/dev/null; }; then
        skip "apt-get could not install slurm-wlm and munge"
    fi
fi
[ "$(id -u)" = 0 ] || skip "starting slurmd needs root"

WORK=$(mktemp -d /tmp/kalaha-slurm.XXXXXX)
STARTED_MUNGED=""
JOB=""
cleanup() {
    set +e
    [ -n "$JOB" ] && scancel "$JOB" 2>/dev/null
    for pid in "$WORK/slurmd.pid" "$WORK/slurmctld.pid"; do
        [ -f "$pid" ] && kill "$(cat "$pid")" 2>/dev/null
    done
    sleep 1
    if [ -n "$STARTED_MUNGED" ] && [ -f /run/munge/munged.pid ]; then
        kill "$(cat /run/munge/munged.pid)" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    if [ ! -s /etc/munge/munge.key ]; then
        mungekey --create >/dev/null 2>&1 || skip "cannot create /etc/munge/munge.key"
        chown munge:munge /etc/munge/munge.key 2>/dev/null || true
    fi
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
    if id munge >/dev/null 2>&1; then
        runuser -u munge -- munged || skip "munged does not start"
    else
        munged --force || skip "munged does not start"
    fi
    STARTED_MUNGED=1
    for _ in $(seq 50); do
        munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
        sleep 0.1
    done
    munge -n | unmunge >/dev/null 2>&1 || skip "munged started but does not answer"
fi

NODE=$(hostname -s)
export SLURM_CONF="$WORK/slurm.conf"
mkdir -p "$WORK/state" "$WORK/spool" "$WORK/logs" "$WORK/results"
cat >"$SLURM_CONF" <<EOF
ClusterName=kalaha-test
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$SLURM_PORT
SlurmdPort=$((SLURM_PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
JobRequeue=1
MinJobAge=600
MpiDefault=none
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$TASKS RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -f "$SLURM_CONF" || skip "slurmctld does not start (see $WORK/slurmctld.log)"
slurmd -f "$SLURM_CONF" -N "$NODE" || skip "slurmd does not start (see $WORK/slurmd.log)"
state=""
for _ in $(seq 100); do
    state=$(sinfo -h -n "$NODE" -o %T 2>/dev/null || true)
    [ "$state" = idle ] && break
    sleep 0.3
done
if [ "$state" != idle ]; then
    tail -n 20 "$WORK/slurmctld.log" "$WORK/slurmd.log" 2>/dev/null || true
    skip "the Slurm node did not become idle (state: ${state:-none})"
fi
log "Slurm is up: $(sinfo -h -o '%P %D node(s) %T %c CPUs')"

task_state() {
    scontrol -o show job "${JOB}_$1" 2>/dev/null |
        sed -n 's/.*JobState=\([A-Z_]*\).*ExitCode=\([0-9:]*\).*/\1 \2/p' | head -n 1
}

#!/usr/bin/env bash
# Stop what slurm-up.sh started, by recorded PID, in reverse order.
DIR=${DIR:-/tmp/rc1-slurm}
# cancel jobs first: slurmstepd/job processes outlive slurmd otherwise
if [ -s "$DIR/pids/slurmctld" ]; then
  SLURM_CONF=$DIR/slurm.conf scancel --full -u "$(id -un)" 2>/dev/null
  for i in $(seq 1 50); do [ -z "$(SLURM_CONF=$DIR/slurm.conf squeue -h -t R,CG 2>/dev/null)" ] && break; sleep 0.2; done
fi
for p in slurmd slurmctld munged; do
  f="$DIR/pids/$p"; [ -s "$f" ] || continue; pid=$(cat "$f")
  kill "$pid" 2>/dev/null && for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid"; rm -f "$f"
done
exit 0

#!/usr/bin/env bash
# Start a single-node Slurm 22.05 cluster on 127.0.0.1 without systemd (Debian 12, as root), for
# the Slurm executor's tests. Usage:
#   DIR=/tmp/rc1-slurm bash test/servers/slurm-up.sh    then    export SLURM_CONF=$DIR/slurm.conf
# Needs: apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge
#        (block service auto-start first: printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d)
# Ports: SLURMCTLD_PORT (default 6817), SLURMD_PORT (default 6818). One partition, `main`.
# Stop with slurm-down.sh (kills the PIDs recorded in $DIR/pids/, in reverse order).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${DIR:-/tmp/rc1-slurm}; HOST=$(hostname -s)
CTLD_PORT=${SLURMCTLD_PORT:-6817}; SLURMD_PORT=${SLURMD_PORT:-6818}
for b in munged slurmctld slurmd sbatch; do
  command -v "$b" >/dev/null || [ -x "/usr/sbin/$b" ] || { echo "slurm-up: $b not found: apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge" >&2; exit 3; }
done
mkdir -p "$DIR"/{state,spool,pids}
export SLURM_CONF=$DIR/slurm.conf
sed -e "s|@HOST@|$HOST|g" -e "s|@DIR@|$DIR|g" -e "s|@CPUS@|$(nproc)|g" -e "s|@MEM@|4096|g" \
    -e "s|@CTLD_PORT@|$CTLD_PORT|g" -e "s|@SLURMD_PORT@|$SLURMD_PORT|g" \
    "$HERE/slurm.conf.template" > "$SLURM_CONF"
t0=$(date +%s%N); ms() { echo $(( ($(date +%s%N) - t0) / 1000000 )); }

# 1. munge (the munge package's postinst creates /etc/munge/munge.key); reuse a running munged
[ -s /etc/munge/munge.key ] || { mungekey -c -f -k /etc/munge/munge.key; chown munge:munge /etc/munge/munge.key; }
install -d -o munge -g munge -m 0755 /run/munge
if [ -s /run/munge/munged.pid ] && kill -0 "$(cat /run/munge/munged.pid)" 2>/dev/null; then
  echo "munged already running (pid $(cat /run/munge/munged.pid)); not ours to stop"
else
  runuser -u munge -- /usr/sbin/munged            # daemonizes, writes /run/munge/munged.pid
  cp /run/munge/munged.pid "$DIR/pids/munged"
fi
munge -n | unmunge >/dev/null && echo "munged ok ($(ms) ms)"

# 2. controller + compute daemon, foreground (-D) so $! is the daemon's PID
cd "$DIR"   # the daemons (and every job step) inherit this working directory: one that outlives the caller
setsid slurmctld -D -c </dev/null >"$DIR/slurmctld.out" 2>&1 & echo $! > "$DIR/pids/slurmctld"
setsid slurmd -D </dev/null >"$DIR/slurmd.out" 2>&1 & echo $! > "$DIR/pids/slurmd"
for i in $(seq 1 300); do sinfo -h -o '%T' 2>/dev/null | grep -q '^idle' && break; sleep 0.1; done
sinfo -h -o '%T' | grep -q '^idle' || { echo "slurm did not come up"; tail -20 "$DIR"/slurm*.log; exit 1; }
echo "slurm idle ($(ms) ms); export SLURM_CONF=$SLURM_CONF"

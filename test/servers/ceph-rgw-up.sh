#!/usr/bin/env bash
# Start a throwaway single-node Ceph 16.2 (mon + 1 memstore OSD + radosgw) serving S3 on
# 127.0.0.1:$RGW_PORT (default 17480; monitor on $MON_PORT, default 16789), state in $DIR.
# Needs: apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw   (~60 MB, ~19 s)
# Usage: DIR=/tmp/rc1-ceph bash ceph-rgw-up.sh ; S3 credentials rc1access / rc1secretkey ; stop: ceph-rgw-down.sh
# Gotchas: the monitor must have a msgr v1 address (monmaptool --addv '[v1:…]'; a v2-only address
# makes v1 clients hang), and the beast frontend needs tcp_nodelay=1 (see the template). ~13 s.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); DIR=${DIR:-/tmp/rc1-ceph}; RGW_PORT=${RGW_PORT:-17480}; MON_PORT=${MON_PORT:-16789}
for b in ceph-mon ceph-osd radosgw; do command -v $b >/dev/null || { echo "ceph-rgw-up.sh: $b is not installed (apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw)" >&2; exit 3; }; done
if curl -s -o /dev/null "http://127.0.0.1:$RGW_PORT/" || (exec 3<>"/dev/tcp/127.0.0.1/$MON_PORT") 2>/dev/null; then
  echo "ceph-rgw-up.sh: 127.0.0.1:$RGW_PORT or :$MON_PORT is in use (another Ceph still running? stop it with ceph-rgw-down.sh and its DIR)" >&2; exit 1
fi
mkdir -p "$DIR"/{run,log,pids,rgw.a}; cd "$DIR"
# a failed or interrupted start stops what it started
trap 'echo "ceph-rgw-up.sh: line $LINENO: \"$BASH_COMMAND\" failed; see $DIR/log" >&2; DIR="$DIR" bash "$HERE/ceph-rgw-down.sh"' ERR
trap 'DIR="$DIR" bash "$HERE/ceph-rgw-down.sh"' INT TERM
FSID=$(cat /proc/sys/kernel/random/uuid)
sed -e "s|@DIR@|$DIR|g" -e "s|@FSID@|$FSID|g" -e "s|@RGW_PORT@|$RGW_PORT|g" -e "s|@MON_PORT@|$MON_PORT|g" "$HERE/ceph-rgw.conf.template" > ceph.conf
export CEPH_CONF=$DIR/ceph.conf
t0=$(date +%s%N); ms() { echo $(( ($(date +%s%N) - t0) / 1000000 )); }
# monitor (msgr v1 only, no cephx)
monmaptool --create --addv a "[v1:127.0.0.1:$MON_PORT]" --fsid "$FSID" monmap >/dev/null
ceph-authtool --create-keyring keyring --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool keyring --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' >/dev/null
ceph-mon --mkfs -i a --monmap monmap --keyring keyring
setsid ceph-mon -i a -f </dev/null >log/mon.out 2>&1 & echo $! > pids/mon
for i in $(seq 1 100); do timeout 5 ceph mon stat >/dev/null 2>&1 && break; sleep 0.2; done
echo "mon up ($(ms) ms)"
# one OSD on memstore (RAM, memstore_device_bytes = 4 GiB)
OSD_UUID=$(cat /proc/sys/kernel/random/uuid); ID=$(ceph osd new "$OSD_UUID"); mkdir -p "osd.$ID"
ceph-osd -i "$ID" --mkfs --osd-uuid "$OSD_UUID" >log/osd-mkfs.out 2>&1
# Retried for up to 10 s: in one CI run under load the start failed between the OSD's mkfs and its
# start, most likely here (the ERR trap above now names the command that fails).
added=0
for i in $(seq 1 50); do
  if ceph osd crush add "osd.$ID" 1.0 root=default host="$(hostname -s)" >/dev/null 2>log/crush.err; then added=1; break; fi
  sleep 0.2
done
[ "$added" = 1 ] || { echo "ceph-rgw-up.sh: ceph osd crush add failed: $(tail -3 log/crush.err)" >&2; exit 1; }
setsid ceph-osd -i "$ID" -f </dev/null >log/osd.out 2>&1 & echo $! > pids/osd
for i in $(seq 1 900); do
  ceph osd stat 2>/dev/null | grep -q ' 1 up' && break
  kill -0 "$(cat pids/osd)" 2>/dev/null || { echo "ceph-rgw-up.sh: ceph-osd exited while starting; see $DIR/log/osd.0.log:" >&2; tail -5 log/osd.out >&2; exit 1; }
  sleep 0.2
done
echo "osd up ($(ms) ms)"
# radosgw (creates its pools on first start) + an S3 user
setsid radosgw -n client.rgw.a -f </dev/null >log/rgw.out 2>&1 & echo $! > pids/rgw
for i in $(seq 1 1200); do curl -s -o /dev/null http://127.0.0.1:$RGW_PORT/ && break; sleep 0.2; done   # pool creation: ~9 s idle, minutes on a loaded machine
curl -s -o /dev/null http://127.0.0.1:$RGW_PORT/ || { echo "ceph-rgw-up.sh: radosgw did not come up; see $DIR/log" >&2; exit 1; }
radosgw-admin user create --uid=rc1 --display-name=rc1 --access-key=rc1access --secret-key=rc1secretkey >log/user.json
echo "rgw S3 endpoint http://127.0.0.1:$RGW_PORT up ($(ms) ms)"

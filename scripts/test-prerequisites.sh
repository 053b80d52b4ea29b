#!/usr/bin/env bash
# Installs and starts what the test suites need on a Debian machine, from Debian's packages:
# git, Redis (started on 127.0.0.1:6379 when nothing answers at REDIS_URL), bubblewrap and socat (the
# command sandbox), python3, make, gcc, procps and iproute2 (what the sandbox tests run and use),
# Chromium (the browser tests). Run as root (or with sudo); what is already
# there is left alone. `.ci/run` runs it; on a fresh machine:
#   bash scripts/test-prerequisites.sh && pnpm test
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

log() { printf '\n== %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then as_root apt-get update -qq; apt_updated=1; fi
  as_root apt-get install -y -qq "$@" >/dev/null
}

log "git (every workspace, checkpoint and repository test)"
if ! command -v git >/dev/null; then apt_install git; fi
git --version

log "redis"
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  apt_install redis-server redis-tools
fi
url="${REDIS_URL:-redis://127.0.0.1:6379}"
if ! redis-cli -u "$url" ping >/dev/null 2>&1; then
  if [ "$url" != "redis://127.0.0.1:6379" ]; then
    echo "no Redis answers at REDIS_URL=$url; unset REDIS_URL to have one started on 127.0.0.1:6379" >&2
    exit 1
  fi
  echo "no Redis answers at $url; starting one on 127.0.0.1:6379"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
    --dir "$(mktemp -d)" --logfile "$(mktemp)"
  for _ in $(seq 1 50); do redis-cli -u "$url" ping >/dev/null 2>&1 && break; sleep 0.1; done
fi
redis-cli -u "$url" ping

log "bubblewrap + socat (command sandbox tests)"
if ! command -v bwrap >/dev/null; then apt_install bubblewrap; fi
if ! command -v socat >/dev/null; then apt_install socat; fi
bwrap --version

log "everyday tools the sandbox tests run inside it (python3, make, a C compiler) and use (pgrep, ip)"
missing=()
for tool in python3:python3 make:make cc:gcc pgrep:procps ip:iproute2; do
  command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
[ ! -e /usr/include/stdio.h ] && missing+=(libc6-dev)
if [ "${#missing[@]}" != 0 ]; then apt_install "${missing[@]}"; fi
python3 --version; make --version | sed -n 1p; cc --version | sed -n 1p

log "chromium (browser tests)"
if [ ! -x /usr/bin/chromium ]; then apt_install chromium; fi
/usr/bin/chromium --version || true

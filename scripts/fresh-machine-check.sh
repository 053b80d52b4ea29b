#!/usr/bin/env bash
# Runs the README's commands on a fresh Debian machine with Node 20 and nothing else, on this host:
#   sudo bash scripts/fresh-machine-check.sh                  # the whole `pnpm test`
#   sudo bash scripts/fresh-machine-check.sh @baton/workspace @baton/storage-redis
#                                                             # only these packages' suites
# The machine is a minimal Debian (`debootstrap --variant=minbase`, kept once under
# FRESH_MACHINE_DIR and copied afresh for every run) with this host's `node` (must be 20) and its
# npm copied in, as a Node 20 install from a package would leave it. It is the root (pivot_root, so
# user namespaces and the bubblewrap sandbox work in it) of its own network, mount and PID
# namespaces: nothing of this host's loopback (its Redis included)
# is reachable, so `scripts/test-prerequisites.sh` must install and start everything itself. The
# package clients reach the registries through an HTTP proxy on the machine's loopback
# (scripts/fresh-machine-proxy.mjs). In the machine, as root, with CI=true:
#   npm i -g pnpm@12.4.2 && pnpm install --frozen-lockfile       (the README's quickstart install)
#   bash scripts/test-prerequisites.sh                           (git, Redis, bubblewrap, Chromium)
#   pnpm demo                                                    (the quickstart's demo; needs git)
#   pnpm test                                                    (the README's test command)
# The project goes in as a copy of this checkout's files (tracked and untracked, not ignored), with
# no `.git`, as a downloaded archive would. Needs root, unshare, pivot_root and ip, and debootstrap
# (installed with apt-get when missing).
# Environment: FRESH_MACHINE_DIR (default /var/tmp/baton-fresh-machine), FRESH_MACHINE_MIRROR
# (default: this host's first Debian mirror), FRESH_MACHINE_RELEASE (default: this host's).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${FRESH_MACHINE_DIR:-/var/tmp/baton-fresh-machine}"
packages=("$@")

fail() {
  echo "fresh-machine-check: $*" >&2
  exit 1
}
log() { printf '\n== %s\n' "$*"; }

[ "$(id -u)" = 0 ] || fail "run as root (it builds a root file system and mounts it): sudo bash scripts/fresh-machine-check.sh"
# debootstrap builds the machine from Debian's packages; a new host has none, so it comes from apt.
if ! command -v debootstrap >/dev/null && command -v apt-get >/dev/null; then
  log "debootstrap (apt-get install debootstrap)"
  { apt-get install -y --no-install-recommends debootstrap ||
    { apt-get update && apt-get install -y --no-install-recommends debootstrap; }; } >"${TMPDIR:-/tmp}/fresh-machine-apt.log" 2>&1 ||
    fail "apt-get install debootstrap failed; see ${TMPDIR:-/tmp}/fresh-machine-apt.log"
fi
for tool in debootstrap unshare ip pivot_root; do
  command -v "$tool" >/dev/null || fail "$tool is missing: apt-get install debootstrap util-linux iproute2"
done
node_bin="$(command -v node)" || fail "node is missing on this host (its Node 20 is copied in)"
node_major="$("$node_bin" -p 'process.versions.node.split(".")[0]')"
[ "$node_major" = 20 ] || fail "this host's node is $("$node_bin" -v); the check copies in Node 20"

release="${FRESH_MACHINE_RELEASE:-$(. /etc/os-release && echo "${VERSION_CODENAME:-}")}"
[ -n "$release" ] || fail "set FRESH_MACHINE_RELEASE (no VERSION_CODENAME in /etc/os-release)"
mirror="${FRESH_MACHINE_MIRROR:-}"
if [ -z "$mirror" ]; then
  mirror="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
    awk '/^URIs:/ && $2 ~ /debian\/?$/ { print $2; exit }')"
fi
if [ -z "$mirror" ]; then
  mirror="$(awk '$1 == "deb" && $2 ~ /debian\/?$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)"
fi
[ -n "$mirror" ] || fail "set FRESH_MACHINE_MIRROR (no Debian mirror found in this host's apt sources)"

base="$dir/base-$release"
root="$dir/machine"
mkdir -p "$dir"

if [ ! -e "$base/.complete" ]; then
  log "debootstrap $release (minbase) from $mirror, once"
  rm -rf "$base"
  debootstrap --variant=minbase "$release" "$base" "$mirror" >"$dir/debootstrap.log" 2>&1 ||
    fail "debootstrap failed; see $dir/debootstrap.log"
  touch "$base/.complete"
fi

log "a fresh copy of the machine"
rm -rf "$root"
cp -a "$base" "$root"
rm -f "$root/.complete"

log "Node $("$node_bin" -v) and its npm"
install -m 0755 "$node_bin" "$root/usr/bin/node"
ldd "$node_bin" | awk '$3 ~ /^\// { print $3 }' | while read -r library; do
  [ -e "$root$library" ] || install -D -m 0644 "$library" "$root$library"
done
node_modules="$(dirname "$(dirname "$(readlink -f "$node_bin")")")/lib/node_modules"
mkdir -p "$root/usr/lib/node_modules"
for bundled in npm corepack; do
  [ -d "$node_modules/$bundled" ] && cp -a "$node_modules/$bundled" "$root/usr/lib/node_modules/"
done
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/bin/npx"
[ -d "$root/usr/lib/node_modules/corepack" ] &&
  ln -sf ../lib/node_modules/corepack/dist/corepack.js "$root/usr/bin/corepack"

log "the project (this checkout's files, no .git)"
mkdir -p "$root/root/baton"
git -C "$repo" ls-files -z --cached --others --exclude-standard |
  tar -C "$repo" --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -C "$root/root/baton" -xf -

# The machine's network is its loopback; apt and npm reach the registries through the proxy.
printf 'Acquire::http::Proxy "http://127.0.0.1:3128";\nAcquire::Retries "3";\n' >"$root/etc/apt/apt.conf.d/90fresh-machine-proxy"
# Where this host's HTTPS goes through an inspecting egress, its extra CA certificates are handed
# to npm and pnpm (NODE_EXTRA_CA_CERTS), as that network's own machines would have them.
extra_ca=""
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  cat /usr/local/share/ca-certificates/*.crt >"$root/root/extra-ca.crt"
  extra_ca=/root/extra-ca.crt
fi

if [ "${#packages[@]}" = 0 ]; then
  tests='pnpm test'
else
  tests='pnpm exec turbo run test --concurrency=1 --continue=dependencies-successful'
  for package in "${packages[@]}"; do tests="$tests --filter=$package"; done
fi

# The proxy's socket is in the machine (its /run), where the bridge inside finds it after pivot_root.
socket="$root/run/fresh-machine-proxy.sock"
rm -f "$socket"
node "$repo/scripts/fresh-machine-proxy.mjs" serve "$socket" &
proxy=$!
trap 'kill "$proxy" 2>/dev/null || true; rm -f "$socket"' EXIT
for _ in $(seq 1 100); do [ -S "$socket" ] && break; sleep 0.05; done

log "in the machine: $tests"
status=0
# Inside: loopback up, the bridge to the proxy, /proc /sys /dev, then the README's commands.
unshare --net --mount --pid --fork --kill-child bash -euo pipefail -c '
  root="$1" tests="$2" extra_ca="$3"
  ip link set lo up
  # The machine'"'"'s / is a mount point, as on a real machine (unshare -m and bwrap remount it).
  mount --make-rprivate /
  mount --bind "$root" "$root"
  mount -t proc proc "$root/proc"
  # /sys of its own network namespace, with the cgroup hierarchy systemd mounts on a real machine
  # (the sandbox limits each command'"'"'s memory and processes with a cgroup).
  if mount -t sysfs sysfs "$root/sys" 2>/dev/null; then
    mount --rbind /sys/fs/cgroup "$root/sys/fs/cgroup"
  else
    mount --rbind /sys "$root/sys"
  fi
  mount --rbind /dev "$root/dev"
  mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm"
  # pivot_root, not chroot: the kernel refuses a user namespace to a chrooted process (bwrap:
  # "No permissions to create new namespace"), and the sandbox suites need one. After pivot_root the
  # machine'"'"'s root is its mount namespace'"'"'s root and this host'"'"'s tree is unmounted.
  mkdir -p "$root/.host"
  cd "$root"
  pivot_root . .host
  umount -l /.host
  rmdir /.host
  cd /
  env -i /usr/bin/node /root/baton/scripts/fresh-machine-proxy.mjs bridge 3128 /run/fresh-machine-proxy.sock &
  exec /usr/bin/env -i HOME=/root USER=root LANG=C.UTF-8 CI=true TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin TESTS="$tests" \
    EXTRA_CA="$extra_ca" /bin/bash -euo pipefail -c "
      cd /root/baton
      echo \"node \$(node -v), npm \$(npm -v); redis-server: \$(command -v redis-server || echo none), bwrap: \$(command -v bwrap || echo none), chromium: \$(command -v chromium || echo none), git: \$(command -v git || echo none)\"
      HTTPS_PROXY=http://127.0.0.1:3128 HTTP_PROXY=http://127.0.0.1:3128 NODE_EXTRA_CA_CERTS=\$EXTRA_CA \
        bash -c \"npm i -g pnpm@12.4.2 >/dev/null && pnpm install --frozen-lockfile --reporter=append-only >/tmp/pnpm-install.log 2>&1 || { tail -30 /tmp/pnpm-install.log; exit 1; }\"
      echo \"pnpm \$(pnpm -v), dependencies installed\"
      bash scripts/test-prerequisites.sh
      echo \"== pnpm demo\"
      pnpm demo
      echo \"== \$TESTS\"
      # The registry, as a real machine has it, for the suites that install from it (install-tests:
      # npm view / npm install in a consumer): npm and pnpm get the proxy through their own config
      # variables only, so no other program of the tests sees a proxy.
      npm_config_proxy=http://127.0.0.1:3128 npm_config_https_proxy=http://127.0.0.1:3128 \
        NODE_EXTRA_CA_CERTS=\$EXTRA_CA \$TESTS
    "
' fresh-machine "$root" "$tests" "$extra_ca" || status=$?

log "fresh machine: exit $status ($tests)"
exit "$status"

# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# lib.sh — boot a real systemd as PID 1 in a container and suspend it against a fake /sys/power
# (end-to-end suite, bash, sourced). See docs/SYSTEMD.md.
#
#   source "$SOURCE_ROOT/test/e2e/lib.sh"   # installs "trap e2e_cleanup EXIT"
#   e2e_require RELEASE            # exit 77 with a reason: not root, no systemd-nspawn/debootstrap,
#                                  # no Debian mirror in the apt sources or mirror unreachable
#   e2e_rootfs RELEASE             # print the cached root filesystem (debootstrap it if missing)
#   e2e_boot RELEASE               # overlay over the cached rootfs, build + install suspend-sync,
#                                  # fake /sys/power, boot, wait for is-system-running
#   e2e_run CMD...                 # run CMD inside the container (nsenter -t PID1 -a)
#   e2e_watch_start / e2e_watch_stop  # record writes to the fake power files and the state dir
#   e2e_watch_sync                    # ... until every write so far is in the log (e2e_suspend does)
#   e2e_watch_has FROM PATTERN        # the log from line FROM shows PATTERN (grep's basic regex)
#   e2e_suspend [VERB]             # systemctl VERB (suspend), wait until the sleep cycle is over
#   e2e_cleanup                    # power off, kill by PID, unmount, remove (also on EXIT)
#
# Layout: E2E_CACHE (default /var/tmp/suspend-sync-e2e) holds rootfs-RELEASE-HASH/ (HASH over the
# release, the mirror and the package lists; kept between runs) and a lock; each run works in a
# private E2E_WORK directory under it (overlay upper/work/root, the fake power tmpfs, logs) that
# e2e_cleanup removes.
#
# Environment: SOURCE_ROOT (project source), BUILD_ROOT (meson build dir: the bookworm build for
# the container goes into BUILD_ROOT/e2e-bookworm), E2E_CACHE, E2E_BOOT_TIMEOUT (s, default 120),
# E2E_MACHINE_VIEW (1: make the container look like a machine of its own to suspend-sync, for the
# benchmarks: its root a plain copy of the rootfs on the host's disk instead of an overlay whose
# upper layer the container cannot see, and a debugfs that shows the bdis of block devices and only
# those anonymous bdis (FUSE, NFS) that e2e_debugfs_allow names — so the FUSE servers of the test
# bed's latency disks, which stand for disk firmware, are not superblocks the container fails to
# see; e2e_debugfs_sync refreshes it after block devices come and go; and, as on a machine, root
# may write /proc/sys/vm/stat_refresh). E2E_NSPAWN_SECCOMP=0: no seccomp filter of nspawn's, whose
# list from the host's older systemd answers ENOSYS for listmount(2) and statmount(2).

E2E_CACHE=${E2E_CACHE:-/var/tmp/suspend-sync-e2e}
E2E_BOOT_TIMEOUT=${E2E_BOOT_TIMEOUT:-120}
SOURCE_ROOT=${SOURCE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}

# What the container needs to run suspend-sync (libsystemd0, libudev1, libmount1 come with
# systemd), plus procps for checking on workers.
# fuse3 for a FUSE daemon served from user.slice (fuse-freeze.sh).
E2E_RUNTIME_PKGS=(systemd systemd-sysv dbus libinih1 libjson-c5 procps fuse3)
# What building suspend-sync inside the container needs (releases whose ABI differs from the host).
E2E_BUILD_PKGS=(gcc meson ninja-build pkg-config libsystemd-dev libudev-dev libinih-dev libmount-dev
        libjson-c-dev libfuse3-dev)

E2E_WORK=""
E2E_ROOT=""
E2E_PID1=""
E2E_NSPAWN_PID=""
E2E_WATCH_PID=""
_E2E_MOUNTS=()

e2e_log() { echo "e2e: $*" >&2; }
e2e_skip() { echo "SKIP: $*"; exit 77; }

# The host's Debian mirror: the first URI of the apt sources serving a plain release suite (no
# -updates/-security), deb822 (*.sources) or one-line format. Never a hard-coded host.
e2e_mirror() {
        local f
        for f in /etc/apt/sources.list.d/*.sources; do
                [[ -f $f ]] || continue
                awk '
                        function flush() { if (uri != "" && suite) { print uri; found = 1; exit } uri = ""; suite = 0 }
                        /^[ \t]*$/ { flush(); next }
                        /^[ \t]*#/ { next }
                        tolower($1) == "uris:" { uri = $2 }
                        tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i !~ /-/) suite = 1 }
                        END { if (!found) flush() }' "$f" | head -n1
        done | head -n1 | grep . && return 0
        cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
                awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                                   if ($(i + 1) !~ /-/) { print $i; exit } }' | grep .
}

# Results of a check script: fail() counts, ok() reports; the script exits non-zero if fails > 0.
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok:   $*"; }

e2e_require() {
        local release=$1 mirror
        [[ $(id -u) == 0 ]] || e2e_skip "not root"
        command -v systemd-nspawn >/dev/null || e2e_skip "no systemd-nspawn (apt-get install systemd-container)"
        command -v nsenter >/dev/null || e2e_skip "no nsenter"
        command -v python3 >/dev/null || e2e_skip "no python3 (the write recorder)"
        command -v jq >/dev/null || e2e_skip "no jq"
        if [[ -d $(_e2e_cache_dir "$release" 2>/dev/null) ]]; then
                return 0        # cached: no mirror needed
        fi
        command -v debootstrap >/dev/null || e2e_skip "no debootstrap and no cached $release rootfs"
        [[ -f /usr/share/debootstrap/scripts/$release ]] || e2e_skip "debootstrap does not know $release"
        mirror=$(e2e_mirror) || e2e_skip "no Debian mirror in the apt sources"
        curl -fsS -m 20 -o /dev/null "$mirror/dists/$release/Release" 2>/dev/null ||
                e2e_skip "mirror $mirror has no $release (or is unreachable)"
}

_e2e_pkgs() {
        local release=$1
        echo "${E2E_RUNTIME_PKGS[*]}"
        [[ $release == bookworm ]] || echo "${E2E_BUILD_PKGS[*]}"
}

# The cache key: release, mirror, package lists and the version of this recipe.
_e2e_cache_dir() {
        local release=$1 mirror key
        mirror=$(e2e_mirror) || mirror=unknown
        key=$(printf 'recipe=3\nrelease=%s\nmirror=%s\npkgs=%s\n' "$release" "$mirror" "$(_e2e_pkgs "$release")" |
                sha256sum | cut -c1-12)
        echo "$E2E_CACHE/rootfs-$release-$key"
}

# Print the cached root filesystem of RELEASE, making it first if needed (debootstrap minbase,
# then apt-get inside for the build dependencies). Atomic: built in a temporary directory and
# renamed; concurrent callers serialise on a lock.
e2e_rootfs() {
        local release=$1 dir tmp mirror build_pkgs t0 rc old
        dir=$(_e2e_cache_dir "$release")
        mkdir -p "$E2E_CACHE"
        (
                flock -w 1200 9 || { e2e_log "cache lock timeout"; exit 1; }
                [[ -d $dir ]] && exit 0
                mirror=$(e2e_mirror) || { e2e_log "no mirror"; exit 1; }
                tmp=$dir.tmp.$$
                rm -rf "$tmp"
                t0=$SECONDS
                e2e_log "debootstrap $release from $mirror into $tmp (no cache yet)"
                read -ra runtime <<<"$(_e2e_pkgs "$release" | head -n1)"
                if ! debootstrap --variant=minbase --include="$(IFS=,; echo "${runtime[*]}")" \
                                "$release" "$tmp" "$mirror" >"$tmp.log" 2>&1; then
                        tail -n 20 "$tmp.log" >&2
                        rm -rf "$tmp"
                        exit 1
                fi
                build_pkgs=$(_e2e_pkgs "$release" | sed -n 2p)
                if [[ -n $build_pkgs ]]; then
                        e2e_log "apt-get install (build dependencies) inside $release"
                        # shellcheck disable=SC2086
                        systemd-nspawn --register=no --keep-unit -q -D "$tmp" --pipe \
                                env DEBIAN_FRONTEND=noninteractive sh -c \
                                "apt-get update -qq && apt-get install -y -qq --no-install-recommends $build_pkgs && apt-get clean" \
                                >>"$tmp.log" 2>&1 </dev/null
                        rc=$?
                        if [[ $rc != 0 ]]; then
                                tail -n 20 "$tmp.log" >&2
                                rm -rf "$tmp"
                                exit 1
                        fi
                fi
                # No getty on the console, no network configuration to wait for.
                rm -f "$tmp"/etc/systemd/system/getty.target.wants/* 2>/dev/null
                echo "e2e-$release" >"$tmp/etc/hostname"
                mv "$tmp.log" "$tmp/e2e-debootstrap.log"
                mv "$tmp" "$dir"
                e2e_log "cached $dir in $((SECONDS - t0)) s"
                # Older recipes or package lists of this release are never used again.
                for old in "$E2E_CACHE/rootfs-$release-"*; do
                        [[ $old == "$dir" || ! -d $old ]] && continue
                        e2e_log "removing the outdated cache $old"
                        rm -rf --one-file-system "$old"
                done
        ) 9>"$E2E_CACHE/lock-$release" || return 1
        echo "$dir"
}

# Run CMD inside the container: every namespace of its PID 1, a clean environment.
e2e_run() {
        nsenter -t "$E2E_PID1" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
                SYSTEMD_PAGER= SYSTEMD_COLORS=0 TERM=dumb "$@"
}

# Build suspend-sync for the container's ABI and install it into the (not yet booted) root.
# bookworm: the host is bookworm, so build on the host (--prefix=/usr) and install with DESTDIR;
# other releases: build inside the root filesystem with its own compiler and libraries.
_e2e_install() {
        local release=$1 root=$2 bdir
        if [[ $release == bookworm && $(. /etc/os-release && echo "$VERSION_CODENAME") == bookworm ]]; then
                bdir=${BUILD_ROOT:-$E2E_WORK}/e2e-bookworm
                if [[ ! -f $bdir/build.ninja ]]; then
                        meson setup "$bdir" "$SOURCE_ROOT" --prefix=/usr --buildtype=debugoptimized \
                                -Dtests=false -Dman=disabled >"$E2E_WORK/build.log" 2>&1 ||
                                { tail -n 20 "$E2E_WORK/build.log" >&2; return 1; }
                fi
                ninja -j2 -C "$bdir" >>"$E2E_WORK/build.log" 2>&1 &&
                        DESTDIR=$root meson install -C "$bdir" --no-rebuild >>"$E2E_WORK/build.log" 2>&1 ||
                        { tail -n 20 "$E2E_WORK/build.log" >&2; return 1; }
        else
                [[ -x $root/usr/bin/meson ]] || { e2e_log "$release rootfs has no meson"; return 1; }
                # Sources bound read-only; the build directory lives in the overlay (thrown away).
                systemd-nspawn --register=no --keep-unit -q -D "$root" --pipe \
                        --bind-ro="$SOURCE_ROOT":/usr/src/suspend-sync \
                        sh -c 'meson setup /var/tmp/ss-build /usr/src/suspend-sync --prefix=/usr \
                                        --buildtype=debugoptimized -Dtests=false -Dman=disabled &&
                                ninja -j2 -C /var/tmp/ss-build && meson install -C /var/tmp/ss-build --no-rebuild' \
                        </dev/null >"$E2E_WORK/build.log" 2>&1 ||
                        { tail -n 20 "$E2E_WORK/build.log" >&2; return 1; }
        fi
        # Enable as the package would; the catalog is compiled at boot (e2e_boot).
        mkdir -p "$root/etc/systemd/system/sleep.target.wants"
        ln -sf /usr/lib/systemd/system/suspend-sync.service \
                "$root/etc/systemd/system/sleep.target.wants/suspend-sync.service"
}

# The fake power interface: plain files on a tmpfs, bound over the container's /sys/power.
_e2e_fake_power() {
        local dir=$1
        mkdir -p "$dir"
        mount -t tmpfs -o size=1M,mode=0755 e2e-power "$dir" || return 1
        _E2E_MOUNTS+=("$dir")
        printf 'freeze mem disk\n' >"$dir/state"
        printf '1\n' >"$dir/sync_on_suspend"
        printf 's2idle [deep]\n' >"$dir/mem_sleep"
        printf '[platform] shutdown reboot suspend test_resume\n' >"$dir/disk"
        # For hibernation: logind then gets as far as the swap check (hibernate-verbs.sh).
        printf '0:0\n' >"$dir/resume"
        printf '0\n' >"$dir/resume_offset"
        printf '0\n' >"$dir/image_size"
        # The kernel's suspend counts (suspend-stats.h): a write to the fake state file suspends
        # nothing, so they never move (sleep-cycle.sh checks that status says so).
        mkdir -p "$dir/suspend_stats"
        printf '3\n' >"$dir/suspend_stats/success"
        printf '1\n' >"$dir/suspend_stats/fail"
        printf 'suspend\n' >"$dir/suspend_stats/last_failed_step"
        printf '0\n' >"$dir/suspend_stats/last_failed_errno"
        printf '\n' >"$dir/suspend_stats/last_failed_dev"
}

# e2e_boot RELEASE [NSPAWN_OPTION...]: boot a container on an overlay of the cached rootfs with
# suspend-sync installed and enabled, and wait until it is up. Sets E2E_ROOT, E2E_PID1, E2E_WORK.
e2e_boot() {
        local release=$1 lower i p state failed t0=$SECONDS
        shift
        E2E_ROOT_RELEASE=$release
        lower=$(e2e_rootfs "$release") || return 1
        mkdir -p "$E2E_CACHE"
        E2E_WORK=$(mktemp -d "$E2E_CACHE/run-$release.XXXXXX") || return 1
        mkdir -p "$E2E_WORK"/{upper,work,root}
        E2E_ROOT=$E2E_WORK/root
        if [[ ${E2E_MACHINE_VIEW:-} == 1 ]]; then
                cp -a --reflink=auto "$lower/." "$E2E_ROOT/" || return 1
        else
                mount -t overlay e2e-root -o "lowerdir=$lower,upperdir=$E2E_WORK/upper,workdir=$E2E_WORK/work" \
                        "$E2E_ROOT" || return 1
                _E2E_MOUNTS+=("$E2E_ROOT")
        fi
        _e2e_fake_power "$E2E_WORK/power" || return 1
        _e2e_install "$release" "$E2E_ROOT" || { e2e_log "build/install for $release failed"; return 1; }
        e2e_log "$release: rootfs + build + install in $((SECONDS - t0)) s"
        # The suite checks the late pass: never left out because the kernel's sync looked cheap
        # (KeepCheapSync=, which depends on how fast this machine's disks flush); daemon.sh checks
        # that rule on its own. The benchmark (E2E_DEFAULT_CONFIG=1) measures the defaults.
        if [[ ${E2E_DEFAULT_CONFIG:-0} != 1 ]]; then
                mkdir -p "$E2E_ROOT/etc/suspend-sync.conf.d" &&
                        printf '[Kernel]\nKeepCheapSync=no\n' >"$E2E_ROOT/etc/suspend-sync.conf.d/00-e2e-late-pass.conf" ||
                        return 1
        fi

        # The host's debugfs, read-only: bdi statistics, the evidence suspend-sync needs to prove
        # a device stuck (as on a real machine, where debugfs is normally mounted).
        local debugfs=()
        # A fresh machine may have none mounted: mount it, and unmount it with the rest.
        if [[ ! -d /sys/kernel/debug/bdi ]] && mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null; then
                _E2E_MOUNTS=(/sys/kernel/debug "${_E2E_MOUNTS[@]}")
        fi
        if mountpoint -q /sys/kernel/debug && [[ ${E2E_MACHINE_VIEW:-} == 1 ]]; then
                mkdir -p "$E2E_WORK/debugfs"
                mount -t tmpfs -o mode=0755,size=1M e2e-debugfs "$E2E_WORK/debugfs" || return 1
                _E2E_MOUNTS+=("$E2E_WORK/debugfs")
                mkdir -p "$E2E_WORK/debugfs/bdi"
                _E2E_DEBUGFS_ALLOW=()
                e2e_debugfs_sync
                debugfs=(--bind-ro=/sys/kernel/debug:/run/host-debugfs --bind-ro="$E2E_WORK/debugfs:/sys/kernel/debug")
        elif mountpoint -q /sys/kernel/debug; then
                debugfs=(--bind-ro=/sys/kernel/debug)
        fi
        # A machine has no seccomp filter of nspawn's: the host's nspawn (Debian 12: 252, libseccomp
        # 2.5.4) answers ENOSYS for syscalls it does not know, listmount(2) and statmount(2) among
        # them, so that suspend-sync in the container reads mountinfo text where a machine's uses
        # listmount. E2E_NSPAWN_SECCOMP=0 (the benchmark) turns that filter off; the units' own
        # filters stay. The tests keep it: with it off, listmount in the container also lists the
        # test bed's FUSE mount under its host path, which the container's mountinfo does not show
        # (docs/PERFORMANCE.md), and the late pass then keeps the kernel's sync on.
        SYSTEMD_SECCOMP=${E2E_NSPAWN_SECCOMP:-1} SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 systemd-nspawn --register=no --keep-unit -q -b \
                -D "$E2E_ROOT" --machine="ss-e2e-$release-$$" \
                --bind="$E2E_WORK/power:/sys/power" "${debugfs[@]}" "$@" \
                </dev/null >"$E2E_WORK/console.log" 2>&1 &
        E2E_NSPAWN_PID=$!
        # The container's PID 1 is the child of systemd-nspawn whose innermost pid is 1.
        for ((i = 0; i < 300; i++)); do
                for p in $(pgrep -P "$E2E_NSPAWN_PID"); do
                        if awk '$1 == "NSpid:" && $NF == 1 { ok = 1 } END { exit !ok }' "/proc/$p/status" 2>/dev/null; then
                                E2E_PID1=$p
                                break 2
                        fi
                done
                kill -0 "$E2E_NSPAWN_PID" 2>/dev/null || break
                sleep 0.1
        done
        if [[ -z $E2E_PID1 ]]; then
                e2e_log "container did not start:"; tail -n 20 "$E2E_WORK/console.log" >&2
                return 1
        fi
        # Wait (bounded) for the manager to finish booting.
        state=""
        for ((i = 0; i < E2E_BOOT_TIMEOUT * 5; i++)); do
                state=$(e2e_run systemctl is-system-running 2>/dev/null)
                case $state in running|degraded) break ;; esac
                kill -0 "$E2E_NSPAWN_PID" 2>/dev/null || break
                sleep 0.2
        done
        case $state in
        running) ;;
        degraded)
                failed=$(e2e_run systemctl --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' ')
                e2e_log "$release: system degraded, failed units: $failed" ;;
        *)
                e2e_log "$release: system not up after ${E2E_BOOT_TIMEOUT}s (state '$state')"
                tail -n 30 "$E2E_WORK/console.log" >&2
                return 1 ;;
        esac
        if [[ ${E2E_MACHINE_VIEW:-} == 1 ]]; then
                # nspawn makes /proc/sys read-only; on a machine root may write it, and suspend-sync
                # writes vm/stat_refresh for an exact writeback count (evidence.h) and
                # vm/dirty_writeback_centisecs to wake the flusher threads (writeback.h).
                local f
                for f in stat_refresh dirty_writeback_centisecs; do
                        nsenter -t "$E2E_PID1" -m sh -c "mount --bind /proc/sys/vm/$f /proc/sys/vm/$f &&
                                mount -o remount,bind,rw /proc/sys/vm/$f" ||
                                { e2e_log "cannot make vm/$f writable"; return 1; }
                done
        fi
        e2e_run journalctl --update-catalog || { e2e_log "journalctl --update-catalog failed"; return 1; }
        E2E_SYSTEMD_VERSION=$(e2e_run systemctl --version | awk 'NR == 1 { print $2 }')
        e2e_log "$release: systemd $E2E_SYSTEMD_VERSION $state, PID 1 = $E2E_PID1, up in $((SECONDS - t0)) s total"
}

# A test bed of the host for a container: e2e_bed_share DIR bind-mounts DIR onto itself with shared
# propagation (fault disks made below it later appear in a container that binds it);
# e2e_bed_teardown DIR [TREE] (after e2e_cleanup and stack_cleanup) unmounts it and removes TREE
# (default DIR) and the ledger directory of stack.sh.
e2e_bed_share() { mount --bind "$1" "$1" && mount --make-shared "$1"; }
e2e_bed_teardown() {
        mountpoint -q "$1" && umount "$1"
        rm -rf --one-file-system "${2:-$1}"
        rmdir "${SS_TEST_LEDGER:-/nonexistent}" /run/suspend-sync-e2e 2>/dev/null
        return 0
}

# The decoy: a test-bed disk is a loop device on a FUSE file of the host, which the container cannot
# place (no loop node, and that file's filesystem is in none of its tables): suspend-sync asks the
# loop driver (src/loop-backing.h), gets no answer, and defers nothing (DeferCommit=). To stand for
# a machine's local disk instead, inside the container each disk's loop device shows, in its uevent
# (MAJOR, MINOR, DEVNAME), the node of a decoy loop device attached to a file of the host's root
# filesystem, which the container sees (its root, and the bed, are on it). The driver's answer then
# places the disk's file there, a local block device; the I/O still goes through the bed.
#   e2e_decoy_attach DIR CDIR  the decoy on DIR/decoy.img (DIR on the host's root filesystem, seen
#                              as CDIR in the container); sets E2E_DECOY, E2E_DECOY_MM
#   e2e_decoy_node             its node in the booted container's /dev
#   e2e_node BLOCKDEV          the node of a host block device in the booted container's /dev, as a
#                              machine has for its disks (a worker fsyncs it for its FLUSH)
#   e2e_decoy_on LOOPDEV       the container's sysfs uevent of LOOPDEV names the decoy
#   e2e_decoy_off              every e2e_decoy_on undone (the container's power-off undoes them too)
#   e2e_decoy_detach           the decoy detached (by its file), in the caller's cleanup
E2E_DECOY="" E2E_DECOY_MM="" _E2E_DECOY_DIR="" _E2E_DECOY_CDIR="" _E2E_DECOYED=()
e2e_decoy_attach() {
        _E2E_DECOY_DIR=$1 _E2E_DECOY_CDIR=$2
        mkdir -p "$1" && truncate -s 1M "$1/decoy.img" && E2E_DECOY=$(losetup -f --show "$1/decoy.img") &&
                E2E_DECOY_MM=$(cat "/sys/class/block/${E2E_DECOY#/dev/}/dev")
}
e2e_node() {
        local mm
        mm=$(cat "/sys/class/block/${1#/dev/}/dev") || return 1
        nsenter -t "$E2E_PID1" -m mknod "/dev/${1#/dev/}" b "${mm%:*}" "${mm#*:}"
}
e2e_decoy_node() { e2e_node "$E2E_DECOY"; }
e2e_decoy_on() {
        local l=${1#/dev/}
        printf 'MAJOR=%s\nMINOR=%s\nDEVNAME=%s\nDEVTYPE=disk\n' "${E2E_DECOY_MM%:*}" "${E2E_DECOY_MM#*:}" \
                "${E2E_DECOY#/dev/}" >"$_E2E_DECOY_DIR/$l.uevent" &&
                nsenter -t "$E2E_PID1" -m mount --bind "$_E2E_DECOY_CDIR/$l.uevent" "/sys/devices/virtual/block/$l/uevent" &&
                _E2E_DECOYED+=("$l")
}
e2e_decoy_off() {
        local l
        # (-p: umount reads /proc/self/mountinfo, which only a process in its PID namespace has)
        for l in "${_E2E_DECOYED[@]}"; do
                nsenter -t "$E2E_PID1" -m -p umount "/sys/devices/virtual/block/$l/uevent"
        done
        _E2E_DECOYED=()
}
e2e_decoy_detach() {
        local d
        [[ -n $_E2E_DECOY_DIR ]] || return 0
        for d in $(losetup -j "$_E2E_DECOY_DIR/decoy.img" -O NAME -n 2>/dev/null); do losetup -d "$d"; done
        _E2E_DECOYED=()
}

# E2E_MACHINE_VIEW: the container's debugfs bdi/ holds one symlink per bdi it may see, into the
# host's debugfs bound at /run/host-debugfs: every block device's, and the anonymous ones
# (MAJ 0) named by e2e_debugfs_allow.
_E2E_DEBUGFS_ALLOW=()
e2e_debugfs_sync() {
        local d=$E2E_WORK/debugfs/bdi n a keep
        [[ -d $d ]] || return 0
        for n in /sys/kernel/debug/bdi/*; do
                n=${n##*/}
                keep=0
                [[ $n == 0:* ]] || keep=1
                for a in "${_E2E_DEBUGFS_ALLOW[@]}"; do [[ $n == "$a" ]] && keep=1; done
                if ((keep)); then
                        [[ -L $d/$n ]] || ln -s "/run/host-debugfs/bdi/$n" "$d/$n"
                else
                        rm -f "$d/$n"
                fi
        done
        for n in "$d"/*; do
                [[ -L $n && ! -e /sys/kernel/debug/bdi/${n##*/} ]] && rm -f "$n"
        done
        return 0
}
e2e_debugfs_allow() { _E2E_DEBUGFS_ALLOW+=("$@"); e2e_debugfs_sync; }
# e2e_debugfs_disallow MAJ:MIN...: the bdis of superblocks the container no longer has (a FUSE mount
# ended): their numbers go to the host's next anonymous superblocks, which the container must not see.
e2e_debugfs_disallow() {
        local keep=() a n x
        for a in "${_E2E_DEBUGFS_ALLOW[@]}"; do
                x=0
                for n in "$@"; do [[ $a == "$n" ]] && x=1; done
                ((x)) || keep+=("$a")
        done
        _E2E_DEBUGFS_ALLOW=("${keep[@]}")
        e2e_debugfs_sync
}

# Put the fault-injection disk (test/faultdisk) into the booted container as /usr/local/bin/faultdisk:
# compiled on the host where the host's ABI is the container's (bookworm), else inside.
e2e_install_faultdisk() {
        # (Not the test build's binary: that one may carry ASan.)
        if [[ $E2E_ROOT_RELEASE == bookworm && $(. /etc/os-release && echo "$VERSION_CODENAME") == bookworm ]]; then
                # shellcheck disable=SC2046
                gcc -O2 -D_GNU_SOURCE -o "$E2E_ROOT/usr/local/bin/faultdisk" "$SOURCE_ROOT/test/faultdisk/faultdisk.c" \
                        $(pkg-config --cflags --libs fuse3) -pthread || return 1
        else
                cp "$SOURCE_ROOT/test/faultdisk/faultdisk.c" "$E2E_ROOT/var/tmp/faultdisk.c" &&
                        e2e_run sh -c 'gcc -O2 -D_GNU_SOURCE -o /usr/local/bin/faultdisk /var/tmp/faultdisk.c \
                                $(pkg-config --cflags --libs fuse3) -pthread' || return 1
        fi
        e2e_run test -x /usr/local/bin/faultdisk
}

# e2e_fuse_user MNT SOCK [FAULTDISK_OPTION...]: a FUSE mount at MNT served from user.slice (unit
# e2e-fuse.service: faultdisk --passthrough=/var/tmp/fuse-lower, control socket SOCK), as a user's
# session would run it; returns once it answers. Needs e2e_boot --bind=/dev/fuse and
# e2e_install_faultdisk.
e2e_fuse_user() {
        local mnt=$1 sock=$2 i
        shift 2
        e2e_run mkdir -p /var/tmp/fuse-lower "$mnt" || return 1
        e2e_run systemd-run -q --slice=user.slice --unit=e2e-fuse --property=Type=exec \
                /usr/local/bin/faultdisk --passthrough=/var/tmp/fuse-lower --control="$sock" "$@" "$mnt" ||
                { e2e_log "systemd-run faultdisk failed"; return 1; }
        for ((i = 0; i < 100; i++)); do
                e2e_run /usr/local/bin/faultdisk ctl "$sock" ping >/dev/null 2>&1 && return 0
                sleep 0.1
        done
        e2e_log "the FUSE server at $mnt does not answer"
        return 1
}

# Record writes to the fake power files and to suspend-sync's state directory in the container.
e2e_watch_start() {
        local i
        E2E_WATCH_LOG=$E2E_WORK/writes.log
        e2e_run mkdir -p /run/suspend-sync
        python3 "$SOURCE_ROOT/test/e2e/watch.py" "$E2E_WATCH_LOG" "power=$E2E_WORK/power" \
                "state=/proc/$E2E_PID1/root/run/suspend-sync" &
        E2E_WATCH_PID=$!
        for ((i = 0; i < 100; i++)); do
                grep -q ' READY ' "$E2E_WATCH_LOG" 2>/dev/null && return 0
                kill -0 "$E2E_WATCH_PID" 2>/dev/null || break
                sleep 0.1
        done
        e2e_log "write recorder did not start"
        return 1
}

# e2e_watch_sync: returns once the recorder has logged every write made before it: a marker file made
# in the power directory comes out of the one inotify queue after them (watch.py), so its CREATE line
# follows theirs. Bounded (10 s): a check never reads the log ahead of a recorder slowed down by a
# loaded machine.
e2e_watch_sync() {
        local m i
        [[ -n ${E2E_WATCH_PID:-} ]] || return 0
        _E2E_WATCH_SYNCS=$((${_E2E_WATCH_SYNCS:-0} + 1))
        m=.e2e-sync-$_E2E_WATCH_SYNCS
        : >"$E2E_WORK/power/$m"
        for ((i = 0; i < 100; i++)); do
                grep -q " power $m CREATE " "$E2E_WATCH_LOG" 2>/dev/null && break
                sleep 0.1
        done
        rm -f "$E2E_WORK/power/$m"
}

# Read whole, not through "tail | grep -q": under pipefail a grep that stops at its match leaves tail
# writing into a closed pipe, SIGPIPE fails the pipeline, and a write that is there reads as missing
# ("no write of mem" in the fresh-clone runs v138 and v140).
e2e_watch_has() { grep -q -- "$2" < <(tail -n +"$1" "$E2E_WATCH_LOG"); }

e2e_watch_stop() {
        [[ -n $E2E_WATCH_PID ]] || return 0
        kill "$E2E_WATCH_PID" 2>/dev/null
        wait "$E2E_WATCH_PID" 2>/dev/null
        E2E_WATCH_PID=""
}

# A property of a unit, as systemctl show prints it.
e2e_prop() { e2e_run systemctl show -P "$2" "$1"; }

# e2e_check_stuck WHEN: processes suspend-sync left in the kernel (stuck workers, helper processes
# it killed) must not keep a unit busy: the cgroups of suspend-sync.service and
# systemd-suspend.service are empty, and every suspend-sync process of the container is in a
# suspend-sync-stuck-*.scope (at least one). Sets E2E_STUCK to their number.
_e2e_cg_procs() { # UNIT: the pids in its control group, none when the cgroup is gone
        local cg
        cg=$(e2e_run systemctl show -P ControlGroup "$1")
        [[ -n $cg ]] || cg=/system.slice/$1
        e2e_run sh -c "cat '/sys/fs/cgroup$cg/cgroup.procs' 2>/dev/null" | tr '\n' ' '
}
e2e_check_stuck() {
        local unit p pid cg in_scope=0
        E2E_STUCK=0
        for unit in suspend-sync.service systemd-suspend.service; do
                p=$(_e2e_cg_procs "$unit")
                [[ -z ${p// /} ]] && ok "$1: no process left in $unit's cgroup" ||
                        fail "$1: processes left in $unit's cgroup: $p"
        done
        for pid in $(e2e_run pgrep -x suspend-sync); do
                cg=$(e2e_run cat "/proc/$pid/cgroup" 2>/dev/null | sed -n 's/^0:://p')
                echo "  stuck $pid ($(e2e_run cat "/proc/$pid/wchan" 2>/dev/null)): cgroup $cg"
                E2E_STUCK=$((E2E_STUCK + 1))
                [[ $cg == */suspend-sync-stuck-*.scope ]] && in_scope=$((in_scope + 1))
        done
        ((E2E_STUCK > 0 && in_scope == E2E_STUCK)) &&
                ok "$1: the $E2E_STUCK stuck process(es) are in suspend-sync-stuck-*.scope" ||
                fail "$1: $in_scope of $E2E_STUCK stuck process(es) in a suspend-sync-stuck-*.scope"
}

# e2e_check_none_left WHAT: once the cause is gone (WHAT: "the disk resumed"), no suspend-sync
# process and no suspend-sync-stuck scope is left within 20 s.
e2e_check_none_left() {
        local i left scopes
        for ((i = 0; i < 100; i++)); do
                left=$(e2e_run pgrep -x suspend-sync | tr '\n' ' ')
                scopes=$(e2e_run systemctl list-units --all --no-legend --plain 'suspend-sync-stuck-*' |
                        awk '{ print $1 }' | tr '\n' ' ')
                [[ -z $left && -z $scopes ]] && break
                sleep 0.2
        done
        [[ -z $left ]] && ok "no suspend-sync process left $((i * 200)) ms after $1" ||
                fail "suspend-sync processes left after $1: $left"
        [[ -z $scopes ]] && ok "no suspend-sync-stuck scope left after $1" ||
                fail "scopes left after $1: $scopes"
}

# e2e_suspend [VERB] [TIMEOUT_S]: systemctl VERB (default suspend) inside, then wait (bounded) until
# the start job of systemd-VERB.service has ended (the journal's JOB_RESULT for it: the unit itself
# is garbage-collected once inactive, so its properties cannot tell) and no job is left. Returns
# non-zero if the cycle did not end in time.
e2e_suspend() {
        local verb=${1:-suspend} timeout=${2:-90} unit c i
        unit=systemd-$verb.service
        c=$(e2e_run journalctl -q -n0 --show-cursor | sed -n 's/^-- cursor: //p')
        e2e_run systemctl "$verb" || { e2e_log "systemctl $verb refused"; return 1; }
        for ((i = 0; i < timeout * 5; i++)); do
                # No field match together with --after-cursor: journalctl 252 then skips the
                # first matching entry.
                if e2e_run journalctl -q -o json --after-cursor="$c" |
                                jq -c --arg u "$unit" 'select(.UNIT == $u and .JOB_TYPE == "start" and .JOB_RESULT != null)' |
                                grep -q . &&
                        [[ -z $(e2e_run systemctl list-jobs --no-legend) ]]; then
                        e2e_watch_sync # the cycle's writes in the log before any check reads it
                        return 0
                fi
                sleep 0.2
        done
        e2e_log "the $verb cycle did not end within ${timeout}s"
        return 1
}

# Undo everything: power off the container (bounded), kill by PID what is left, unmount, remove.
e2e_cleanup() {
        local i m
        e2e_watch_stop
        if [[ -n $E2E_NSPAWN_PID ]] && kill -0 "$E2E_NSPAWN_PID" 2>/dev/null; then
                [[ -n $E2E_PID1 ]] && e2e_run systemctl poweroff --no-block >/dev/null 2>&1
                for ((i = 0; i < 300; i++)); do
                        kill -0 "$E2E_NSPAWN_PID" 2>/dev/null || break
                        sleep 0.1
                done
                if kill -0 "$E2E_NSPAWN_PID" 2>/dev/null; then
                        e2e_log "container did not power off in 30 s: SIGTERM, then SIGKILL to nspawn $E2E_NSPAWN_PID"
                        kill -TERM "$E2E_NSPAWN_PID" 2>/dev/null
                        for ((i = 0; i < 100; i++)); do
                                kill -0 "$E2E_NSPAWN_PID" 2>/dev/null || break
                                sleep 0.1
                        done
                        kill -KILL "$E2E_NSPAWN_PID" "$E2E_PID1" 2>/dev/null
                fi
                wait "$E2E_NSPAWN_PID" 2>/dev/null
        fi
        E2E_NSPAWN_PID=""
        for ((i = ${#_E2E_MOUNTS[@]} - 1; i >= 0; i--)); do
                m=${_E2E_MOUNTS[i]}
                mountpoint -q "$m" && { umount "$m" 2>/dev/null || umount -l "$m"; }
        done
        _E2E_MOUNTS=()
        _E2E_DECOYED=() # their mounts went with the container
        if [[ -n $E2E_WORK && -d $E2E_WORK ]]; then
                if [[ -n ${E2E_KEEP:-} ]]; then
                        e2e_log "kept $E2E_WORK (E2E_KEEP)"
                else
                        rm -rf --one-file-system "$E2E_WORK"
                fi
        fi
        E2E_WORK=""
}
trap e2e_cleanup EXIT
# A signal (meson's timeout sends SIGTERM) must still run the cleanup.
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

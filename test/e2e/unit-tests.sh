#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The unit tests built and run against another release's libraries: the root filesystem of the
# end-to-end suite (Debian 13: json-c 0.18, libinih 59, libmount 2.41, systemd 257), in a container
# of its own, no systemd booted. What json-c's strict mode refuses or inih does with a full line
# buffer differs between releases (json-util.c, policy-parse.c), and CI runs on Debian 12 only.
#
# Usage: unit-tests.sh RELEASE (root; exit 77 as the e2e suite, lib.sh).

set -u
release=${1:?release}
source "$(dirname "$0")/lib.sh"
e2e_require "$release"

# Programs left out here (a regular expression; none now). test-sample and
# test-mount-table-listmount run too: another namespace's table through listmount is kept to what
# its member's root reaches (sample-ns, ce761d3), which the container's old root below "/" needs.
SKIP_RE='^$'

lower=$(e2e_rootfs "$release") || exit 1
E2E_WORK=$(mktemp -d "$E2E_CACHE/unit-$release.XXXXXX") || exit 1
mkdir -p "$E2E_WORK"/{upper,work,root}
_E2E_MOUNTS+=("$E2E_WORK/root") # first: a signal right after the mount still unmounts it
mount -t overlay e2e-unit -o "lowerdir=$lower,upperdir=$E2E_WORK/upper,workdir=$E2E_WORK/work" "$E2E_WORK/root" || exit 1

# No seccomp filter of nspawn's: the host's (systemd 252) answers ENOSYS for listmount(2), which
# the tests of the mountinfo fallback tell from a kernel without it.
SYSTEMD_SECCOMP=0 systemd-nspawn --register=no --keep-unit -q -D "$E2E_WORK/root" --pipe \
        --bind-ro="$SOURCE_ROOT":/usr/src/suspend-sync --setenv=SKIP_RE="$SKIP_RE" --setenv=RELEASE="$release" \
        bash -c '
                set -u
                meson setup /var/tmp/ss-unit /usr/src/suspend-sync -Dman=disabled >/var/tmp/setup.log 2>&1 ||
                        { tail -n 20 /var/tmp/setup.log; echo "FAIL: meson setup"; exit 1; }
                ninja -j2 -C /var/tmp/ss-unit >/var/tmp/build.log 2>&1 ||
                        { tail -n 20 /var/tmp/build.log; echo "FAIL: build"; exit 1; }
                n=0; failed=0
                for t in /var/tmp/ss-unit/test/test-*; do
                        [[ -f $t && -x $t ]] || continue
                        name=${t##*/}
                        if [[ $name =~ $SKIP_RE ]]; then echo "skip: $name (host only)"; continue; fi
                        n=$((n + 1))
                        timeout 300 "$t" >"/var/tmp/$name.log" 2>&1
                        rc=$?
                        if [[ $rc -eq 0 ]]; then
                                echo "ok:   $name"
                        elif [[ $rc -eq 77 ]]; then
                                why=$(grep -m 1 "did not run here" "/var/tmp/$name.log" || tail -n 1 "/var/tmp/$name.log")
                                echo "skip: $name ($why)"
                        else
                                failed=$((failed + 1))
                                echo "FAIL: $name (exit $rc)"; tail -n 5 "/var/tmp/$name.log"
                        fi
                done
                echo "$RELEASE: $n unit test programs, $failed failed"
                [[ $n -gt 0 && $failed -eq 0 ]]' </dev/null
rc=$?
[[ $rc -eq 0 ]] || fails=$((fails + 1))
exit $((fails > 0))

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The configuration the unit's pass hands to the late pass of the same sleep (conf-snapshot.h),
# through the real binary, a state directory on tmpfs and a fixture sysfs:
#   - the unit's pass leaves it under the token it wrote to unit-pass;
#   - the late pass of that sleep uses it, not the files as they are now (DeadlineSec= changed in
#     between: its record has the unit's pass's), and says so at debug level;
#   - it carries the other system-sleep hooks: the unit's pass saw one (in a mount namespace of its
#     own), so the late pass keeps the kernel's sync on naming it with SyncOnSuspend=auto, though
#     it sees no hook itself; the control without the snapshot does not name it;
#   - restore-knob removes it;
#   - not used with another sleep's token (a unit line of another pass), or another --config=: the
#     late pass reads the files, and says why.
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
ss_begin
checks_begin

sys=$SS_TMP/sys
ss_fixture_sysfs "$sys"
knob=$sys/power/sync_on_suspend
k() { tr -d '\n' <"$knob"; }
deadline_of_last() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["deadline_usec"])' "$SS_STATE/last.json"; }
conf_deadline() { ss_config "[Sync]
DeadlineSec=$1s"; }
unit_pass() { # [PREFIX...]: the unit's pass, then its record of this sleep with the token it wrote
        SUSPEND_SYNC_LOG_LEVEL=debug "$@" "$SUSPEND_SYNC" --state-dir="$SS_STATE" --config="$SS_CONF" \
                --sysfs="$sys" --trigger=unit run >"$SS_TMP/unit.log" 2>&1 || { cat "$SS_TMP/unit.log"; fail "unit's pass failed"; }
        ss_unit_pass_record -k
}
late() { # [ARGS...]
        echo 1 >"$knob"
        rm -f "$SS_STATE/knob.orig"
        SUSPEND_SYNC_LOG_LEVEL=debug ss --sysfs="$sys" --trigger=hook --late "$@" run >"$SS_TMP/late.log" 2>&1 ||
                { cat "$SS_TMP/late.log"; fail "late pass failed"; }
}
# Used: said at debug level, and in the pass's record.
used() {
        grep -q "Configuration as the unit's pass of this sleep read it" "$SS_TMP/late.log" &&
                python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1])).get("config_from_unit_pass") is True else 1)' \
                        "$SS_STATE/last.json"
}
kept_by() { grep -o "Leaving the kernel's own sync on: .*" "$SS_TMP/late.log" || true; }

# ------------------------------------------------------------------ the same sleep: used
conf_deadline 7
unit_pass
token=$(tr -d '\n' <"$SS_STATE/unit-pass")
head -n 1 "$SS_STATE/config-snapshot" 2>/dev/null | grep -q "^suspend-sync config-snapshot v1 $token " &&
        ok "the unit's pass left its configuration under its token" ||
        fail "no snapshot under token $token: $(head -c 120 "$SS_STATE/config-snapshot" 2>&1)"
conf_deadline 9 # changed after the unit's pass
late
used && ok "the late pass took the unit's pass's configuration" || fail "not used: $(grep -i configuration "$SS_TMP/late.log")"
[[ $(deadline_of_last) == 7000000 ]] && ok "the late pass's DeadlineSec= is the unit's pass's (7 s)" ||
        fail "the late pass's deadline: $(deadline_of_last) us, want 7000000"
ss --sysfs="$sys" restore-knob >/dev/null 2>&1 || true
[[ ! -e $SS_STATE/config-snapshot && ! -e $SS_STATE/unit-pass ]] && ok "restore-knob removed it" ||
        fail "left after restore-knob: $(ls "$SS_STATE")"

# ------------------------------------------------------------------ not this sleep's: read
conf_deadline 9
unit_pass
conf_deadline 11
ss_unit_pass_record -a # another token: as if another unit's pass had started since
late
! used && grep -q "No configuration from the unit's pass of this sleep" "$SS_TMP/late.log" &&
        [[ $(deadline_of_last) == 11000000 ]] && ok "another token: the files read (11 s)" ||
        fail "another token: $(grep -i configuration "$SS_TMP/late.log"); deadline $(deadline_of_last)"
# another --config=: the unit's pass read $SS_CONF
unit_pass
other=$SS_TMP/other.conf
printf '[Sync]\nDeadlineSec=13s\n' >"$other"
late --config="$other"
! used && [[ $(deadline_of_last) == 13000000 ]] && ok "another --config=: that file read (13 s)" ||
        fail "another --config=: $(grep -i configuration "$SS_TMP/late.log"); deadline $(deadline_of_last)"

# ------------------------------------------------------------------ hooks travel with it
# Not hermetic: the test bed's skip rule would keep the knob on before the hooks are weighed.
SS_HERMETIC=0 ss_config "[Kernel]
SyncOnSuspend=auto"
hookdir=/usr/lib/systemd/system-sleep
[[ -d $hookdir ]] || mkdir -p "$hookdir" # the bind below needs a mount point; left empty
# The unit's pass in a namespace whose hook directory holds another hook; the late pass outside.
unit_pass unshare -m --propagation private sh -c "mount -t tmpfs ss-hooks '$hookdir' &&
        printf '#!/bin/sh\nexit 0\n' >'$hookdir/other-hook' && chmod 0755 '$hookdir/other-hook' && exec \"\$@\"" sh
late
if used && [[ $(k) == 1 ]] && kept_by | grep -qF "$hookdir/other-hook"; then
        ok "the unit's pass's hooks: knob kept on, $(kept_by)"
else
        cat "$SS_TMP/late.log"
        fail "hooks: used=$(used && echo yes || echo no), knob $(k), kept by: '$(kept_by)'"
fi
# control: the same late pass without the snapshot sees no such hook
ss_unit_pass_record -a
late
kept_by | grep -qF other-hook && fail "control: the hook named without the snapshot: $(kept_by)" ||
        ok "control: without the snapshot the hook is not named (knob $(k))"

checks_end config-snapshot

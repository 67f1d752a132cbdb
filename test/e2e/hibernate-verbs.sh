#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# hibernate-verbs.sh RELEASE — check 6 of issue 10: hibernate, hybrid-sleep and
# suspend-then-hibernate wherever systemd lets them run in the container; where it refuses, say
# why. The fake /sys/power also has `disk` and `resume`; no swap is ever enabled (swap is global
# to the kernel: the host's memory, shared with other jobs).
#   1. As installed: logind's Can* answer and systemctl's refusal, printed.
#   2. With SYSTEMD_BYPASS_HIBERNATION_MEMORY_CHECK=1 for logind and the sleep services (skips the
#      swap-size check): each verb logind accepts is run; printed: the sleep service's result and
#      systemd-sleep's reason. Checked: suspend-sync.service ran and finished before the sleep
#      service started, it is not failed, the knob is back to its original value, and the fake
#      state file was written only if systemd-sleep said it entered the sleep.
# Env: SOURCE_ROOT, BUILD_ROOT.

set -u -o pipefail
release=${1:?usage: hibernate-verbs.sh RELEASE}
SOURCE_ROOT=${SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
source "$SOURCE_ROOT/test/e2e/lib.sh"
e2e_require "$release"


t0=$SECONDS
e2e_boot "$release" || { echo "FAIL: boot"; exit 1; }
echo "boot: systemd $E2E_SYSTEMD_VERSION, $((SECONDS - t0)) s"
e2e_watch_start || exit 1
knob_orig=$(tr -d '\n' <"$E2E_WORK/power/sync_on_suspend")

declare -A method=([hibernate]=Hibernate [hybrid-sleep]=HybridSleep [suspend-then-hibernate]=SuspendThenHibernate)
verbs=(hibernate hybrid-sleep suspend-then-hibernate)
can() {
        e2e_run busctl call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager \
                "Can${method[$1]}" 2>&1 | sed 's/^s //; s/"//g'
}

echo "== as installed (no swap)"
for v in "${verbs[@]}"; do
        why=$(e2e_run systemctl "$v" 2>&1) && why="accepted"
        echo "$v: Can${method[$v]} = $(can "$v"); systemctl $v: $why"
        [[ $why == accepted ]] && e2e_run systemctl cancel >/dev/null 2>&1
done

echo "== with SYSTEMD_BYPASS_HIBERNATION_MEMORY_CHECK=1"
e2e_run sh -c 'for u in systemd-logind systemd-hibernate systemd-hybrid-sleep systemd-suspend-then-hibernate; do
                mkdir -p /etc/systemd/system/$u.service.d
                printf "[Service]\nEnvironment=SYSTEMD_BYPASS_HIBERNATION_MEMORY_CHECK=1\n" >/etc/systemd/system/$u.service.d/e2e.conf
        done
        systemctl daemon-reload && systemctl restart systemd-logind'
for ((i = 0; i < 50; i++)); do
        [[ $(e2e_run systemctl is-active systemd-logind) == active ]] && break
        sleep 0.1
done
for v in "${verbs[@]}"; do
        answer=$(can "$v")
        if [[ $answer != yes ]]; then
                why=$(e2e_run systemctl "$v" 2>&1)
                echo "$v: Can${method[$v]} = $answer; systemctl $v refused: $why"
                continue
        fi
        printf 'freeze mem disk\n' >"$E2E_WORK/power/state"
        w0=$(($(wc -l <"$E2E_WATCH_LOG") + 1))
        c=$(e2e_run journalctl -q -n0 --show-cursor | sed -n 's/^-- cursor: //p')
        if ! e2e_suspend "$v" 60; then
                fail "$v: the cycle did not end"
                continue
        fi
        e2e_run journalctl -q -o json --after-cursor="$c" >"$E2E_WORK/journal-$v.json"
        j() { jq -r "select($1) | $2" "$E2E_WORK/journal-$v.json" | head -n1; }
        unit=systemd-$v.service
        res=$(j ".UNIT == \"$unit\" and .JOB_TYPE == \"start\" and .JOB_RESULT != null" .JOB_RESULT)
        sleep_msgs=$(jq -r 'select(.SYSLOG_IDENTIFIER == "systemd-sleep") | .MESSAGE' "$E2E_WORK/journal-$v.json" | grep -v "froze\|thawed" | tr '\n' '|')
        ours_done=$(j '.UNIT == "suspend-sync.service" and .JOB_TYPE == "start" and .JOB_RESULT != null' .__MONOTONIC_TIMESTAMP)
        ours_res=$(j '.UNIT == "suspend-sync.service" and .JOB_TYPE == "start" and .JOB_RESULT != null' .JOB_RESULT)
        svc_start=$(j ".UNIT == \"$unit\" and .JOB_TYPE == \"start\" and .JOB_RESULT == null" .__MONOTONIC_TIMESTAMP)
        writes=$(tail -n +"$w0" "$E2E_WATCH_LOG" | grep ' power \(state\|disk\) MODIFY' | awk '{ print $3 "=" $5 }' | tr '\n' ' ')
        knob=$(tr -d '\n' <"$E2E_WORK/power/sync_on_suspend")
        late=$(jq -r "select(.MESSAGE_ID == \"68604cfcdf4543a8af217e49559df3e8\" and ._SYSTEMD_UNIT == \"$unit\") | .MESSAGE" "$E2E_WORK/journal-$v.json" | head -n1)
        echo "$v: Can${method[$v]} = yes; $unit: $res; systemd-sleep: ${sleep_msgs%|}; suspend-sync.service: $ours_res; late pass: ${late:-none}; writes: [${writes% }]; knob $knob"
        [[ $ours_res == "done" && -n $svc_start ]] && ((ours_done < svc_start)) &&
                ok "$v: suspend-sync.service done before $unit started ($(((svc_start - ours_done) / 1000)) ms)" ||
                fail "$v: suspend-sync.service '$ours_res' at '$ours_done', $unit started at '$svc_start'"
        [[ $knob == "$knob_orig" ]] || fail "$v: knob $knob after, original $knob_orig"
        if [[ $sleep_msgs == *"Entering sleep state"* || $sleep_msgs == *"Performing sleep operation"* ]]; then
                [[ -n $writes ]] && ok "$v: ran, writes recorded" || fail "$v: entered the sleep, but no write recorded"
        else
                # (systemd-sleep 252 opens the state file with O_TRUNC first: a no-op on sysfs,
                # an empty fake file here; only a non-empty write is a sleep.)
                [[ -z $(tail -n +"$w0" "$E2E_WATCH_LOG" | grep -E ' power state MODIFY "(mem|disk|freeze)') &&
                        ! $(head -n1 "$E2E_WORK/power/state") =~ ^(mem|disk)$ ]] &&
                        ok "$v: systemd-sleep gave up before writing the state file (${sleep_msgs%|})" ||
                        fail "$v: refused, but something was written to the state file"
        fi
        e2e_run systemctl reset-failed
done

echo "$release: $fails failure(s), $((SECONDS - t0)) s"
[[ $fails == 0 ]]

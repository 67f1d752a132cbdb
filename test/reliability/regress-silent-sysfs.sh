#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Regression: with a sysfs that cannot classify anything (`--sysfs=<empty dir>`: no device, no bdi
# link, no in-flight counters) every ext4 mount was rightly synced, but nothing on stderr said that
# sysfs was missing, and the plan's reason blamed debugfs wb_stats. Found by degraded.sh (case
# no-sysfs).
exec env REL_DEGRADED_CASES="no-sysfs" bash "$(dirname "$0")/degraded.sh"

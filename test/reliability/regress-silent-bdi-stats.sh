#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Regression: bdi stats that exist but cannot be parsed (garbage content, or `stats`/`wb_stats`
# being directories) made every ext4 mount "not proven clean" — safe — but nothing on stderr said
# that the evidence was unreadable, and the plan's reason blamed the kernel ("no per-cgroup writeback
# lists (debugfs wb_stats, Linux 6.10+)"). Found by degraded.sh (cases garbage-stats, stats-dirs).
exec env REL_DEGRADED_CASES="garbage-stats stats-dirs" bash "$(dirname "$0")/degraded.sh"

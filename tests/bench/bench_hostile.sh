#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Runs bench_hostile against a vtld of its own: the same library, folder and
# cleanup as bench_iscsi (bench_iscsi.sh does it all for any host binary).
#
# Usage: sh bench_hostile.sh BUILD/tests/bench/bench_hostile   (tests/bench/run calls it)
exec sh "$(dirname "$0")/bench_iscsi.sh" "${1:?usage: bench_hostile.sh <bench_hostile binary>}"

# SPDX-License-Identifier: Apache-2.0
#
# The host's verdict on a migrator power cut (tests/kernel/test_powercut.sh,
# powercut_mig.sh): the guest (guest_powercut_mig.sh) leaves vtlctl --json
# outputs in its results folder, and this applies to them the invariants of
# the kill -9 test of vtl-migrator (tests/integration/migrator_kill.py, whose
# check() is reused as it is):
#   - a migrated or recalling cartridge has a good copy;
#   - a premigrated or resident one has its whole disk copy (the objects and
#     stored bytes the host's write left), and a premigrated one a good copy;
#   - all good copies hold as many bytes;
# on the catalog as the power cut left it (crash.json) and once the restarted
# daemons ended the interrupted work and the host read the cartridge back
# (final.json); the verify job of every good copy (verify.out) must have ended
# done, and no job of the cartridge may have failed (final-jobs.json).
#
# Usage: python3 powercut_mig.py KIND WRITTEN_DIR RESULTS_DIR BARCODE
#   WRITTEN_DIR: the results of the boot the cut ended (written.json);
#   RESULTS_DIR: those of the boot after it (crash.json, verify.out, final.json, final-jobs.json,
#   migrator.log).
# Prints one line: where the cut landed and what the restart made of it; exits 1 with the reason when
# an invariant does not hold.
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from migrator_kill import TrialFailed, check, good  # noqa: E402


class Files:
    """What migrator_kill.check asks an Env for, read from the guest's files."""

    def __init__(self, path):
        self.path = path

    def cart(self, bc):
        with open(self.path) as f:
            c = json.load(f)
        if c.get("barcode") != bc:
            raise TrialFailed("%s is %s's, not %s's" % (self.path, c.get("barcode"), bc))
        return c


def jobs(path, bc):
    with open(path) as f:
        return [j for j in json.load(f)["jobs"] if j["barcode"] == bc]


def on_disk(c, want):
    return "%d of %d objects on disk" % (c["pool"].get("objects", 0), want[0])


def interrupted(results, bc):
    """The job the power cut interrupted, as the restarted migrator's log names it (it queues it again)."""
    try:
        with open(os.path.join(results, "migrator.log"), errors="replace") as f:
            for line in f:
                if "was running when the migrator stopped" in line and (" %s)" % bc) in line:
                    return "job " + line.split("job ", 1)[1].split(")", 1)[0] + ") running"
    except OSError:
        pass
    return "no job running"


NO_COPY = "has no good copy on a tape"  # a verify job's error when there is nothing to verify


def main():
    kind, written_dir, results, bc = sys.argv[1:5]
    try:
        w = Files(os.path.join(written_dir, "written.json")).cart(bc)
        want = (w["pool"]["objects"], w["pool"]["stored_bytes"])
        if not want[0] or w["cache"] != "resident":
            raise TrialFailed("after the host's write %s is %s with %d objects" % (bc, w["cache"], want[0]))
        crash = check(Files(os.path.join(results, "crash.json")), bc, want, "as the power cut left it")
        line = "cut at %s: %s, %d good copies, %s" % (interrupted(results, bc), crash["cache"], len(good(crash)),
                                                       on_disk(crash, want))
        with open(os.path.join(results, "verify.out")) as f:
            verify = f.read().strip()
        final = check(Files(os.path.join(results, "final.json")), bc, want, "after the restart and the read-back")
        if not verify.startswith("done") and (NO_COPY not in verify or good(final)):
            raise TrialFailed("a copy of %s the catalog called good does not verify against the tape: %s" %
                              (bc, verify))
        for j in jobs(os.path.join(results, "final-jobs.json"), bc):
            if j["state"] == "failed" and not (j["kind"] == "verify" and NO_COPY in j["error"]):
                raise TrialFailed("job %d (%s) failed: %s" % (j["id"], j["kind"], j["error"]))
            if j["state"] in ("queued", "running"):
                raise TrialFailed("job %d (%s) is still %s" % (j["id"], j["kind"], j["state"]))
        line += "; then %s verified, read back: %s, %d good copies, %s" % (
            "every good copy" if verify.startswith("done") else "no copy (none good)", final["cache"],
            len(good(final)), on_disk(final, want))
    except (TrialFailed, OSError, ValueError, KeyError) as e:
        print("%s: %s" % (type(e).__name__, e))
        sys.exit(1)
    print(line)


if __name__ == "__main__":
    main()

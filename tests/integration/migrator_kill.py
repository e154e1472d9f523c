# SPDX-License-Identifier: Apache-2.0
#
# The trials of test_migrator_kill.sh (which sets up the library, starts vtld
# and says where everything is): vtl-migrator is SIGKILLed, by its PID, at a
# random moment of a copy, of a release and of a recall a host's load starts;
# after each kill the catalog left behind is checked, the migrator is started
# again on the same catalog, pool and simulated tapes, the interrupted work
# ends or is retried, and the catalog and the data are checked again.
#
# Invariants checked (catalog through vtlctl --json, data through a host over iSCSI):
#   - a cartridge that is migrated or recalling has a good stacked copy;
#   - a premigrated or resident cartridge's disk copy is whole: as many
#     objects and stored bytes as the host's write left (and, where a host
#     reads it, every byte as written);
#   - every copy marked good verifies (a verify job ends done) and holds as
#     many bytes as every other good copy; the recall a host's load starts
#     brings every byte back;
#   - after the restart no job stays queued or running.
#
# Usage: python3 migrator_kill.py (arguments: see main); prints a line per
# trial, then "N passed, M failed"; exits 1 if M > 0.
import json
import os
import random
import re
import signal
import subprocess
import sys
import time

BLOCK = 256 << 10
JOB_WAIT_S = 60         # a job of a few MiB on the simulated library ends in seconds
START_WAIT_S = 20       # vtl-migrator opens the catalog, pool and library in well under a second
HOST_TIMEOUT_S = 300    # one host run (iscsi_recall), a recall included


class TrialFailed(Exception):
    pass


class Env:
    def __init__(self, args):
        (self.vtlctl, self.migrator, self.host_bin, self.conf, self.port, self.iqn, self.tmp, self.mlog,
         self.blocks, self.drive, self.lun) = args[:11]
        self.blocks = int(self.blocks)
        self.proc = None
        self.starts = 0
        self.want = {}  # barcode: (objects, stored bytes) its host write left

    # ------------------------------------------------------------ vtlctl
    def ctl(self, *words, check=True):
        r = subprocess.run([self.vtlctl, "-c", self.conf] + list(words), capture_output=True, text=True,
                           timeout=60)
        if check and r.returncode != 0:
            raise TrialFailed("vtlctl %s: %s" % (" ".join(words), (r.stdout + r.stderr).strip()[-300:]))
        return r

    def js(self, *words):
        return json.loads(self.ctl("--json", *words).stdout)

    def cart(self, bc):
        return self.js("cartridge", "show", bc)

    def jobs(self, bc):
        return [j for j in self.js("jobs")["jobs"] if j["barcode"] == bc]

    # ------------------------------------------------------------ the migrator
    def start(self):
        self.starts += 1
        with open(self.mlog, "ab") as log:
            self.proc = subprocess.Popen([self.migrator, "-c", self.conf], stderr=log, stdout=subprocess.DEVNULL)
        until = time.monotonic() + START_WAIT_S
        while True:
            with open(self.mlog, errors="replace") as f:
                if f.read().count("ready: copies go to") >= self.starts:
                    return
            if self.proc.poll() is not None:
                raise TrialFailed("vtl-migrator exited with status %d at start" % self.proc.returncode)
            if time.monotonic() > until:
                raise TrialFailed("vtl-migrator did not come up within %d s" % START_WAIT_S)
            time.sleep(0.02)

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        rc = self.proc.wait()
        self.proc = None
        # Killed, not dead already of something else before the signal.
        if rc != -signal.SIGKILL:
            raise TrialFailed("vtl-migrator ended with status %d before the SIGKILL" % rc)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=60)
        self.proc = None
        if rc != 0:
            raise TrialFailed("vtl-migrator exited %d on SIGTERM" % rc)

    # ------------------------------------------------------------ the host
    def host_cmd(self, mode, slot, seed):
        return ["timeout", str(HOST_TIMEOUT_S), self.host_bin, "127.0.0.1:%s" % self.port, self.iqn, mode, str(slot),
                self.drive, self.lun, str(self.blocks), str(seed)]

    def host(self, mode, slot, seed):
        r = subprocess.run(self.host_cmd(mode, slot, seed), capture_output=True, text=True)
        if r.returncode != 0:
            raise TrialFailed("host %s of slot %d: %s" % (mode, slot, (r.stdout + r.stderr).strip()[-300:]))
        return r.stdout

    # ------------------------------------------------------------ waiting
    def settle(self, bc):
        """Waits until no job of bc is queued or running; returns its jobs."""
        until = time.monotonic() + JOB_WAIT_S
        while True:
            js = self.jobs(bc)
            busy = [j for j in js if j["state"] in ("queued", "running")]
            if not busy:
                return js
            if time.monotonic() > until:
                raise TrialFailed("job %d (%s) still %s %d s after the restart" %
                                  (busy[0]["id"], busy[0]["kind"], busy[0]["state"], JOB_WAIT_S))
            time.sleep(0.05)

    def run_job(self, *words):
        """Queues a job with vtlctl WORDS and waits for it; returns the job."""
        out = self.ctl(*words).stdout
        m = re.search(r"queued job (\d+)", out)
        if not m:
            raise TrialFailed("vtlctl %s did not queue a job: %s" % (" ".join(words), out.strip()))
        job = int(m.group(1))
        bc = words[-1]
        self.settle(bc)
        return [j for j in self.jobs(bc) if j["id"] == job][0]


def good(c):
    return [k for k in c["copies"] if k["state"] == "good"]


def disk(c):
    return "%d of %d objects" % (c["pool"].get("objects", 0), c["_want"][0])


def check(env, bc, want, when):
    """The invariants over bc's catalog row and disk copy; returns the row (want: objects, stored bytes)."""
    c = env.cart(bc)
    c["_want"] = want
    cache, g = c["cache"], good(c)
    whole = (c["pool"].get("objects"), c["pool"].get("stored_bytes")) == want
    if cache in ("migrated", "recalling") and not g:
        raise TrialFailed("%s: %s is %s with no good copy" % (when, bc, cache))
    if cache in ("premigrated", "resident") and not whole:
        raise TrialFailed("%s: %s is %s but its disk copy holds %s objects and %s bytes, not %d and %d" %
                          (when, bc, cache, c["pool"].get("objects"), c["pool"].get("stored_bytes"), *want))
    if cache == "premigrated" and not g:
        raise TrialFailed("%s: %s is premigrated with no good copy" % (when, bc))
    if len({k["bytes"] for k in g}) > 1:
        raise TrialFailed("%s: the good copies of %s differ in length: %s" % (when, bc, [k["bytes"] for k in g]))
    return c


def trial(env, rnd, t, bc, slot, seed, times):
    line = []
    # The host writes the cartridge from BOT: resident, every earlier copy invalid.
    env.host("write", slot, seed)
    c = env.cart(bc)
    if c["cache"] != "resident" or good(c):
        raise TrialFailed("after the host's write %s is %s with %d good copies" % (bc, c["cache"], len(good(c))))
    want = env.want[bc] = (c["pool"]["objects"], c["pool"]["stored_bytes"])

    # (a) a copy (premigration), killed at a random moment.
    at = rnd.uniform(0, times[0])
    out = env.ctl("migrate", bc).stdout
    job = int(re.search(r"queued job (\d+)", out).group(1))
    time.sleep(at)
    env.kill()
    st = [j for j in env.jobs(bc) if j["id"] == job][0]["state"]
    c = check(env, bc, want, "after the kill during the copy")
    what = "copy killed at %.2f s (job %s, %s, %d good)" % (at, st, c["cache"], len(good(c)))
    env.start()
    env.settle(bc)
    c = check(env, bc, want, "after the restart")
    if c["cache"] != "premigrated":
        j = env.run_job("migrate", bc)
        if j["state"] != "done":
            raise TrialFailed("the retried copy of %s ended %s: %s" % (bc, j["state"], j["error"]))
        what += ", copied again"
        c = check(env, bc, want, "after the retried copy")
    if c["cache"] != "premigrated":
        raise TrialFailed("%s is %s after a copy that ended done" % (bc, c["cache"]))
    j = env.run_job("verify", bc)
    if j["state"] != "done":
        raise TrialFailed("a copy of %s marked good does not verify: %s" % (bc, j["error"]))
    line.append("%s -> premigrated, %d good verified" % (what, len(good(c))))

    # (b) a release of the premigrated cartridge, killed at a random moment.
    at = rnd.uniform(0, times[1])
    rel = subprocess.Popen([env.vtlctl, "-c", env.conf, "release", bc], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    time.sleep(at)
    env.kill()
    rel.wait(timeout=60)
    c = check(env, bc, want, "after the kill during the release")
    what = "release killed at %.3f s (%s, %s on disk)" % (at, c["cache"], disk(c))
    env.start()
    if c["cache"] == "premigrated":
        # Not released yet: the disk copy must read back whole, and the release is retried.
        env.host("read", slot, seed)
        r = env.ctl("release", bc, check=False)
        if r.returncode != 0:
            raise TrialFailed("the retried release of %s: %s" % (bc, (r.stdout + r.stderr).strip()))
        what += ", read back and released again"
    c = check(env, bc, want, "after the release")
    if c["cache"] != "migrated":
        raise TrialFailed("%s is %s after its release" % (bc, c["cache"]))
    line.append(what)

    # (c) a recall started by a host loading the migrated cartridge, killed at a random moment.
    at = rnd.uniform(0, times[2])
    h = subprocess.Popen(env.host_cmd("read", slot, seed), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    time.sleep(at)
    env.kill()
    c = check(env, bc, want, "after the kill during the recall")
    what = "recall killed at %.2f s (%s, %s on disk)" % (at, c["cache"], disk(c))
    time.sleep(rnd.uniform(0, 0.5))  # the host waits on a stopped stage for a while
    env.start()
    out, _ = h.communicate(timeout=HOST_TIMEOUT_S + 10)
    if h.returncode != 0 or "bit-exact" not in out:
        raise TrialFailed("the host's read through the recall (exit %d): %s" % (h.returncode, out.strip()[-300:]))
    until = time.monotonic() + JOB_WAIT_S
    while env.cart(bc)["cache"] != "premigrated":
        if time.monotonic() > until:
            raise TrialFailed("%s did not become premigrated after the recall" % bc)
        time.sleep(0.05)
    js = env.settle(bc)
    c = check(env, bc, want, "after the recall")
    stuck = [j for j in js if j["state"] not in ("done", "failed")]
    if stuck:
        raise TrialFailed("job %d is %s" % (stuck[0]["id"], stuck[0]["state"]))
    line.append(what + " -> host read %d blocks bit-exact, premigrated" % env.blocks)
    return "; ".join(line)


def main():
    env = Env(sys.argv[1:12])
    trials, seed0 = int(sys.argv[12]), int(sys.argv[13])
    carts = sys.argv[14].split(",")   # BARCODE:SLOT,...
    # Upper bounds of the random kill moments (s) for the copy, the release and the recall.
    times = [float(x) for x in sys.argv[15].split(",")]
    print("seed %d (VTL_MIGKILL_SEED=%d repeats the kill moments)" % (seed0, seed0), flush=True)
    passed = failed = 0
    try:
        passed, failed = run(env, trials, seed0, carts, times)
    finally:
        if env.proc is not None:  # a driver that fails leaves no migrator behind
            env.proc.kill()
            env.proc.wait()
    print("%d passed, %d failed" % (passed, failed), flush=True)
    sys.exit(1 if failed else 0)


def controls(env, bc):
    """Shows that the checks can fail, on bc (premigrated, its trial passed); returns the failures."""
    failures = 0
    # 1. A good copy damaged on its physical tape: the verify job must fail and mark it bad. bc's copy
    #    is the last file of its tape (its trial wrote it last), so 2 MiB before the tape's end is in it.
    #    Left without a good copy, the cartridge must be resident again, not premigrated.
    c = env.cart(bc)
    k = good(c)[-1]
    tape = os.path.join(env.tmp, "physical", k["tape"] + ".tape")
    size = os.path.getsize(tape)
    with open(tape, "r+b") as f:
        f.seek(size - (2 << 20))
        f.write(b"X" * 64)
    j = env.run_job("verify", bc)
    c = env.cart(bc)
    if j["state"] != "failed" or any(x["tape"] == k["tape"] and x["file"] == k["file"] for x in good(c)):
        print("FAIL control: a copy damaged on tape: the verify ended %s and the copy is still good" % j["state"])
        failures += 1
    elif not good(c) and c["cache"] != "resident":
        print("FAIL control: a copy damaged on tape: %s is %s with no good copy left" % (bc, c["cache"]))
        failures += 1
    else:
        print("ok   control: a copy damaged on tape fails its verify (%s), is marked bad; %s is %s" %
              (j["error"][:100], bc, c["cache"]))
    # 2. A disk copy cut short (its last segment halved, put back afterwards): the check must see it.
    d = os.path.join(env.tmp, "pool", "m0", bc)
    seg = os.path.join(d, sorted(x for x in os.listdir(d) if x.endswith(".seg"))[-1])
    with open(seg, "rb") as f:
        keep = f.read()
    with open(seg, "r+b") as f:
        f.truncate(len(keep) // 2)
    try:
        check(env, bc, env.want[bc], "control")
        print("FAIL control: a disk copy cut short passed the check")
        failures += 1
    except TrialFailed as e:
        print("ok   control: a disk copy cut short is caught: %s" % str(e)[:120])
    with open(seg, "wb") as f:
        f.write(keep)
    return failures


def run(env, trials, seed0, carts, times):
    passed = failed = 0
    last_ok = None
    env.start()
    for t in range(1, trials + 1):
        rnd = random.Random(seed0 + t)
        bc, slot = carts[(t - 1) % len(carts)].split(":")
        seed = (seed0 + t) % 100000 * 100
        t0 = time.monotonic()
        try:
            what = trial(env, rnd, t, bc, int(slot), seed, times)
            passed += 1
            last_ok = bc
            print("ok   trial %d %s (%.1f s): %s" % (t, bc, time.monotonic() - t0, what), flush=True)
        except Exception as e:  # any surprise is this trial's failure: the next one starts afresh
            failed += 1
            print("FAIL trial %d %s: %s: %s" % (t, bc, type(e).__name__, e), flush=True)
            if env.proc is None:
                try:
                    env.start()
                except TrialFailed as e2:
                    print("FAIL: cannot go on: %s" % e2, flush=True)
                    failed += trials - t
                    break
    if passed and last_ok:
        failed += controls(env, last_ok)
    try:
        if env.proc is not None:
            env.stop()
    except TrialFailed as e:
        print("FAIL: %s" % e, flush=True)
        failed += 1
    return passed, failed


if __name__ == "__main__":
    main()

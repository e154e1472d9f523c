#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A disk with a volatile write cache, for the power cuts of the kernel tier.

    volatile_nbd.py IMAGE SOCKET --seed N [--cache-max BYTES] [--keep FRACTION]

Serves the raw image file IMAGE over NBD on the unix socket SOCKET to one
client (qemu's nbd block driver, tests/kernel/run_vm.py --disk IMAGE:volatile)
and behaves like a disk whose write cache is on:

- a WRITE is acknowledged as soon as it is in this process's memory; reads see
  it, the image file does not;
- a FLUSH writes every cached write to the image, in the order received, and
  fdatasyncs the image before it is acknowledged; a WRITE with FUA is written
  (after the cached writes it overlaps) and fdatasynced before its reply;
- when the cached writes reach --cache-max bytes (CACHE_MAX_DEFAULT), the
  oldest are written to the image until half of that is left, as a real
  disk destages its cache on its own: those count as on the medium;
- SIGTERM is the power cut (the client, qemu, is already dead; the cut is
  made once its connection has ended): each cached
  write is cut into ATOM-byte pieces on ATOM boundaries, each piece survives
  with probability k (--keep, or drawn from the seed), the survivors are
  written to the image in a random order (also drawn from the seed), the rest
  are dropped, the image is fdatasynced and the server exits 0 after printing
  one "cut:" line;
- NBD_CMD_DISC (qemu ends cleanly, after its own flush) writes everything
  back and exits 0: a disk whose power stays on keeps what it cached.

What it does not model: a torn piece (a piece lands whole or not at all: the
guest's ext4 blocks are ATOM bytes, and a real disk guarantees at least its
sector), a read error after the cut, a write that lands twice or on another
block, or a cache that lies about FLUSH. Reordering is within the writes since
the last FLUSH only, as on a real disk that honours FLUSH: a block ends the
cut holding what it held at the last FLUSH, or any version written since.

The protocol (fixed newstyle handshake, NBD_OPT_GO / NBD_OPT_EXPORT_NAME,
READ, WRITE, FLUSH, FUA, DISC; simple replies only) follows the NBD protocol
document, doc/proto.md of github.com/NetworkBlockDevice/nbd. Every size the
client sends is bounded before anything is allocated for it.
"""
import argparse
import os
import random
import signal
import socket
import struct
import sys
import time

# The NBD protocol document's magic numbers and codes (doc/proto.md, "Handshake" and "Values").
NBDMAGIC = 0x4E42444D41474943         # "NBDMAGIC", the server's first 8 bytes
IHAVEOPT = 0x49484156454F5054         # "IHAVEOPT": newstyle negotiation, and each option's magic
REPLY_MAGIC = 0x3E889045565A9         # option replies (fixed newstyle)
REQUEST_MAGIC = 0x25609513            # transmission requests
SIMPLE_REPLY_MAGIC = 0x67446698       # transmission simple replies
FLAG_FIXED_NEWSTYLE = 1 << 0          # handshake flags
FLAG_NO_ZEROES = 1 << 1
CLIENT_FLAGS_KNOWN = FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES  # the client's bits have the same meaning
TFLAG_HAS_FLAGS = 1 << 0              # transmission flags
TFLAG_SEND_FLUSH = 1 << 2
TFLAG_SEND_FUA = 1 << 3
OPT_EXPORT_NAME, OPT_ABORT, OPT_LIST, OPT_INFO, OPT_GO = 1, 2, 3, 6, 7
REP_ACK, REP_SERVER, REP_INFO = 1, 2, 3
REP_ERR_UNSUP, REP_ERR_INVALID = 2**31 + 1, 2**31 + 3
INFO_EXPORT, INFO_BLOCK_SIZE = 0, 3
CMD_READ, CMD_WRITE, CMD_DISC, CMD_FLUSH = 0, 1, 2, 3
CMD_FLAG_FUA = 1 << 0
EIO, EINVAL, ENOSPC = 5, 22, 28       # the protocol's error values
EXPORT_NAME_ZEROES = 124              # the reserved zeroes after NBD_OPT_EXPORT_NAME's answer

# Bounds on what the client can make us hold.
OPTION_MAX = 8192          # bytes of one option's data: a 4096-byte name (the protocol's string limit) and info requests
OPTIONS_MAX = 64           # options in one handshake (qemu sends 2 or 3)
REQUEST_MAX = 32 << 20     # bytes of one READ or WRITE: qemu's own NBD maximum, advertised as the maximum block size
BLOCK_MIN = 512            # advertised minimum block size: the guest's logical sector
BLOCK_PREFERRED = 4096     # advertised preferred block size: a page, ext4's block
CACHE_MAX_DEFAULT = 64 << 20  # cached bytes before the oldest are written back: a common hard disk's cache size
ATOM = 4096                # bytes that survive a cut whole or not at all (see the docstring)
INDEX_CHUNK = 1 << 20      # granule of the index that finds the cached writes a read overlaps
ORPHAN_POLL = 1            # seconds between two looks at whether run_vm.py, which sends the cut, still lives
TRACE = os.environ.get("VTL_NBD_TRACE") == "1"  # 1: a log line per FLUSH
READY = "ready"            # printed on stdout once the socket listens (run_vm.py waits for it)


class ProtocolError(Exception):
    """The client broke a MUST of the protocol: the connection is dropped (a hard disconnect)."""


def log(msg):
    print("volatile_nbd: " + msg, file=sys.stderr, flush=True)


class Cache:
    """The image file behind a volatile write cache: the writes since the last FLUSH, in order."""

    def __init__(self, fd, size, cache_max):
        self.fd, self.size, self.cache_max = fd, size, cache_max
        self.writes = []        # (offset, data), oldest first
        self.bytes = 0          # sum of their lengths
        self.index = {}         # INDEX_CHUNK number -> positions in self.writes that touch it
        self.stats = dict(writes=0, written=0, flushes=0, fua=0, destaged=0, peak=0)

    def _add_index(self, pos, offset, length):
        for chunk in range(offset // INDEX_CHUNK, (offset + length - 1) // INDEX_CHUNK + 1):
            self.index.setdefault(chunk, []).append(pos)

    def _reindex(self):
        self.index = {}
        for pos, (offset, data) in enumerate(self.writes):
            self._add_index(pos, offset, len(data))

    def _pwrite(self, offset, data):
        view = memoryview(data)
        while view:
            n = os.pwrite(self.fd, view, offset)
            view, offset = view[n:], offset + n

    def _overlapping(self, offset, length):
        """Positions of the cached writes that overlap [offset, offset + length), oldest first."""
        found = set()
        for chunk in range(offset // INDEX_CHUNK, (offset + length - 1) // INDEX_CHUNK + 1):
            for pos in self.index.get(chunk, ()):
                o, d = self.writes[pos]
                if o < offset + length and offset < o + len(d):
                    found.add(pos)
        return sorted(found)

    def read(self, offset, length):
        buf = bytearray(length)
        got = os.preadv(self.fd, [buf], offset) if length else 0
        if got < length:
            raise OSError(EIO, "short read of the image at %d" % offset)
        for pos in self._overlapping(offset, length):
            o, d = self.writes[pos]
            lo, hi = max(o, offset), min(o + len(d), offset + length)
            buf[lo - offset:hi - offset] = d[lo - o:hi - o]
        return buf

    def write(self, offset, data, fua):
        self.stats["writes"] += 1
        self.stats["written"] += len(data)
        if fua:
            # Older cached versions of these blocks go first, so that none lands over the FUA data later.
            self.stats["fua"] += 1
            self._write_back(self._overlapping(offset, len(data)))
            self._pwrite(offset, data)
            os.fdatasync(self.fd)
            return
        self._add_index(len(self.writes), offset, len(data))
        self.writes.append((offset, data))
        self.bytes += len(data)
        self.stats["peak"] = max(self.stats["peak"], self.bytes)
        if self.bytes > self.cache_max:
            # The cache is full: the oldest writes reach the medium, as a disk destages on its own.
            n, left = 0, self.bytes
            while left > self.cache_max // 2:
                left -= len(self.writes[n][1])
                n += 1
            self.stats["destaged"] += n
            self._write_back(range(n))

    def _write_back(self, positions):
        """Writes the cached writes at these positions (ascending) to the image and forgets them."""
        positions = list(positions)
        if not positions:
            return
        for pos in positions:
            self._pwrite(*self.writes[pos])
        gone = set(positions)
        self.writes = [w for pos, w in enumerate(self.writes) if pos not in gone]
        self.bytes = sum(len(d) for _, d in self.writes)
        self._reindex()

    def flush(self):
        self.stats["flushes"] += 1
        if TRACE:
            log("flush %d: %d cached writes, %d bytes" % (self.stats["flushes"], len(self.writes), self.bytes))
        for offset, data in self.writes:
            self._pwrite(offset, data)
        os.fdatasync(self.fd)
        self.writes, self.bytes, self.index = [], 0, {}

    def cut(self, rng, keep):
        """The power cut: a random subset of the cached writes' pieces lands, in a random order."""
        pieces = []
        for offset, data in self.writes:
            at = offset
            while at < offset + len(data):
                end = min(offset + len(data), (at // ATOM + 1) * ATOM)
                pieces.append((at, memoryview(data)[at - offset:end - offset]))
                at = end
        kept = [p for p in pieces if rng.random() < keep]
        rng.shuffle(kept)
        for at, view in kept:
            self._pwrite(at, view)
        os.fdatasync(self.fd)
        return len(self.writes), self.bytes, len(pieces), len(kept), sum(len(v) for _, v in kept)


def log_stats(cache):
    s = cache.stats
    log("%d writes (%d bytes), %d flushes, %d FUA writes, %d writes destaged by a full cache, at most %d bytes"
        " cached" % (s["writes"], s["written"], s["flushes"], s["fua"], s["destaged"], s["peak"]))


def recv_exact(f, n):
    data = f.read(n)
    if data is None or len(data) < n:
        raise EOFError
    return data


def option_reply(sock, option, rtype, data=b""):
    sock.sendall(struct.pack(">QIII", REPLY_MAGIC, option, rtype, len(data)) + data)


def export_info(size, tflags, wanted):
    """The NBD_REP_INFO payloads NBD_OPT_GO answers with: the export always, block sizes when asked."""
    infos = [struct.pack(">HQH", INFO_EXPORT, size, tflags)]
    if INFO_BLOCK_SIZE in wanted:
        infos.append(struct.pack(">HIII", INFO_BLOCK_SIZE, BLOCK_MIN, BLOCK_PREFERRED, REQUEST_MAX))
    return infos


def handshake(sock, f, size, tflags):
    """Fixed newstyle negotiation up to the transmission phase; False if the client aborted."""
    sock.sendall(struct.pack(">QQH", NBDMAGIC, IHAVEOPT, FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES))
    (cflags,) = struct.unpack(">I", recv_exact(f, 4))
    if cflags & ~CLIENT_FLAGS_KNOWN:
        raise ProtocolError("unknown client flags %#x" % cflags)
    for _ in range(OPTIONS_MAX):
        magic, option, length = struct.unpack(">QII", recv_exact(f, 16))
        if magic != IHAVEOPT:
            raise ProtocolError("option magic %#x" % magic)
        if length > OPTION_MAX:
            raise ProtocolError("option %d of %d bytes (at most %d)" % (option, length, OPTION_MAX))
        data = recv_exact(f, length)
        if option == OPT_EXPORT_NAME:
            zeroes = b"" if cflags & FLAG_NO_ZEROES else bytes(EXPORT_NAME_ZEROES)
            sock.sendall(struct.pack(">QH", size, tflags) + zeroes)
            log("client chose the export with NBD_OPT_EXPORT_NAME")
            return True
        if option in (OPT_GO, OPT_INFO):
            # Data: 32-bit name length, the name, 16-bit count of info requests, 16 bits each.
            if length < 6:
                option_reply(sock, option, REP_ERR_INVALID)
                continue
            (name_len,) = struct.unpack(">I", data[:4])
            if name_len > length - 6:
                option_reply(sock, option, REP_ERR_INVALID)
                continue
            (count,) = struct.unpack(">H", data[4 + name_len:6 + name_len])
            if length != 6 + name_len + 2 * count:
                option_reply(sock, option, REP_ERR_INVALID)
                continue
            wanted = struct.unpack(">%dH" % count, data[6 + name_len:])
            for info in export_info(size, tflags, wanted):
                option_reply(sock, option, REP_INFO, info)
            option_reply(sock, option, REP_ACK)
            if option == OPT_GO:
                log("client chose the export with NBD_OPT_GO")
                return True
        elif option == OPT_ABORT:
            option_reply(sock, option, REP_ACK)
            return False
        elif option == OPT_LIST:
            option_reply(sock, option, REP_SERVER, struct.pack(">I", 0))  # one export, the default ("")
            option_reply(sock, option, REP_ACK)
        else:
            option_reply(sock, option, REP_ERR_UNSUP)
    raise ProtocolError("more than %d options" % OPTIONS_MAX)


def serve(sock, cache, size):
    """The transmission phase; True after NBD_CMD_DISC, False when the connection ends without it."""
    f = sock.makefile("rb")
    tflags = TFLAG_HAS_FLAGS | TFLAG_SEND_FLUSH | TFLAG_SEND_FUA
    try:
        if not handshake(sock, f, size, tflags):
            return True
        while True:
            magic, flags, ctype, handle, offset, length = struct.unpack(">IHHQQI", recv_exact(f, 28))
            if magic != REQUEST_MAGIC:
                raise ProtocolError("request magic %#x" % magic)
            if ctype in (CMD_READ, CMD_WRITE) and length > REQUEST_MAX:
                raise ProtocolError("a request of %d bytes (at most %d)" % (length, REQUEST_MAX))
            error, payload = 0, b""
            if ctype == CMD_WRITE:
                data = recv_exact(f, length)
                if offset + length > size:
                    error = ENOSPC
                else:
                    cache.write(offset, data, bool(flags & CMD_FLAG_FUA))
            elif ctype == CMD_READ:
                if offset + length > size:
                    error = EINVAL
                else:
                    payload = cache.read(offset, length)
            elif ctype == CMD_FLUSH:
                cache.flush()
            elif ctype == CMD_DISC:
                return True
            else:
                error = EINVAL
            sock.sendall(struct.pack(">IIQ", SIMPLE_REPLY_MAGIC, error, handle))
            if payload:
                sock.sendall(payload)
    except (EOFError, ConnectionError):
        return False


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("image")
    p.add_argument("socket")
    p.add_argument("--seed", type=int, required=True, help="draws the cut's subset and order (printed)")
    p.add_argument("--cache-max", type=int, default=CACHE_MAX_DEFAULT,
                   help="cached bytes before the oldest are written back (default %d)" % CACHE_MAX_DEFAULT)
    p.add_argument("--keep", type=float, default=None,
                   help="probability that a cached piece survives the cut (default: drawn from the seed)")
    a = p.parse_args()
    if a.cache_max < REQUEST_MAX:
        p.error("--cache-max must hold one request of %d bytes" % REQUEST_MAX)
    if a.keep is not None and not 0 <= a.keep <= 1:
        p.error("--keep is a probability, 0 to 1")
    rng = random.Random(a.seed)
    keep = rng.random() if a.keep is None else a.keep

    # SIGTERM only marks the cut: it is made once the connection has ended (qemu is dead by then, so the
    # end comes at once), never in the middle of a request, whose half-done state would be no disk's.
    cut = []
    signal.signal(signal.SIGTERM, lambda signum, frame: cut.append(signum))
    parent = os.getppid()

    def orphaned():
        return os.getppid() != parent
    fd = os.open(a.image, os.O_RDWR)
    size = os.fstat(fd).st_size
    cache = Cache(fd, size, a.cache_max)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(a.socket)
        listener.listen(1)
        listener.settimeout(ORPHAN_POLL)
        print(READY, flush=True)
        log("serving %s (%d bytes) on %s; cache of %d bytes at most; seed %d" % (a.image, size, a.socket,
                                                                                  a.cache_max, a.seed))
        conn = None
        while conn is None and not cut:
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                if orphaned():
                    log("the parent is gone before a client came: exiting")
                    return 1
        listener.close()
        clean = False
        if conn is not None:
            conn.settimeout(None)
            clean = serve(conn, cache, size)
            conn.close()
        log_stats(cache)
        if clean:
            cache.flush()
            log("the client disconnected (NBD_CMD_DISC): its cached writes are written back")
            return 0
        if not cut:
            log("the client is gone without NBD_CMD_DISC: waiting for the power cut (SIGTERM)")
        while not cut:
            if orphaned():
                log("the parent (run_vm.py) is gone and will not cut: exiting, the cache unwritten")
                return 1
            time.sleep(ORPHAN_POLL)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        writes, cached, pieces, kept, kept_bytes = cache.cut(rng, keep)
        print("cut: seed %d, keep %.2f: %d of %d pieces (%d of %d bytes) of the %d unflushed writes landed in a"
              " random order, the rest are lost" % (a.seed, keep, kept, pieces, kept_bytes, cached, writes), flush=True)
        log("cut done")
        return 0
    except ProtocolError as e:
        log("protocol error, connection dropped: %s" % e)
        return 1
    finally:
        os.close(fd)
        try:
            os.unlink(a.socket)
        except OSError:
            pass


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""damage.py - a classic pcap file damaged in the middle loses only the damage.

    damage.py EGRESSWATCH PCAPS_DIR

libpcap stops at a record whose length is past any snapshot; replay then
searches the bytes after that record's header for the next place where
two whole records follow one another, reads on from there, says what it
skipped, and exits 1; a pcapng file likewise from the next two whole blocks. A second file header in the stream (captures joined
with cat) is read past when it is of the same kind, with a warning and exit
0. Each case builds a damaged copy of a fixture and compares its
`events --json` and `alerts --json` with those of an undamaged file holding
what should have survived:

- record lengths overwritten (one; three; fifteen, past the ten places told
  one by one): the file without those records;
- random bytes, zero bytes (which libpcap reads as a record of nothing) and
  a stray record header inserted between two records: the whole file;
  zero bytes in whole records through a pipe and gzipped, between two
  records and at the end: the whole file, the damage said;
- the last record's length overwritten: the file without it, and the old
  message (nothing after it to read on from);
- a record's length overwritten in a capture of 2060 (its seconds past
  2^31): the file without that record;
- pcapng: a packet block's length overwritten, at its start (one that
  takes the next block in too) or at its end (the file without that
  block), random bytes of an odd count and zero bytes inserted between two
  blocks (the whole file); gzipped, its trailer cut or its CRC wrong (every
  packet, and the damage said: exit 1); a second section whose header is
  damaged (its packets read with its own interfaces);
- two captures joined with cat, as a file, through a pipe and gzipped: the
  two files replayed one after the other; a pcap and a pcapng file joined:
  the same (the pcapng reader takes over at the section header); joined
  with captures of another link type and byte order: the same (each header
  opens the file again; from stdin redirected from the file too, by its
  descriptor), but through a pipe it stops there (exit 1), the first
  capture kept.

Exit 0 when every case holds, 1 naming those that do not, 2 on a usage
error.
"""
import gzip
import os
import random
import re
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import formats  # noqa: E402
import pcapfile  # noqa: E402

FIXTURES = ["dns_tcp_long.pcap", "web_http.pcap", "demo.pcap", "ip_frag.pcap"]
NG_FIXTURES = ["link_multi.pcapng", "dns_basic.pcapng"]
failures = []


def fail(what):
    failures.append(what)
    print("FAIL: " + what, flush=True)


def replay(ew, tmp, name, files, stdin=None):
    """(exit status, stderr, events and alerts) of a replay of files; stdin
    is bytes for a pipe, or the path of a file to redirect it from."""
    db = os.path.join(tmp, name + ".db")
    for sfx in ("", "-wal", "-shm"):
        if os.path.exists(db + sfx):
            os.unlink(db + sfx)
    cmd = [ew, "replay", "-q", "-d", db] + files
    if isinstance(stdin, str):
        with open(stdin, "rb") as f:
            p = subprocess.run(cmd, stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    else:
        p = subprocess.run(cmd, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = b""
    if os.path.exists(db):
        for what in ("events", "alerts"):
            q = subprocess.run([ew, what, "-d", db, "--json"], stdout=subprocess.PIPE)
            out += q.stdout
    return p.returncode, p.stderr.decode(errors="replace"), out


def write(tmp, name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def with_caplen(rec, caplen):
    """rec (header and data, little-endian file) with its caplen field set."""
    return rec[:8] + struct.pack("<I", caplen) + rec[12:]


def check(ew, tmp, name, damaged, want, status, patterns, stdin=None):
    """Replay damaged (a path, or '-' with stdin) and want (paths); the
    events and alerts must be equal, the status as given, stderr match
    every pattern, in order, one line each, and hold nothing else."""
    got_rc, got_err, got = replay(ew, tmp, name + "-got", [damaged], stdin)
    _, _, wanted = replay(ew, tmp, name + "-want", want)
    if got != wanted or not wanted:
        fail("%s: events and alerts differ from what should have survived "
             "(%d against %d bytes)" % (name, len(got), len(wanted)))
    if got_rc != status:
        fail("%s: exit status %d, want %d (%s)" % (name, got_rc, status, got_err.strip()))
    lines = got_err.splitlines()
    if len(lines) != len(patterns) or not all(re.search(p, l) for p, l in zip(patterns, lines)):
        fail("%s: stderr %r, want lines matching %r" % (name, lines, patterns))


def skip_line(path, after, start, end):
    return (r"^egresswatch replay: %s: invalid packet capture length \d+, bigger than "
            r"(snaplen of \d+|maximum of \d+) after packet %d; skipped %d bytes \(%d to %d\) to "
            r"the next whole record$" % (re.escape(path), after, end - start, start, end))


def big_endian(data):
    """A little-endian microsecond pcap file written big-endian."""
    cap = pcapfile.read(data)
    magic, vmaj, vmin, zone, sig, snap, link = struct.unpack("<IHHiIII", cap.head)
    out = [struct.pack(">IHHiIII", magic, vmaj, vmin, zone, sig, snap, link)]
    for ts, caplen, wirelen, frame in cap.packets:
        out.append(struct.pack(">IIII", ts // 1000000, ts % 1000000, caplen, wirelen) + frame)
    return b"".join(out)


def packet_blocks(data):
    """The packet blocks of a pcapng file, whose sections may be of either byte order."""
    n, o, e = 0, 0, "<"
    while o < len(data):
        if data[o:o + 4] == b"\x0a\x0d\x0d\x0a":
            e = "<" if data[o + 8:o + 12] == b"\x4d\x3c\x2b\x1a" else ">"
        btype, ln = struct.unpack(e + "II", data[o:o + 8])
        n += btype in (2, 3, 6)
        o += ln
    return n


def offsets(cap):
    """The byte offset of each record of cap."""
    out, off = [], len(cap.head)
    for rec in cap.raw:
        out.append(off)
        off += len(rec)
    return out


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: damage.py EGRESSWATCH PCAPS_DIR")
    ew, pcaps = argv
    rng = random.Random(2026)
    ncase = 0
    with tempfile.TemporaryDirectory(prefix="ew-damage.") as tmp:
        for fx in FIXTURES:
            path = os.path.join(pcaps, fx)
            with open(path, "rb") as f:
                data = f.read()
            cap = pcapfile.read(data, "damage.py")
            if data[:4] != b"\xd4\xc3\xb2\xa1":
                sys.exit("damage.py: %s is not a little-endian microsecond pcap" % fx)
            recs, offs, n = cap.raw, offsets(cap), len(cap.raw)
            stem = fx.split(".")[0]

            # Record lengths overwritten: those records are lost, nothing else.
            for count in (1, 3, 15):
                if n < 3 * count + 4:
                    continue
                bad = sorted(rng.sample(range(1, n - 3), count))
                while any(b2 - b1 < 3 for b1, b2 in zip(bad, bad[1:])):
                    bad = sorted(rng.sample(range(1, n - 3), count))
                raw = [with_caplen(r, 0x7fffff00 + i) if i in bad else r
                       for i, r in enumerate(recs)]
                d = write(tmp, "%s-len%d.pcap" % (stem, count), cap.head + b"".join(raw))
                w = write(tmp, "%s-len%d-want.pcap" % (stem, count),
                          cap.head + b"".join(r for i, r in enumerate(recs) if i not in bad))
                pats = [skip_line(d, b - k, offs[b], offs[b + 1])
                        for k, b in enumerate(bad)][:10]
                if count > 10:
                    skipped = sum(offs[b + 1] - offs[b] for b in bad)
                    pats.append(r"^egresswatch replay: %s: %d places damaged in all, %d bytes "
                                r"skipped$" % (re.escape(d), count, skipped))
                check(ew, tmp, "%s: %d lengths" % (fx, count), d, [w], 1, pats)
                ncase += 1

            # Bytes inserted between two records: nothing is lost. A stray
            # record header says its record runs past any snapshot.
            at = n // 2
            for kind, junk in (("random", bytes(rng.randrange(256) for _ in range(20000))),
                               ("zeros", bytes(7000)),
                               ("header", struct.pack("<IIII", 1, 2, 0x40000000, 0x40000000))):
                d = write(tmp, "%s-%s.pcap" % (stem, kind),
                          cap.head + b"".join(recs[:at]) + junk + b"".join(recs[at:]))
                if kind == "zeros":
                    # libpcap reads zeros as records of nothing at the time
                    # 0: the zeroed stretch is skipped whole
                    pat = (r"^egresswatch replay: %s: a record of zero bytes at the time 0 after packet %d; "
                           r"skipped %d bytes \(%d to %d\) to the next whole record$"
                           % (re.escape(d), at, len(junk), offs[at], offs[at] + len(junk)))
                else:
                    pat = skip_line(d, at, offs[at], offs[at] + len(junk))
                check(ew, tmp, "%s: %s bytes" % (fx, kind), d, [path], 1, [pat])
                ncase += 1

            # The last record damaged: nothing to read on from; as before.
            raw = recs[:-1] + [with_caplen(recs[-1], 0x7fffff00)]
            d = write(tmp, "%s-last.pcap" % stem, cap.head + b"".join(raw))
            w = write(tmp, "%s-last-want.pcap" % stem, cap.head + b"".join(recs[:-1]))
            check(ew, tmp, "%s: last record" % fx, d, [w], 1,
                  [r"^egresswatch replay: %s: invalid packet capture length \d+, bigger than "
                   r"(snaplen of \d+|maximum of \d+) after packet %d; the packets before it are "
                   r"kept$" % (re.escape(d), n - 1)])
            ncase += 1

        # After 2038 (the 32-bit seconds past 2^31, which libpcap reads as
        # negative): the records found after damage are near the last good
        # one's time all the same.
        path = os.path.join(pcaps, "demo.pcap")
        with open(path, "rb") as f:
            cap = pcapfile.read(f.read(), "damage.py")
        late = [struct.pack("<I", struct.unpack("<I", r[:4])[0] + (1 << 30)) + r[4:]
                for r in cap.raw]
        offs, k = offsets(cap), len(late) // 2
        d = write(tmp, "late-len.pcap",
                  cap.head + b"".join(late[:k]) + with_caplen(late[k], 0x7fffff00) +
                  b"".join(late[k + 1:]))
        w = write(tmp, "late-len-want.pcap", cap.head + b"".join(late[:k] + late[k + 1:]))
        check(ew, tmp, "demo.pcap after 2038: a length", d, [w], 1,
              [skip_line(d, k, offs[k], offs[k + 1])])
        ncase += 1

        # A zeroed stretch of whole records through a pipe or a
        # decompressor, which cannot be searched: each record of zero bytes
        # is 16 bytes, so the reader is still in step after them; read past
        # in the middle (the whole file), and at the end the file stops
        # there (the whole file), as a plain file does. (They were packets
        # at 1970.)
        path = os.path.join(pcaps, "demo.pcap")
        with open(path, "rb") as f:
            data = f.read()
        cap = pcapfile.read(data, "damage.py")
        at = len(cap.raw) // 2
        zero = (r"^egresswatch replay: %s: a record of zero bytes at the time 0 after packet %d; "
                r"%s$")
        mid = cap.head + b"".join(cap.raw[:at]) + bytes(4096) + b"".join(cap.raw[at:])
        tail = data + bytes(4096)
        for how, name in (("pipe", "-"), ("gzip", "zeros.pcap.gz")):
            for where, z, after, said in (
                    ("middle", mid, at, r"skipped 4096 bytes to the next whole record"),
                    ("end", tail, len(cap.raw), r"the packets before it are kept")):
                if how == "gzip":
                    d, stdin = write(tmp, name, gzip.compress(z, mtime=0)), None
                else:
                    d, stdin = name, z
                check(ew, tmp, "demo.pcap: zeros at the %s, through %s" % (where, how), d,
                      [path], 1, [zero % (re.escape(d), after, said)], stdin=stdin)
                ncase += 1

        # pcapng (read by sensor/pcapng.c): a packet block's length
        # overwritten (that block is lost), random bytes of an odd count and
        # zero bytes inserted between two blocks (nothing is lost).
        for fx in NG_FIXTURES:
            path = os.path.join(pcaps, fx)
            with open(path, "rb") as f:
                data = f.read()
            if data[8:12] != b"\x4d\x3c\x2b\x1a":
                sys.exit("damage.py: %s is not a little-endian pcapng file" % fx)
            blocks, offs, o = [], [], 0
            while o < len(data):
                ln = struct.unpack("<I", data[o + 4:o + 8])[0]
                offs.append(o)
                blocks.append(data[o:o + ln])
                o += ln
            epbs = [i for i, b in enumerate(blocks) if b[:4] == b"\x06\x00\x00\x00"]
            k = epbs[len(epbs) // 2]
            npk = sum(1 for i in epbs if i < k)  # packets before block k
            stem = fx.split(".")[0]
            bad = blocks[k][:4] + struct.pack("<I", 0xfffffff0) + blocks[k][8:]
            d = write(tmp, stem + "-len.pcapng", b"".join(blocks[:k]) + bad + b"".join(blocks[k + 1:]))
            w = write(tmp, stem + "-len-want.pcapng", b"".join(blocks[:k] + blocks[k + 1:]))
            check(ew, tmp, "%s: a block's length" % fx, d, [w], 1,
                  [r"^egresswatch replay: %s: block of type 0x00000006 with a bad length \d+ "
                   r"\(want 12\.\.\d+, a multiple of 4\) after packet %d; skipped %d bytes "
                   r"\(%d to %d\) to the next whole block$"
                   % (re.escape(d), npk, len(blocks[k]), offs[k], offs[k + 1])])
            # The length at a block's end not the one at its start: a
            # leading length that takes the next block in too (which was
            # read as one block, its packet lost without a word), and a
            # trailer overwritten. Block k is lost, the next one read.
            n2 = len(blocks[k]) + len(blocks[k + 1])
            for kind, bad, lead, trail in (
                    ("swallow", blocks[k][:4] + struct.pack("<I", n2) + blocks[k][8:], n2,
                     len(blocks[k + 1])),
                    ("trailer", blocks[k][:-4] + struct.pack("<I", len(blocks[k]) + 4),
                     len(blocks[k]), len(blocks[k]) + 4)):
                d = write(tmp, "%s-%s.pcapng" % (stem, kind),
                          b"".join(blocks[:k]) + bad + b"".join(blocks[k + 1:]))
                check(ew, tmp, "%s: a block's lengths differ (%s)" % (fx, kind), d, [w], 1,
                      [r"^egresswatch replay: %s: block of type 0x00000006 with a length of %d "
                       r"at its start and %d at its end after packet %d; skipped %d bytes "
                       r"\(%d to %d\) to the next whole block$"
                       % (re.escape(d), lead, trail, npk, len(blocks[k]), offs[k], offs[k + 1])])
                ncase += 1
            # Compressed, damaged after the last whole block (the gzip
            # trailer cut, its CRC wrong): every packet, but damaged (exit 1),
            # as a classic pcap says; it was a clean end.
            gz = gzip.compress(data, mtime=0)
            nall = packet_blocks(data)
            for kind, bad, why in (("cut", gz[:-4],
                                    r"the file ends inside a member \(cut short\?\)"),
                                   ("crc", gz[:-8] + bytes([gz[-8] ^ 0xff]) + gz[-7:],
                                    "incorrect data check")):
                d = write(tmp, "%s-%s.pcapng.gz" % (stem, kind), bad)
                check(ew, tmp, "%s: gzip %s after the last block" % (fx, kind), d, [path], 1,
                      [r"^egresswatch replay: %s: gzip: %s after packet %d; the packets before "
                       r"it are kept$" % (re.escape(d), why, nall)])
                ncase += 1
            for kind, junk in (("random", bytes(rng.randrange(256) for _ in range(3001))),
                               ("zeros", bytes(7000))):
                d = write(tmp, "%s-%s.pcapng" % (stem, kind),
                          b"".join(blocks[:k]) + junk + b"".join(blocks[k:]))
                check(ew, tmp, "%s: %s bytes" % (fx, kind), d, [path], 1,
                      [r"^egresswatch replay: %s: .* after packet %d; skipped %d bytes "
                       r"\(%d to %d\) to the next whole block$"
                       % (re.escape(d), npk, len(junk), offs[k], offs[k] + len(junk))])
            ncase += 3

        # A second section whose header is damaged (an unknown version),
        # in either byte order, its interface in nanoseconds: skipped, and
        # the section's packets read with its own interface, not with the
        # first section's (they were, all at 9999-12-31).
        with open(os.path.join(pcaps, "dns_basic.pcapng"), "rb") as f:
            first = f.read()
        with open(os.path.join(pcaps, "web_http.pcap"), "rb") as f:
            cap = pcapfile.read(f.read(), "damage.py")
        npk = packet_blocks(first)
        for e in ("<", ">"):
            second = formats.pcapng(cap.linktype, cap.snaplen, cap.packets, e, 9, 0, False)
            shb_len = struct.unpack(e + "I", second[4:8])[0]
            w = write(tmp, "section%s.pcapng" % ("be" if e == ">" else "le"), second)
            d = write(tmp, "section%s-bad.pcapng" % ("be" if e == ">" else "le"),
                      first + second[:12] + struct.pack(e + "H", 2) + second[14:])
            check(ew, tmp, "pcapng: a second section's header damaged (%s)" % e, d,
                  [os.path.join(pcaps, "dns_basic.pcapng"), w], 1,
                  [r"^egresswatch replay: %s: unsupported pcapng version 2\.0 after packet %d; "
                   r"skipped %d bytes \(%d to %d\) to the next whole block$"
                   % (re.escape(d), npk, shb_len, len(first), len(first) + shb_len)])
            ncase += 1

        # Captures joined with cat: read on, with a warning, exit 0.
        a, b = os.path.join(pcaps, "dns_basic.pcap"), os.path.join(pcaps, "web_http.pcap")
        with open(a, "rb") as f:
            da = f.read()
        with open(b, "rb") as f:
            db_ = f.read()
        na = len(pcapfile.read(da).raw)
        joined = da + db_
        warn = (r"^egresswatch replay: warning: %s: a second pcap file header after packet %d "
                r"\(files joined with cat\?\): read on as one capture$")
        d = write(tmp, "joined.pcap", joined)
        check(ew, tmp, "cat", d, [a, b], 0, [warn % (re.escape(d), na)])
        check(ew, tmp, "cat | replay -", "-", [a, b], 0, [warn % ("-", na)], stdin=joined)
        d = write(tmp, "joined.pcap.gz", gzip.compress(joined))
        check(ew, tmp, "cat | gzip", d, [a, b], 0, [warn % (re.escape(d), na)])
        # ... with a pcapng capture: the pcapng reader reads on from its
        # section header, every interface with its own link type.
        with open(os.path.join(pcaps, "link_multi.pcapng"), "rb") as f:
            d = write(tmp, "joined-ng.pcap", da + f.read())
        check(ew, tmp, "cat pcap pcapng", d, [a, os.path.join(pcaps, "link_multi.pcapng")], 0,
              [r"^egresswatch replay: warning: %s: a pcapng section after packet %d \(files "
               r"joined with cat\?\): read on as one capture$" % (re.escape(d), na)])
        ncase += 1
        # ... with captures of another kind: a file that can be searched is
        # opened again at each header (Linux cooked, then big-endian
        # Ethernet, then the first again); a pipe stops there, the first
        # capture kept.
        sll = os.path.join(pcaps, "link_sll.pcap")
        with open(sll, "rb") as f:
            dsll = f.read()
        big = write(tmp, "big-endian.pcap", big_endian(db_))
        d = write(tmp, "joined-kinds.pcap", da + dsll + big_endian(db_) + da)
        nsll = len(pcapfile.read(dsll).raw)
        nb = len(pcapfile.read(db_).raw)
        other = (r"^egresswatch replay: warning: %s: a second pcap file header after packet %d "
                 r"\(files joined with cat\?\), of another kind: read on as one capture$")
        # (the last capture goes back 4936 s in time: flows, windows and
        # alert rows start over there, as in the files replayed one by one)
        check(ew, tmp, "cat of other kinds", d, [a, sll, big, a], 0,
              [other % (re.escape(d), n) for n in (na, na + nsll, na + nsll + nb)] +
              [r"^<4>\[core\] packet time went back 4936 s, from 2026-11-29T11:22:16.168582Z "
               r"to 2026-11-29T10:00:00.000000Z: flows, detector windows and alert rows "
               r"start over$"])
        # ... the same from stdin redirected from the file, which has no
        # name to open again: its descriptor is
        check(ew, tmp, "replay - < cat of other kinds", "-", [a, sll, big, a], 0,
              [other % ("-", n) for n in (na, na + nsll, na + nsll + nb)] +
              [r"^<4>\[core\] packet time went back 4936 s, from 2026-11-29T11:22:16.168582Z "
               r"to 2026-11-29T10:00:00.000000Z: flows, detector windows and alert rows "
               r"start over$"], stdin=d)
        check(ew, tmp, "cat of another link type | replay -", "-", [a], 1,
              [r"^egresswatch replay: -: a second pcap file header after packet %d, of another "
               r"byte order, time unit or link type \(files joined with cat\?\): replay the "
               r"pieces as files of their own; the packets before it are kept$" % na],
              stdin=da + dsll)
        ncase += 6
    if failures:
        print("damage.py: %d of %d cases failed" % (len(failures), ncase))
        return 1
    print("damage.py: %d cases hold" % ncase)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Seeded random workload generator and expected-state model for the power-cut trials.

  workload.py gen --seed S [--ops N] [--late L] [--meta] DIR=MANIFEST...
      For every DIR: load the current tree as the model (the previous trial verified it), apply N
      random changes (new files, appends, overwrites, rename-over, touch, chmod, chown, mkdir, rmdir,
      rename, unlink, hard link, symlink, truncate, mmap writes) while updating the model, check the
      model against a fresh scan (a generator bug exits 2), then apply L late changes to every DIR
      (metadata-only and small writes: the last ones happen milliseconds before the caller starts
      `suspend-sync run`; --meta: metadata-only ones) and write the model to MANIFEST (JSON). Prints "changes=K entries=E" per
      DIR.
  workload.py snap DIR=MANIFEST...
      Write the current tree as the manifest (no change), for mounts left untouched.
  workload.py check DIR MANIFEST
      Scan DIR and compare with MANIFEST: every path with its type, permission bits, owner, size,
      content hash, link target, hard-link group and nlink, and the mtime of every file touched
      with an explicit time. Prints "losses=K entries=E" and each difference; exit 1 on a loss.

Only the standard library; deterministic for a given seed and starting tree.
"""
import hashlib
import json
import mmap
import os
import random
import stat
import sys
import time

SKIP = {"lost+found"}
FILE_MODES = [0o600, 0o644, 0o640, 0o755, 0o700, 0o444, 0o666, 0o604]
DIR_MODES = [0o755, 0o700, 0o750, 0o775]
MAX_FILES = 160


class Obj:
        """A regular file's inode: its content and attributes (shared by its hard links)."""

        def __init__(self, data=b"", mode=0o644, uid=0, gid=0):
                self.data = bytearray(data)
                self.mode = mode
                self.uid = uid
                self.gid = gid
                self.mtime_ns = None        # set when touched with an explicit time


class Model:
        def __init__(self, root):
                self.root = root
                self.files = {}             # relpath -> Obj
                self.dirs = {}              # relpath -> (mode, uid, gid); "" is the root
                self.links = {}             # relpath -> target
                self.counter = 0

        # ---- loading -------------------------------------------------------------------------
        def load(self):
                by_ino = {}
                for rel, st in scan_paths(self.root):
                        if isinstance(st, OSError):
                                raise SystemExit(f"cannot read {self.root}/{rel}: {st}")
                        p = os.path.join(self.root, rel)
                        if stat.S_ISDIR(st.st_mode):
                                self.dirs[rel] = (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid)
                        elif stat.S_ISLNK(st.st_mode):
                                self.links[rel] = os.readlink(p)
                        elif stat.S_ISREG(st.st_mode):
                                o = by_ino.get(st.st_ino)
                                if o is None:
                                        with open(p, "rb") as f:
                                                o = Obj(f.read(), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid)
                                        by_ino[st.st_ino] = o
                                self.files[rel] = o
                        else:
                                raise SystemExit(f"unexpected file type at {p}")
                self.dirs.setdefault("", (0o755, 0, 0))

        # ---- helpers -------------------------------------------------------------------------
        def p(self, rel):
                return os.path.join(self.root, rel)

        def new_name(self, rng, prefix):
                self.counter += 1
                d = rng.choice(sorted(self.dirs))
                return os.path.join(d, f"{prefix}{rng.getrandbits(32):08x}.{self.counter}")

        def empty_dirs(self):
                used = set()
                for rel in list(self.files) + list(self.links) + list(self.dirs):
                        used.add(os.path.dirname(rel))
                return sorted(d for d in self.dirs if d and d not in used)

        def manifest(self):
                groups = {}
                for rel, o in self.files.items():
                        groups.setdefault(id(o), []).append(rel)
                gid_of = {k: min(v) for k, v in groups.items()}
                m = {}
                for rel, (mode, uid, gid) in self.dirs.items():
                        m[rel] = {"type": "d", "mode": mode, "uid": uid, "gid": gid}
                for rel, t in self.links.items():
                        m[rel] = {"type": "l", "target": t}
                for rel, o in self.files.items():
                        e = {"type": "f", "mode": o.mode, "uid": o.uid, "gid": o.gid, "size": len(o.data),
                             "sha256": hashlib.sha256(o.data).hexdigest(), "nlink": len(groups[id(o)]),
                             "group": gid_of[id(o)]}
                        if o.mtime_ns is not None:
                                e["mtime_ns"] = o.mtime_ns
                        m[rel] = e
                return m


def _lstat(path):
        try:
                return os.lstat(path)
        except OSError as e:            # a damaged filesystem (negative controls): EUCLEAN, EBADMSG, EIO
                return e


def scan_paths(root):
        """(relpath, stat result or OSError) for every entry below root, directories first."""
        out = []
        for dirpath, dirnames, filenames in os.walk(root, onerror=lambda e: out.append((os.path.relpath(e.filename, root), e))):
                rel_dir = os.path.relpath(dirpath, root)
                rel_dir = "" if rel_dir == "." else rel_dir
                if rel_dir == "":
                        dirnames[:] = [d for d in dirnames if d not in SKIP]
                        filenames = [f for f in filenames if f not in SKIP]
                dirnames.sort()
                out.append((rel_dir, _lstat(dirpath)))
                for name in sorted(filenames):
                        rel = os.path.join(rel_dir, name)
                        out.append((rel, _lstat(os.path.join(root, rel))))
                # symlinks to directories are listed in dirnames by os.walk (not followed)
                for name in list(dirnames):
                        full = os.path.join(dirpath, name)
                        if os.path.islink(full):
                                dirnames.remove(name)
                                rel = os.path.join(rel_dir, name)
                                out.append((rel, _lstat(full)))
        return out


def scan_manifest(root):
        """The tree as it is on disk, in manifest form (hard-link groups named by smallest path)."""
        m = {}
        ino_paths = {}
        entries = scan_paths(root)
        for rel, st in entries:
                if not isinstance(st, OSError) and stat.S_ISREG(st.st_mode):
                        ino_paths.setdefault(st.st_ino, []).append(rel)
        for rel, st in entries:
                p = os.path.join(root, rel)
                if isinstance(st, OSError):
                        m[rel] = {"type": "unreadable: " + (st.strerror or str(st))}
                elif stat.S_ISDIR(st.st_mode):
                        m[rel] = {"type": "d", "mode": stat.S_IMODE(st.st_mode), "uid": st.st_uid, "gid": st.st_gid}
                elif stat.S_ISLNK(st.st_mode):
                        m[rel] = {"type": "l", "target": os.readlink(p)}
                elif stat.S_ISREG(st.st_mode):
                        try:
                                with open(p, "rb") as f:
                                        h = hashlib.sha256(f.read()).hexdigest()
                        except OSError as e:
                                h = "unreadable: " + (e.strerror or str(e))
                        m[rel] = {"type": "f", "mode": stat.S_IMODE(st.st_mode), "uid": st.st_uid, "gid": st.st_gid,
                                  "size": st.st_size, "sha256": h, "nlink": st.st_nlink,
                                  "group": min(ino_paths[st.st_ino]), "mtime_ns": st.st_mtime_ns}
                else:
                        m[rel] = {"type": "?"}
        return m


def compare(expect, actual):
        """Differences between the expected manifest and a scan; one line per lost change."""
        diffs = []
        for rel in sorted(expect):
                e = expect[rel]
                a = actual.get(rel)
                if a is None:
                        diffs.append(f"missing: {rel!r} ({e['type']})")
                        continue
                bad = [k for k in e if k in a and e[k] != a[k] or k not in a]
                if e["type"] != a["type"]:
                        bad = ["type"]
                if bad:
                        diffs.append(f"differs: {rel!r}: " + ", ".join(f"{k} {e.get(k)!r} != {a.get(k)!r}" for k in bad))
        for rel in sorted(set(actual) - set(expect)):
                diffs.append(f"unexpected: {rel!r} ({actual[rel]['type']})")
        return diffs


def rand_data(rng, small=False):
        if small:
                n = rng.randint(1, 4096)
        else:
                r = rng.random()
                n = rng.randint(0, 8192) if r < 0.6 else rng.randint(8192, 65536) if r < 0.9 else rng.randint(65536, 262144)
        return rng.randbytes(n)


# ---- operations: each changes the tree and the model identically; returns False if not applicable --
def op_new(m, rng):
        rel = m.new_name(rng, "n")
        data = rand_data(rng)
        with open(m.p(rel), "wb") as f:
                f.write(data)
        m.files[rel] = Obj(data, 0o644, 0, 0)
        return True


def op_append(m, rng, small=False):
        if not m.files:
                return False
        rel = rng.choice(sorted(m.files))
        data = rand_data(rng, small)
        with open(m.p(rel), "ab") as f:
                f.write(data)
        m.files[rel].data += data
        m.files[rel].mtime_ns = None
        return True


def op_overwrite(m, rng, small=False):
        cand = sorted(r for r, o in m.files.items() if o.data)
        if not cand:
                return False
        rel = rng.choice(cand)
        o = m.files[rel]
        off = rng.randrange(len(o.data))
        data = rand_data(rng, small)
        with open(m.p(rel), "r+b") as f:
                f.seek(off)
                f.write(data)
        end = off + len(data)
        if end > len(o.data):
                o.data.extend(b"\0" * (end - len(o.data)))
        o.data[off:end] = data
        o.mtime_ns = None
        return True


def op_rename_over(m, rng):
        if not m.files:
                return False
        dst = rng.choice(sorted(m.files))
        tmp = m.new_name(rng, ".tmp")
        data = rand_data(rng)
        with open(m.p(tmp), "wb") as f:
                f.write(data)
        os.rename(m.p(tmp), m.p(dst))
        m.files[dst] = Obj(data, 0o644, 0, 0)
        return True


def op_touch(m, rng):
        if not m.files:
                return False
        rel = rng.choice(sorted(m.files))
        t = rng.randint(1_000_000_000, 1_900_000_000) * 1_000_000_000 + rng.randrange(10**9)
        os.utime(m.p(rel), ns=(t, t))
        m.files[rel].mtime_ns = t
        return True


def op_chmod(m, rng):
        if m.files and rng.random() < 0.75:
                rel = rng.choice(sorted(m.files))
                mode = rng.choice(FILE_MODES)
                os.chmod(m.p(rel), mode)
                m.files[rel].mode = mode
        else:
                rel = rng.choice(sorted(m.dirs))
                mode = rng.choice(DIR_MODES)
                os.chmod(m.p(rel), mode)
                m.dirs[rel] = (mode,) + m.dirs[rel][1:]
        return True


def op_chown(m, rng):
        uid, gid = rng.randint(0, 70000), rng.randint(0, 70000)
        if m.files and rng.random() < 0.75:
                rel = rng.choice(sorted(m.files))
                os.chown(m.p(rel), uid, gid)
                o = m.files[rel]
                o.uid, o.gid = uid, gid
        else:
                rel = rng.choice(sorted(m.dirs))
                os.chown(m.p(rel), uid, gid)
                m.dirs[rel] = (m.dirs[rel][0], uid, gid)
        return True


def op_mkdir(m, rng):
        if len(m.dirs) > 40:
                return False
        rel = m.new_name(rng, "d")
        mode = rng.choice(DIR_MODES)
        os.mkdir(m.p(rel))
        os.chmod(m.p(rel), mode)
        m.dirs[rel] = (mode, 0, 0)
        return True


def op_rmdir(m, rng):
        e = m.empty_dirs()
        if not e:
                return False
        rel = rng.choice(e)
        os.rmdir(m.p(rel))
        del m.dirs[rel]
        return True


def op_rename(m, rng):
        kind = rng.random()
        if kind < 0.6 and m.files:
                src = rng.choice(sorted(m.files))
                dst = m.new_name(rng, "r")
                os.rename(m.p(src), m.p(dst))
                m.files[dst] = m.files.pop(src)
        elif kind < 0.8 and m.links:
                src = rng.choice(sorted(m.links))
                dst = m.new_name(rng, "r")
                os.rename(m.p(src), m.p(dst))
                m.links[dst] = m.links.pop(src)
        else:
                cand = sorted(d for d in m.dirs if d)
                if not cand:
                        return False
                src = rng.choice(cand)
                dst = m.new_name(rng, "rd")
                if dst == src or dst.startswith(src + "/"):
                        return False
                os.rename(m.p(src), m.p(dst))
                pre = src + "/"
                for table in (m.files, m.links, m.dirs):
                        for k in sorted(table):
                                if k == src or k.startswith(pre):
                                        table[dst + k[len(src):]] = table.pop(k)
        return True


def op_unlink(m, rng):
        if m.links and rng.random() < 0.25:
                rel = rng.choice(sorted(m.links))
                os.unlink(m.p(rel))
                del m.links[rel]
                return True
        if not m.files:
                return False
        rel = rng.choice(sorted(m.files))
        os.unlink(m.p(rel))
        del m.files[rel]
        return True


def op_link(m, rng):
        if not m.files:
                return False
        src = rng.choice(sorted(m.files))
        dst = m.new_name(rng, "h")
        os.link(m.p(src), m.p(dst))
        m.files[dst] = m.files[src]
        return True


def op_symlink(m, rng):
        rel = m.new_name(rng, "s")
        target = rng.choice(["../x", "target-%d" % rng.randrange(10**6), "/nonexistent/" + "y" * rng.randint(1, 200)])
        os.symlink(target, m.p(rel))
        m.links[rel] = target
        return True


def op_truncate(m, rng):
        if not m.files:
                return False
        rel = rng.choice(sorted(m.files))
        o = m.files[rel]
        n = rng.randint(0, len(o.data) + 65536) if rng.random() < 0.5 else rng.randint(0, len(o.data))
        os.truncate(m.p(rel), n)
        if n < len(o.data):
                del o.data[n:]
        else:
                o.data.extend(b"\0" * (n - len(o.data)))
        o.mtime_ns = None
        return True


def op_mmap(m, rng, small=False):
        cand = sorted(r for r, o in m.files.items() if o.data)
        if not cand:
                return False
        rel = rng.choice(cand)
        o = m.files[rel]
        off = rng.randrange(len(o.data))
        n = min(len(o.data) - off, rng.randint(1, 512 if small else 20000))
        data = rng.randbytes(n)
        with open(m.p(rel), "r+b") as f:
                mm = mmap.mmap(f.fileno(), 0)
                mm[off:off + n] = data          # no msync: only the page cache has it
                mm.close()
        o.data[off:off + n] = data
        o.mtime_ns = None
        return True


BULK = [(op_new, 12), (op_append, 8), (op_overwrite, 8), (op_rename_over, 5), (op_touch, 6), (op_chmod, 5),
        (op_chown, 4), (op_mkdir, 4), (op_rmdir, 3), (op_rename, 6), (op_unlink, 6), (op_link, 4),
        (op_symlink, 4), (op_truncate, 5), (op_mmap, 6)]
LATE = [(op_touch, 3), (op_chmod, 3), (op_chown, 2), (op_rename, 3), (op_unlink, 2), (op_link, 2),
        (op_symlink, 2), (op_mkdir, 1), (op_rmdir, 1), (op_truncate, 1),
        (lambda m, r: op_append(m, r, True), 2), (lambda m, r: op_mmap(m, r, True), 2),
        (lambda m, r: op_overwrite(m, r, True), 1)]


LATE_META = [(op_touch, 3), (op_chmod, 3), (op_chown, 2), (op_rename, 3), (op_unlink, 2), (op_link, 2),
             (op_symlink, 2), (op_mkdir, 1), (op_rmdir, 1), (op_truncate, 1)]


def apply_ops(m, rng, n, table):
        ops = [o for o, _ in table]
        weights = [w for _, w in table]
        done = 0
        tries = 0
        while done < n and tries < n * 20:
                tries += 1
                op = rng.choices(ops, weights)[0]
                if len(m.files) > MAX_FILES and op in (op_new, op_link, op_symlink):
                        op = op_unlink
                if op(m, rng):
                        done += 1
        return done


def parse_pairs(args):
        pairs = []
        for a in args:
                d, _, man = a.partition("=")
                if not man:
                        raise SystemExit(f"expected DIR=MANIFEST, got {a!r}")
                pairs.append((d, man))
        return pairs


def write_json(path, obj):
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
                json.dump(obj, f, sort_keys=True)
        os.rename(tmp, path)


def main(argv):
        if len(argv) < 2:
                raise SystemExit(__doc__)
        cmd = argv[1]
        if cmd == "gen":
                seed, nops, nlate, rest, late_table = None, 40, 6, [], LATE
                it = iter(argv[2:])
                for a in it:
                        if a == "--seed":
                                seed = int(next(it))
                        elif a == "--ops":
                                nops = int(next(it))
                        elif a == "--late":
                                nlate = int(next(it))
                        elif a == "--meta":
                                late_table = LATE_META
                        else:
                                rest.append(a)
                if seed is None:
                        raise SystemExit("--seed is required")
                pairs = parse_pairs(rest)
                models, rngs, counts = [], [], []
                for i, (d, _) in enumerate(pairs):
                        m = Model(d)
                        m.load()
                        rng = random.Random(seed * 1009 + i)
                        counts.append(apply_ops(m, rng, nops, BULK))
                        diffs = compare(m.manifest(), scan_manifest(d))
                        if diffs:
                                print(f"workload: model and tree disagree in {d} (seed {seed}):", *diffs[:20], sep="\n  ")
                                return 2
                        models.append(m)
                        rngs.append(rng)
                # the late changes, on every dir, then the manifests: the caller runs right after
                for i, m in enumerate(models):
                        counts[i] += apply_ops(m, rngs[i], nlate, late_table)
                last_change_ms = time.time_ns() // 1_000_000
                for i, (d, man) in enumerate(pairs):
                        mf = models[i].manifest()
                        write_json(man, mf)
                        print(f"{d}: changes={counts[i]} entries={len(mf)}")
                print(f"last_change_ms={last_change_ms}")
                return 0
        if cmd == "snap":
                for d, man in parse_pairs(argv[2:]):
                        mf = scan_manifest(d)
                        for e in mf.values():
                                e.pop("mtime_ns", None)
                        write_json(man, mf)
                        print(f"{d}: changes=0 entries={len(mf)}")
                return 0
        if cmd == "check":
                d, man = argv[2], argv[3]
                with open(man) as f:
                        expect = json.load(f)
                diffs = compare(expect, scan_manifest(d))
                for line in diffs[:30]:
                        print("  " + line)
                if len(diffs) > 30:
                        print(f"  ... {len(diffs) - 30} more")
                print(f"losses={len(diffs)} entries={len(expect)}")
                return 1 if diffs else 0
        raise SystemExit(f"unknown command {cmd!r}")


if __name__ == "__main__":
        sys.exit(main(sys.argv))

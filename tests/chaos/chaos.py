#!/usr/bin/env python3
"""Helpers of scripts/chaos.sh (python3 standard library only).

  chaos.py zk HOSTS [--digest U:P] get|set|create|delete|ls|rmr|acl PATH [VALUE]
      One ZooKeeper request through a minimal client of the wire protocol (no JVM start per
      call, unlike zkCli). VALUE may start with @ to read a file or with hex: for raw bytes.
      Prints the value (get), the children one per line (ls); exits 3 on NoAuth, 4 on NoNode,
      2 on any other error, printing the error.
  chaos.py converged HOSTS [--digest U:P] NS JOB ITEMS ID... [--timeout S]
      Polls (every 0.2 s, at most S seconds) until the registry shows exactly the instances ID
      registered, a leader among them, no resharding pending, and every item 0..ITEMS-1 owned
      by one of them. Prints the seconds it took, or the last state seen and exits 1.
  chaos.py proxy LISTEN_PORT TARGET_HOST:PORT PIDFILE
      A TCP proxy. SIGUSR1: cut (close every connection, then accept and close at once, as a
      ZooKeeper ensemble without quorum does); SIGUSR2: heal.
  chaos.py freeze [--hook ARM] PID PERIOD OFFSET_MS HOLD_S [NOT_BEFORE]
      Sends SIGSTOP to PID at OFFSET_MS (may be negative) from the first fire time F (a
      multiple of PERIOD seconds) that leaves at least 0.15 s to get ready and whose stop
      comes at or after NOT_BEFORE (epoch seconds), the last 20 ms spun for precision;
      SIGCONT HOLD_S seconds after the stop. Prints "F STOP CONT ACHIEVED_MS" (epoch seconds;
      the stop's time taken right after the kill returned, as an offset from F). With
      --hook, the victim's own item script stops it (scripts/chaos.sh, item.sh): ARM is
      created 0.5 s before F (OFFSET_MS is then 0) and removed at the stop; STOP and CONT
      are 0 when no item claimed it within a period.
  chaos.py analyze META.json
      Checks the invariants from the items' start and end records (see docs/testing.md).
"""
import json
import os
import re
import select
import signal
import socket
import struct
import sys
import threading
import time

# --------------------------------------------------------------------------- ZooKeeper

ERRORS = {-101: "NoNode", -102: "NoAuth", -110: "NodeExists", -111: "NotEmpty",
          -103: "BadVersion", -108: "NoChildrenForEphemerals", -114: "InvalidACL",
          -115: "AuthFailed", -112: "SessionExpired", -4: "ConnectionLoss"}


class ZkError(Exception):
    def __init__(self, code, path):
        super().__init__(f"{ERRORS.get(code, code)} ({code}) on {path}")
        self.code = code


def _s(b):
    if b is None:
        return struct.pack(">i", -1)
    if isinstance(b, str):
        b = b.encode()
    return struct.pack(">i", len(b)) + b


class Reader:
    def __init__(self, data):
        self.d, self.p = data, 0

    def int(self):
        v = struct.unpack_from(">i", self.d, self.p)[0]
        self.p += 4
        return v

    def long(self):
        v = struct.unpack_from(">q", self.d, self.p)[0]
        self.p += 8
        return v

    def buf(self):
        n = self.int()
        if n < 0:
            return None
        v = self.d[self.p:self.p + n]
        self.p += n
        return v


class Zk:
    """A synchronous client: one request at a time, no watches."""

    def __init__(self, hosts, digest=None, timeout_ms=10000):
        last = None
        for hp in hosts.split(","):
            host, port = hp.rsplit(":", 1)
            try:
                self.sock = socket.create_connection((host, int(port)), timeout=5)
                break
            except OSError as e:
                last = e
        else:
            raise last
        self.xid = 0
        req = struct.pack(">iqiq", 0, 0, timeout_ms, 0) + _s(b"\0" * 16) + b"\0"
        self._send(req)
        r = Reader(self._recv())
        r.int()
        if r.int() <= 0:
            raise ZkError(-112, "connect")
        if digest:
            self._send(struct.pack(">ii", -4, 100) + struct.pack(">i", 0) + _s("digest") +
                       _s(digest))
            r = Reader(self._recv())
            xid, _, err = r.int(), r.long(), r.int()
            if err:
                raise ZkError(err, "auth")
        self.digest = digest

    def _send(self, payload):
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)

    def _recvn(self, n):
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ZkError(-4, "recv")
            out += chunk
        return out

    def _recv(self):
        n = struct.unpack(">i", self._recvn(4))[0]
        return self._recvn(n)

    def call(self, op, body, path):
        self.xid += 1
        self._send(struct.pack(">ii", self.xid, op) + body)
        while True:
            r = Reader(self._recv())
            xid, _, err = r.int(), r.long(), r.int()
            if xid == self.xid:
                break
        if err:
            raise ZkError(err, path)
        return r

    def get(self, path):
        return self.call(4, _s(path) + b"\0", path).buf()

    def set(self, path, data):
        self.call(5, _s(path) + _s(data) + struct.pack(">i", -1), path)

    def create(self, path, data, ephemeral=False):
        if self.digest:  # creator-all, as the instances do
            acl = struct.pack(">ii", 1, 31) + _s("auth") + _s("")
        else:  # world:anyone all
            acl = struct.pack(">ii", 1, 31) + _s("world") + _s("anyone")
        self.call(1, _s(path) + _s(data) + acl + struct.pack(">i", 1 if ephemeral else 0), path)

    def create_parents(self, path, data):
        parts = path.strip("/").split("/")
        for i in range(1, len(parts)):
            try:
                self.create("/" + "/".join(parts[:i]), b"")
            except ZkError as e:
                if e.code != -110:
                    raise
        self.create(path, data)

    def put(self, path, data):
        """Set, or create with parents. An instance may create the node between the two (a
        running mark at a fire time): then it is set after all."""
        for _ in range(5):
            try:
                self.set(path, data)
                return
            except ZkError as e:
                if e.code != -101:
                    raise
            try:
                self.create_parents(path, data)
                return
            except ZkError as e:
                if e.code != -110:
                    raise
        raise ZkError(-110, path)

    def delete(self, path):
        self.call(2, _s(path) + struct.pack(">i", -1), path)

    def children(self, path):
        r = self.call(8, _s(path) + b"\0", path)
        return sorted(r.buf().decode() for _ in range(r.int()))

    def exists(self, path):
        try:
            self.call(3, _s(path) + b"\0", path)
            return True
        except ZkError as e:
            if e.code == -101:
                return False
            raise

    def rmr(self, path):
        try:
            for c in self.children(path):
                self.rmr(path.rstrip("/") + "/" + c)
            self.delete(path)
        except ZkError as e:
            if e.code != -101:
                raise

    def acl(self, path):
        r = self.call(6, _s(path), path)
        out = []
        for _ in range(r.int()):
            perms = r.int()
            out.append(f"{r.buf().decode()}:{r.buf().decode()}:{perms}")
        return out

    def close(self):
        try:
            self.xid += 1
            self._send(struct.pack(">ii", self.xid, -11))
            self._recv()
        except Exception:
            pass
        self.sock.close()


def value_arg(v):
    if v.startswith("@"):
        with open(v[1:], "rb") as f:
            return f.read()
    if v.startswith("hex:"):
        return bytes.fromhex(v[4:])
    return v.encode()


def cmd_zk(args):
    digest = None
    if args[0] == "--digest":
        digest = args[1]
        args = args[2:]
    hosts, op, path = args[0], args[1], args[2]
    try:
        zk = Zk(hosts, digest)
        if op == "get":
            v = zk.get(path)
            sys.stdout.write((v or b"").decode("utf-8", "replace") + "\n")
        elif op == "set":
            zk.set(path, value_arg(args[3]))
        elif op == "put":
            zk.put(path, value_arg(args[3]))
        elif op == "create":
            zk.create_parents(path, value_arg(args[3]) if len(args) > 3 else b"")
        elif op == "delete":
            zk.delete(path)
        elif op == "rmr":
            zk.rmr(path)
        elif op == "ls":
            for c in zk.children(path):
                print(c)
        elif op == "exists":
            return 0 if zk.exists(path) else 4
        elif op == "acl":
            print("\n".join(zk.acl(path)))
        else:
            print("unknown op " + op, file=sys.stderr)
            return 2
        zk.close()
        return 0
    except ZkError as e:
        print(str(e))
        return {-102: 3, -101: 4}.get(e.code, 2)
    except OSError as e:
        print(f"connection: {e}")
        return 2


def registry_state(zk, ns, job, items):
    base = f"/{ns}/{job}"
    st = {"instances": [], "leader": None, "necessary": False, "owners": {}}
    try:
        st["instances"] = zk.children(base + "/instances")
    except ZkError:
        pass
    try:
        st["leader"] = zk.get(base + "/leader/election/instance").decode("utf-8", "replace")
    except ZkError:
        pass
    st["necessary"] = zk.exists(base + "/leader/sharding/necessary")
    for i in range(items):
        try:
            st["owners"][i] = zk.get(f"{base}/sharding/{i}/instance").decode("utf-8", "replace")
        except ZkError:
            st["owners"][i] = None
    return st


def cmd_converged(args):
    digest = None
    if args[0] == "--digest":
        digest = args[1]
        args = args[2:]
    timeout = 30.0
    if "--timeout" in args:
        k = args.index("--timeout")
        timeout = float(args[k + 1])
        args = args[:k] + args[k + 2:]
    hosts, ns, job, items, ids = args[0], args[1], args[2], int(args[3]), set(args[4:])
    t0 = time.monotonic()
    st = None
    while True:
        try:
            zk = Zk(hosts, digest)
            try:
                st = registry_state(zk, ns, job, items)
            finally:
                zk.close()
            ok = (set(st["instances"]) == ids and st["leader"] in ids and not st["necessary"]
                  and all(o in ids for o in st["owners"].values()))
            if ok:
                print(f"{time.monotonic() - t0:.1f}")
                return 0
        except (ZkError, OSError) as e:
            st = {"error": str(e)}
        if time.monotonic() - t0 > timeout:
            print(f"not converged after {timeout:.0f} s: {json.dumps(st, sort_keys=True)}")
            return 1
        time.sleep(0.2)


# --------------------------------------------------------------------------- proxy

def cmd_proxy(args):
    listen_port, target, pidfile = int(args[0]), args[1], args[2]
    th, tp = target.rsplit(":", 1)
    state = {"cut": False, "conns": set()}
    lock = threading.Lock()

    def cut(*_):
        with lock:
            state["cut"] = True
            for s in list(state["conns"]):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            state["conns"].clear()

    def heal(*_):
        with lock:
            state["cut"] = False

    signal.signal(signal.SIGUSR1, cut)
    signal.signal(signal.SIGUSR2, heal)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        srv.bind(("127.0.0.1", listen_port))
    except OSError as e:
        print(f"proxy: cannot bind {listen_port}: {e}", file=sys.stderr)
        return 75
    srv.listen(64)
    with open(pidfile, "w") as f:
        f.write(str(os.getpid()))

    def pump(a, b):
        try:
            while True:
                r, _, _ = select.select([a, b], [], [], 1.0)
                for s in r:
                    data = s.recv(65536)
                    if not data:
                        raise OSError("closed")
                    (b if s is a else a).sendall(data)
        except (OSError, ValueError):
            pass
        finally:
            with lock:
                state["conns"].discard(a)
                state["conns"].discard(b)
            for s in (a, b):
                try:
                    s.close()
                except OSError:
                    pass

    while True:
        try:
            c, _ = srv.accept()
        except InterruptedError:
            continue
        with lock:
            if state["cut"]:
                c.close()
                continue
        try:
            u = socket.create_connection((th, int(tp)), timeout=5)
        except OSError:
            c.close()
            continue
        with lock:
            state["conns"].update((c, u))
        threading.Thread(target=pump, args=(c, u), daemon=True).start()


# --------------------------------------------------------------------------- freeze

def cmd_freeze(args):
    hook = None
    if args[0] == "--hook":
        hook, args = args[1], args[2:]
    pid, period, off = int(args[0]), float(args[1]), float(args[2]) / 1000
    hold = float(args[3])
    not_before = float(args[4]) if len(args) > 4 else 0.0
    now = time.time()
    fire = (int(now / period) + 1) * period
    ready = 0.6 if hook else 0.15  # a hook is armed half a second before its fire
    while fire + off < max(now + ready, not_before):
        fire += period
    if hook:
        # The victim's first item script of that fire stops it (item.sh); its claim file's
        # time is the stop's. Bounded: a victim that starts no item by a period after the
        # fire is not stopped (reported as a stop time of 0).
        taken = hook + ".taken"
        time.sleep(max(0.0, fire - 0.5 - time.time()))
        open(hook, "w").close()
        claimed = False
        while time.time() < fire + period and not claimed:
            claimed = os.path.exists(taken)
            time.sleep(0.001)
        os.unlink(hook)
        if not claimed:
            print(f"{fire:.6f} 0 0 0")
            return 0
        # The script writes the time once its kill has returned (bounded: 2 s).
        stop = 0.0
        for _ in range(2000):
            with open(taken) as f:
                text = f.read().strip()
            if text.isdigit() and len(text) >= 19:  # epoch ns, written whole
                stop = int(text) / 1e9
                break
            time.sleep(0.001)
        if not stop:
            stop = time.time()
    else:
        target = fire + off
        # Sleep to 20 ms before, then spin: a wake-up on a loaded machine comes late.
        time.sleep(max(0.0, target - 0.02 - time.time()))
        while time.time() < target:
            pass
        os.kill(pid, signal.SIGSTOP)
        stop = time.time()
    try:
        time.sleep(max(0.0, stop + hold - time.time()))
    finally:
        os.kill(pid, signal.SIGCONT)
    cont = time.time()
    if hook:
        os.unlink(hook + ".taken")  # now: a script that saw ARM before its removal is done
    print(f"{fire:.6f} {stop:.6f} {cont:.6f} {(stop - fire) * 1000:.2f}")
    return 0


# --------------------------------------------------------------------------- analysis

def load_runs(path):
    """Runs from the item scripts' records: S|E JOB ITEM INSTANCE_PID RUN_PID EPOCH_NS [TOKEN],
    in the order they were appended. TOKEN is the run's ELASTICJOB_FENCING_TOKEN (`-` when
    unset; the soak's program writes none; 0 means no token too). Process ids are reused (a
    soak starts 100 scripts a second), so an end belongs to the latest start of its
    (instance, run pid)."""
    runs = []
    open_runs = {}
    with open(path, errors="replace") as f:
        for line in f:
            p = line.split()
            if len(p) not in (6, 7) or p[0] not in ("S", "E"):
                continue
            kind, job, item, inst, run, ns = p[:6]
            try:
                key = (int(inst), run, job, int(item))
                t = int(ns) / 1e9
            except ValueError:
                continue
            token = None
            if len(p) == 7 and p[6].isdigit() and int(p[6]) > 0:
                token = int(p[6])
            if kind == "S":
                r = {"job": job, "item": int(item), "inst": int(inst), "run": run, "start": t,
                     "end": None, "token": token}
                runs.append(r)
                open_runs[key] = r
            elif key in open_runs:
                open_runs.pop(key)["end"] = t
    return runs


def fmt_t(t, t0):
    return "open" if t is None else f"{t - t0:+.3f}s"


def cmd_analyze(args):
    with open(args[0]) as f:
        m = json.load(f)
    t0 = m["t0"]
    runs = load_runs(m["events"])
    ends = {int(k): v for k, v in m.get("killed", {}).items()}  # pid -> time its group died
    violations = []
    notes = []
    # Instances stopped by SIGTERM: their scripts got SIGTERM (and SIGKILL after the grace)
    # and record no end; they had ended when the instance exited.
    exited = {int(k): v for k, v in m.get("exited", {}).items()}
    # Runs an instance cancelled when it learnt that its session had expired (fencing: their
    # process groups killed, so no end record): they ended when its log says.
    fenced = re.compile(r"job=(\S+) instance=\S+@-@(\d+): the registry session expired while "
                        r"items ([\d,]+) ran here: .* at_ms=(\d+)")
    for log in m.get("logs", []):
        try:
            with open(log, errors="replace") as f:
                lines = f.readlines()
        except OSError:
            continue
        for line in lines:
            g = fenced.search(line)
            if not g:
                continue
            job, inst, t = g.group(1), int(g.group(2)), int(g.group(4)) / 1000
            for item in (int(i) for i in g.group(3).split(",")):
                for r in runs:
                    if (r["job"], r["item"], r["inst"]) == (job, item, inst) and \
                            r["end"] is None and r["start"] <= t:
                        r["end"] = t
                        notes.append(f"{job} item {item}: the run of pid {inst} started at "
                                     f"{fmt_t(r['start'], t0)} was fenced (killed) at "
                                     f"{fmt_t(t, t0)}")
    # Failover runs: an instance logs `took over item N` just before it runs N for a departed
    # instance. Such a run re-runs the departed one's run (also one whose end could not be
    # recorded before its session expired), not the fire time it happens to start near: it is
    # not a duplicate of that fire's run (overlaps are still checked, like every run's).
    took = re.compile(r"^\+?(-?[\d.]+)s .*job '(\S+)' instance \S+@-@(\d+): took over item (\d+)")
    takeovers = []
    for log in m.get("logs", []):
        try:
            with open(log, errors="replace") as f:
                for line in f:
                    g = took.search(line)
                    if g:
                        takeovers.append((t0 + float(g.group(1)), g.group(2), int(g.group(3)),
                                          int(g.group(4))))
        except OSError:
            continue
    for r in runs:
        r["failover"] = any((job, inst, item) == (r["job"], r["inst"], r["item"]) and
                            0 <= r["start"] - t <= 3 for t, job, inst, item in takeovers)
    # 1. No two overlapping runs of one item. A run without an end ends when its instance's
    #    process group was killed (the suite kills it) or the instance exited, else at the
    #    analysis time.
    by_item = {}
    for r in runs:
        end = r["end"]
        if end is None:
            end = ends.get(r["inst"], exited.get(r["inst"], m["t_end"]))
        r["until"] = end
        by_item.setdefault((r["job"], r["item"]), []).append(r)
    for (job, item), rs in sorted(by_item.items()):
        rs.sort(key=lambda r: r["start"])
        for a_i, a in enumerate(rs):
            for b in rs[a_i + 1:]:
                if b["start"] >= a["until"]:
                    break
                violations.append(
                    f"OVERLAP {job} item {item}: instance pid {a['inst']} ran "
                    f"[{fmt_t(a['start'], t0)}, {fmt_t(a['end'], t0)}] (run {a['run']}) and "
                    f"instance pid {b['inst']} ran [{fmt_t(b['start'], t0)}, "
                    f"{fmt_t(b['end'], t0)}] (run {b['run']})")
    # 1b. Fencing tokens (ELASTICJOB_FENCING_TOKEN: the zxid of the transaction that created
    #     the run's running mark, so one per claim of an item, larger for every later claim).
    #     Per item, in the order of run starts: a run starting after a run of another instance
    #     holds a strictly larger token (equal tokens are one claim, and a claim is one
    #     instance's); after a run of the same instance, a token at least as large. A stale run
    #     (its instance paused, its mark gone with its session, the item claimed again and run
    #     elsewhere) that starts anyway shows as a smaller token after a larger one. Where the
    #     records carry tokens, every run must carry one (monitorExecution is on in the suite).
    token_runs = [r for r in runs if r["token"] is not None]
    if token_runs:
        for job in sorted({r["job"] for r in runs}):
            bare = [r for r in runs if r["job"] == job and r["token"] is None]
            if bare and any(r["job"] == job for r in token_runs):
                violations.append(
                    f"NO TOKEN {job}: {len(bare)} run(s) without a fencing token, e.g. item "
                    f"{bare[0]['item']} on pid {bare[0]['inst']} at {fmt_t(bare[0]['start'], t0)}")
        stale = []
        for (job, item), rs in sorted(by_item.items()):
            best = None  # the run with the largest token so far
            for r in sorted((r for r in rs if r["token"] is not None), key=lambda r: r["start"]):
                if best is not None and (r["token"] < best["token"] or (
                        r["token"] == best["token"] and r["inst"] != best["inst"])):
                    what = "SHARED" if r["token"] == best["token"] else "STALE"
                    stale.append(
                        f"{what} TOKEN {job} item {item}: pid {r['inst']} started at "
                        f"{fmt_t(r['start'], t0)} with token {r['token']}, after pid "
                        f"{best['inst']} started at {fmt_t(best['start'], t0)} with "
                        f"{best['token']}")
                if best is None or r["token"] > best["token"]:
                    best = r
        violations.extend(stale[:20])
        notes.append(f"fencing tokens: {len(token_runs)} of {len(runs)} runs carry one; "
                     f"{len({(r['job'], r['item'], r['token']) for r in token_runs})} distinct "
                     f"(item, token) claims")
    elif runs:
        notes.append("no fencing token recorded (a binary without them, or monitorExecution "
                     "off): token checks skipped")
    # Freezes of a scenario that stops an instance around a fire (sigstop_around_fire): which
    #     items the frozen instance started from half a second before that fire to the stop's
    #     end, and between the resume and the next fire time (those belong to a run prepared
    #     or started before the stop, whose session expired meanwhile: stale).
    period = m["period"]
    for pid, fire, stop, cont, off in m.get("freezes", []):
        after_fire = (int(cont / period) + 1) * period
        before = sorted(r["item"] for r in runs
                        if r["inst"] == pid and fire - 0.5 <= r["start"] < cont)
        after = [r for r in runs if r["inst"] == pid and cont <= r["start"] < after_fire]
        notes.append(
            f"freeze of pid {pid} at the fire {fmt_t(fire, t0)} "
            + ("by its first item's script" if off == "hook" else f"{float(off):+.0f} ms")
            + f" (achieved {(stop - fire) * 1000:+.1f} ms), resumed at {fmt_t(cont, t0)}: items started "
            f"before the resume {before or 'none'}, between the resume and the next fire "
            + (", ".join(f"{r['item']} at {(r['start'] - cont) * 1000:+.0f} ms" +
                         (f" (token {r['token']})" if r["token"] else "") for r in after)
               or "none"))
    # 2. Every trigger outside the fault windows ran each item (a start within one period of
    #    the fire time), and no item started twice for one fire time unless its first run was
    #    cut short by a kill of its instance.
    period = m["period"]
    windows = m.get("windows", [])
    first_fire = m["checks_from"]
    last_fire = m["checks_to"]
    missing = []
    dups = []
    slack = m.get("slack", period)  # how late a start may be and still serve its fire time
    early = min(1.0, period / 2)  # how early a re-run may be and still serve it
    for job, items in m["jobs"].items():
        fires = []
        f = (int(first_fire / period) + 1) * period
        while f + period <= last_fire:
            fires.append(f)
            f += period
        for item in range(items):
            rs = sorted(by_item.get((job, item), []), key=lambda r: r["start"])
            # A fire is served by a start within one period (the slack) after it, or by a
            # re-run (a failover or misfire run) up to 1 s (at most half a period) before it;
            # each start serves one fire.
            used = set()
            for f in fires:
                in_window = any(w[0] - period <= f <= w[1] for w in windows)
                served = None if in_window else next(
                    (k for k, r in enumerate(rs)
                     if k not in used and f - early <= r["start"] < f + slack - 0.05), None)
                if served is None and not in_window:
                    # A run still going at the fire time (started within a period before it)
                    # serves it too: the item was running then. A taken-over item stays off
                    # its owner's runs until its failover run ends (ElasticJob's
                    # getLocalTakeOffItems), so a fire during that run is consumed by it.
                    served = next((k for k, r in enumerate(rs)
                                   if k not in used and f - period <= r["start"] < f
                                   and r["until"] > f), None)
                if served is not None:
                    used.add(served)
                elif not in_window:
                    missing.append((job, item, f))
                same = [r for r in rs if f - 0.05 <= r["start"] < f + period - 0.05
                        and not r["failover"]]
                if len(same) > 1:
                    cut = [r for r in same[:-1] if r["end"] is None and r["inst"] in ends]
                    # One instance running an item again after its run (a misfire re-run)
                    # is allowed; overlapping runs are reported above.
                    rerun = len({r["inst"] for r in same}) == 1
                    if len(same) - len(cut) > 1 and not rerun:
                        dups.append(f"DUPLICATE {job} item {item} fire {fmt_t(f, t0)}: " + ", ".join(
                            f"pid {r['inst']} at {fmt_t(r['start'], t0)}" for r in same))
    if missing:
        by_fire = {}
        for job, item, f in missing:
            by_fire.setdefault(f, []).append(f"{job}/{item}")
        for f, what in sorted(by_fire.items())[:10]:
            violations.append(f"MISSED fire {fmt_t(f, t0)} (outside the fault windows): "
                              f"{' '.join(what[:12])}{' ...' if len(what) > 12 else ''}")
        if len(by_fire) > 10:
            violations.append(f"MISSED ... and {len(by_fire) - 10} more fire times")
    violations.extend(dups[:20])
    # 3. The items a killed instance was running ran again elsewhere (failover) within the bound.
    for pid, t_kill in ends.items():
        if not m.get("failover_check", True):
            break
        for r in runs:
            if r["inst"] != pid or r["start"] > t_kill or (r["end"] is not None and r["end"] <= t_kill):
                continue
            again = [x for x in by_item[(r["job"], r["item"])]
                     if x["inst"] != pid and t_kill < x["start"] <= t_kill + m["failover_bound"]]
            if again:
                notes.append(f"{r['job']} item {r['item']} of killed pid {pid} ran again on pid "
                             f"{again[0]['inst']} {again[0]['start'] - t_kill:.2f} s after the kill")
            else:
                violations.append(f"NOT FAILED OVER {r['job']} item {r['item']}: running on pid {pid} "
                                  f"when it was killed at {fmt_t(t_kill, t0)}, not run elsewhere "
                                  f"within {m['failover_bound']} s")
    # 4. Runs the killed instances' scripts made after the kill (orphans).
    for pid, t_kill in ends.items():
        late = [r for r in runs if r["inst"] == pid and r["end"] is not None and r["end"] > t_kill + 0.05]
        for r in late:
            violations.append(f"ORPHAN {r['job']} item {r['item']}: the script of killed pid {pid} "
                              f"ended at {fmt_t(r['end'], t0)}, after the kill at {fmt_t(t_kill, t0)}")
    # 5. Convergence: the first fire time after each window's end from which every fire ran
    #    every item, up to the next fault (the fires a later fault's window covers are that
    #    fault's: counted here, they made a quick convergence after restart 1 of 5 look like
    #    39 s, the time until the last restart); within the bound. A fault that starts
    #    before an earlier one's window ends (zk_restarts_repeated: a restart 0.1-0.2 s before
    #    the previous restart's reconnect grace was over) makes one window with it: there is
    #    no "after the first fault" to converge in, and its ticks are the second fault's.
    merged = []
    for w in sorted(windows):
        if merged and w[0] <= merged[-1][1]:
            notes.append(f"the fault at {fmt_t(w[0], t0)} began in the window ending at "
                         f"{fmt_t(merged[-1][1], t0)}: one window for both")
            merged[-1] = [merged[-1][0], max(merged[-1][1], w[1])]
        else:
            merged.append(list(w))
    for w in merged:
        f = (int(w[1] / period) + 1) * period
        later = [x[0] - period for x in merged if x[0] > w[1]]
        until = min(later + [last_fire])
        conv = None
        while f + period <= until:
            ok = all(any(f - 0.05 <= r["start"] < f + period - 0.05 for r in by_item.get((job, i), []))
                     for job, items in m["jobs"].items() for i in range(items))
            if ok and conv is None:
                conv = f
            elif not ok:
                conv = None
            f += period
        if conv is None and until < last_fire and f == (int(w[1] / period) + 1) * period:
            continue  # the next fault came before a whole tick (its checks cover it)
        if conv is None:
            violations.append(f"NOT CONVERGED after the fault ending at {fmt_t(w[1], t0)}: "
                              f"no complete tick from then to the end")
        else:
            notes.append(f"converged {conv - w[1]:.1f} s after the fault ended (every tick complete from then)")
            if conv - w[1] > m["converge_bound"] + period:
                violations.append(f"SLOW CONVERGENCE: {conv - w[1]:.1f} s after the fault ended "
                                  f"(bound {m['converge_bound']} s)")
    # 6. RSS and threads flat across repeated faults (or a soak): the last sample against the
    #    first one taken after the warm-up (the first fault, or a tenth of a soak).
    if m.get("flat"):
        samples = {}
        with open(m["proc"]) as f:
            for line in f:
                p = line.split()
                if len(p) == 4:
                    samples.setdefault(p[1], []).append((p[0], int(p[2]), int(p[3])))
        for inst, ss in sorted(samples.items()):
            if len(ss) < 3:
                continue
            base = ss[max(1, len(ss) // 10)]
            last = ss[-1]
            notes.append(f"instance {inst}: RSS {base[1] // 1024} -> {last[1] // 1024} MB, threads "
                         f"{base[2]} -> {last[2]} ({base[0]} -> {last[0]}; all: "
                         f"{' '.join(str(x[1] // 1024) for x in ss)} MB)")
            if last[1] > base[1] * 1.2 + 4096:
                violations.append(f"RSS GROWS instance {inst}: {base[1]} kB at {base[0]} -> "
                                  f"{last[1]} kB at {last[0]} (samples {[x[1] for x in ss]})")
            if last[2] > base[2] + 2:
                violations.append(f"THREADS GROW instance {inst}: {base[2]} at {base[0]} -> "
                                  f"{last[2]} at {last[0]}")
    # 7. Lateness of the starts after their fire times (soak): p50 / p99 / max per 10 minutes,
    #    the last window's p99 within twice the first's plus 5 ms.
    if m.get("flat") == 2 and runs:
        lat = sorted(((r["start"], r["start"] - int(r["start"] / period) * period) for r in runs
                      if r["start"] >= m["checks_from"]))
        wins = {}
        for st, l in lat:
            wins.setdefault(int((st - lat[0][0]) / 600), []).append(l * 1000)
        p99s = []
        for w, ls in sorted(wins.items()):
            ls.sort()
            p99 = ls[min(len(ls) - 1, int(len(ls) * 0.99))]
            p99s.append(p99)
            notes.append(f"lateness minute {w * 10}-{w * 10 + 10}: {len(ls)} starts, p50 "
                         f"{ls[len(ls) // 2]:.1f} ms, p99 {p99:.1f} ms, max {ls[-1]:.1f} ms")
        if len(p99s) > 1 and p99s[-1] > 2 * p99s[0] + 5:
            violations.append(f"LATENESS GROWS: p99 {p99s[0]:.1f} ms in the first 10 minutes, "
                              f"{p99s[-1]:.1f} ms in the last")
    print(f"  runs recorded: {len(runs)}")
    for n in notes:
        print("  note: " + n)
    for v in violations:
        print("  VIOLATION " + v)
    return 1 if violations else 0


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    cmd, args = sys.argv[1], sys.argv[2:]
    return {"zk": cmd_zk, "converged": cmd_converged, "proxy": cmd_proxy,
            "freeze": cmd_freeze, "analyze": cmd_analyze}[cmd](args)


if __name__ == "__main__":
    sys.exit(main())

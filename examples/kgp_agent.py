#!/usr/bin/env python3
"""A Kalah Game Protocol agent in plain Python, written from the KGP specification.

It is built the way the common Python KGP agents are: it connects to KGP_HOST:KGP_PORT,
announces itself with `set info:name`, asks for `mode freeplay`, and computes each `state`
in a child process (multiprocessing), which sends a `move` after each search depth and is
killed when the server sends `stop`. Run it under kalaha with

    kalaha tournament --engine cmd=python3 arg=examples/kgp_agent.py protocol=kgp ...

Standard library only.
"""

import multiprocessing as mp
import os
import re
import socket
import sys
import threading

COMMAND = re.compile(r"^\s*(?:(\d*)(?:@(\d+))?\s+)?([A-Za-z0-9]+)(?:\s+(.*?))?\s*$")
BOARD = re.compile(r"^<(\d+(?:,\d+)*)>$")


def sow(south, north, south_store, north_store, pit):
    """Plays `pit` (0-based) for south, the side to move in a KGP board. Returns the new
    rows and stores and whether south moves again. Standard rules: the opponent's store
    is skipped, a last seed in an empty own pit captures the opposite pit if it holds
    seeds, and the seeds left are swept to their owners when a row runs empty."""
    n = len(south)
    south, north = south[:], north[:]
    seeds, south[pit] = south[pit], 0
    side, pos, again = 0, pit + 1, False
    while seeds > 0:
        if pos == n:
            if side == 0:
                south_store += 1
                seeds -= 1
                again = seeds == 0
            side, pos = 1 - side, 0
            continue
        (south if side == 0 else north)[pos] += 1
        seeds -= 1
        pos += 1
    last = pos - 1
    if not again and side == 0 and south[last] == 1 and north[n - 1 - last] > 0:
        south_store += 1 + north[n - 1 - last]
        south[last] = north[n - 1 - last] = 0
    if sum(south) == 0 or sum(north) == 0:
        south_store += sum(south)
        north_store += sum(north)
        south, north = [0] * n, [0] * n
        again = False
    return south, north, south_store, north_store, again


def value(south, north, ss, ns, depth):
    """Negamax value for south (the side to move) of a board, `depth` turns deep."""
    moves = [p for p in range(len(south)) if south[p] > 0]
    if depth == 0 or not moves or sum(north) == 0:
        return ss - ns
    best = None
    for p in moves:
        s, n, s2, n2, again = sow(south, north, ss, ns, p)
        if again:
            v = value(s, n, s2, n2, depth - 1)
        else:
            v = -value(n, s, n2, s2, depth - 1)
        best = v if best is None else max(best, v)
    return best


def search(board, out):
    """Runs in a child process: a `move` after each depth, then `yield`, through the
    pipe `out`."""
    south, north, ss, ns = board
    moves = [p for p in range(len(south)) if south[p] > 0]
    for depth in range(1, 7):
        best, best_value = moves[0], None
        for p in moves:
            s, n, s2, n2, again = sow(south, north, ss, ns, p)
            if again:
                v = value(s, n, s2, n2, depth - 1)
            else:
                v = -value(n, s, n2, s2, depth - 1)
            if best_value is None or v > best_value:
                best, best_value = p, v
        out.send(("move", best + 1))
    out.send(("yield", None))


def main():
    host = os.environ.get("KGP_HOST", "127.0.0.1")
    port = int(os.environ.get("KGP_PORT", "2671"))
    sock = socket.create_connection((host, port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    lock = threading.Lock()
    next_id = [1]

    def send(text, ref=None):
        with lock:
            head = str(next_id[0]) + ("@%d" % ref if ref is not None else "")
            next_id[0] += 2
            sock.sendall(("%s %s\r\n" % (head, text)).encode())

    running = {}

    def forward(ref, pipe):
        """Sends what the child computing state `ref` finds, until it ends or is killed
        (a pipe of its own per child: killing one cannot block the others)."""
        try:
            while True:
                kind, pit = pipe.recv()
                if ref not in running:
                    return  # stopped meanwhile
                send("move %d" % pit if kind == "move" else "yield", ref)
        except (EOFError, OSError):
            return
        finally:
            pipe.close()
    reader = sock.makefile("r", encoding="utf-8", newline="\n")
    for line in reader:
        match = COMMAND.match(line)
        if not match:
            continue
        cid = int(match.group(1)) if match.group(1) else None
        ref = int(match.group(2)) if match.group(2) else None
        name, args = match.group(3), (match.group(4) or "").split()
        if name == "kgp":
            if not args or args[0] != "1":
                send('error "only kgp 1 is spoken"')
                return 1
            send('set "info:name" "py-kgp-agent"')
            send('set "info:authors" "the kalaha tests"')
            send('mode "freeplay"')
        elif name == "ping":
            send("pong", cid)
        elif name == "state" and cid is not None and args:
            cells = BOARD.match(args[0])
            if not cells:
                continue
            nums = [int(x) for x in cells.group(1).split(",")]
            n = nums[0]
            board = (nums[3:3 + n], nums[3 + n:3 + 2 * n], nums[1], nums[2])
            pipe, child_end = mp.Pipe(duplex=False)
            child = mp.Process(target=search, args=(board, child_end), daemon=True)
            running[cid] = child
            child.start()
            child_end.close()
            threading.Thread(target=forward, args=(cid, pipe), daemon=True).start()
        elif name == "stop" and ref in running:
            child = running.pop(ref)
            child.kill()
            child.join()
        elif name == "goodbye":
            break
    for child in running.values():
        child.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())

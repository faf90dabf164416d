#!/usr/bin/env python3
"""A complete Kalah engine for the kalaha referee, in plain Python 3 (see protocol.md).

It plays greedily: the legal pit that puts the most seeds in its store right away, with a
bonus for an extra turn (the option "extra_turn_bonus"). Copy it as a template: the loop
at the bottom is the whole protocol.
"""
import json
import sys

rules = {"pits": 6, "seeds": 4, "empty_capture": False, "sweep": "owner"}
extra_turn_bonus = 1


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def gain(own, opp, pit):
    """Seeds the mover's store gains by sowing `pit` (1-based), and whether it moves again."""
    p = len(own)
    ring = own + [0] + opp  # own pits, own store, opponent's pits (their store is skipped)
    i = pit - 1
    seeds, ring[i] = ring[i], 0
    while seeds:
        i = (i + 1) % len(ring)
        ring[i] += 1
        seeds -= 1
    if i == p:
        return ring[p], True
    if i < p and ring[i] == 1:  # the last seed landed in an empty own pit: a capture
        opposite = ring[2 * p - i]  # own pit i+1 faces the opponent's pit p-i
        if opposite > 0 or rules["empty_capture"]:
            return ring[p] + opposite + 1, False
    return ring[p], False


def choose(msg):
    """The best pit, and the store difference it leads to (what `info.score` reports)."""
    pos = msg["position"]
    me = pos["to_move"]
    other = "north" if me == "south" else "south"
    own, opp = pos[me]["pits"], pos[other]["pits"]
    best, best_value, best_diff = None, None, None
    for pit in msg["legal"]:
        seeds, extra = gain(own, opp, pit)
        value = seeds + (extra_turn_bonus if extra else 0)
        if best is None or value > best_value:
            best, best_value = pit, value
            # The expected final store difference for the mover, as far as one move sees.
            best_diff = pos[me]["store"] + seeds - pos[other]["store"]
    return best, best_diff


for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        send({"type": "log", "level": "warn", "message": "not JSON: " + line.strip()[:100]})
        continue
    kind = msg.get("type")
    if kind == "hello":
        send({"type": "hello", "protocol": 1, "name": "python-greedy", "version": "1.0",
              "author": "kalaha", "options": [{"name": "extra_turn_bonus", "type": "int",
                                               "default": 1, "min": 0, "max": 10}]})
    elif kind == "option":
        value = msg.get("value")
        if msg.get("name") == "extra_turn_bonus" and type(value) is int and 0 <= value <= 10:
            extra_turn_bonus = value
        else:
            send({"type": "log", "level": "warn", "message": "bad option: " + line.strip()[:100]})
    elif kind == "ping":
        send({"type": "pong", "id": msg["id"]})
    elif kind == "new_game":
        rules = msg["rules"]
    elif kind == "go":
        pit, score = choose(msg)
        send({"type": "info", "depth": 1, "score": score, "pv": [pit]})
        send({"type": "move", "pit": pit})
    elif kind == "quit":
        break
    # game_over and unknown message types need no answer.

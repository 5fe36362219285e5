"""Fair shares of a contended pool: when several clients want more than the Space has, each gets its share
instead of the first comer getting all (docs/space.md, "Fair shares").

A client is a signed-in user wherever they connect from, else its network address (service.budgets). A pool
has `capacity` places (requests running or waiting); with n clients holding places, a client's share is
capacity // n. A client below its share is admitted even when the pool is full (the others hold more than
theirs and give it back as their requests end), one at its share is refused at once: never queued in front of
others. Work-conserving: a lone client (a lecture hall behind one NAT) has the whole pool. The pool never holds
more than twice its capacity: every client's share, plus what the biggest held before the others came.

The order in which waiting work runs is the same idea in time: turns, each client's next request after every
other waiting client's (round_robin, service.fair.Turns)."""

import threading
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
RETRY_S = 5  # what a refused client is told to wait: about one long request of the others' (a 150-word /compare)


@dataclass(frozen=True)
class FairShare:
    capacity: int

    def share(self, held: Mapping[str, int], client: str) -> int:
        """`client`'s share of the pool when `held` (client -> places) is what every client holds now."""
        clients = sum(1 for c, n in held.items() if n > 0 and c != client) + 1
        return max(1, self.capacity // clients)

    def admits(self, held: Mapping[str, int], client: str) -> bool:
        """Whether one more place for `client` is within its share (and the pool within twice its capacity)."""
        return held.get(client, 0) < self.share(held, client) and sum(held.values()) < 2 * self.capacity


def round_robin(items: Iterable[T], client: Callable[[T], str], served: Mapping[str, int] | None = None) -> list[T]:
    """`items` in turns: every client's first before any client's second, each client's in their own order.
    `served`: places a client holds already (running), counted as turns it has had."""
    turns: Counter[str] = Counter(served or {})
    ranked = []
    for position, item in enumerate(items):
        who = client(item)
        ranked.append((turns[who], position, item))
        turns[who] += 1
    return [item for *_, item in sorted(ranked, key=lambda r: (r[0], r[1]))]


class Turns:
    """Who goes next among waiting clients, for one slot at a time: the waiting client served least recently, then
    its earliest ticket. Every change (a ticket added or removed, a turn given) chooses again, once, so waiters
    only compare themselves with `chosen`."""

    KEEP = 4096  # clients whose last turn is remembered; past it those not waiting are forgotten (they go first)

    def __init__(self) -> None:
        self.waiting: dict[Hashable, str] = {}  # ticket -> client, in arrival order
        self.last: dict[str, int] = {}  # client -> the turn it last had
        self.turn = 0
        self.chosen: Hashable | None = None

    def add(self, ticket: Hashable, client: str) -> None:
        self.waiting[ticket] = client
        self._choose()

    def remove(self, ticket: Hashable) -> None:
        self.waiting.pop(ticket, None)
        self._choose()

    def take(self, ticket: Hashable) -> None:
        """`ticket` has its turn: it leaves the waiting line and its client goes to the back of the round."""
        self.turn += 1
        self.last[self.waiting.pop(ticket)] = self.turn
        if len(self.last) > self.KEEP:
            self.last = {c: t for c, t in self.last.items() if c in self.waiting.values()}
        self._choose()

    def _choose(self) -> None:
        order = {ticket: n for n, ticket in enumerate(self.waiting)}
        self.chosen = min(self.waiting, key=lambda t: (self.last.get(self.waiting[t], 0), order[t]), default=None)


class Holdings:
    """Places held per client in one pool, thread-safe: what FairShare decides on."""

    def __init__(self, policy: FairShare):
        self.policy = policy
        self.held: Counter[str] = Counter()
        self.lock = threading.Lock()

    def take(self, client: str) -> bool:
        """One place for `client` if its share allows (release it with `give`); False: refused."""
        with self.lock:
            if not self.policy.admits(self.held, client):
                return False
            self.held[client] += 1
            return True

    def give(self, client: str) -> None:
        with self.lock:
            self.held[client] -= 1
            if self.held[client] <= 0:
                del self.held[client]

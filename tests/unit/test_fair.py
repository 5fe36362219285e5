"""service.fair: shares of a contended pool and turns between clients; web.runner's lanes take turns by them."""

import threading
import time
from collections import Counter

from service.fair import FairShare, Holdings, Turns, round_robin
from web.runner import Lanes


def test_a_lone_client_has_the_whole_pool_and_a_newcomer_its_share_at_once():
    pool = FairShare(capacity=10)
    assert pool.admits(Counter(hall=9), "hall") and not pool.admits(Counter(hall=10), "hall")  # work-conserving
    flood = Counter(flood=10)
    assert pool.admits(flood, "honest")  # the pool is full, but of one client's requests past its share of 5
    assert not pool.admits(flood + Counter(honest=1), "flood")  # refused at once until it holds fewer than 5
    assert pool.share(flood + Counter(honest=1), "flood") == 5
    assert not pool.admits(Counter({f"c{i}": 1 for i in range(20)}), "new")  # never past twice the capacity


def test_holdings_never_let_the_sum_of_shares_pass_twice_the_capacity():
    places = Holdings(FairShare(capacity=8))
    clients = [f"c{n % 5}" for n in range(200)]  # five clients asking in turn, nobody ever giving back
    admitted = Counter(c for c in clients if places.take(c))
    assert sum(admitted.values()) <= 16 and min(admitted.values()) >= 1
    for client in list(admitted.elements()):
        places.give(client)
    assert not places.held


def test_round_robin_is_every_clients_first_before_anyones_second():
    line = ["a1", "a2", "a3", "b1", "c1", "b2"]
    assert round_robin(line, lambda item: item[0]) == ["a1", "b1", "c1", "a2", "b2", "a3"]
    # a client already running two counts them as turns it has had
    assert round_robin(line, lambda item: item[0], {"a": 2}) == ["b1", "c1", "b2", "a1", "a2", "a3"]


def test_turns_go_to_the_waiting_client_served_least_recently():
    turns = Turns()
    for ticket in ("a1", "a2", "a3", "b1"):
        turns.add(ticket, ticket[0])
    order = []
    while turns.chosen is not None:
        order.append(turns.chosen)
        turns.take(turns.chosen)
    assert order == ["a1", "b1", "a2", "a3"]  # arrival order would be a1, a2, a3, b1


def test_a_lane_gives_the_next_turn_to_another_client_not_to_the_flood():
    lanes, order = Lanes(long_words=10), []

    def ask(name: str) -> None:
        with lanes.admit(long=True, client=name[0]):
            order.append(name)

    threads = []
    with lanes.admit(long=True, client="x"):  # the lane is busy while the line forms
        for name in ("a1", "a2", "a3", "b1"):
            threads.append(threading.Thread(target=ask, args=(name,)))
            threads[-1].start()
            deadline = time.monotonic() + 5
            while len(lanes._slots[True]._turns.waiting) < len(threads) and time.monotonic() < deadline:
                time.sleep(0.01)
    for thread in threads:
        thread.join(10)
    assert order == ["a1", "b1", "a2", "a3"]

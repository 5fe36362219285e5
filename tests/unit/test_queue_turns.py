"""The training queue takes turns between clients (service.jobs.queue_order): an address's many jobs hold another
address's job for at most one of theirs, a signed-in user is one client from every address, and the queue position
a waiting job reports is the turn it starts at (issue: one address cannot take the lab from a class)."""

from types import SimpleNamespace as Request

from service.budgets import client_id
from service.jobs import job_status, jobs_dir, next_queued, update_job, write_job
from service.settings import Settings


def _queue(root, *senders: tuple[str, str]) -> list[str]:
    """A queued job per (owner, client), created in this order; their ids."""
    ids = []
    for i, (owner, client) in enumerate(senders):
        job_id = f"20260101-0000{i:02d}-{i:06x}"
        (jobs_dir(root) / job_id).mkdir(parents=True)
        job = {"id": job_id, "status": "queued", "created": 1000.0 + i, "started": None, "progress": 0, "epochs": 1}
        write_job(jobs_dir(root) / job_id, {**job, "owner": owner, "client": client})
        ids.append(job_id)
    return ids


def _starts(root) -> list[str]:
    """Run the queue as the scheduler does, one job at a time: the ids in the order they started."""
    started = []
    while (job := next_queued(root)) is not None:
        update_job(jobs_dir(root) / job["id"], status="running", started=2000.0 + len(started))
        started.append(job["id"])
        update_job(jobs_dir(root) / job["id"], status="done")
    return started


def test_four_jobs_from_one_address_hold_another_address_for_one_job(tmp_path):
    a, b = client_id("192.0.2.1"), client_id("198.51.100.7")
    *attacker, honest = _queue(tmp_path, *[(f"owner-a{i}", a) for i in range(4)], ("owner-b", b))
    assert _starts(tmp_path) == [attacker[0], honest, *attacker[1:]]


def test_a_client_that_trained_lately_waits_behind_one_that_did_not(tmp_path):
    a, b = client_id("192.0.2.1"), client_id("198.51.100.7")
    first_b, first_a, second_b = _queue(tmp_path, ("owner-b", b), ("owner-a", a), ("owner-b", b))
    update_job(jobs_dir(tmp_path) / first_b, status="done", started=1500.0)  # b was served; a never was
    assert _starts(tmp_path) == [first_a, second_b]


def test_a_signed_in_user_is_one_client_from_every_address(tmp_path):
    from dataclasses import replace

    from demo import t
    from service.store import Store
    from web.owners import Visitors

    visitors = Visitors(Settings.load(), Store(tmp_path / "owners.sqlite"), words=t)
    visitors.policy = replace(visitors.policy, login=True)  # Hugging Face's own sign-in

    def sender(address: str, user: str | None = None) -> tuple[str, str]:
        request = Request(session_hash=f"session-{address}-{user}", headers={}, client=Request(host=address))
        return visitors.writer(request, Request(username=user) if user else None)

    at_home, at_school, anonymous = sender("192.0.2.1", "alice"), sender("192.0.2.2", "alice"), sender("203.0.113.9")
    assert at_home[0] == at_school[0] and anonymous[1] == client_id("203.0.113.9")
    home, school, other = _queue(tmp_path / "um", at_home, at_school, anonymous)
    assert _starts(tmp_path / "um") == [home, other, school]


def test_the_positions_waiting_jobs_report_are_the_order_they_start_in(tmp_path):
    a, b, c = (client_id(f"192.0.2.{i}") for i in (1, 2, 3))
    senders = [("a1", a), ("a2", a), ("a3", a), ("u", ""), ("b", b), ("u", ""), ("c1", c), ("a4", a), ("c2", c)]
    ids = _queue(tmp_path, *senders)
    positions = {job_id: job_status(job_id, tmp_path)["queue_position"] for job_id in ids}
    assert sorted(positions.values()) == list(range(1, len(ids) + 1))
    started = _starts(tmp_path)
    assert started == sorted(ids, key=positions.__getitem__)
    assert [senders[ids.index(job_id)][0] for job_id in started] == ["a1", "u", "b", "c1", "a2", "u", "c2", "a3", "a4"]

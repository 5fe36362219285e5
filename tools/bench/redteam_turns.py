"""Red-team case on the training queue's turns (issue: one address cannot take the lab from a class), run against a
live app by tools/bench/redteam.py: `case_<name>(url) -> (held, figure)`. One network address fills its quota of
anonymous jobs, each under an owner of its own (a fresh API session each, as in tools/bench/redteam_identity.py); an
honest visitor from another address then asks for one short job. The other address is an X-Forwarded-For header,
which the app that tools/bench/redteam.py starts trusts (LAB_FORWARDED_HOPS=1), as a Space's app trusts its proxy."""

import time

from tools.bench.redteam_identity import _call, _file, _session, _train, _upload

ATTACK_JOBS = 4  # one address's quota of anonymous jobs (Settings.train_max_jobs_per_client)
# each attacking job trains for its whole budget: patience ends a job on these noisy labels after a dozen
# epochs or so, and the rows make those outlast the minute (docs/space.md has the times)
ATTACK_EPOCHS, ATTACK_MINUTES, ATTACK_ROWS = 20, 1.0, 6000
HONEST = {"X-Forwarded-For": "198.51.100.7"}  # a documentation address (RFC 5737): a client of its own
WAIT_S = 600  # the longest the case waits for the honest job to start


def _honest_start(url: str, session: str, job: str) -> dict:
    """The honest job's status once it has left the queue (or the last one seen, after WAIT_S)."""
    deadline = time.monotonic() + WAIT_S
    while (status := _call(url, "train_status", [job], session)).get("status") == "queued":
        if time.monotonic() > deadline:
            break
        time.sleep(1)
    return status


def case_honest_job_waits_its_turn(url: str) -> tuple[bool, str]:
    """4 long jobs from one address, then a 1-epoch job from another: it starts second, after one of theirs."""
    cached = _upload(url, _file(ATTACK_ROWS, seed=20)).json()[0]
    sessions = [_session() for _ in range(ATTACK_JOBS)]
    attack = [(session, _train(url, session, cached, ATTACK_EPOCHS, ATTACK_MINUTES)) for session in sessions]
    honest_session = _session()
    honest = _train(url, honest_session, _upload(url, _file(40, seed=21)).json()[0], headers=HONEST)
    queued = [(session, job) for session, job in [*attack, (honest_session, honest)] if isinstance(job, str)]
    try:
        if not isinstance(attack[0][1], str):  # sign-in required: nobody anonymous trains
            return True, f"anonymous training refused ({attack[0][1].get('error', '')[:60]}): no queue to take"
        if not isinstance(honest, str):
            return False, f"the honest job was refused: {honest.get('error', '')[:100]} (is X-Forwarded-For trusted?)"
        status = _honest_start(url, honest_session, honest)
        if not status.get("started"):
            return False, f"the honest job did not start within {WAIT_S} s ({status.get('status')})"
        starts = [_call(url, "train_status", [job], session).get("started") for session, job in queued[:-1]]
        position = 1 + sum(start is not None and start < status["started"] for start in starts)
    finally:
        for session, job in queued:  # leave the queue as it was: the cases after this one train too
            _call(url, "train_cancel", [job], session)
    wait = status["started"] - status["created"]
    figure = (
        f"the honest 1-epoch job started #{position} after {wait:.0f} s of waiting, behind "
        f"{len(queued) - 1} jobs of {ATTACK_MINUTES:g} min from one address (bar: #2)"
    )
    return position <= 2, figure

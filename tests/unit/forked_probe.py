"""`python -m forked_probe <exit status> [--sleep]`, started by tests/unit/test_processes.py through service.processes:
for each line of its input, what it was given (arguments, folder, environment, torch threads) and the CPU it had
used on its own by then; a line on stderr; then, after an hour with --sleep, it exits with the status asked."""

import json
import os
import resource
import sys
import time

import torch

for line in sys.stdin:
    used = resource.getrusage(resource.RUSAGE_SELF)
    seen = {"line": line.strip(), "argv": sys.argv[1:], "cwd": os.getcwd(), "probe": os.environ.get("PROBE")}
    print(json.dumps({**seen, "threads": torch.get_num_threads(), "cpu": used.ru_utime + used.ru_stime}), flush=True)
print("probe: stderr", file=sys.stderr, flush=True)
if "--sleep" in sys.argv:
    time.sleep(3600)
sys.exit(int(sys.argv[1]))

"""Datasets as lists of tokenized, labelled examples, one reader module per source.

The data directory comes from an explicit argument, else `$DATA_DIR`, else `../shared/data` beside the
project when it exists. The files are never part of the repository; every reader names the file it
expected and where the public dataset can be had when that file is missing.
"""

from core.data.base import PROJECT_ROOT, DataError, Example, TaskData, data_dir, read_lines, require_file
from core.data.tasks import TASKS, load_task

__all__ = [
    "PROJECT_ROOT",
    "DataError",
    "Example",
    "TaskData",
    "TASKS",
    "load_task",
    "data_dir",
    "read_lines",
    "require_file",
]

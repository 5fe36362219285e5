"""Run the authors' Python 2 Theano code (taolei87/text_convnet, commit faf7ec4) on pytensor 3.

The project never holds their code: the user places the repository in a folder named by LAB_ORACLE_DIR
(`make oracle ORACLE_DIR=...`). `load_authors` converts its `model.py` with 2to3 into a cache folder outside
git, applies the few source patches below, puts a `theano` module made of pytensor into sys.modules and
imports the result. Every patch is a difference from the Theano the code was written for; docs/oracle.md
measures each one's effect.
"""

import hashlib
import io
import os
import shutil
import sys
import types
import warnings
from contextlib import redirect_stderr, redirect_stdout
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path

from core.data.tasks import cache_root
from service.settings import Settings

REPOSITORY, COMMIT = "taolei87/text_convnet", "faf7ec42a7710f7478a7a4fc1bb7602034a1d3b3"
NAIVE_LOSS = "- T.mean(T.log(self.p_y_given_x[T.arange(y.shape[0]),y]))"
# Theano's optimizer replaced -log(softmax(s)[arange(n), y]) by its fused crossentropy_softmax_1hot op (a stable
# log-sum-exp with the gradient softmax - onehot); pytensor keeps log(p), whose gradient is NaN once p underflows
STABLE_LOSS = "- T.mean(T.special.log_softmax(self.s_y_given_x, axis=1)[T.arange(y.shape[0]),y])"
PATCHES = {
    # Python 2's gzip.open reads bytes, which were its str; in Python 3 the words must be text to match the data's
    "gzip.open(args.embedding)": "gzip.open(args.embedding, 'rt', encoding='utf-8')",
    # the data files, likewise: UTF-8 whatever the locale
    "with open(args.train) as fin": "with open(args.train, encoding='utf-8') as fin",
    "with open(path) as fin": "with open(path, encoding='utf-8') as fin",
}


def oracle_dir(path: str | os.PathLike | None = None) -> Path:
    """The folder holding the authors' repository: `path`, else LAB_ORACLE_DIR; ValueError when absent."""
    folder = Path(path or Settings.load().oracle_dir or "")
    if not str(folder) or not (folder / "model.py").is_file():
        raise ValueError(
            f"no oracle folder: set LAB_ORACLE_DIR (or ORACLE_DIR for make) to a checkout of {REPOSITORY} "
            f"at {COMMIT[:7]} (its model.py), got {str(folder)!r}"
        )
    return folder


def cache_dir() -> Path:
    """Where the converted code goes: outside git (core.data.tasks.cache_root: LAB_CACHE_DIR or .cache/)."""
    return cache_root() / "oracle"


def _softmax(x):
    # Theano's T.nnet.softmax is row-wise; pytensor's special.softmax with its default axis=None normalises
    # over every entry of the batch
    from pytensor.tensor.special import softmax

    return softmax(x, axis=-1)


class RandomStreams:
    """theano.tensor.shared_randomstreams.RandomStreams: a pytensor RandomStream whose binomial takes `dtype`."""

    def __init__(self, seed: int):
        from pytensor.tensor.random.utils import RandomStream

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            self.stream = RandomStream(int(seed))

    def binomial(self, n, p, size, dtype):
        import pytensor.tensor as pt

        # pytensor's binomial draws int64 and takes no dtype; the mask is cast as Theano's was
        return pt.cast(self.stream.binomial(n, p, size=size), dtype)


def theano_modules() -> dict[str, types.ModuleType]:
    """`theano` and `theano.tensor` made of pytensor, with what pytensor renamed or dropped put back."""
    import pytensor
    import pytensor.tensor as pt

    def scan(*args, **kwargs):  # Theano's scan returns (outputs, updates)
        return pytensor.scan(*args, **{**kwargs, "return_updates": True})

    # Theano's var.norm(L), used in its log line, is pytensor's too (3.0.7: (sum |x|^L)^(1/L))
    tensor = types.ModuleType("theano.tensor")
    tensor.__dict__.update({k: v for k, v in vars(pt).items() if not k.startswith("__")})
    tensor.__dict__.update(
        nnet=types.SimpleNamespace(softmax=_softmax),
        shared_randomstreams=types.SimpleNamespace(RandomStreams=RandomStreams),
    )
    theano = types.ModuleType("theano")
    theano.__dict__.update(
        shared=pytensor.shared, function=pytensor.function, config=pytensor.config, tensor=tensor, scan=scan
    )
    return {"theano": theano, "theano.tensor": tensor}


def converted_source(folder: Path, stable_loss: bool = True) -> str:
    """model.py after 2to3 and PATCHES (and the stable loss unless `stable_loss` is False)."""
    from lib2to3.main import main as lib2to3_main

    source = (folder / "model.py").read_text(encoding="utf-8")
    key = hashlib.sha256(source.encode()).hexdigest()[:16]
    converted = cache_dir() / f"model-{key}.py"
    if not converted.is_file():
        work = cache_dir() / f"2to3-{os.getpid()}"  # one folder per process: parallel runs convert at once
        work.mkdir(parents=True, exist_ok=True)
        (work / "model2.py").write_text(source, encoding="utf-8")
        with warnings.catch_warnings(), redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore", DeprecationWarning)
            code = lib2to3_main("lib2to3.fixes", ["-w", "-n", "-o", str(work / "py3"), str(work / "model2.py")])
        if code != 0:
            raise RuntimeError(f"2to3 failed on {folder / 'model.py'} (exit {code})")
        (work / "py3" / "model2.py").replace(converted)
        shutil.rmtree(work)
    text = converted.read_text(encoding="utf-8")
    for old, new in {**PATCHES, **({NAIVE_LOSS: STABLE_LOSS} if stable_loss else {})}.items():
        if text.count(old) != 1:
            raise RuntimeError(f"the authors' model.py is not the one this shim knows ({COMMIT[:7]}): {old!r}")
        text = text.replace(old, new)
    return text


def load_authors(folder: str | os.PathLike | None = None, stable_loss: bool = True, floatx: str = "float64"):
    """The authors' `model` module, converted and imported, with pytensor's floatX set to `floatx`."""
    import pytensor

    pytensor.config.floatX = floatx
    # the C backend (cvm) is Theano's own, carried on in pytensor; with pytensor 3's default, numba, their
    # training function had not finished its first batch after 8 minutes here (docs/oracle.md)
    pytensor.config.linker = Settings.load().oracle_linker
    sys.modules.update(theano_modules())
    folder = oracle_dir(folder)
    text = converted_source(folder, stable_loss)
    name = f"authors_model_{hashlib.sha256(text.encode()).hexdigest()[:12]}"
    path = cache_dir() / f"{name}.py"
    if not path.is_file():
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    spec = spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

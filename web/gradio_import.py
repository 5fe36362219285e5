"""Gradio's import without its type-stub writer. Defining each component class (gradio.component_meta.ComponentMeta)
calls `create_or_modify_pyi`, which parses the component's source and its .pyi stub and rewrites the stub when they
differ: stubs for an editor, shipped in Gradio's wheel, and 1.7 of the 5.7 CPU-s of every process's `import gradio`
(docs/performance.md, "Gradio's internals"). Importing this module, before gradio, leaves the stubs as shipped; a
Gradio without that function imports as it is (tests/app/test_gradio_internals.py then fails, naming it).
"""

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

STUB_WRITER = "create_or_modify_pyi"


def leave_stubs(*_args) -> None:
    """In the stub writer's place: the .pyi files stay as Gradio's wheel installed them."""


class _WithoutStubWriter(importlib.abc.Loader):
    def __init__(self, loader: importlib.abc.Loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        if hasattr(module, STUB_WRITER):
            setattr(module, STUB_WRITER, leave_stubs)


class _ComponentMetaFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != "gradio.component_meta":
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _WithoutStubWriter(spec.loader)
        return spec


if "gradio.component_meta" not in sys.modules and not any(isinstance(f, _ComponentMetaFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _ComponentMetaFinder())

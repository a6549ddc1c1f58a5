"""
Stand-ins for the third-party packages an upstream checkout imports at module level but the
functions the bench times never call (model SDKs, loggers, diffing, tokenizers). Installed as the
last finder on sys.meta_path, so a package that is installed is always the real one; a missing one
becomes a module whose every attribute is a permissive class (subclassable, callable, usable as a
decorator). Which modules were stood in for is reported, so a figure is never taken over a stub on
the measured path unnoticed.
"""
import importlib.abc
import importlib.machinery
import sys
import types

stubbed = []


class _Meta(type):
    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stub_class(name)

    def __getitem__(cls, item):
        return cls

    def __or__(cls, other):
        return cls

    def __ror__(cls, other):
        return cls

    def __iter__(cls):
        return iter(())


class _Stub(metaclass=_Meta):
    def __init__(self, *args, **kwargs):
        self._args = args

    def __call__(self, *args, **kwargs):
        # As a decorator factory's result: give the decorated function back.
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return _Stub()

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Stub()

    def __iter__(self):
        return iter(())

    def __bool__(self):
        return False

    def __or__(self, other):
        return self

    def __ror__(self, other):
        return self

    def __and__(self, other):
        return self

    def __add__(self, other):
        return self


def _stub_class(name):
    return _Meta(name, (_Stub,), {})


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = _stub_class(name)
        setattr(self, name, value)
        return value


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        stubbed.append(module.__name__)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, names):
        self.names = names

    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] not in self.names:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=True)


def install(names):
    """Stands in for the packages under the top-level `names` that are not installed."""
    sys.meta_path.append(_Finder(set(names)))

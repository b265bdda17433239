"""Answers as plain data: what leaves a student's sandbox for the grader's checks.

A student's answer cell runs in the sandbox (emu.course.sandbox); the checks run in a process the
grader owns (emu.course.checking). Between the two only JSON passes, built from a small set of
types, so that reading it runs none of the student's code (no pickle):

* None, bool, int, str and lists as JSON; floats as JSON or, when not finite, tagged;
* tuples, sets, frozensets, dicts with any plain keys and numpy scalars, tagged;
* instances of the library's own dataclasses (``emu.run.machine.Run``, ``workloads.Image``, ...),
  tagged with their class and rebuilt by its constructor from their fields.

Anything else (a function, a class of the student's, a DataFrame) is ``NotPlain``: its
exercise is left for the teacher to grade by hand.
"""
from __future__ import annotations

import dataclasses
import importlib
import json
import math

MAX_DEPTH = 40
MAX_BYTES = 1 << 20                    # one student's exported answers, as JSON
TAGS = ("$tuple", "$set", "$frozenset", "$dict", "$float", "$numpy", "$dataclass")


class NotPlain(TypeError):
    """A value that cannot leave the sandbox as data."""


def encode(value, depth=0):
    """``value`` as JSON-ready plain data, or NotPlain."""
    if depth > MAX_DEPTH:
        raise NotPlain("nested too deeply")
    if value is None or isinstance(value, (bool, str)) or type(value) is int:
        return value
    if type(value) is float:
        return value if math.isfinite(value) else {"$float": repr(value)}
    inner = depth + 1
    if type(value) is list:
        return [encode(v, inner) for v in value]
    if type(value) is tuple:
        return {"$tuple": [encode(v, inner) for v in value]}
    if type(value) in (set, frozenset):
        items = sorted((encode(v, inner) for v in value), key=json.dumps)
        return {"$set" if type(value) is set else "$frozenset": items}
    if type(value) is dict:
        return {"$dict": [[encode(k, inner), encode(v, inner)] for k, v in value.items()]}
    numpy = _numpy_scalar(value)
    if numpy is not None:
        return numpy
    cls = type(value)
    if dataclasses.is_dataclass(cls) and _library_class(cls):
        fields = {f.name: encode(getattr(value, f.name), inner)
                  for f in dataclasses.fields(cls)}
        return {"$dataclass": f"{cls.__module__}:{cls.__qualname__}", "fields": fields}
    raise NotPlain(f"a {cls.__module__}.{cls.__qualname__}")


def _numpy_scalar(value):
    cls = type(value)
    if cls.__module__ != "numpy" or not hasattr(value, "dtype") or getattr(value, "shape",
                                                                             None) != ():
        return None
    if value.dtype.kind not in "biuf":
        return None
    item = value.item()
    if isinstance(item, float) and not math.isfinite(item):
        item = {"$float": repr(item)}
    return {"$numpy": value.dtype.str, "value": item}


def _library_class(cls):
    module = cls.__module__
    return module == "emu" or module.startswith("emu.")


def dumps(values):
    """{name: value} as a JSON text; names whose value is not plain map to
    {"$notplain": why}."""
    out = {}
    for name, value in values.items():
        try:
            out[name] = encode(value)
        except NotPlain as why:
            out[name] = {"$notplain": str(why)}
        except RecursionError:
            out[name] = {"$notplain": "nested too deeply"}
    return json.dumps(out)


def decode(data, depth=0):
    """The value ``data`` (as ``encode`` made it) stands for; ValueError if it is not such."""
    if depth > MAX_DEPTH:
        raise ValueError("nested too deeply")
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    inner = depth + 1
    if isinstance(data, list):
        return [decode(v, inner) for v in data]
    if not isinstance(data, dict) or len(data) not in (1, 2):
        raise ValueError("not an encoded value")
    tag = next(iter(data))
    if tag == "$tuple" and len(data) == 1:
        return tuple(decode(v, inner) for v in _list(data[tag]))
    if tag in ("$set", "$frozenset") and len(data) == 1:
        items = [decode(v, inner) for v in _list(data[tag])]
        return set(items) if tag == "$set" else frozenset(items)
    if tag == "$dict" and len(data) == 1:
        pairs = _list(data[tag])
        if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
            raise ValueError("a dict's items are pairs")
        return {decode(k, inner): decode(v, inner) for k, v in pairs}
    if tag == "$float" and len(data) == 1:
        if data[tag] not in ("nan", "inf", "-inf"):
            raise ValueError("a tagged float is nan, inf or -inf")
        return float(data[tag])
    if tag == "$numpy" and set(data) == {"$numpy", "value"}:
        return _numpy_value(data["$numpy"], decode(data["value"], inner))
    if tag == "$dataclass" and set(data) == {"$dataclass", "fields"}:
        return _dataclass(data["$dataclass"], data["fields"], inner)
    raise ValueError(f"unknown tag {str(tag)[:40]!r}")


def _list(value):
    if not isinstance(value, list):
        raise ValueError("a tagged collection holds a list")
    return value


def _numpy_value(dtype, value):
    import numpy as np
    try:
        kind = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"not a numpy dtype: {str(dtype)[:40]!r}") from None
    if kind.kind not in "biuf" or isinstance(value, (list, tuple, dict, str)) or value is None:
        raise ValueError("a numpy scalar is a number")
    return kind.type(value)


def _dataclass(name, fields, depth):
    """An instance of one of the library's dataclasses, made by its own constructor from
    plain fields (the library's code on data, as the checks run the model on answers)."""
    if not isinstance(name, str) or ":" not in name or not isinstance(fields, dict):
        raise ValueError("a dataclass is module:name and its fields")
    module, qualname = name.split(":", 1)
    if not (module == "emu" or module.startswith("emu.")) or \
            not all(part.isidentifier() for part in module.split(".") + qualname.split(".")):
        raise ValueError(f"not a class of the library: {name[:80]!r}")
    try:
        cls = importlib.import_module(module)
        for part in qualname.split("."):
            cls = getattr(cls, part)
    except (ImportError, AttributeError):
        raise ValueError(f"no class {name[:80]!r}") from None
    if not isinstance(cls, type) or not dataclasses.is_dataclass(cls):
        raise ValueError(f"{name[:80]!r} is not a dataclass")
    known = {f.name: f for f in dataclasses.fields(cls)}
    if set(fields) != set(known):
        raise ValueError(f"{name}: fields {sorted(fields)[:10]}, not {sorted(known)[:10]}")
    values = {k: decode(v, depth) for k, v in fields.items()}
    try:
        obj = cls(**{k: v for k, v in values.items() if known[k].init})
    except Exception as error:          # the library refused these values
        raise ValueError(f"{name}: {type(error).__name__}: {str(error)[:100]}") from None
    for k, v in values.items():
        if not known[k].init:
            object.__setattr__(obj, k, v)
    return obj


def loads(text):
    """{name: value or NotPlain} from ``dumps``' text; ValueError if it is anything else."""
    if len(text) > MAX_BYTES:
        raise ValueError(f"the exported answers exceed {MAX_BYTES} bytes")
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("the exported answers are not an object")
    out = {}
    for name, value in data.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"not a variable name: {str(name)[:40]!r}")
        if isinstance(value, dict) and set(value) == {"$notplain"}:
            out[name] = NotPlain(str(value["$notplain"])[:200])
            continue
        try:
            out[name] = decode(value)
        except TypeError as error:          # e.g. a list inside a set: unhashable
            raise ValueError(f"{name}: {error}") from None
    return out

"""Values as data, and back: how a student's answers leave the sandbox (ours).

The grader never takes a verdict from the sandbox. The sandbox calls the student's
functions, as the check asks, and records each call: its arguments and what came back,
encoded here as JSON-able data. The judge (runnable_book/grade/judge.py), in the grader's own
Python where no student code ever runs, calls its own copy of the check on stand-ins that
answer from that record. This module is the one encoding both sides use: the sandbox's
Python (Pyodide) loads it from this file's text, the judge imports it.

What an encoded value can be, and what decoding makes of it:

=======================================  =================================================
the student's value                      decoded (judge and sandbox alike)
=======================================  =================================================
None, bool, int, float, str, bytes       the same
tuple, list, set, frozenset, dict,       the same, rebuilt from their items
range
a dataclass of ``chapter_lib``           the same class, rebuilt from its fields (so
(Doc, Verdict, Result, ...)              equality and fields behave as in the page)
any other object                         a :class:`Record`: its attributes (a dataclass's
                                         fields, a namedtuple's, an object's ``__dict__``),
                                         its repr, and, for a tuple subclass, its items;
                                         equal to another as a dataclass is when it was
                                         one, else only to itself
a generator or other iterator            an iterator over its items (read once, as the
                                         original would be)
a function, module, class, ...           a :class:`Record` with its repr only
=======================================  =================================================

Decoding builds nothing else: no pickle, no import of a name the data chooses (a class is
looked up only among ``chapter_lib``'s modules already imported, and only if it is a
dataclass). Sizes are bounded (:data:`LIMITS`); past them a value is :class:`TooLarge`.

A :class:`Record` carries a handle: the sandbox keeps the original object under it, so
when a check hands a student's value back to the student (exercise 3's ``resolve_fn``
gets the verdict ``assess_fn`` returned), the student's function receives its own object.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import sys

LIMITS = {"nodes": 200_000, "depth": 60, "chars": 2_000_000, "repr": 300}


class TooLarge(Exception):
    """A value past the grader's limits (items, nesting or characters)."""


class Record:
    """A student's object, as the judge sees it: attributes, repr and (maybe) equality."""

    def __init__(self, cls, fields, repr_text, handle, value_eq):
        object.__setattr__(self, "_wire_cls", cls)
        object.__setattr__(self, "_wire_fields", tuple(fields))
        object.__setattr__(self, "_wire_repr", repr_text)
        object.__setattr__(self, "_wire_handle", handle)
        object.__setattr__(self, "_wire_value_eq", value_eq)
        for name, value in fields:
            if not name.startswith("_wire_"):
                object.__setattr__(self, name, value)

    def __repr__(self):
        return self._wire_repr

    def __eq__(self, other):
        if self is other:
            return True
        if self._wire_value_eq and isinstance(other, Record):
            return other._wire_value_eq and (self._wire_cls, self._wire_fields) == (other._wire_cls, other._wire_fields)
        return NotImplemented

    def __hash__(self):
        if self._wire_value_eq:
            return hash((self._wire_cls, self._wire_fields))
        return object.__hash__(self)


class RecordTuple(tuple):
    """A student's tuple subclass (a namedtuple): its items, and its fields as attributes."""

    def __new__(cls, items, fields, repr_text, handle):
        made = super().__new__(cls, items)
        made._wire_repr, made._wire_handle = repr_text, handle
        for name, value in fields:
            if not name.startswith("_wire_"):
                setattr(made, name, value)
        return made

    def __repr__(self):
        return self._wire_repr


def _class_name(obj) -> str:
    cls = type(obj)
    return f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', cls.__name__)}"


def _is_library_dataclass(cls) -> bool:
    return (isinstance(cls, type) and dataclasses.is_dataclass(cls)
            and str(getattr(cls, "__module__", "")).split(".")[0] == "chapter_lib")


def _library_class(name: str):
    """The chapter_lib dataclass called ``name`` if this Python has imported it, else None."""
    module_name, _, qualname = name.rpartition(".")
    if module_name.split(".")[0] != "chapter_lib" or "." in qualname:
        return None
    module = sys.modules.get(module_name)
    cls = getattr(module, qualname, None) if module is not None else None
    return cls if _is_library_dataclass(cls) else None


class Encoder:
    """One value's encoding, counting against the limits. ``handles``: the sandbox's list of
    originals (a Record's handle is its index); None where none are kept (the judge)."""

    def __init__(self, handles=None):
        self.handles = handles
        self.nodes = 0
        self.chars = 0
        self.stack = set()

    def _count(self, chars=0):
        self.nodes += 1
        self.chars += chars
        if self.nodes > LIMITS["nodes"] or self.chars > LIMITS["chars"]:
            raise TooLarge(f"more than {LIMITS['nodes']:,} items or {LIMITS['chars']:,} characters")

    def _repr(self, obj) -> str:
        try:
            text = repr(obj)
        except Exception as error:  # a student's __repr__ may raise
            text = f"<{_class_name(obj)} whose repr raised {type(error).__name__}>"
        if not isinstance(text, str):
            text = f"<{_class_name(obj)}>"
        limit = LIMITS["repr"]
        return text if len(text) <= limit else text[:limit - 1] + "…"

    def _handle(self, obj):
        if self.handles is None:
            return None
        self.handles.append(obj)
        return len(self.handles) - 1

    def encode(self, value, depth=0):
        if depth > LIMITS["depth"]:
            raise TooLarge(f"nested more than {LIMITS['depth']} deep")
        kind = type(value)
        if value is None or kind is bool:
            self._count()
            return value
        if kind is int:
            self._count()
            return value if -2**63 < value < 2**63 else {"t": "int", "v": str(value)}
        if kind is float:
            self._count()
            return value if math.isfinite(value) else {"t": "float", "v": repr(value)}
        if kind is str:
            self._count(len(value))
            return value
        if kind in (bytes, bytearray):
            self._count(len(value))
            return {"t": kind.__name__, "v": base64.b64encode(bytes(value)).decode("ascii")}
        if kind is range:
            self._count()
            return {"t": "range", "v": [value.start, value.stop, value.step]}
        if isinstance(value, Record):  # a value the sandbox had decoded, handed back
            self._count()
            return {"t": "ref", "h": value._wire_handle, "r": value._wire_repr}
        if isinstance(value, RecordTuple):
            self._count()
            return {"t": "ref", "h": value._wire_handle, "r": value._wire_repr}
        marker = id(value)
        if marker in self.stack:
            self._count()
            return {"t": "cycle"}
        self.stack.add(marker)
        try:
            return self._container_or_object(value, kind, depth)
        finally:
            self.stack.discard(marker)

    def _items(self, values, depth):
        return [self.encode(v, depth + 1) for v in values]

    def _container_or_object(self, value, kind, depth):
        self._count()
        if kind in (tuple, list):
            return {"t": kind.__name__, "v": self._items(value, depth)}
        if kind in (set, frozenset):
            items = self._items(value, depth)  # in a fixed order, whatever the hash seed
            return {"t": kind.__name__, "v": sorted(items, key=canonical)}
        if kind is dict:
            return {"t": "dict", "v": [[self.encode(k, depth + 1), self.encode(v, depth + 1)]
                                       for k, v in value.items()]}
        if _is_library_dataclass(kind):
            return {"t": "lib", "c": _class_name(value),
                    "f": [[f.name, self.encode(getattr(value, f.name), depth + 1)]
                          for f in dataclasses.fields(value)]}
        # A subclass of a builtin value (an enum of strings, an int flag): its builtin value.
        for base in (bool, int, float, str):
            if isinstance(value, base) and not isinstance(value, type):
                plain = {bool: bool.__bool__, int: int.__int__, float: float.__float__,
                         str: lambda s: str.__getitem__(s, slice(None))}[base](value)
                return self.encode(plain, depth + 1)
        if hasattr(kind, "__next__") and hasattr(kind, "__iter__"):  # a generator, map, zip, ...
            items = []
            for item in value:
                items.append(self.encode(item, depth + 1))
            return {"t": "iter", "v": items}
        fields = self._fields(value, depth)
        encoded = {"t": "obj", "c": _class_name(value), "r": self._repr(value),
                   "dc": dataclasses.is_dataclass(kind) and not isinstance(value, type),
                   "f": fields}
        if isinstance(value, tuple):
            encoded["seq"] = self._items(tuple.__iter__(value), depth)
        elif isinstance(value, (list, set, frozenset, dict)):  # a subclass: its builtin content
            base = next(b for b in (list, set, frozenset, dict) if isinstance(value, b))
            encoded["base"] = self.encode(base(value), depth + 1)
        encoded["h"] = self._handle(value)
        return encoded

    def _fields(self, value, depth):
        """An object's data, as ``getattr`` sees it: a dataclass's fields or a namedtuple's
        first, then every other attribute that is not a method (its own, its class's, a
        property's value), up to 200 of them."""
        names = []
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            names = [f.name for f in dataclasses.fields(value)]
        elif isinstance(value, tuple) and hasattr(type(value), "_fields"):
            names = [n for n in type(value)._fields if isinstance(n, str)]
        if not isinstance(value, type):
            try:
                listed = dir(value)
            except Exception:
                listed = []
            names += [n for n in listed if isinstance(n, str) and n not in names]
        fields = []
        for name in names:
            if name.startswith("__") or len(fields) >= 200:
                continue
            try:
                item = getattr(value, name)
            except Exception:
                continue
            if callable(item) and not dataclasses.is_dataclass(item):
                continue
            if isinstance(value, tuple) and name in ("_fields", "_field_defaults"):
                continue
            fields.append([name, self.encode(item, depth + 1)])
        return fields


def canonical(data) -> str:
    """One string for one encoded value: how calls are matched between sandbox and judge."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def encode(value, handles=None):
    return Encoder(handles).encode(value)


def call_key(args, kwargs) -> str:
    """A call's arguments as the key the sandbox records it under and the judge looks it up by."""
    encoder = Encoder(None)
    return canonical({"a": [encoder.encode(a) for a in args],
                      "k": [[k, encoder.encode(v)] for k, v in sorted(kwargs.items())]})


class Decoder:
    def __init__(self):
        self.nodes = 0

    def decode(self, data, depth=0):
        self.nodes += 1
        if self.nodes > LIMITS["nodes"] or depth > LIMITS["depth"]:
            raise TooLarge("the recorded value is past the grader's limits")
        if data is None or isinstance(data, (bool, int, float, str)):
            return data
        if not isinstance(data, dict) or not isinstance(data.get("t"), str):
            raise ValueError(f"not an encoded value: {type(data).__name__}")
        kind = data["t"]
        items = data.get("v")
        if kind in ("tuple", "list", "set", "frozenset", "iter"):
            if not isinstance(items, list):
                raise ValueError(f"{kind} without items")
            values = [self.decode(v, depth + 1) for v in items]
            if kind == "iter":
                return iter(values)
            return {"tuple": tuple, "list": list, "set": set, "frozenset": frozenset}[kind](values)
        if kind == "dict":
            return {self.decode(k, depth + 1): self.decode(v, depth + 1) for k, v in items}
        if kind == "int":
            return int(items)
        if kind == "float":
            if items not in ("inf", "-inf", "nan"):
                raise ValueError(f"not a float: {items!r}")
            return float(items)
        if kind in ("bytes", "bytearray"):
            raw = base64.b64decode(items.encode("ascii"), validate=True)
            return raw if kind == "bytes" else bytearray(raw)
        if kind == "range":
            start, stop, step = (int(v) for v in items)
            return range(start, stop, step)
        if kind == "cycle":
            return Record("cycle", (), "<cycle>", None, False)
        if kind == "ref":
            return self.ref(data)
        fields = [(str(name), self.decode(value, depth + 1)) for name, value in data.get("f", [])]
        if kind == "lib":
            cls = _library_class(str(data.get("c", "")))
            if cls is not None:
                try:
                    return cls(**dict(fields))
                except Exception:
                    pass
            return Record(str(data.get("c")), fields, f"{data.get('c')}(...)", None, True)
        if kind == "obj":
            handle = data.get("h") if isinstance(data.get("h"), int) else None
            repr_text = str(data.get("r", ""))
            if "seq" in data:
                return RecordTuple([self.decode(v, depth + 1) for v in data["seq"]], fields, repr_text, handle)
            if "base" in data:  # a list/dict/set subclass: its content (the judge cannot rebuild the class)
                return self.decode(data["base"], depth + 1)
            return Record(str(data.get("c")), fields, repr_text, handle, bool(data.get("dc")))
        raise ValueError(f"unknown encoded kind {kind!r}")

    def ref(self, data):
        handle = data.get("h") if isinstance(data.get("h"), int) else None
        return Record("ref", (), str(data.get("r", "")), handle, False)


def decode(data):
    return Decoder().decode(data)


def unwrap(value, handles):
    """In the sandbox: a value about to reach a student's function, with each Record the
    check passes back replaced by the student's own object (containers rebuilt only where
    something inside was replaced)."""
    if isinstance(value, (Record, RecordTuple)):
        handle = value._wire_handle
        if isinstance(handle, int) and 0 <= handle < len(handles):
            return handles[handle]
        return value
    kind = type(value)
    if kind in (list, tuple, set, frozenset):
        items = [unwrap(v, handles) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        return kind(items)
    if kind is dict:
        pairs = [(k, unwrap(v, handles)) for k, v in value.items()]
        if all(a is b for (_, a), b in zip(pairs, value.values())):
            return value
        return dict(pairs)
    return value

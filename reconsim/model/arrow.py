"""A polars column of lists of records made around numpy arrays, without copying them, through
the Arrow C data interface (https://arrow.apache.org/docs/format/CDataInterface.html): polars
imports any object with ``__arrow_c_array__`` (the PyCapsule interface) without copying its
buffers, and calls the array's release callback once it no longer uses them; until then the
arrays are held here. :func:`reconsim.model.simulate.responses_column` builds the
``responses`` column so from the kernels' own buffers.
"""

from __future__ import annotations

import ctypes
import itertools
from typing import Any

import numpy as np
import polars as pl

__all__ = ["arrow_lists"]


class _ArrowSchema(ctypes.Structure):
    """``struct ArrowSchema`` of the Arrow C data interface."""


_ArrowSchema._fields_ = [
    ("format", ctypes.c_char_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_char_p),
    ("flags", ctypes.c_int64), ("n_children", ctypes.c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(_ArrowSchema))),
    ("dictionary", ctypes.POINTER(_ArrowSchema)), ("release", ctypes.c_void_p),
    ("private_data", ctypes.c_void_p)]


class _ArrowArray(ctypes.Structure):
    """``struct ArrowArray`` of the Arrow C data interface."""


_ArrowArray._fields_ = [
    ("length", ctypes.c_int64), ("null_count", ctypes.c_int64), ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64), ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)),
    ("children", ctypes.POINTER(ctypes.POINTER(_ArrowArray))),
    ("dictionary", ctypes.POINTER(_ArrowArray)), ("release", ctypes.c_void_p),
    ("private_data", ctypes.c_void_p)]

#: What an exported array keeps alive (its buffers, its structs), by its ``private_data``,
#: until its consumer releases it.
_HELD: dict[int, Any] = {}
_held_keys = itertools.count(1)


def _release_array(array: Any, held: dict[int, Any] = _HELD) -> None:
    """An exported array's release callback: marks it and its children released (the
    consumer moves the list it imports and borrows its children, as polars does), and for
    the exported list (its children hold no key) lets go of all it holds (``held`` bound at
    definition: the callback may run while the interpreter clears this module's
    globals)."""
    contents = array.contents
    key = contents.private_data
    contents.release = None
    for i in range(contents.n_children):
        _release_array(contents.children[i], held)
    if key:
        held.pop(key, None)


def _release_schema(schema: Any) -> None:
    """An exported schema's release callback: its structs live as long as the export."""
    schema.contents.release = None


#: The release callbacks as C functions, never freed: a column may outlive this module's
#: globals at exit.
_RELEASE_ARRAY = ctypes.CFUNCTYPE(None, ctypes.POINTER(_ArrowArray))(_release_array)
_RELEASE_SCHEMA = ctypes.CFUNCTYPE(None, ctypes.POINTER(_ArrowSchema))(_release_schema)
ctypes.pythonapi.Py_IncRef(ctypes.py_object(_RELEASE_ARRAY))
ctypes.pythonapi.Py_IncRef(ctypes.py_object(_RELEASE_SCHEMA))
#: ``PyCapsule_New``, typed here (not on ``ctypes.pythonapi``'s shared object).
_NEW_CAPSULE = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                                 ctypes.c_void_p)(("PyCapsule_New", ctypes.pythonapi))
#: A field's flag: it may hold nulls.
_NULLABLE = 2


class _Exported:
    """An array and its schema, as polars takes them (``__arrow_c_array__``)."""

    def __init__(self, array: _ArrowArray, schema: _ArrowSchema) -> None:
        self.array, self.schema = array, schema

    def __arrow_c_array__(self, requested_schema: object = None) -> tuple[object, object]:
        return (_NEW_CAPSULE(ctypes.addressof(self.schema), b"arrow_schema", None),
                _NEW_CAPSULE(ctypes.addressof(self.array), b"arrow_array", None))


def _pointers(ctype: Any, items: list[Any]) -> Any:
    """A C array of pointers to ``items`` (ctypes structs, or addresses for ``c_void_p``)."""
    if ctype is ctypes.c_void_p:
        return (ctypes.c_void_p * len(items))(*items)
    return (ctypes.POINTER(ctype) * len(items))(*(ctypes.pointer(i) for i in items))


def arrow_lists(name: str, offsets: np.ndarray, fields: dict[str, np.ndarray],
                valid: dict[str, np.ndarray]) -> pl.Series:
    """A polars column of lists of records, made around numpy arrays without copying them:
    row i's list holds entries ``offsets[i] … offsets[i + 1] - 1`` of ``fields`` (int64
    arrays, a field each, contiguous), a field of ``valid`` null where its mask is False.
    Offsets that decrease, or a field or mask shorter than the entries, are refused
    (``ValueError``): the column would read memory beyond them.

    >>> arrow_lists("r", np.array([0, 2, 2, 3]), {"at": np.array([5, 6, 7])},
    ...             {"at": np.array([True, False, True])}).to_list()
    [[{'at': 5}, {'at': None}], [], [{'at': 7}]]
    """
    offsets = np.ascontiguousarray(offsets, np.int64)
    if offsets.ndim != 1 or not len(offsets) or offsets[0] < 0 or (np.diff(offsets) < 0).any():
        raise ValueError("offsets: one or more, from 0 or more, never decreasing")
    held: list[Any] = [offsets]
    total = int(offsets[-1])

    def array(length: int, nulls: int, buffers: list[Any], children: list[Any]) -> _ArrowArray:
        held.append(pointers := _pointers(ctypes.c_void_p, buffers))
        out = _ArrowArray(length=length, null_count=nulls, offset=0, n_buffers=len(buffers),
                          n_children=len(children), buffers=pointers,
                          release=ctypes.cast(_RELEASE_ARRAY, ctypes.c_void_p))
        if children:
            held.append(kids := _pointers(_ArrowArray, children))
            out.children = kids
        return out

    def schema(format_: bytes, field: str, children: list[Any]) -> _ArrowSchema:
        out = _ArrowSchema(format=format_, name=field.encode(), flags=_NULLABLE,
                           n_children=len(children),
                           release=ctypes.cast(_RELEASE_SCHEMA, ctypes.c_void_p))
        if children:
            held.append(kids := _pointers(_ArrowSchema, children))
            out.children = kids
        return out

    leaves, leaf_schemas = [], []
    for field, given in fields.items():
        values = np.ascontiguousarray(given, np.int64)
        if values.ndim != 1 or len(values) < total:
            raise ValueError(f"{field}: {values.size} values for {total} entries")
        bitmap, nulls = None, 0
        if field in valid:
            mask = np.asarray(valid[field], bool)[:total]
            if mask.ndim != 1 or len(mask) < total:
                raise ValueError(f"{field}: a mask of {mask.size} for {total} entries")
            nulls = total - int(np.count_nonzero(mask))
            bitmap = np.packbits(mask, bitorder="little")
            held.append(bitmap)
        held.append(values)
        leaves.append(array(total, nulls, [None if bitmap is None else bitmap.ctypes.data,
                                           values.ctypes.data], []))
        leaf_schemas.append(schema(b"l", field, []))
    record = array(total, 0, [None], leaves)
    lists = array(len(offsets) - 1, 0, [None, offsets.ctypes.data], [record])
    item = schema(b"+s", "item", leaf_schemas)
    types = schema(b"+L", name, [item])
    held += [leaves, leaf_schemas, record, item, types]
    key = next(_held_keys)
    lists.private_data = key
    _HELD[key] = held
    try:
        return pl.Series(name, _Exported(lists, types))
    finally:
        if lists.release:  # not taken: released here
            _release_array(ctypes.pointer(lists))

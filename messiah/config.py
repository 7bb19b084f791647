"""Configurations as dataclasses with one docstring per field (as CleanRL's ``Args``), and what is built from
them, so that a default lives in one place: a command's flags (:func:`add_arguments`), the configuration a
command line asks for (:func:`from_args`), a saved configuration read back (:func:`from_dict`) and the fields
in which two configurations of one run differ (:func:`run_changes`). Validation is each configuration's
``__post_init__``, with :func:`check_choices`, :func:`at_least` and :func:`within`.

A field's docstring is its flag's help. :func:`setting` says what a field's type cannot: that it is a
*runtime* field (how a run executes or reports, not what it learns: it may change when a run is continued),
its flag's name, a parser for its value, a positional argument. A field whose type is itself a dataclass
(``net: NetConfig``) contributes its fields' flags, as a group of the help; so do fields inherited from a
part (``Optim``, ``Objective``), titled by the part's docstring.

No torch and no other layer of messiah: every layer may import this.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import os
import re
import textwrap
import types
import typing
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field
from typing import Any, Literal

from messiah.errors import UserError


def setting(default: Any = MISSING, *, factory: Callable[[], Any] | Any = MISSING, runtime: bool = False,
            flag: str | None = None, parse: Callable[[str], Any] | None = None, metavar: str | tuple | None = None,
            positional: bool = False, repeat: bool = False, paths: bool = False, shown: str | None = None) -> Any:
    """A dataclass field with what its type does not say. ``runtime``: may change when a run continues
    (:func:`run_changes` skips it); ``flag``: the flag's name when it is not ``--field-name``; ``parse``: turns
    the text of one value into the value; ``positional``: an argument without a flag; ``repeat``: a list given
    as one flag per item (``--param A --param B``) instead of several values after one flag; ``paths``: a path
    or list of paths, compared as absolute paths; ``shown``: the default as the help says it, where its value
    depends on the machine (a path under $MESSIAH_DATA)."""
    meta = {"runtime": runtime, "flag": flag, "parse": parse, "metavar": metavar, "positional": positional,
            "repeat": repeat, "paths": paths, "shown": shown}
    return field(default=default, default_factory=factory, metadata={k: v for k, v in meta.items() if v})


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of a dataclass (the string literal that follows its annotation), those
    of its dataclass bases included; a field declared again keeps its base's docstring unless it has one."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        body = ast.parse(textwrap.dedent(inspect.getsource(klass))).body[0].body
        for node, following in zip(body, body[1:], strict=False):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)):
                docs[node.target.id] = " ".join(following.value.value.split())
    return docs


@dataclass(frozen=True)
class Leaf:
    """One flag's field: a field of the configuration, or of a dataclass field of it (its ``part``)."""

    name: str
    kind: Any
    default: Any  # MISSING: the field is required
    doc: str
    meta: typing.Mapping
    part: str | None = None  # the dataclass field holding it (``net``), None for a field of the configuration
    group: str | None = None  # the help group: the part's docstring, None for the configuration's own fields


def leaves(cls: type) -> list[Leaf]:
    """Every field that is a flag, in order: a dataclass field's fields in its place."""
    hints, docs = typing.get_type_hints(cls), field_docs(cls)
    out = []
    for f in dataclasses.fields(cls):
        default = f.default_factory() if f.default_factory is not MISSING else f.default
        if dataclasses.is_dataclass(hints[f.name]):
            out += [dataclasses.replace(leaf, default=getattr(default, leaf.name), part=f.name, group=docs[f.name])
                    for leaf in leaves(hints[f.name])]
        else:
            out.append(Leaf(f.name, hints[f.name], default, docs.get(f.name, ""), f.metadata, None,
                            _part_title(cls, f.name)))
    return out


def _part_title(cls: type, name: str) -> str | None:
    """The docstring's first line of the dataclass base that first declares field ``name`` (None when that is
    ``cls`` itself, or the field comes from a base that is not a dataclass)."""
    owner = next(k for k in reversed(cls.__mro__) if name in k.__dict__.get("__annotations__", {}))
    if owner is cls or not dataclasses.is_dataclass(owner):
        return None
    return inspect.getdoc(owner).splitlines()[0]


def _optional(kind: Any) -> Any:
    """``X | None`` as X."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        return args[0] if len(args) == 1 else kind
    return kind


def plain(text: str) -> str:
    """Text without RST markup: ``x``, :func:`x` and `x` as x."""
    text = re.sub(r":\w+:`~?([^`]*)`", r"\1", text)
    return re.sub(r"``([^`]*)``|`([^`]*)`", lambda m: m.group(1) or m.group(2), text)


def shown(value: Any) -> str:
    """A default as the help says it; empty when there is nothing to say (None, '', an empty list)."""
    if value is None or value is MISSING or isinstance(value, bool):
        return ""
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return " ".join(map(str, value))
    return str(value)


def flag_help(leaf: Leaf) -> str:
    """What the flag does, with its default once (unless the docstring already says it); a switch that turns
    a field off says 'do not ...'."""
    text = plain(leaf.doc)
    if leaf.kind is bool:
        text = f"do not {text}" if leaf.default else text
    elif (default := leaf.meta.get("shown") or shown(leaf.default)) and "default" not in text.lower():
        text += f" (default: {default})"
    return text.replace("%", "%%")


class _Options(argparse.Action):
    """NAME=VALUE, once per option: the pairs collect into a dict (a later one overrides an earlier one)."""

    def __call__(self, parser, namespace, values, option_string=None):
        try:
            pairs = parse_options([values])
        except ValueError as e:
            raise argparse.ArgumentError(self, str(e)) from None
        setattr(namespace, self.dest, {**(getattr(namespace, self.dest, None) or {}), **pairs})


def _reader(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse type from a parser raising ValueError: its message becomes argparse's error."""
    def read(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    return read


def _argument(leaf: Leaf) -> tuple[list[str], dict]:
    """The names and keywords of add_argument for one field."""
    meta, kind = leaf.meta, _optional(leaf.kind)
    dashed = leaf.name.replace("_", "-")
    names = [leaf.name] if meta.get("positional") else [meta.get("flag") or f"--{dashed}"]
    kw: dict = {"default": argparse.SUPPRESS, "help": flag_help(leaf)}
    if not meta.get("positional"):
        kw["dest"] = leaf.name
        kw["required"] = leaf.default is MISSING
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if kind is bool:
        if leaf.default:
            names = [f"--no-{dashed}"]
        kw["action"] = "store_false" if leaf.default else "store_true"
        return names, kw
    if not meta.get("positional"):
        kw["metavar"] = meta.get("metavar") or ("NAME=VALUE" if origin is dict else leaf.name.upper())
    if origin is dict:
        kw["action"] = _Options
    elif meta.get("parse"):
        kw["type"] = _reader(meta["parse"])
        if meta.get("repeat"):
            kw["action"] = "append"
    elif origin is Literal:
        kw["choices"] = args
        kw.pop("metavar", None)
    elif origin in (list, tuple):
        kw["type"] = args[0]
        if meta.get("repeat"):
            kw["action"] = "append"
        elif origin is tuple and Ellipsis not in args:
            kw["nargs"] = len(args)
        else:
            kw["nargs"] = "+" if leaf.default is MISSING else "*"
    else:
        kw["type"] = kind
        if meta.get("positional") and leaf.default is not MISSING:
            kw["nargs"] = "?"  # a positional with a default may be left out
    return names, kw


def add_arguments(parser: argparse.ArgumentParser, cls: type) -> None:
    """One flag per field of the dataclass ``cls`` (see :func:`leaves`): ``--name-with-dashes``; a boolean as a
    switch (``--no-name`` when it defaults to on); a Literal as choices; a list as several values; a dict as
    NAME=VALUE pairs; a field without a default as a required flag. Flags that are not given stay out of the
    namespace (argparse.SUPPRESS), so that :func:`from_args` can tell what a command sets."""
    groups: dict[str, argparse._ArgumentGroup] = {}
    for leaf in leaves(cls):
        target = parser if leaf.group is None else groups.get(leaf.group)
        if target is None:
            target = groups[leaf.group] = parser.add_argument_group(plain(leaf.group))
        names, kw = _argument(leaf)
        target.add_argument(*names, **kw)


def from_args(cls: type, args: argparse.Namespace, base: Any = None) -> Any:
    """``base`` (default: ``cls``'s defaults) with the fields the command line gave. A dict given (NAME=VALUE
    options) updates the base's; a positional list given empty is not given."""
    given = vars(args)
    parts: dict[str | None, dict] = {}
    for leaf in leaves(cls):
        if leaf.name not in given or (leaf.meta.get("positional") and given[leaf.name] == []):
            continue
        value = given[leaf.name]
        owner = base if base is None or leaf.part is None else getattr(base, leaf.part)
        current = leaf.default if base is None else getattr(owner, leaf.name)
        if isinstance(value, dict) and isinstance(current, dict):
            value = {**current, **value}
        if typing.get_origin(_optional(leaf.kind)) is tuple and isinstance(value, list):
            value = tuple(value)
        parts.setdefault(leaf.part, {})[leaf.name] = value
    top = parts.pop(None, {})
    for part, values in parts.items():
        top[part] = dataclasses.replace(getattr(base, part) if base is not None else _default(cls, part), **values)
    return cls(**top) if base is None else dataclasses.replace(base, **top)


def _default(cls: type, name: str) -> Any:
    f = next(f for f in dataclasses.fields(cls) if f.name == name)
    return f.default_factory() if f.default_factory is not MISSING else f.default


def from_dict(cls: type, saved: dict) -> Any:
    """A configuration saved as ``dataclasses.asdict`` writes it (a dataclass field as a dict): keys it does not
    know are dropped and fields it lacks keep their defaults, so configurations saved by older code load."""
    hints = typing.get_type_hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        if f.name in saved:
            value = saved[f.name]
            values[f.name] = from_dict(hints[f.name], value) if dataclasses.is_dataclass(hints[f.name]) else value
    return cls(**values)


def run_changes(saved: Any, given: Any) -> list[str]:
    """The fields in which ``given`` is a different run than ``saved``, as 'name saved -> given' (runtime
    fields may differ; paths compare as absolute paths)."""
    changes = []
    for leaf in leaves(type(given)):
        if leaf.meta.get("runtime"):
            continue
        a, b = (getattr(cfg if leaf.part is None else getattr(cfg, leaf.part), leaf.name) for cfg in (saved, given))
        if leaf.meta.get("paths"):
            a, b = _absolute(a), _absolute(b)
        if a != b:
            changes.append(f"{leaf.name} {a} -> {b}")
    return changes


def _absolute(paths: Any) -> Any:
    return [os.path.abspath(p) for p in paths] if isinstance(paths, list | tuple) else os.path.abspath(paths)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def check_choices(cfg: Any) -> None:
    """ValueError naming the first Literal field whose value is not one of its choices."""
    for name, kind in typing.get_type_hints(type(cfg)).items():
        if typing.get_origin(kind) is Literal and getattr(cfg, name) not in typing.get_args(kind):
            raise UserError(f"{_flag(name)} {getattr(cfg, name)!r}: expected one of "
                             f"{', '.join(map(str, typing.get_args(kind)))}")


def at_least(cfg: Any, low: float, *names: str) -> None:
    """ValueError naming the first of the fields below ``low`` (None counts as unset and passes)."""
    for name in names:
        value = getattr(cfg, name)
        if value is not None and value < low:
            raise UserError(f"{_flag(name)} must be at least {low}, not {value}")


def within(cfg: Any, low: float, high: float, *names: str) -> None:
    """ValueError naming the first of the fields outside [low, high]."""
    for name in names:
        if not low <= getattr(cfg, name) <= high:
            raise UserError(f"{_flag(name)} must be in [{low}, {high}], not {getattr(cfg, name)}")


def parse_options(pairs: list[str] | None) -> dict[str, str]:
    """``NAME=VALUE`` strings (the name may contain spaces: ``Skill Level=-20``) as a dict."""
    options = {}
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise UserError(f"option {pair!r}: expected NAME=VALUE")
        options[name.strip()] = value.strip()
    return options

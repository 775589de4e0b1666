"""Walk a JSON Schema alongside a document: which sub-schema governs each value.

Used to lower-case enum values before validation and to convert durations and sizes after it,
so the schema stays the one place that says which field is a duration, a size or an enum.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


class SchemaWalker:
    def __init__(self, root: Schema) -> None:
        self.root = root
        self._children: dict[tuple[int, str, type], Schema | None] = {}
        self._items: dict[tuple[int, type], Schema | None] = {}
        self._strings: dict[int, tuple[frozenset[str] | None, str | None]] = {}
        self._string_children: dict[tuple[int, str], tuple[frozenset[str] | None, str | None]] = {}

    def ref_name(self, schema: Schema | None) -> str | None:
        """``{"$ref": "#/$defs/duration"}`` -> ``duration``."""
        if not schema:
            return None
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return ref.rsplit("/", 1)[1]
        return None

    def resolve(self, schema: Schema | None) -> Schema:
        seen = 0
        while schema and "$ref" in schema and seen < 32:
            ref = schema["$ref"]
            node: Any = self.root
            for part in ref.lstrip("#/").split("/"):
                node = node.get(part, {}) if isinstance(node, dict) else {}
            schema = node
            seen += 1
        return schema or {}

    def branch(self, schema: Schema | None, value: Any) -> Schema:
        """The anyOf/oneOf branch whose type fits the value (or the schema itself)."""
        s = self.resolve(schema)
        for key in ("anyOf", "oneOf"):
            if key in s:
                for option in s[key]:
                    r = self.resolve(option)
                    if _type_fits(r, value):
                        return option if "$ref" in option else r
        return s

    def child(self, schema: Schema | None, key: str, value: Any) -> Schema | None:
        memo = (id(schema), key, type(value))
        if memo in self._children:
            return self._children[memo]
        found = self._child(schema, key, value)
        self._children[memo] = found
        return found

    def _child(self, schema: Schema | None, key: str, value: Any) -> Schema | None:
        s = self.resolve(self.branch(schema, value))
        props = s.get("properties", {})
        if key in props:
            sub: Schema = props[key]
            return sub
        addl = s.get("additionalProperties")
        if isinstance(addl, dict):
            return addl
        return None

    def string_leaf(self, schema: Schema | None) -> tuple[frozenset[str] | None, str | None]:
        """For a string value governed by ``schema``: its enum values (when all are strings) and
        the name of its ``$defs`` unit (``duration``, ``size``), memoized per schema node."""
        key = id(schema)
        hit = self._strings.get(key)
        if hit is None:
            branch = self.branch(schema, "")
            enum = self.resolve(branch).get("enum")
            enums = frozenset(enum) if isinstance(enum, list) and all(isinstance(e, str) for e in enum) else None
            hit = self._strings[key] = (enums, self.ref_name(branch) or self.ref_name(schema))
        return hit

    def string_child(self, schema: Schema | None, key: str) -> tuple[frozenset[str] | None, str | None]:
        """``string_leaf`` of the schema of a string at ``key`` of a mapping governed by
        ``schema`` (most values of a document are such strings: one lookup for them)."""
        memo = (id(schema), key)
        hit = self._string_children.get(memo)
        if hit is None:
            hit = self._string_children[memo] = self.string_leaf(self.child(schema, key, ""))
        return hit

    def item(self, schema: Schema | None, value: Any) -> Schema | None:
        memo = (id(schema), type(value))
        if memo not in self._items:
            self._items[memo] = self._item(schema, value)
        return self._items[memo]

    def _item(self, schema: Schema | None, value: Any) -> Schema | None:
        s = self.resolve(self.branch(schema, value))
        items = s.get("items")
        return items if isinstance(items, dict) else None

    def properties(self, schema: Schema | None, value: Any) -> list[str]:
        s = self.resolve(self.branch(schema, value))
        return list(s.get("properties", {}))


def _type_fits(schema: Schema, value: Any) -> bool:
    t = schema.get("type")
    if t is None:
        return True
    types = t if isinstance(t, list) else [t]
    for name in types:
        py = _JSON_TYPES.get(name, ())
        if isinstance(value, bool) and name in ("integer", "number"):
            continue
        if isinstance(value, py):
            return True
    return False


_WALKERS: dict[int, tuple[Schema, SchemaWalker]] = {}


def walker_for(schema: Schema) -> SchemaWalker:
    """One walker (and its memo) per loaded schema."""
    hit = _WALKERS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    walker = SchemaWalker(schema)
    _WALKERS[id(schema)] = (schema, walker)
    return walker

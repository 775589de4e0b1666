"""Iceberg type normalization and the spec's promotion rules (streamwarden.iceberg.types): pure, so
the pull-request schema diff can reuse them. pyiceberg objects are covered where it is installed."""

from __future__ import annotations

import pytest

from streamwarden.iceberg.types import (
    TypeSyntaxError,
    is_promotion,
    is_transform,
    normalize_type,
    parse_type,
    transform_output_changes,
    type_change,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("decimal(12, 2)", "decimal(12,2)"),
        ("Decimal( 12 ,2 )", "decimal(12,2)"),
        ("LONG", "long"),
        ("fixed[ 16 ]", "fixed[16]"),
        ("timestamptz_ns", "timestamptz_ns"),
        ("list<decimal(10, 2)>", "list<decimal(10,2)>"),
        ("map<string, long>", "map<string,long>"),
        ("map<string, list<int>>", "map<string,list<int>>"),
        ("struct<a: int, b: decimal(9, 3)>", "struct<a:int,b:decimal(9,3)>"),
        # pyiceberg's str() of a struct: field ids and required-ness are dropped
        ("struct<10: a: optional int, 11: b: required fixed[16]>", "struct<a:int,b:fixed[16]>"),
        ("list<struct<10: x: optional map<string, long>>>", "list<struct<x:map<string,long>>>"),
    ],
)
def test_normalize_type_matches_the_contract_form(text: str, expected: str) -> None:
    assert normalize_type(text) == expected


@pytest.mark.parametrize("text", ["decimal(12)", "varchar", "list<int", "map<int>", "struct<: int>", "list<int>>"])
def test_normalize_type_rejects_what_is_not_an_iceberg_type(text: str) -> None:
    with pytest.raises(TypeSyntaxError):
        normalize_type(text)


def test_normalize_type_reads_pyiceberg_type_objects() -> None:
    types = pytest.importorskip("pyiceberg.types")
    nested = types.StructType(
        types.NestedField(1, "Amount", types.DecimalType(12, 2), required=False),
        types.NestedField(2, "tags", types.ListType(3, types.StringType(), element_required=False)),
        types.NestedField(4, "m", types.MapType(5, types.StringType(), 6, types.TimestamptzType())),
    )
    assert normalize_type(types.DecimalType(12, 2)) == "decimal(12,2)"
    assert normalize_type(types.FixedType(16)) == "fixed[16]"
    assert normalize_type(nested) == "struct<amount:decimal(12,2),tags:list<string>,m:map<string,timestamptz>>"
    assert normalize_type(str(nested)) == normalize_type(nested)


@pytest.mark.parametrize(
    ("old", "new", "version"),
    [
        ("int", "long", 1),
        ("int", "long", 2),
        ("float", "double", 2),
        ("decimal(10,2)", "decimal(12,2)", 2),
        ("decimal(10, 2)", "decimal(38,2)", 1),
        ("date", "timestamp", 3),
        ("date", "timestamp_ns", 3),
        ("unknown", "string", 3),
        ("list<int>", "list<long>", 2),
        ("map<string,float>", "map<string,double>", 2),
        ("struct<a:int,b:string>", "struct<a:long,b:string>", 2),
    ],
)
def test_spec_promotions(old: str, new: str, version: int) -> None:
    assert is_promotion(old, new, version)
    assert type_change(old, new, version) == "promotion"


@pytest.mark.parametrize(
    ("old", "new", "version"),
    [
        ("long", "int", 2),  # narrowing
        ("double", "float", 2),
        ("decimal(12,2)", "decimal(10,2)", 2),  # precision narrowing
        ("decimal(12,2)", "decimal(14,4)", 2),  # scale change: pyiceberg accepts it, the spec does not
        ("decimal(12,2)", "decimal(12,2)", 2),  # nothing changes: not a promotion
        ("string", "binary", 2),  # pyiceberg accepts it, the spec does not
        ("binary", "string", 2),
        ("fixed[16]", "uuid", 2),
        ("date", "timestamp", 2),  # v3 only
        ("date", "timestamptz", 3),  # never to the tz types
        ("date", "timestamptz_ns", 3),
        ("int", "string", 2),
        ("unknown", "string", 2),  # v3 only
        ("int", "double", 2),
        ("map<int,string>", "map<long,string>", 2),  # map keys cannot change
        ("struct<a:int>", "struct<b:long>", 2),  # renamed nested field: not a type change
        ("list<int>", "int", 2),
        ("int", "struct<a:int>", 2),
    ],
)
def test_not_promotions(old: str, new: str, version: int) -> None:
    assert not is_promotion(old, new, version)


def test_type_change_classifies_same_and_incompatible() -> None:
    assert type_change("decimal(12, 2)", "decimal(12,2)") == "same"
    assert type_change("string", "binary") == "incompatible"
    assert type_change("list<int>", "list<string>") == "incompatible"


@pytest.mark.parametrize(
    ("transform", "old", "new", "changes"),
    [
        ("identity", "date", "timestamp", True),  # days -> microseconds
        ("identity", "date", "timestamp_ns", True),
        ("bucket[16]", "date", "timestamp", True),  # a different hash input
        ("day", "date", "timestamp", False),
        ("month", "date", "timestamp_ns", False),
        ("year", "date", "timestamp", False),
        ("hour", "date", "timestamp", True),  # hour never applied to a date
        ("void", "date", "timestamp", False),
        ("identity", "int", "long", False),  # the same value
        ("bucket[8]", "int", "long", False),  # ints hash as longs
        ("truncate[10]", "int", "long", False),
        ("bucket[8]", "decimal(10,2)", "decimal(20,2)", False),  # hashed by unscaled value
        ("truncate[4]", "decimal(10,2)", "decimal(12,2)", False),
        ("identity", "float", "double", False),
        ("identity", "unknown", "long", False),  # only nulls
        ("identity", "long", "long", False),
        ("identity", "string", "binary", True),  # not a promotion: nothing can be assumed
        ("bucket[4]", "int", "string", True),
    ],
)
def test_transform_output_changes(transform: str, old: str, new: str, changes: bool) -> None:
    assert transform_output_changes(transform, old, new) is changes


def test_transform_output_changes_rejects_unknown_transforms() -> None:
    with pytest.raises(TypeSyntaxError):
        transform_output_changes("days", "date", "timestamp")
    assert is_transform("bucket[16]") and is_transform("truncate[ 4 ]") and not is_transform("bucket")


def test_parse_type_exposes_structure() -> None:
    t = parse_type("map<string, decimal(9,2)>")
    assert t.kind == "map"
    assert [c.render() for c in t.children] == ["string", "decimal(9,2)"]


# --- format v3 types and the decimal limit -------------------------------------------------------


def test_decimal_precision_is_at_most_38() -> None:
    assert is_promotion("decimal(30,2)", "decimal(38,2)")
    with pytest.raises(TypeSyntaxError, match="38"):  # decimal(39,2) is no type: no promotion to it
        is_promotion("decimal(38,2)", "decimal(39,2)")
    with pytest.raises(TypeSyntaxError, match="38"):
        normalize_type("decimal(39,2)")
    with pytest.raises(TypeSyntaxError):
        normalize_type("decimal(10,11)")  # the scale cannot exceed the precision


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("geometry", "geometry"),
        ("geometry(srid:4326)", "geometry(srid:4326)"),
        ("GEOMETRY( srid:4326 )", "geometry(srid:4326)"),
        ("geography", "geography"),
        ("geography(srid:4326, spherical)", "geography(srid:4326,spherical)"),
        ("geography(OGC:CRS84,vincenty)", "geography(ogc:crs84,vincenty)"),
        ("list<geometry(srid:3857)>", "list<geometry(srid:3857)>"),
        (
            "struct<shape: geography(srid:4326, karney), v: variant>",
            "struct<shape:geography(srid:4326,karney),v:variant>",
        ),
    ],
)
def test_geo_types_parse(text: str, expected: str) -> None:
    assert normalize_type(text) == expected


@pytest.mark.parametrize("text", ["geometry()", "geography(srid:4326, flat)", "geometry(srid:4326, spherical)"])
def test_geo_types_refuse_what_the_spec_does_not_define(text: str) -> None:
    with pytest.raises(TypeSyntaxError):
        normalize_type(text)


@pytest.mark.parametrize(
    "new", ["long", "decimal(12,2)", "geometry(srid:4326)", "variant", "list<int>", "struct<a:int>", "map<string,int>"]
)
def test_unknown_may_become_any_type_on_v3_only(new: str) -> None:
    assert type_change("unknown", new, 3) == "promotion"
    assert type_change("unknown", new, 2) == "incompatible"


def test_geo_crs_and_algorithm_changes_are_not_promotions() -> None:
    assert type_change("geometry(srid:4326)", "geometry(srid:3857)", 3) == "incompatible"
    assert type_change("geography(srid:4326,spherical)", "geography(srid:4326,vincenty)", 3) == "incompatible"
    assert type_change("geometry(srid:4326)", "geometry(srid:4326)", 3) == "same"

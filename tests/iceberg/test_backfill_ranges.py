"""How a declared range meets partition values (iceberg/backfill.py): each transform's partition
value maps back to the stretch of the source column it holds, in the column's unit, at its edges."""

from __future__ import annotations

import pytest

pytest.importorskip("pyiceberg", reason="the iceberg extra is not installed")

from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.transforms import DayTransform, HourTransform, IdentityTransform, MonthTransform, YearTransform

from streamwarden.iceberg.backfill import RangeError, _parse, _partition_field, _span, show

US = "timestamptz"


def test_declared_bounds_in_the_columns_unit() -> None:
    assert _parse("2025-07-01", US, "from") == _parse("2025-07-01T00:00:00Z", US, "from") == 1_751_328_000_000_000
    assert _parse("2025-07-01T02:00:00+02:00", US, "from") == 1_751_328_000_000_000
    assert _parse("2025-07-01", "date", "from") == 20270
    assert _parse("2025-07-01", "timestamptz_ns", "from") == 1_751_328_000_000_000_000
    assert _parse(" 42 ", "long", "from") == 42
    with pytest.raises(RangeError, match="neither an RFC 3339 instant nor a date"):
        _parse("July", US, "from")
    with pytest.raises(RangeError, match="only int, long, date and timestamps"):
        _parse("a", "string", "from")


def test_each_transform_holds_its_whole_stretch() -> None:
    day = 86_400_000_000
    assert _span("day", 20270, US) == (20270 * day, 20271 * day - 1)
    assert _span("hour", 1, US) == (3_600_000_000, 7_200_000_000 - 1)
    assert _span("month", 666, "date") == (20270, 20300)  # 2025-07: July 1st to 31st
    assert _span("month", 671, "date") == (20423, 20453)  # 2025-12 ends on the 31st
    assert _span("year", 55, "date") == (20089, 20453)  # 2025
    assert _span("identity", 7, "long") == (7, 7)
    assert show(20270 * day, US) == "2025-07-01T00:00:00Z" and show(20270, "date") == "2025-07-01"


def test_the_finest_order_preserving_partition_field_is_used() -> None:
    spec = PartitionSpec(
        PartitionField(source_id=3, field_id=1000, transform=YearTransform(), name="y"),
        PartitionField(source_id=3, field_id=1001, transform=DayTransform(), name="d"),
        PartitionField(source_id=3, field_id=1002, transform=MonthTransform(), name="m"),
        PartitionField(source_id=1, field_id=1003, transform=IdentityTransform(), name="id"),
    )
    assert _partition_field(spec, 3) == (1, "d", "day")
    assert _partition_field(spec, 1) == (3, "id", "identity")
    assert _partition_field(spec, 2) is None
    hourly = PartitionSpec(
        PartitionField(source_id=3, field_id=1000, transform=DayTransform(), name="d"),
        PartitionField(source_id=3, field_id=1001, transform=HourTransform(), name="h"),
    )
    assert _partition_field(hourly, 3) == (1, "h", "hour")

"""The example pipeline orders-enrichment (contracts/examples/orders-enrichment/contract.yaml) as a
DataStream job with the operator uids its contract declares, for the savepoints shipped with the
examples (scripts/record_example_savepoints.py):

- ``orders-source`` and ``customers-source``: NumberSequenceSources standing in for the two Kafka
  topics (split enumerator = coordinator state, reader = operator state);
- ``orders-dedup`` (``--dedup-uid``): keyed by order id, a ValueState "seen" with a 24h TTL;
- ``orders-enrich-join`` (``--join-uid``): the orders keyed by customer id, connected with the
  customer changelog, a ValueState with the customer's segment and country (the contract renamed
  it from ``orders-join`` and claims the old uid's state with ``restores_from``: the recorded job
  is the version before the rename, ``--join-uid orders-join``);
- ``orders-iceberg-sink``: a discarding sink standing in for the Iceberg sink (no Iceberg
  connector on this cluster); the table's commits are built by scripts/make_example_lake.py.

Max parallelism 128 (``job.max_parallelism``), parallelism ``--parallelism`` (the contract's 4).
Submitted with ``bin/flink run -d -py orders_enrichment.py --name NAME``. Runs inside the Flink venv.
"""

from __future__ import annotations

import argparse

from pyflink.common import Types, WatermarkStrategy
from pyflink.common.time import Time
from pyflink.datastream import KeyedProcessFunction, RuntimeContext, StreamExecutionEnvironment
from pyflink.datastream.connectors.number_seq import NumberSequenceSource
from pyflink.datastream.functions import KeyedCoProcessFunction, SinkFunction
from pyflink.datastream.state import StateTtlConfig, ValueStateDescriptor

ORDER = Types.TUPLE([Types.LONG(), Types.LONG(), Types.LONG()])  # order id, customer id, cents
ENRICHED = Types.TUPLE([Types.LONG(), Types.LONG(), Types.LONG(), Types.STRING(), Types.STRING()])
SEGMENTS = ("consumer", "smb", "enterprise")
COUNTRIES = ("DE", "FR", "NL", "ES", "IT", "PL", "SE")


class Dedup(KeyedProcessFunction):
    """The first event of an order id passes; repeats within the TTL are dropped."""

    def __init__(self) -> None:
        self.seen = None

    def open(self, runtime_context: RuntimeContext) -> None:
        descriptor = ValueStateDescriptor("seen", Types.BOOLEAN())
        descriptor.enable_time_to_live(StateTtlConfig.new_builder(Time.hours(24)).build())
        self.seen = runtime_context.get_state(descriptor)

    def process_element(self, value, ctx):  # type: ignore[no-untyped-def]
        if not self.seen.value():
            self.seen.update(True)
            yield value


class EnrichJoin(KeyedCoProcessFunction):
    """Orders (input 1) enriched with the latest customer row (input 2) of their customer id."""

    def __init__(self) -> None:
        self.customer = None

    def open(self, runtime_context: RuntimeContext) -> None:
        descriptor = ValueStateDescriptor("customer", Types.TUPLE([Types.STRING(), Types.STRING()]))
        descriptor.enable_time_to_live(StateTtlConfig.new_builder(Time.days(7)).build())
        self.customer = runtime_context.get_state(descriptor)

    def process_element1(self, value, ctx):  # type: ignore[no-untyped-def]
        segment, country = self.customer.value() or (None, None)
        yield value[0], value[1], value[2], segment, country

    def process_element2(self, value, ctx):  # type: ignore[no-untyped-def]
        self.customer.update((value[1], value[2]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--dedup-uid", default="orders-dedup")
    parser.add_argument("--join-uid", default="orders-enrich-join")
    parser.add_argument("--parallelism", type=int, default=4)
    args = parser.parse_args()
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(args.parallelism)
    env.set_max_parallelism(128)
    orders = (
        env.from_source(
            NumberSequenceSource(0, 10**15), WatermarkStrategy.no_watermarks(), "orders-source", type_info=Types.LONG()
        )
        .uid("orders-source")
        .map(lambda n: (n % 5000, n % 997, 500 + n % 90000), output_type=ORDER)
        .uid("parse-orders")
        .name("parse-orders")
    )
    customers = (
        env.from_source(
            NumberSequenceSource(0, 10**15),
            WatermarkStrategy.no_watermarks(),
            "customers-source",
            type_info=Types.LONG(),
        )
        .uid("customers-source")
        .map(
            lambda n: (n % 997, SEGMENTS[n % 3], COUNTRIES[n % 7]),
            output_type=Types.TUPLE([Types.LONG(), Types.STRING(), Types.STRING()]),
        )
        .uid("parse-customers")
        .name("parse-customers")
    )
    deduped = (
        orders.key_by(lambda o: o[0], key_type=Types.LONG())
        .process(Dedup(), output_type=ORDER)
        .uid(args.dedup_uid)
        .name(args.dedup_uid)
    )
    joined = (
        deduped.connect(customers)
        .key_by(lambda o: o[1], lambda c: c[0], key_type=Types.LONG())
        .process(EnrichJoin(), output_type=ENRICHED)
        .uid(args.join_uid)
        .name(args.join_uid)
    )
    joined.add_sink(SinkFunction("org.apache.flink.streaming.api.functions.sink.legacy.DiscardingSink")).uid(
        "orders-iceberg-sink"
    ).name("orders-iceberg-sink")
    env.execute_async(args.name)


if __name__ == "__main__":
    main()

"""A DataStream job whose stateful operators have known uids, for the savepoint tests: a
NumberSequenceSource (uid ``orders-source``: split enumerator = coordinator state, reader = operator
state) -> a stateless map (uid ``to-pair``) -> key_by -> a keyed counter with ValueState (uid
``--dedup-uid``, default ``orders-dedup``) -> a discarding sink (uid ``orders-sink``).

Submitted with ``bin/flink run -d -py keyed_uids.py --name NAME``; a restore passes
``-D execution.state-recovery.path=...``. Runs inside the Flink venv.
"""

from __future__ import annotations

import argparse

from pyflink.common import Types, WatermarkStrategy
from pyflink.datastream import KeyedProcessFunction, RuntimeContext, StreamExecutionEnvironment
from pyflink.datastream.connectors.number_seq import NumberSequenceSource
from pyflink.datastream.functions import SinkFunction
from pyflink.datastream.state import ValueStateDescriptor


class CountPerKey(KeyedProcessFunction):
    def __init__(self) -> None:
        self.count = None

    def open(self, runtime_context: RuntimeContext) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value, ctx):  # type: ignore[no-untyped-def]
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        yield value[0], n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--dedup-uid", default="orders-dedup")
    parser.add_argument("--max-parallelism", type=int, default=128)
    args = parser.parse_args()
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.set_max_parallelism(args.max_parallelism)
    numbers = env.from_source(
        NumberSequenceSource(0, 10**15), WatermarkStrategy.no_watermarks(), "orders-source", type_info=Types.LONG()
    ).uid("orders-source")
    counted = (
        numbers.map(lambda n: (n % 100, n), output_type=Types.TUPLE([Types.LONG(), Types.LONG()]))
        .uid("to-pair")
        .name("to-pair")
        .key_by(lambda t: t[0], key_type=Types.LONG())
        .process(CountPerKey(), output_type=Types.TUPLE([Types.LONG(), Types.LONG()]))
        .uid(args.dedup_uid)
        .name(args.dedup_uid)
    )
    counted.add_sink(SinkFunction("org.apache.flink.streaming.api.functions.sink.legacy.DiscardingSink")).uid(
        "orders-sink"
    ).name("orders-sink")
    env.execute_async(args.name)


if __name__ == "__main__":
    main()

"""A stateful DataStream job with uid'ed operators: datagen (SQL) -> key_by -> a keyed counter
(ValueState) -> a discarding sink. ``--stall-seconds N`` makes the counter sleep N seconds on
every record, which holds checkpoint barriers back: checkpoints expire and fail.

Submitted with ``bin/flink run -d -py stateful_datastream.py --name NAME``; checkpoint settings
come from ``-D`` properties on the command line. Runs inside the Flink venv.
"""

from __future__ import annotations

import argparse
import time

from pyflink.common import Types
from pyflink.datastream import KeyedProcessFunction, RuntimeContext, StreamExecutionEnvironment
from pyflink.datastream.functions import SinkFunction
from pyflink.datastream.state import ValueStateDescriptor
from pyflink.table import StreamTableEnvironment


class CountPerKey(KeyedProcessFunction):
    def __init__(self, stall_seconds: float) -> None:
        self.stall_seconds = stall_seconds
        self.count = None

    def open(self, runtime_context: RuntimeContext) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value, ctx):  # type: ignore[no-untyped-def]
        if self.stall_seconds:
            time.sleep(self.stall_seconds)
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        yield value[0], n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--rows-per-second", type=int, default=5)
    parser.add_argument("--stall-seconds", type=float, default=0.0)
    args = parser.parse_args()
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql(
        f"""CREATE TABLE events (k INT, v BIGINT) WITH (
              'connector' = 'datagen', 'rows-per-second' = '{args.rows_per_second}',
              'fields.k.min' = '1', 'fields.k.max' = '20')"""
    )
    rows = t_env.to_data_stream(t_env.from_path("events"))
    counted = (
        rows.map(lambda r: (r[0], r[1]), output_type=Types.TUPLE([Types.INT(), Types.LONG()]))
        .uid("to-tuple")
        .key_by(lambda t: t[0], key_type=Types.INT())
        .process(CountPerKey(args.stall_seconds), output_type=Types.TUPLE([Types.INT(), Types.LONG()]))
        .uid("count-per-key")
        .name("count-per-key")
    )
    counted.add_sink(SinkFunction("org.apache.flink.streaming.api.functions.sink.legacy.DiscardingSink")).uid(
        "discard-sink"
    )
    env.execute_async(args.name)


if __name__ == "__main__":
    main()

"""A job that reads a Kafka topic through flink-connector-kafka's KafkaSource (uid ``orders-source``,
the uid the example contract declares) into a discarding sink: the source's splits and enumerator
are the only state. It commits its offsets to the consumer group on each checkpoint (the
connector's default), which is what the tests compare the savepoint's split state with.

Submitted with ``bin/flink run -d -py kafka_orders.py --name NAME --bootstrap HOST:PORT --topic T
--group G --jars file:///...jar,file:///...jar``; checkpoint settings come from ``-D`` properties.
Runs inside the Flink venv; the connector jars ship with the job (``pipeline.jars``), the cluster's
lib/ is left as it is.
"""

from __future__ import annotations

import argparse

from pyflink.common import WatermarkStrategy
from pyflink.common.serialization import SimpleStringSchema
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.connectors.kafka import KafkaOffsetsInitializer, KafkaSource
from pyflink.datastream.functions import SinkFunction


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--group", required=True)
    parser.add_argument("--jars", required=True, help="comma-separated file:// URLs")
    parser.add_argument("--parallelism", type=int, default=2)
    args = parser.parse_args()
    env = StreamExecutionEnvironment.get_execution_environment()
    env.add_jars(*args.jars.split(","))
    env.set_parallelism(args.parallelism)
    env.set_max_parallelism(128)
    source = (
        KafkaSource.builder()
        .set_bootstrap_servers(args.bootstrap)
        .set_topics(args.topic)
        .set_group_id(args.group)
        .set_starting_offsets(KafkaOffsetsInitializer.earliest())
        .set_value_only_deserializer(SimpleStringSchema())
        .set_property("partition.discovery.interval.ms", "0")
        .build()
    )
    stream = env.from_source(source, WatermarkStrategy.no_watermarks(), "orders-topic").uid("orders-source")
    stream.add_sink(SinkFunction("org.apache.flink.streaming.api.functions.sink.legacy.DiscardingSink")).uid(
        "discard-sink"
    )
    env.execute_async(args.name)


if __name__ == "__main__":
    main()

"""A stateful SQL job: datagen -> GROUP BY -> blackhole, built with a TableEnvironment.

Submitted with ``bin/flink run -d -py sql_groupby.py --name NAME [--rows-per-second N]``; the
checkpoint settings come from ``-D`` properties on the command line. Runs inside the Flink venv.
"""

from __future__ import annotations

import argparse

from pyflink.table import EnvironmentSettings, TableEnvironment


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--rows-per-second", type=int, default=5)
    args = parser.parse_args()
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("pipeline.name", args.name)
    t_env.execute_sql(
        f"""CREATE TABLE src (k INT, v BIGINT) WITH (
              'connector' = 'datagen', 'rows-per-second' = '{args.rows_per_second}',
              'fields.k.min' = '1', 'fields.k.max' = '50')"""
    )
    t_env.execute_sql("CREATE TABLE sink (k INT, cnt BIGINT, total BIGINT) WITH ('connector' = 'blackhole')")
    # detached submission: execute_sql returns once the job is submitted
    t_env.execute_sql("INSERT INTO sink SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k")


if __name__ == "__main__":
    main()

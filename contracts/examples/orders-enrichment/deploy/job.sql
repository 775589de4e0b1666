-- orders-enrichment: statements the job runs at start-up.
-- OrdersEnrichmentJob executes this file with StreamTableEnvironment#executeSql, one statement at
-- a time, before it builds the DataStream part (sources, dedup, enrichment join and Iceberg sink,
-- all with explicit uids). The SET lines below are part of the job's configuration and are read
-- by streamwarden together with flinkdeployment.yaml beside this file.

SET 'pipeline.name' = 'orders-enrichment';
SET 'table.local-time-zone' = 'UTC';
-- Any state created by SQL operators expires after a day, like orders-dedup.
SET 'table.exec.state.ttl' = '24 h';

-- Raw order events as registered by the job (orders_raw is a DataStream view).
CREATE TEMPORARY VIEW valid_orders AS
SELECT
  order_id,
  order_ts,
  customer_id,
  LOWER(status) AS status,
  CAST(amount AS DECIMAL(12, 2)) AS amount,
  COALESCE(currency, 'EUR') AS currency,
  promo_codes,
  event_time AS updated_at
FROM orders_raw
WHERE order_id IS NOT NULL
  AND amount >= 0;

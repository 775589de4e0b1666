"""streamwarden: policy-as-code for Flink jobs that write Iceberg tables."""

__version__ = "0.1.0"

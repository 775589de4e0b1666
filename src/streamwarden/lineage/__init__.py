"""OpenLineage run events of ``gate``, ``evidence`` and ``check --env`` (docs/openlineage.md).

Off unless the openlineage-python client is configured the way its users configure it
(``openlineage.yml``, ``OPENLINEAGE_CONFIG``, ``OPENLINEAGE_URL``, ``OPENLINEAGE__TRANSPORT__*``):
then each run emits START and COMPLETE (or FAIL) with one run id, through the client's own
transports. ``naming.py`` names the datasets (OpenLineage's naming conventions, no client
needed); ``emit.py`` decides whether the client is configured, builds the events with the
client's classes and sends them. Nothing here imports the client until a configuration is found.
"""

"""The other verbs, one module each, building data only (never text): ``diff``, ``gate``,
``evidence``, ``init``, ``savepoint inspect``, ``policy test`` / ``policy doc`` and the contract
reference. The command line calls them and hands their data to a renderer."""

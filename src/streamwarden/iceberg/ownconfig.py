"""Where PyIceberg may read its own configuration file from while streamwarden runs.

PyIceberg looks for ``.pyiceberg.yaml`` in ``$PYICEBERG_HOME``, then the home directory, then the
current directory, and merges what it finds for a catalog's name under the properties
``streamwarden.yaml`` gives (those win, the file adds every other key). streamwarden runs in the
repository's work tree, which in a pull request is the pull request's: a ``.pyiceberg.yaml`` it
commits added ``oauth2-server-uri`` to the catalog, and PyIceberg sent the configured client secret
there; ``s3.endpoint`` would send the object store's requests elsewhere as well.

:func:`install` (once per process, before PyIceberg's configuration is first read) keeps the search
to ``$PYICEBERG_HOME`` and the home directory, which the person or CI job running streamwarden
controls; the ``PYICEBERG_*`` environment variables still apply.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

_lock = threading.Lock()
_installed = False
_FILE = ".pyiceberg.yaml"


def install() -> None:
    global _installed
    with _lock:
        if _installed:
            return
        from pyiceberg.utils import config

        def from_trusted_files() -> Any:
            import strictyaml  # type: ignore[import-untyped]

            for directory in (os.environ.get("PYICEBERG_HOME"), os.path.expanduser("~")):
                path = os.path.join(directory, _FILE) if directory else ""
                if path and os.path.isfile(path):
                    with open(path, encoding="utf-8") as f:
                        data = strictyaml.load(f.read()).data
                    return config._lowercase_dictionary_keys(data)
            return None

        config.Config._from_configuration_files = staticmethod(from_trusted_files)  # type: ignore[method-assign]
        loaded = sys.modules.get("pyiceberg.catalog")
        if loaded is not None:  # imported already: its configuration was read with the old search
            loaded._ENV_CONFIG = config.Config()  # type: ignore[attr-defined]
        _installed = True

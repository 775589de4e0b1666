"""``python -m streamwarden.cli``: the same command as the ``streamwarden`` console script."""

from streamwarden.cli import main

main()

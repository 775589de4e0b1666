"""Every YAML read: ``read`` (what the others import), ``document`` (limits, field paths,
``YamlDocument``) and ``parse`` (the parse, in one of three schemas)."""

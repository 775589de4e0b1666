"""``check``: one run over a repository's contracts (discover, load, gather, evaluate, waive),
its forked workers and the result cache."""

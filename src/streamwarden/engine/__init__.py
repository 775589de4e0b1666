"""Policy engines: loading Rego, METADATA, evaluation (regorus embedded; OPA for teams that run it)."""

from streamwarden.engine.interface import Engine, RawResults
from streamwarden.engine.policyset import PolicyFile, PolicySet, RuleDescriptor, load_policy_set

__all__ = ["Engine", "PolicyFile", "PolicySet", "RawResults", "RuleDescriptor", "load_policy_set", "make_engine"]


def make_engine(name: str, policy_set: PolicySet, **options: object) -> Engine:
    """The engine by name; each is imported only when chosen."""
    if name == "regorus":
        from streamwarden.engine.regorus_engine import RegorusEngine

        return RegorusEngine(policy_set)
    from streamwarden.errors import UsageError

    raise UsageError(f"unknown engine '{name}'", hint="use --engine regorus")

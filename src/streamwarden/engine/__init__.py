"""Policy engines: loading Rego, METADATA, evaluation (regorus embedded; OPA for teams that run it)."""

from streamwarden.engine.interface import Engine, RawResults
from streamwarden.engine.policyset import PolicyFile, PolicySet, RuleDescriptor, load_policy_set

__all__ = [
    "ENGINES",
    "Engine",
    "PolicyFile",
    "PolicySet",
    "RawResults",
    "RuleDescriptor",
    "load_policy_set",
    "make_engine",
]

ENGINES = ("regorus", "opa")


def make_engine(name: str, policy_set: PolicySet, **options: object) -> Engine:
    """The engine by name; each is imported only when chosen.

    ``regorus`` takes ``limits`` (engine.limits.Limits: custom policies' time and memory limits);
    ``opa`` takes ``url`` (default: ``$STREAMWARDEN_OPA_URL``) and ``token`` (default:
    ``$STREAMWARDEN_OPA_TOKEN``)."""
    if name == "regorus":
        from streamwarden.engine.limits import Limits
        from streamwarden.engine.regorus_engine import RegorusEngine

        limits = options.get("limits")
        return RegorusEngine(
            policy_set, limits if isinstance(limits, Limits) else None, defer_full=options.get("defer_full") is True
        )
    if name == "opa":
        try:
            from streamwarden.engine.opa_server import OpaServerEngine
        except ImportError as exc:
            if (exc.name or "streamwarden").split(".")[0] == "streamwarden":
                raise  # ours: a bug, not an installation
            from streamwarden.core.errors import UsageError

            raise UsageError(
                "--engine opa needs the OPA client (opa-python-client), which is not installed",
                hint="pip install 'streamwarden[opa]'",
            ) from None

        url = options.get("url")
        token = options.get("token")
        return OpaServerEngine(
            policy_set, url if isinstance(url, str) else None, token=token if isinstance(token, str) else None
        )
    from streamwarden.core.errors import UsageError

    raise UsageError(f"unknown engine '{name}'", hint="use one of: " + ", ".join(ENGINES))

"""Pipeline contracts: discovery, safe loading with line marks, JSON Schema validation, normalization."""

from streamwarden.contracts.load import Contract, discover_contracts, load_contract, load_contracts

__all__ = ["Contract", "discover_contracts", "load_contract", "load_contracts"]

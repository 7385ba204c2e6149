"""The KV-cache panel: what a decoder keeps per generated token, and what grouped-query attention saves."""

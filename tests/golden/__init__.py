"""Golden digests of replays (byte-compare of records before and after speed work)."""

"""K204 meta-dtype-differs-from-kernel (placeholder until the C++ host reader's allocations are merged)."""

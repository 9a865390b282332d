"""What each op's kernel does (writes, returned aliases, allocations, aclop, host syncs), computed once per
run from the readers in ``opkit.formats`` and read by lint and verify alike. See ``model.py``."""

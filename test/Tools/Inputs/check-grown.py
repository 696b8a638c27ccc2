"""Checks copy_param_mode "subset" end to end: every parameter of the
first parameters file sits unchanged in the leading slice of the same
parameter in the second (which the grown stage barely trained: one SGD
step at a rate far below float resolution), and the rest of each grown
weight matrix holds the fresh initialization, not zeros.

  check-grown.py SMALL.npz BIG.npz"""
import sys

import numpy as np

small, big = np.load(sys.argv[1]), np.load(sys.argv[2])
for name in sorted(small.files):
    old, new = small[name], big[name]
    inside = new[tuple(slice(0, d) for d in old.shape)]
    if not np.array_equal(inside, old):
        sys.exit("%s: the trained slice changed (max difference %g)" % (name, np.abs(inside - old).max()))
    grown = new.size - old.size
    if new.ndim == 2 and np.count_nonzero(new) - np.count_nonzero(inside) < grown // 2:
        sys.exit("%s: the grown part is not initialized" % name)
    print("%s %s -> %s: trained slice kept" % (name, list(old.shape), list(new.shape)))

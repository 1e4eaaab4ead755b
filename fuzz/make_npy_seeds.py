#!/usr/bin/env python3
"""Writes the committed seed inputs of the .npy fuzz target into
fuzz/regressions/npy/: one small array of every dtype kc reads, the shapes
that are easy to get wrong (scalar, empty dims), Fortran order, a version
2.0 header, and a few that must be refused (big-endian, object, truncated).
Run with numpy installed: /usr/bin/python3 fuzz/make_npy_seeds.py"""
import io
import os
import struct

import numpy as np

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "regressions", "npy")
os.makedirs(out, exist_ok=True)


def image(a):
    b = io.BytesIO()
    np.save(b, a, allow_pickle=False)
    return b.getvalue()


def save(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


for dt in ["f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "b1", "c8", "c16"]:
    save(f"seed-{dt}-2x3.npy", image((np.arange(6) % 3 - 1).astype(dt).reshape(2, 3)))
save("seed-scalar-f4.npy", image(np.float32(2.5)))
save("seed-empty-0x3.npy", image(np.zeros((0, 3), np.float32)))
save("seed-empty-4x0x2.npy", image(np.zeros((4, 0, 2), np.int64)))
save("seed-fortran-3x4.npy", image(np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))))
save("seed-nan-inf-f4.npy", image(np.array([np.nan, np.inf, -np.inf, -0.0], np.float32)))

# Version 2.0: the same header behind a 4-byte length.
v1 = image(np.arange(4, dtype=np.int32))
hlen = struct.unpack("<H", v1[8:10])[0]
save("seed-version2.npy", b"\x93NUMPY\x02\x00" + struct.pack("<I", hlen) + v1[10:])

# Refused: kc reads little-endian only, no objects, no short data.
save("refused-big-endian.npy", image(np.arange(3, dtype=">f4")))
save("refused-short-data.npy", image(np.arange(8, dtype=np.float32))[:-5])
header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775807, 4), }"
header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
save("refused-shape-overflow.npy",
     b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + bytes(16))

# Prints every f32 entry of a .pnnx.bin archive, sorted by name.
import struct, sys, zipfile

with zipfile.ZipFile(sys.argv[1]) as z:
    for name in sorted(z.namelist()):
        data = z.read(name)
        values = struct.unpack("<%df" % (len(data) // 4), data)
        print(name, " ".join(repr(v) for v in values))

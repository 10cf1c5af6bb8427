#!/usr/bin/env python3
"""What a screenshot shows, without an imaging library: png_check.py FILE [RGB...]

Prints "WIDTHxHEIGHT colours=N ink=P%" (ink: pixels that are not white)
and, for each RGB given as rrggbb, "rrggbb=COUNT" (pixels of exactly that
colour). Decodes 8-bit RGB/RGBA PNGs (what Chromium writes)."""
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert depth == 8 and ctype in (2, 6), "only 8-bit RGB(A)"
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pr) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def main():
    w, h, bpp, rows = pixels(sys.argv[1])
    counts = {}
    for line in rows:
        for x in range(0, len(line), bpp):
            px = line[x:x + 3]
            counts[px] = counts.get(px, 0) + 1
    ink = w * h - counts.get(b"\xff\xff\xff", 0)
    print("%dx%d colours=%d ink=%.1f%%" % (w, h, len(counts), 100.0 * ink / (w * h)))
    for want in sys.argv[2:]:
        print("%s=%d" % (want, counts.get(bytes.fromhex(want), 0)))


if __name__ == "__main__":
    main()

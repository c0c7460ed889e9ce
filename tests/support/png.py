"""Reading a browser screenshot's pixels without an imaging library: an 8-bit RGB(A), non-interlaced PNG
decoder.

Enough for Chromium's screenshots, which is all the tests read: ``pixels(png)`` gives (width, height, rows of
(r, g, b) tuples) and ``colour_regions`` counts how much of a drawing each palette colour covers.
"""

from __future__ import annotations

import struct
import zlib
from collections import Counter


def pixels(png: bytes) -> tuple[int, int, list[list[tuple[int, int, int]]]]:
    """(width, height, rows of RGB pixels) of an 8-bit RGB or RGBA PNG."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, data, width = 8, b"", 0
    height = depth = colour = interlace = 0
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind, body = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            data += body
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    channels = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(data), width * channels
    rows: list[list[tuple[int, int, int]]] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append([(line[x], line[x + 1], line[x + 2]) for x in range(0, stride, channels)])
        previous = line
    return width, height, rows


def colour_regions(png: bytes, palette: list[str], tolerance: int = 6) -> Counter[str]:
    """How many pixels of the image are (within ``tolerance`` per channel) each colour of ``palette``."""
    wanted = [(c, int(c[1:3], 16), int(c[3:5], 16), int(c[5:7], 16)) for c in palette]
    found: Counter[str] = Counter()
    seen: Counter[tuple[int, int, int]] = Counter()
    for row in pixels(png)[2]:
        seen.update(row)
    for (r, g, b), count in seen.items():
        for name, pr, pg, pb in wanted:
            if abs(r - pr) <= tolerance and abs(g - pg) <= tolerance and abs(b - pb) <= tolerance:
                found[name] += count
                break
    return found

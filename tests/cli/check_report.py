#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks what headless chromium made of `swaplab reproduce --html`:
  check_report.py HTML DOM JSON PNG WIDTH HEIGHT NETLOG
- the page is self-contained: no http(s) URL, no script, no src/href/link
  to anything but an anchor of the page itself;
- the DOM chromium built holds, for every scenario of the JSON output of
  the same run, every shown row's median per variant (td data-v), equal to
  the JSON's value, and the maps and plots as inline SVG;
- the screenshot is a PNG of WIDTH x HEIGHT that is not blank;
- the net log holds no request the page started to anything but file:.
  check_report.py --netlog-only NETLOG: that check alone."""
import json
import re
import struct
import sys
import zlib
from html.parser import HTMLParser


def fail(msg):
    sys.exit("FAIL: " + msg)


class Dom(HTMLParser):
    """Section id -> list of table rows, each [row name, (data-v, text)...]."""

    def __init__(self):
        super().__init__()
        self.sections, self.section, self.row, self.cell = {}, None, None, None
        self.svgs, self.refs = 0, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("src", "href", "xlink:href", "action", "data", "poster", "srcset"):
            if k in a:
                self.refs.append((tag, k, a[k]))
        if tag in ("script", "link", "iframe", "object", "embed", "img"):
            self.refs.append((tag, "tag", ""))
        if tag == "svg":
            self.svgs += 1
        if tag == "section":
            self.section = a.get("id")
            self.sections[self.section] = []
        elif tag == "tr" and self.section is not None:
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = [a.get("data-v"), "", a.get("class")]

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[1] += data

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append(self.cell)
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.sections[self.section].append(self.row)
            self.row = None


def check_dom(dom_text, doc):
    d = Dom()
    d.feed(dom_text)
    bad = [r for r in d.refs if r[1] != "href" or not r[2].startswith("#")]
    if bad:
        fail(f"the page refers to something outside itself: {bad[:5]}")
    checked = 0
    for sc in doc["scenarios"]:
        rows = d.sections.get(sc["name"])
        if not rows:
            fail(f"no section for scenario {sc['name']} in the DOM")
        labels = [c[1] for c in rows[0][1:] if c[2] != "seed"]
        want = [v["label"] for v in sc["variants"]]
        if labels != want:
            fail(f"{sc['name']}: columns {labels}, the JSON has {want}")
        for row in rows[1:]:
            name, ours = row[0][1], [c for c in row[1:] if c[2] == "v"]
            for v, cell in zip(sc["variants"], ours):
                m = v["metrics"].get(name)
                if m is None:
                    fail(f"{sc['name']}: row {name!r} is not in the JSON")
                if cell[0] is None or float(cell[0]) != float(m["value"]):
                    fail(f"{sc['name']}/{name}/{v['label']}: DOM {cell[0]}, JSON {m['value']}")
                checked += 1
    if checked == 0:
        fail("no number of the JSON found in the DOM")
    if d.svgs < 2:
        fail(f"{d.svgs} inline SVG in the DOM (plots and maps expected)")
    return checked, d.svgs


def png_pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path}: not a PNG")
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        fail(f"{path}: PNG depth {depth} colour type {ctype} interlace {interlace} not handled")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def check_png(path, want_w, want_h):
    w, h, bpp, rows = png_pixels(path)
    if (w, h) != (want_w, want_h):
        fail(f"{path}: {w}x{h}, expected {want_w}x{want_h}")
    colours, ink = set(), 0
    for line in rows:
        for x in range(0, w * bpp, bpp):
            px = line[x:x + 3]
            colours.add(px)
            ink += px != b"\xff\xff\xff"
    share = ink / (w * h)
    if len(colours) < 8 or share < 0.02:
        fail(f"{path}: blank? {len(colours)} colours, {share:.1%} of the pixels not white")
    return len(colours), share


def check_netlog(path):
    """URL requests a document started (the browser's own background fetches,
    initiator "not an origin", are not the page's): none may leave file:."""
    text = open(path, encoding="utf-8", errors="replace").read().rstrip()
    try:
        log = json.loads(text)
    except ValueError:  # cut short: close the event list
        log = json.loads(text.rstrip(",") + "]}")
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    page = []
    for e in log["events"]:
        p = e.get("params", {})
        if e["type"] == start and "url" in p and p.get("initiator") != "not an origin":
            page.append(p.get("url", ""))
    off = [u for u in page if not u.startswith(("file:", "data:", "about:"))]
    if off:
        fail(f"the page tried the network: {off[:5]}")
    return len(page)


def main():
    if sys.argv[1] == "--netlog-only":  # the check of the check: a page that fetches
        check_netlog(sys.argv[2])
        return
    html, dom, js, png, w, h, netlog = sys.argv[1:8]
    page = open(html, encoding="utf-8").read()
    if re.search(r"https?:", page, re.I):
        fail(f"{html} holds an http(s) URL")
    if re.search(r"<script|<link|@import|url\(", page, re.I):
        fail(f"{html} loads a script, stylesheet or resource")
    checked, svgs = check_dom(open(dom, encoding="utf-8").read(), json.load(open(js)))
    colours, share = check_png(png, int(w), int(h))
    urls = check_netlog(netlog)
    print(f"browser report: {checked} numbers of the JSON in the DOM, {svgs} inline SVG, "
          f"screenshot {w}x{h} with {colours} colours ({share:.0%} ink), {urls} page requests in the "
          "net log, none off the machine")


main()

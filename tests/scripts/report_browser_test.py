#!/usr/bin/env python3
"""`ktune report` rendered by a real browser (Debian's chromium, headless).

Restores each committed dump given into a database of its own, writes one report of all of them
and checks, in chromium: the page logs nothing to the console, the key-space heatmap of each
database holds exactly one cell per key of that database, the page links nothing outside itself,
and a screenshot is not blank. Then it plants a broken report for each check (a key's cell
removed, a console error, a blank page) and requires the check to reject it. Exits 77 (ctest's
skip) with the reason where chromium is absent or cannot start.

  report_browser_test.py --ktune KTUNE DUMP.sql [DUMP.sql ...]
"""
import argparse
import os
import re
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def browse(browser, profile, url, *args):
    """Runs headless chromium on `url`; returns (exit status, stdout, stderr)."""
    cmd = [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--no-first-run", "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0", *args, url]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def png_colours(path, enough=2):
    """The number of distinct pixel colours of an 8-bit, non-interlaced RGB or RGBA PNG, counted
    until `enough` are found (decoding is done here in Python: a page is non-blank at its first
    line of text)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour_type, _, _, interlace = header
    if depth != 8 or colour_type not in (2, 6) or interlace:
        raise ValueError(f"{path}: PNG of depth {depth}, colour type {colour_type}, interlace {interlace}")
    bpp = 3 if colour_type == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    previous, colours = bytearray(stride), set()
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = previous[i]
            c = previous[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        colours.update(bytes(line[i:i + bpp]) for i in range(0, stride, bpp))
        if len(colours) >= enough:
            break
        previous = line
    return len(colours)


def heatmap_keys(dom, heatmap_id):
    """The data-key of every cell of the heatmap <div id=heatmap_id> in the rendered DOM."""
    start = dom.find(f'id="{heatmap_id}"')
    if start < 0:
        return None
    end = dom.find("</div>", start)
    return re.findall(r'<g class="cell[^"]*" data-key="([^"]*)"', dom[start:end])


def outside_links(text):
    """Addresses of other hosts in the page's text: a report must open from disk, offline."""
    return re.findall(r'(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}[^"\s<]*', text, re.I)


def check(browser, work, page, expected):
    """What is wrong with the report `page` as chromium renders it: a list of failures.
    `expected`: heatmap id -> the keys the database holds."""
    url = "file://" + os.path.abspath(page)
    text = open(page, encoding="utf-8").read()
    failures = [f"links outside the page: {link}" for link in outside_links(text)]
    shot = os.path.join(work, "shot.png")
    if os.path.exists(shot):
        os.remove(shot)
    # One start of chromium: the DOM on stdout, the console on stderr, the screenshot to a file.
    status, dom, log = browse(browser, os.path.join(work, "profile"), url, "--hide-scrollbars",
                              "--window-size=1000,700", "--screenshot=" + shot, "--dump-dom")
    if status != 0 or "<html" not in dom:
        return [f"chromium did not render the page (exit status {status}): {log[-2000:]}"]
    for line in log.splitlines():
        if ":CONSOLE" in line:
            failures.append(f"console message: {line.strip()}")
    for heatmap_id, keys in expected.items():
        cells = heatmap_keys(dom, heatmap_id)
        if cells is None:
            failures.append(f"no heatmap {heatmap_id} in the page")
            continue
        missing, extra = set(keys) - set(cells), set(cells) - set(keys)
        if missing:
            failures.append(f"{heatmap_id}: no cell for {len(missing)} keys, e.g. {sorted(missing)[0]}")
        if extra:
            failures.append(f"{heatmap_id}: cells for {len(extra)} keys the database lacks, e.g. {sorted(extra)[0]}")
        if len(cells) != len(set(cells)):
            failures.append(f"{heatmap_id}: {len(cells) - len(set(cells))} keys have more than one cell")
    if not os.path.exists(shot):
        failures.append(f"no screenshot: {log[-2000:]}")
    elif png_colours(shot) <= 1:
        failures.append("the screenshot is blank (one colour)")
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ktune", required=True)
    parser.add_argument("dumps", nargs="+")
    args = parser.parse_args()
    browser = chromium()
    if browser is None:
        print("SKIP: no chromium on PATH (scripts/deps.sh installs Debian's chromium)")
        return SKIP
    work = tempfile.mkdtemp(prefix="ktune_report_browser_")
    try:
        expected, dbs = {}, []
        for n, dump in enumerate(args.dumps, start=1):
            db = os.path.join(work, f"db{n}.db")
            con = sqlite3.connect(db)
            con.executescript(open(dump, encoding="utf-8").read())
            rows = con.execute("SELECT family, key FROM measurements UNION SELECT family, key FROM gaps").fetchall()
            con.close()
            for family, key in rows:
                expected.setdefault(f"keys-{n}-{family}", []).append(key)
            dbs += ["--db", db]
        page = os.path.join(work, "report.html")
        r = subprocess.run([args.ktune, "-q", "report", *dbs, "--out", page], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL: ktune report exited {r.returncode}: {r.stdout}{r.stderr}")
            return 1
        print(f"report: {os.path.getsize(page)} bytes; keys per heatmap: "
              + ", ".join(f"{k} {len(v)}" for k, v in expected.items()))
        failures = check(browser, work, page, expected)
        if failures and failures[0].startswith("chromium did not render"):
            # Does chromium start at all here? If not, this is no verdict on the report.
            status, dom, log = browse(browser, os.path.join(work, "profile"), "about:blank", "--dump-dom")
            if status != 0 or "<html" not in dom:
                print(f"SKIP: chromium cannot start here (exit status {status}): {log.strip()[-800:]}")
                return SKIP
        for f in failures:
            print("FAIL:", f)
        if failures:
            return 1
        print("ok: the report renders, one cell per key, no console message, not blank")
        # Each check must reject a report broken in its way.
        good = open(page, encoding="utf-8").read()
        # (what is broken, the failure the check must report)
        planted = {
            ("a key's cell removed", "no cell for 1 keys"): re.sub(r'<g class="cell[^"]*" data-key="[^"]*">.*?</g>\n', "", good, count=1,
                                           flags=re.S),
            ("a console error", "console message"): good.replace("</body>", '<script>console.error("planted")</script></body>'),
            ("a blank page", "blank"): "<!DOCTYPE html><html><head><style>html{background:#fff}</style></head><body></body></html>",
        }
        linked = good.replace("</body>", '<img src="https://example.com/logo.png" alt=""></body>')
        if not outside_links(linked):
            print("FAIL: the check passes a report that loads an image from another host")
            return 1
        print("ok: a report that loads an image from another host fails")
        for (what, failure), text in planted.items():
            broken = os.path.join(work, "broken.html")
            open(broken, "w", encoding="utf-8").write(text)
            found = [f for f in check(browser, work, broken, expected) if failure in f]
            if not found:
                print(f"FAIL: the check does not report '{failure}' for a report with {what}")
                return 1
            print(f"ok: a report with {what} fails: {found[0][:160]}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

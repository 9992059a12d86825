#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Least-squares fit of the guest kernel's hibernation seconds.

    bench/vm_price_fit.py DIR

DIR holds `swaplab vm hibernate --resume --json` outputs named
LAYOUT-COMPRESS-SIZE.json (bench/vm_price_fit.sh makes them). What is
fitted, for write and for read separately, is the guest kernel's seconds
over the model's (the model prices the device's requests; what is left is
the guest's CPU work, which is what a host CPU profile prices):

    kernel_s - model_s = c0 + c_stream * stream_pages + sum over compressing modes of c_mode * snapshot_pages[mode]

stream_pages: pages on disk. In 6.12 each is one bio, one allocator call
(write) and one 4 KiB copy into the bio's page, and these cannot be told
apart: one bio per page. Runs of a kernel built with kernel-patches/
rfc-6.12 (files LAYOUT-COMPRESS-SIZE-COLUMN.json, COLUMN base, alloc or
bio) carry the kernel's own bio count ("Image I/O: N bios"); when some of
them write far fewer bios than pages (hibernate_bio=runs), a price per bio
is fitted beside the price per page (the write's bios with the write, the
read's with the read), and the model's seconds of a bio column are its
per-run ones. Uncompressed, a snapshot page is a stream page
and has no price of its own (the two columns would be equal); LZO's
snapshot pages carry the compression (write) or decompression and CRC
(read). The kernel's raw seconds are fitted the same way for reference.
Prints every run with its fit and residual, the coefficients in us, R^2,
and writes DIR/fit.json.
"""
import glob
import json
import os
import sys


def solve(rows, ys):
    """Normal equations, Gauss-Jordan with partial pivoting."""
    n = len(rows[0])
    a = [[0.0] * n for _ in range(n)]
    v = [0.0] * n
    for r, y in zip(rows, ys):
        for i in range(n):
            v[i] += r[i] * y
            for j in range(n):
                a[i][j] += r[i] * r[j]
    scale = max(abs(a[i][i]) for i in range(n)) or 1.0
    for i in range(n):
        p = max(range(i, n), key=lambda k: abs(a[k][i]))
        a[i], a[p], v[i], v[p] = a[p], a[i], v[p], v[i]
        if abs(a[i][i]) < 1e-12 * scale:
            sys.exit("the runs do not tell the coefficients apart (singular system): "
                     "vary the sizes, and run LZO as well as uncompressed")
        for k in range(n):
            if k != i:
                f = a[k][i] / a[i][i]
                a[k] = [x - f * y for x, y in zip(a[k], a[i])]
                v[k] -= f * v[i]
    return [v[i] / a[i][i] for i in range(n)]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    runs = []
    for f in sorted(glob.glob(os.path.join(out, "*-*-*.json"))):
        name = os.path.basename(f)[:-5]
        try:
            d = json.load(open(f))
        except (OSError, ValueError) as e:
            print(f"{name}: unreadable ({e}), left out")
            continue
        k = d.get("kernel", {})
        if k.get("write_s") is None or k.get("read_s") is None or k["write_s"] < 0 or k["read_s"] < 0:
            print(f"{name}: no write or read line, left out")
            continue
        column = name.split("-")[3] if name.count("-") >= 3 else "debian"
        per_run = column == "bio"
        m = d["model"]
        runs.append({"run": name, "column": column, "mode": k["compress"], "stream_pages": k["stream_pages"],
                     "write_bios": k.get("kernel_write_bios"), "read_bios": k.get("kernel_read_bios"),
                     "snapshot_pages": k["snapshot_pages"], "write_s": k["write_s"], "read_s": k["read_s"],
                     "runs_disk_order": k.get("runs_disk_order"), "release": k["release"], "accel": k["accel"],
                     "vm_wall_s": k.get("boot_wall_s", 0) + max(k.get("resume_wall_s", 0), 0),
                     "model_write_s": m["write_s_per_run"] if per_run else m["write_s"],
                     "model_read_s": m["read_s_per_run"] if per_run else m["read_s"],
                     "model_wall_s": d["model"].get("model_wall_s")})
    modes = sorted({r["mode"] for r in runs} - {"none"})
    # A price per bio only where the kernel counted them and some runs wrote
    # far fewer bios than pages; else bios and pages are the same column.
    by_bio = all(r["write_bios"] is not None and r["read_bios"] is not None for r in runs) and \
        any(r["write_bios"] * 2 < r["stream_pages"] for r in runs)
    names = ["s", "us_per_stream_page"] + (["us_per_bio"] if by_bio else []) + \
        [f"us_per_snapshot_page_{m}" for m in modes]
    if len(runs) < len(names) + 2:
        sys.exit(f"only {len(runs)} usable runs: at least {len(names) + 2} are needed for {len(names)} coefficients")
    def regressors(r, side):
        return [1.0, r["stream_pages"]] + ([r[f"{side}_bios"]] if by_bio else []) + \
            [r["snapshot_pages"] if r["mode"] == m else 0 for m in modes]
    fits = {}
    for side in ("write", "read"):
        xs = [regressors(r, side) for r in runs]
        for kind in ("over_model", "raw"):
            ys = [r[f"{side}_s"] - (r[f"model_{side}_s"] if kind == "over_model" else 0) for r in runs]
            b = solve(xs, ys)
            pred = [sum(c * x for c, x in zip(b, row)) for row in xs]
            mean = sum(ys) / len(ys)
            ss_res = sum((y - p) ** 2 for y, p in zip(ys, pred))
            ss_tot = sum((y - mean) ** 2 for y in ys) or 1e-12
            fits[(side, kind)] = {"coef": b, "ys": ys, "pred": pred, "r2": 1 - ss_res / ss_tot,
                                  "rms_s": (ss_res / len(ys)) ** 0.5}
    print(f"kernel {runs[0]['release']} ({runs[0]['accel']}); {len(runs)} runs; kernel seconds are its own lines "
          "(0.01 s steps), model seconds the simulated device's")
    print(f"{'run':<22} {'stream':>7} {'snapshot':>8} {'write':>6} {'model':>6} {'over':>6} {'fit':>6} {'resid':>6} "
          f"{'read':>6} {'model':>6} {'over':>6} {'fit':>6} {'resid':>6}")
    for i, r in enumerate(runs):
        w, rd = fits[("write", "over_model")], fits[("read", "over_model")]
        print(f"{r['run']:<22} {r['stream_pages']:>7} {r['snapshot_pages']:>8} {r['write_s']:>6.2f} "
              f"{r['model_write_s']:>6.3f} {w['ys'][i]:>6.3f} {w['pred'][i]:>6.3f} {w['ys'][i] - w['pred'][i]:>+6.3f} "
              f"{r['read_s']:>6.2f} {r['model_read_s']:>6.3f} {rd['ys'][i]:>6.3f} {rd['pred'][i]:>6.3f} "
              f"{rd['ys'][i] - rd['pred'][i]:>+6.3f}")
    doc = {"runs": runs, "modes": ["none"] + modes}
    for side in ("write", "read"):
        for kind in ("over_model", "raw"):
            f = fits[(side, kind)]
            b = f["coef"]
            terms = [f"{b[0]:.3f} s", f"{b[1] * 1e6:.2f} us per stream page"] + \
                    ([f"{b[2] * 1e6:.2f} us per {side} bio"] if by_bio else []) + \
                    [f"{b[2 + by_bio + i] * 1e6:.2f} us per {m} snapshot page" for i, m in enumerate(modes)]
            print(f"{side} ({'kernel - model' if kind == 'over_model' else 'kernel raw'}): " + " + ".join(terms) +
                  f"; R^2 {f['r2']:.4f}, rms residual {f['rms_s']:.3f} s")
            doc[f"{side}_{kind}"] = {names[0]: b[0], **{n: c * 1e6 for n, c in zip(names[1:], b[1:])},
                                     "r2": f["r2"], "rms_residual_s": f["rms_s"]}
    json.dump(doc, open(os.path.join(out, "fit.json"), "w"), indent=2)
    print(f"fit and runs: {out}/fit.json")


if __name__ == "__main__":
    main()

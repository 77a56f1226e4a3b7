"""`hangshim report --html` in a real browser: headless Chromium loads the page of a hung job of
the NCCL stand-in and of a synthetic 8192-rank job, and the DOM it built is checked against the
report's own JSON of the same ledgers:

  * the page is self-contained (no http(s) reference, no external script, style or image);
  * #verdict reads the JSON verdict's summary;
  * each communicator's timeline marks the rows holding the verdict's culprits (and only those),
    and in the verdict's column a culprit's cell says what it did: never issued it, or issued it
    with values that differ from the others';
  * the merged stack tree's leaves name exactly the rank groups of the JSON's stacks;
  * page.html#rank=N (the page's own script, run by the browser) marks the elements holding N;
  * at 8192 ranks: the page stays under 5 MB with the timeline's rows grouped, and loads.

A screenshot of each page is saved (--artifacts) to look at. Skipped (77) without Chromium.

    run_html_case.py --scenario FILE --ranks N --python PY --hangshim CLI --shim LIB --fakenccl DIR
                     --fixture REPORT_FIXTURE --artifacts DIR [--chromium PATH]
"""

import argparse
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from report_test_lib import Failure, Workspace, common_args, expect

SKIP = 77
MAX_PAGE_BYTES = 5 * 1024 * 1024
MISMATCH_KINDS = ("count_mismatch", "dtype_mismatch", "op_mismatch", "root_mismatch", "reduce_op_mismatch")


def parse_ranks(text):
    """"0-3,7" -> {0, 1, 2, 3, 7}"""
    ranks = set()
    for part in filter(None, text.split(",")):
        ends = part.split("-")
        ranks.update(range(int(ends[0]), int(ends[-1]) + 1))
    return ranks


class Dom(html.parser.HTMLParser):
    """What the checks read from the DOM Chromium dumped: the verdict's text, the timeline rows
    (ranks, classes, cells' classes), the tree's leaves and every element the script marked."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.verdict, self.in_verdict = "", False
        self.rows, self.row = [], None
        self.headers = []  # per table: its column titles ("#5")
        self.leaves = []
        self.found = []
        self.external = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        for name in ("src", "href"):
            if a.get(name):
                self.external.append("%s %s=%s" % (tag, name, a[name]))
        if a.get("id") == "verdict":
            self.in_verdict = True
        if tag == "table" and "timeline" in classes and a.get("data-comm") is not None:
            self.headers.append({"comm": a["data-comm"], "columns": []})
        if tag == "tr" and "row" in classes:
            self.row = {"ranks": parse_ranks(a.get("data-ranks", "")), "culprit": "culprit" in classes, "cells": [],
                        "table": len(self.headers) - 1}
            self.rows.append(self.row)
        if tag == "td" and self.row is not None and "cell" in classes:
            self.row["cells"].append(classes)
        if a.get("data-stack-ranks") is not None:
            self.leaves.append(a["data-stack-ranks"])
        if "found" in classes:
            self.found.append(a.get("data-ranks", ""))
        self.last_tag = tag

    def handle_endtag(self, tag):
        if tag == "div":
            self.in_verdict = False
        if tag == "tr":
            self.row = None

    def handle_data(self, data):
        if self.in_verdict:
            self.verdict += data
        if getattr(self, "last_tag", "") == "th" and self.headers and data.startswith("#"):
            self.headers[-1]["columns"].append(data)


def find_chromium(given):
    for candidate in [given, "chromium", "chromium-browser", "google-chrome"]:
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


def browser(chromium, work, *args, timeout=120):
    """Runs headless Chromium with a private profile; returns its stdout."""
    profile = os.path.join(work, "chromium-profile")
    argv = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
            "--user-data-dir=" + profile] + list(args)
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                       universal_newlines=True)
    expect(p.returncode == 0, "%s exited %d: %s" % (" ".join(argv), p.returncode, p.stderr.strip()[-2000:]))
    return p.stdout


def load(chromium, work, page, fragment=""):
    started = time.monotonic()
    dom = Dom()
    dom.feed(browser(chromium, work, "--dump-dom", "file://" + page + fragment))
    return dom, time.monotonic() - started


def screenshot(chromium, work, page, path):
    browser(chromium, work, "--window-size=1280,1400", "--hide-scrollbars", "--screenshot=" + path, "file://" + page)
    expect(os.path.getsize(path) > 10000, "the screenshot %s is (nearly) empty" % path)


def self_contained(page_text):
    """No reference to anything outside the page."""
    bad = re.findall(r"(?:https?:)?//[\w.-]+\.\w+/|@import|url\(\s*['\"]?(?!data:)[^)'\"#]", page_text)
    expect(not bad, "the page refers to things outside itself: %s" % bad[:5])


def check_job_page(dom, report, tree=True):
    verdict = report["verdict"]
    expect(dom.verdict.strip() == verdict["summary"],
           "#verdict reads %r, the report says %r" % (dom.verdict.strip(), verdict["summary"]))
    expect(not dom.external, "the page loads things from elsewhere: %s" % dom.external[:5])
    culprits = set(verdict.get("culprits", []))
    expect(culprits, "the scenario's report names no culprit: %s" % verdict["summary"])
    expect(dom.rows, "no timeline rows")
    marked = set()
    for row in dom.rows:
        holds = bool(row["ranks"] & culprits)
        expect(row["culprit"] == holds, "timeline row of ranks %s: marked %s, holds a culprit %s" % (
            sorted(row["ranks"]), row["culprit"], holds))
        if row["culprit"]:
            marked |= row["ranks"] & culprits
    expect(marked == culprits, "culprit rows hold ranks %s, the verdict's culprits are %s" % (sorted(marked), sorted(culprits)))
    # The verdict's column: what a culprit did with that collective.
    comm = verdict["comm"]["name"]
    tables = [i for i, h in enumerate(dom.headers) if h["comm"] == comm]
    expect(tables, "no timeline for the verdict's communicator %s" % comm)
    columns = dom.headers[tables[0]]["columns"]
    title = "#%d" % verdict["seq"]
    expect(title in columns, "the timeline of %s has no column %s: %s" % (comm, title, columns))
    k = columns.index(title)
    for row in dom.rows:
        if row["table"] != tables[0] or not row["culprit"]:
            continue
        cell = row["cells"][k]
        if verdict["kind"] in MISMATCH_KINDS:
            expect("differs" in cell, "ranks %s at %s: cell %s, not marked as differing (%s)" % (
                sorted(row["ranks"]), title, cell, verdict["kind"]))
        elif report["findings"][verdict["finding"]]["never_issued"]:
            expect("missing" in cell, "ranks %s at %s: cell %s, not marked as never issued" % (sorted(row["ranks"]), title, cell))
    if not tree:
        return
    # The tree's leaves are the JSON's stack groups.
    want = sorted(sorted(g["ranks"]) for g in report["stacks"])
    got = sorted(sorted(parse_ranks(leaf)) for leaf in dom.leaves)
    expect(got == want, "the stack tree's leaves hold ranks %s, the report's stack groups %s" % (got, want))


def check_fragment(dom, rank):
    expect(dom.found, "page.html#rank=%d marked nothing" % rank)
    for ranks in dom.found:
        expect(rank in parse_ranks(ranks), "page.html#rank=%d marked an element of ranks %s" % (rank, ranks))


def job_case(args, chromium, work):
    ws = Workspace(args)
    try:
        truth, status = ws.launch(args.scenario, args.ranks, args.python)
        expect(any(r["running"] for r in status["ranks"]), "the scenario's job did not stay hung")
        report = ws.report_json(ws.ledgers)
        page = os.path.join(work, "job.html")
        code, out, err = ws.hangshim("report", "--html", page, ws.ledgers)
        expect(code == 0 and os.path.exists(page), "hangshim report --html: exit %d: %s" % (code, err.strip()))
        expect(out.splitlines()[0] == report["verdict"]["summary"],
               "with --html the text report changed: %r" % out.splitlines()[:1])
        with open(page, encoding="utf-8") as f:
            self_contained(f.read())
        dom, seconds = load(chromium, work, page)
        check_job_page(dom, report)
        culprit = report["verdict"]["culprits"][0]
        check_fragment(load(chromium, work, page, "#rank=%d" % culprit)[0], culprit)
        shot = os.path.join(args.artifacts, "report-%s-n%d.png" % (os.path.basename(args.scenario)[:-3], args.ranks))
        screenshot(chromium, work, page, shot)
        return "%s, %d ranks: %d timeline rows, %d tree leaves, loaded in %.1f s; screenshot %s" % (
            report["verdict"]["kind"], args.ranks, len(dom.rows), len(dom.leaves), seconds, shot)
    finally:
        ws.cleanup()


def scale_case(args, chromium, work):
    ledgers = os.path.join(work, "n8192")
    os.mkdir(ledgers, 0o700)
    subprocess.run([args.fixture, "job", ledgers, "--ranks", "8192", "--collectives", "40", "--ring", "64"], check=True,
                   stdout=subprocess.DEVNULL, timeout=300)
    page = os.path.join(work, "n8192.html")
    p = subprocess.run([args.hangshim, "report", "--no-stacks", "--html", page, ledgers], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    expect(p.returncode == 0, "hangshim report --html at 8192 ranks: exit %d: %s" % (p.returncode, p.stderr.strip()))
    size = os.path.getsize(page)
    expect(size < MAX_PAGE_BYTES, "the 8192-rank page is %d bytes (at most %d)" % (size, MAX_PAGE_BYTES))
    dom, seconds = load(chromium, work, page)
    j = subprocess.run([args.hangshim, "report", "--no-stacks", "--json", ledgers], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    expect(j.returncode == 0, "hangshim report --json at 8192 ranks: exit %d: %s" % (j.returncode, j.stderr.strip()))
    check_job_page(dom, json.loads(j.stdout), tree=False)
    expect(sum(len(r["ranks"]) for r in dom.rows) >= 8192 and len(dom.rows) <= 64,
           "%d timeline rows for 8192 ranks: rows are not grouped" % len(dom.rows))
    screenshot(chromium, work, page, os.path.join(args.artifacts, "report-n8192.png"))
    return "8192 ranks: %d KiB, %d timeline rows, loaded in %.1f s" % (size >> 10, len(dom.rows), seconds)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    common_args(parser)
    parser.add_argument("--scenario", required=True)
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--fixture", required=True)
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("--chromium", default="")
    args = parser.parse_args()
    chromium = find_chromium(args.chromium)
    if chromium is None:
        print("SKIP report/html: no Chromium (scripts/setup.sh installs Debian's chromium)")
        return SKIP
    os.makedirs(args.artifacts, exist_ok=True)
    work = tempfile.mkdtemp(prefix="hangshim-html-")
    try:
        details = [job_case(args, chromium, work), scale_case(args, chromium, work)]
    except Failure as e:
        print("FAIL report/html: %s" % e)
        print("(kept in %s)" % work)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    for d in details:
        print("ok   report/html: %s" % d)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""html_check.py PAGE.html: checks `scalebpf report --format html` as a
parser reads it (Python's html.parser) and prints one JSON object:
  problems  a tag closed that is not the one open, a tag left open at the
            end, an id used twice, anything fetched from elsewhere (src=,
            an http(s) href or url(), a <link>, a <script src>): the page
            must open offline
  counts    {tag: n} of the start tags
  sections  the sections panel's entries (<details class="sec">)
  text      the page's text, for searching
"""
import json
import sys
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "source", "track", "wbr"}
# SVG's own empty elements written as <x/> are closed by the parser itself
# (handle_startendtag)


class Check(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.problems, self.counts, self.ids = [], [], {}, set()
        self.sections, self.text = 0, []

    def handle_starttag(self, tag, attrs):
        self.counts[tag] = self.counts.get(tag, 0) + 1
        a = dict(attrs)
        if "id" in a:
            if a["id"] in self.ids:
                self.problems.append("id %r used twice" % a["id"])
            self.ids.add(a["id"])
        if tag == "details" and "sec" in (a.get("class") or "").split():
            self.sections += 1
        for k, v in attrs:
            v = v or ""
            if k == "src" or (k == "href" and v.startswith(("http:", "https:", "//"))) \
                    or "url(" in v:
                self.problems.append("<%s %s=%r> fetches from elsewhere" % (tag, k, v))
        if tag == "link":
            self.problems.append("a <link>: the page must carry its styles")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.counts[tag] = self.counts.get(tag, 0) + 1

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append("</%s> closes <%s>" % (tag, self.stack[-1] if self.stack
                                                        else "nothing"))
            if tag in self.stack:
                while self.stack and self.stack.pop() != tag:
                    pass
            return
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


c = Check()
with open(sys.argv[1], encoding="utf-8") as f:
    page = f.read()
if not page.startswith("<!DOCTYPE html>"):
    c.problems.append("no <!DOCTYPE html> first")
c.feed(page)
c.close()
if c.stack:
    c.problems.append("left open at the end: %s" % " ".join(c.stack))
if "url(" in page.split("<style>")[-1].split("</style>")[0]:
    c.problems.append("the style sheet fetches a url()")
json.dump({"problems": c.problems[:20], "counts": c.counts, "sections": c.sections,
           "text": " ".join(c.text)}, sys.stdout)
print()

"""Every relative link of the README and docs/ leads somewhere: the file
exists, and an anchor (#section) names a heading of that file as GitHub
spells it (lower case, punctuation dropped, spaces as hyphens). Pages are
moved and sections renamed as the house changes; a reader following a
link should never land on nothing."""
import glob
import os
import re
import unittest

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def github_anchor(heading):
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    with open(path, encoding="utf-8") as f:
        text = FENCE.sub("", f.read())
    return {github_anchor(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, re.M)}


def pages():
    return [os.path.join(SRC, "README.md")] + sorted(glob.glob(os.path.join(SRC, "docs", "*.md")))


class DocLinks(unittest.TestCase):
    def test_relative_links_and_anchors_resolve(self):
        broken = []
        for page in pages():
            with open(page, encoding="utf-8") as f:
                text = FENCE.sub("", f.read())
            for m in LINK.finditer(text):
                link = m.group(1)
                if re.match(r"[a-z]+:", link):
                    continue
                path, _, anchor = link.partition("#")
                target = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                where = "%s: %s" % (os.path.relpath(page, SRC), link)
                if not os.path.exists(target):
                    broken.append(where + " (no such file)")
                elif anchor and target.endswith(".md") and anchor not in anchors(target):
                    broken.append(where + " (no such heading)")
        self.assertEqual(broken, [])

    def test_anchors_are_spelled_as_github_spells_them(self):
        self.assertEqual(github_anchor("A/B mode"), "ab-mode")
        self.assertEqual(github_anchor("Tails, SLOs and the frontier"), "tails-slos-and-the-frontier")
        self.assertEqual(github_anchor("`suites` (required, string)"), "suites-required-string")

if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Every public function's comment in include/*.h states its contract (README, "Public docs").

For each function declared in the public headers, the comment block above it (a block may
serve the declarations that follow it together) must name: the paper section it implements or
"Paper: none"; its errors ("Errors", or "no error code" for a call without a result code);
whether it is host-only or stream-ordered; the units of its sizes where it takes a count or a
byte size (ELEMENTS, BYTES, or the element count and byte words of the comment); and the
alignment of its pointers where it takes one. Prints each gap and exits 1 if there is one.
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DECL = re.compile(r"^(?:szResult_t|const char\*|size_t|int)\s+(sz[A-Z]\w*)\((.*)$")
gaps = []
checked = 0
for path in sorted(glob.glob(os.path.join(ROOT, "include", "*.h"))):
    lines = open(path).read().split("\n")
    comment = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("/*"):
            block = [line]
            while "*/" not in lines[i] and i + 1 < len(lines):
                i += 1
                block.append(lines[i])
            comment = "\n".join(block)
            i += 1
            continue
        if not line.strip():
            comment = ""  # a blank line ends a comment's reach: a declaration after it has none
        m = DECL.match(line)
        if m:
            name, args = m.group(1), m.group(2)
            while not args.rstrip().endswith(";") and i + 1 < len(lines):
                i += 1
                args += lines[i]
            checked += 1
            c = comment
            need = {
                "paper section": re.search(r"[Pp]aper[\s*]*(:|§|Table|\(|'s)", c) or "App. B" in c,
                "errors": "Errors" in c or "no error code" in c,
                "host or stream semantics": re.search(r"[Hh]ost-only|stream", c),
            }
            if re.search(r"size_t (count|\w*[Bb]ytes|outCapacity|batchSize)|counts", args):
                need["units (elements or bytes)"] = re.search(r"ELEMENTS|BYTES|elements|bytes", c)
            if "*" in args and "void" not in args.split("(")[0] or re.search(r"void\s*\*", args):
                need["alignment"] = re.search(r"align", c)
            for what, ok in need.items():
                if not ok:
                    gaps.append(f"{os.path.basename(path)}: {name}: no {what}")
        i += 1
for g in gaps:
    print("GAP", g)
print(f"api_docs_test: {checked} functions, {len(gaps)} gaps")
sys.exit(1 if gaps or checked < 40 else 0)

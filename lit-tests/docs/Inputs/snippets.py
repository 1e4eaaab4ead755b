"""Checks that a document's code is the code that is built and tested.

  snippets.py DOC PROGRAM[,PROGRAM...] [EXCERPT_FILE...]

The ```cpp blocks of DOC, in order and joined by blank lines, must be the
PROGRAMs without their leading comments, one after the other: the document
walks through complete programs, which the build compiles. Every ```cmake and ```kc block must appear
verbatim in one of the EXCERPT_FILEs. Prints what differs and exits 1.
"""
import difflib
import re
import sys

doc_path, program_path, excerpt_paths = sys.argv[1], sys.argv[2], sys.argv[3:]
doc = open(doc_path).read()
blocks = re.findall(r"^```(\w*)\n(.*?)^```$", doc, re.M | re.S)

def body(path):
    lines = open(path).read().splitlines(keepends=True)
    start = 0
    while start < len(lines) and lines[start].startswith("//"):
        start += 1
    return "".join(lines[start:])


program = "\n".join(body(p) for p in program_path.split(","))
walked = "\n".join(text for lang, text in blocks if lang == "cpp")

status = 0
if walked != program:
    status = 1
    print(f"{doc_path}: its cpp blocks are not {program_path}:")
    sys.stdout.writelines(difflib.unified_diff(program.splitlines(keepends=True),
                                               walked.splitlines(keepends=True),
                                               program_path, doc_path))
excerpts = [open(p).read() for p in excerpt_paths]
for lang, text in blocks:
    if lang in ("cmake", "kc") and not any(text in e for e in excerpts):
        status = 1
        print(f"{doc_path}: this {lang} block is in none of {', '.join(excerpt_paths)}:\n{text}")
sys.exit(status)

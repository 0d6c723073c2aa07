#!/usr/bin/env python3
# Writes the seed inputs of the `query` fuzz target (Fuzz/README.md): `python3 Fuzz/query-seeds.py Fuzz/corpus/query`.
# Each seed is the bytes that Fuzz/garage-fuzz/QueryTarget.swift reads as the case its name says:
# a byte per choice, in the order the target reads them (keep the two in step).
import os, sys
out = sys.argv[1]
T = {"": 0, " ": 1, "a": 2, "A": 3, "b": 4, "milk": 5, "Milk": 6, "MILK": 7, "mi": 8, "é": 9, "e\u0301": 10, "É": 11,
     "été": 12, "K": 13, "\u212A": 14, "back\\slash": 15, "new\nline": 16, "tab\t": 17, "\u0001": 18, "\u001Fx": 19,
     "\u007F": 20, "\\u0041": 21, "quo\"te": 22, "'": 23, "a.b": 24, "$": 25, "$[0]": 26, "[0]": 27, "*": 28, "%_": 29,
     "%": 30, "_": 31, "🎉": 32, "𝄞": 33, "\u2028": 34, "\ufeff": 35, "\uffff": 36, "10": 37, "9": 38, "a\0b": 39, "\0": 40}
def s(text): return [T[text]]
def raw(b): return [192 + len(b)] + list(b)
def num(x):  # halves in -12.5...12.25 by quarter
    return [int(x * 4) + 50]
# trees
def obj(*members):
    r = [0, len(members)]
    for k, v in members: r += s(k) + v
    return r
def arr(*items): return [2, len(items)] + sum(items, [])
def tstr(text): return [3] + s(text)
def tnum(x): return [5] + num(x)
def tbool(b): return [6, 1 if b else 0]
tnull = [7]
def note(title=None, rank=None, flag=None, tags=None, attrs=None, tree=None):
    present = (1 if title is not None else 0) | (2 if rank is not None else 0) | (4 if flag is not None else 0) \
        | (8 if tags is not None else 0) | (16 if attrs is not None else 0) | (32 if tree is not None else 0)
    r = [present]
    if title is not None: r += title if isinstance(title, list) else s(title)
    if rank is not None: r += rank if isinstance(rank, list) else num(rank)
    if flag is not None: r += [1 if flag else 0]
    if tags is not None: r += [len(tags)] + sum((s(t) for t in tags), [])
    if attrs is not None:
        r += [len(attrs) - 1]
        for k, v in attrs: r += s(k) + s(v)
    if tree is not None: r += tree
    return r
def batch(notes, one_call): return [len(notes)] + sum(notes, []) + [1 if one_call else 0]
def case(batches, predicate, sorts=(), limit=None, page=1):
    r = [len(batches) - 1] + sum(batches, []) + predicate + [len(sorts)] + sum(sorts, [])
    r += [0 if limit is None else 128 + limit, page - 1]
    return bytes(r)
# fields
title = [0]; rank = [1]; flag = [2]; tags = [3]
def attrs(key): return [4] + s(key)
def tree(*keys): return [6, len(keys)] + sum((s(k) for k in keys), [])
# predicates (leaf: choice byte, then field)
def isNull(f): return [0] + f
def hasPrefix(f, text): return [1] + f + s(text)
def containsText(f, text): return [2] + f + s(text)
def opnd(kind, value, anyfield=False):
    # kind: 's', 'n', 'b'; for a field of its own kind pass anyfield False (a byte >= 16 keeps the kind)
    k = {'s': 0, 'n': 1, 'b': 2}[kind]
    if anyfield: prefix = [k]
    else: prefix = [200]
    v = s(value) if kind == 's' else num(value) if kind == 'n' else [1 if value else 0]
    return prefix + v
def contains(f, operand): return [3] + f + operand
def isIn(f, operands, many=False):
    count = 255 if many else len(operands)
    if many: assert len(operands) == 255 % 12
    return [4] + f + [count] + sum(operands, [])
OPS = ["==", "!=", "<", "<=", ">", ">="]
def cmp(f, op, operand): return [7] + f + [OPS.index(op)] + operand
def AND(a, b): return [200] + a + b
def OR(a, b): return [201] + a + b
def NOT(a): return [202] + a
def ALL(*items): return [203, len(items)] + sum(items, [])
def ANY(*items): return [204, len(items)] + sum(items, [])
def byDate(asc): return [0 if asc else 0x80]
def by(f, asc): return [1 if asc else 0x81] + f

seeds = {
 "attrs-keys-by-date": case([
     batch([note(title="é", attrs=[("é", "milk"), ("new\nline", "\\u0041")]), note(title="e\u0301", attrs=[("e\u0301", "Milk")]),
            note(title="MILK", rank=0.5)], True),
     batch([note(tree=obj(("a.b", tstr("a")), ("é", obj(("\\u0041", tnum(2.5)))))), note(attrs=[("\\u0041", "a")], tree=tnull)], False)],
     ALL(NOT(isNull(attrs("é"))), hasPrefix(title, "")), sorts=[byDate(True), by(attrs("new\nline"), False)], page=2),
 "isin-many-by-date": case([
     batch([note(rank=0.5), note(rank=-1), note(rank=1.5), note(rank=2)], True), batch([note(rank=0.25)], False)],
     isIn(rank, [opnd('n', 0.5), opnd('n', 1.5), opnd('n', 0.25)], many=True), sorts=[byDate(False)], limit=3, page=1),
 "nul-refused": case([
     batch([note(title="a\0b"), note(title="a")], True), batch([note(tags=["\0", "a"])], False)],
     cmp(title, "==", opnd('s', "\0")), page=2),
 "tree-deep-path": case([
     batch([note(tree=obj(("a", obj(("é", obj(("$[0]", obj(("", obj(("K", tstr("milk")))))))))))),
            note(tree=obj(("a", obj(("e\u0301", obj(("$[0]", obj(("", obj(("\u212A", tstr("Milk")))))))))))),
            note(tree=obj(("a", tnum(1))))], True)],
     OR(cmp(tree("a", "é", "$[0]", "", "K"), "==", opnd('s', "milk", True)), cmp(tree("a"), ">", opnd('n', 0, True))),
     sorts=[by(tree("a", "é", "$[0]", "", "K"), False), byDate(True)], page=2),
 "containstext-attrs": case([
     batch([note(attrs=[("%_", "MILK"), ("quo\"te", "%_")]), note(attrs=[("%_", "milk"), ("back\\slash", "%")]),
            note(attrs=[("%", "mi")])], False)],
     AND(containsText(attrs("%_"), "Milk"), NOT(containsText(attrs("quo\"te"), "%"))), sorts=[by(attrs("%_"), True)], page=1),
 "tags-contains": case([
     batch([note(tags=["a", "é", "\u0001"], title="tab\t"), note(tags=["e\u0301"]), note(tags=[])], True),
     batch([note(tags=["🎉", "𝄞", "\u2028"])], False)],
     ANY(contains(tags, opnd('s', "é")), contains(tags, opnd('s', "𝄞")), cmp(title, "<", opnd('s', "tab\t"))),
     sorts=[by(title, True), byDate(False)], page=3),
 "tree-any-kinds": case([
     batch([note(tree=obj(("a", tnum(1)))), note(tree=obj(("a", tstr("10")))), note(tree=obj(("a", tbool(True)))),
            note(tree=obj(("a", tnull))), note(tree=obj(("a", arr(tnum(1), tstr("a")))))], True)],
     NOT(isIn(tree("a"), [opnd('n', 1, True), opnd('s', "a", True), opnd('b', True, True)])),
     sorts=[by(tree("a"), True)], limit=4, page=2),
 "raw-utf8": case([
     batch([note(title=raw(b"\xc3\xa9\xff\x00z"), attrs=[("a", "b")]), note(title=raw("\u00e9z".encode()))], True)],
     cmp(title, ">=", [200] + raw("\u00e9".encode())), sorts=[by(title, False)], page=1),
}
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    open(os.path.join(out, name + ".bin"), "wb").write(data)
    print(name, len(data))

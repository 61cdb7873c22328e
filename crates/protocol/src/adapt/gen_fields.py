"""Regenerates raft_fields.rs / controller_fields.rs from kafka-protocol's message sources.

Usage (from this directory):
  python3 gen_fields.py "fetch fetch_snapshot vote begin_quorum_epoch end_quorum_epoch describe_quorum" > body.rs
and prepend the module doc comment kept at the top of each table file. Reads the
`/// Supported API versions: a-b` doc comment above every field of every struct in
~/.cargo/registry/src/*/kafka-protocol-<version>/src/messages/<api>_{request,response}.rs.
"""
import re, sys, glob, os
base = glob.glob(os.path.expanduser('~/.cargo/registry/src/*/kafka-protocol-0.18.0/src/messages'))[0]
def parse(fname):
    src = open(os.path.join(base, fname)).read()
    out = []
    for m in re.finditer(r'/// Valid versions: ([0-9\-]+)\n(?:#\[[^\n]*\]\n)*pub struct (\w+) \{(.*?)\n\}', src, re.S):
        vv, name, body = m.groups()
        fields = []
        for fm in re.finditer(r'((?:\s*///[^\n]*\n)*)\s*pub (\w+): ([^\n]+),\n', body):
            doc, fname_, fty = fm.groups()
            rng = re.search(r'Supported API versions: ([^\n]+)', doc)
            fields.append((fname_, fty.strip(), rng.group(1).strip() if rng else None))
        out.append((name, vv, fields))
    return out
def rng(r):
    if r is None: return None
    if '-' in r:
        a,b = r.split('-'); return f"{a}..={b}"
    return f"{r}..={r}"
mods = sys.argv[1].split()
print("// Generated from the `Supported API versions` doc comments of kafka-protocol 0.18.0's")
print("// message structs (one entry per field, `unknown_tagged_fields` excepted); regenerate when")
print("// the crate is upgraded. `=> nested` / `=> each` / `=> each_opt` mark struct-typed fields")
print("// (single, `Vec`, `Option<Vec>`) whose own fields are adapted recursively.")
print()
print("use kafka_protocol::messages::*;")
for m in mods:
  for side in ['request', 'response']:
    stem = f"{m}_{side}"
    structs = parse(stem + '.rs')
    names = {s[0] for s in structs}
    for name, vv, fields in structs:
        print()
        print(f"versioned_fields!({stem}::{name} {{")
        for fn_, ft, r in fields:
            if fn_ == 'unknown_tagged_fields': continue
            kind = ''
            mm = re.fullmatch(r'Vec<(\w+)>', ft); mo = re.fullmatch(r'Option<Vec<(\w+)>>', ft)
            if ft in names: kind = ' => nested'
            elif mm and mm.group(1) in names: kind = ' => each'
            elif mo and mo.group(1) in names: kind = ' => each_opt'
            print(f"    {fn_}: {rng(r)}{kind},")
        print("});")

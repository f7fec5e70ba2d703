#!/usr/bin/env python3
"""A copy of Debian's SoftEther 5.01 vpnserver that can answer SSTP (shared/docs/machine-notes.md).

Debian's binary (SoftEtherVPN 8181039) looks the SSTP container up through a NULL pointer in
ProtoHandleConnection (Proto.c:513); upstream fixed it in 5611156c (5.02). The 65 bytes at
0x3a00f are that loop, rewritten to walk proto->Containers and return the one whose Name matches,
as the fix does. Only the known binary is patched: its SHA-256 and the old bytes are checked first.
Usage: patch-sstp.py SRC DST   (exit 3: not the known binary, nothing written)
"""
import hashlib, sys

KNOWN = "487e51a73f152c9042837975044edd6d11cef4f29eaff2162512f2b897054212"
OFFSET = 0x3A00F
OLD = bytes.fromhex("488b470831db4889c24885c07528eb3190488b521089d84889ee488b04c2488b38e89b1b130085c07417498b570883c3014885d2740b3b5a0872d6660f1f440000")
NEW = bytes.fromhex("4531ed498b57084885d27435443b6a08732f488b52104e8b24ea498b3c244889eee89b1b13004183c50185c075d54c89e0eb679090909090909090909090909090")

src, dst = sys.argv[1], sys.argv[2]
data = bytearray(open(src, "rb").read())
if hashlib.sha256(data).hexdigest() != KNOWN or data[OFFSET:OFFSET + len(OLD)] != OLD:
    sys.stderr.write(f"{src} is not the known Debian vpnserver 5.01; SSTP stays off\n")
    sys.exit(3)
assert len(OLD) == len(NEW)
data[OFFSET:OFFSET + len(NEW)] = NEW
open(dst, "wb").write(data)

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A second PKCS#12 importer (Python's `cryptography`, OpenSSL's PKCS12_parse underneath) for the
archives PKCS12Archive writes:

  pkcs12_peer.py FILE PASSWORD   -> prints the key's public point (X9.62, hex), then each
                                    certificate's SHA-256 (hex), leaf first; exits 1 if it cannot read it
"""
import hashlib
import sys

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

data = open(sys.argv[1], "rb").read()
try:
    key, certificate, extra = pkcs12.load_key_and_certificates(data, sys.argv[2].encode())
except ValueError as error:
    print(f"refused: {error}", file=sys.stderr)
    sys.exit(1)
print(key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint).hex())
for cert in [certificate] + list(extra):
    print(hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).hexdigest())

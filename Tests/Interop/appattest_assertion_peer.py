#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""App Attest assertions as iOS 27 writes them, made with cbor2 and cryptography (not Signet's code).

    appattest_assertion_peer.py KEY_PEM APP_ID COUNTER FLAGS CLIENT_DATA_B64 [EXTENSIONS_JSON]

Prints the assertion (standard base64): a CBOR map {signature, authenticatorData}, where
authenticatorData = SHA256(APP_ID) || FLAGS || COUNTER (big-endian) [|| CBOR extension map], and the
signature is DER ECDSA P-256 over nonce = SHA256(authenticatorData || SHA256(clientData)), hashed
once more by ECDSA-SHA256, as Apple's devices sign. EXTENSIONS_JSON is an object: a "category"
number is written as apple_validation_category_01 (four little-endian bytes, as Apple's 2026
sample has it; "category_as_int" writes it as a CBOR unsigned instead), "version" as
apple_bundle_version_01 text, and "raw" entries as given.
"""
import base64
import hashlib
import json
import struct
import sys

import cbor2
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec


def main() -> None:
    key_pem, app_id, counter, flags, client_data_b64 = sys.argv[1:6]
    extensions = json.loads(sys.argv[6]) if len(sys.argv) > 6 else None
    with open(key_pem, "rb") as handle:
        key = serialization.load_pem_private_key(handle.read(), password=None)
    auth_data = hashlib.sha256(app_id.encode()).digest() + bytes([int(flags, 0)]) + struct.pack(">I", int(counter))
    if extensions is not None:
        entries = {}
        if "version" in extensions:
            entries["apple_bundle_version_01"] = extensions["version"]
        if "category" in extensions:
            number = int(extensions["category"])
            entries["apple_validation_category_01"] = (
                number if extensions.get("category_as_int") else struct.pack("<I", number)
            )
        entries.update(extensions.get("raw", {}))
        auth_data += cbor2.dumps(entries)
    client_data = base64.b64decode(client_data_b64)
    nonce = hashlib.sha256(auth_data + hashlib.sha256(client_data).digest()).digest()
    signature = key.sign(nonce, ec.ECDSA(hashes.SHA256()))
    print(base64.b64encode(cbor2.dumps({"signature": signature, "authenticatorData": auth_data})).decode())


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An independent peer for the banking seed's JSON envelope, on Python's `cryptography`:

  envelope_peer.py seal SECRET_B64 VERSION PLAINTEXT   -> prints {"version", "iv", "payload", "mac"}
  envelope_peer.py open SECRET_B64 ENVELOPE_JSON       -> prints the plaintext, or exits 1

SECRET_B64: 64 bytes, the AES-256 key then the HMAC-SHA256 key. The MAC covers IV || ciphertext.
"""
import base64
import hashlib
import hmac
import json
import os
import sys

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


def keys(secret_b64):
    secret = base64.b64decode(secret_b64)
    return secret[:32], secret[32:]


def seal(secret_b64, version, plaintext):
    encryption_key, mac_key = keys(secret_b64)
    iv = os.urandom(16)
    padder = padding.PKCS7(128).padder()
    padded = padder.update(plaintext.encode()) + padder.finalize()
    encryptor = Cipher(algorithms.AES(encryption_key), modes.CBC(iv)).encryptor()
    ciphertext = encryptor.update(padded) + encryptor.finalize()
    mac = hmac.new(mac_key, iv + ciphertext, hashlib.sha256).digest()
    print(json.dumps({
        "version": version,
        "iv": base64.b64encode(iv).decode(),
        "payload": base64.b64encode(ciphertext).decode(),
        "mac": base64.b64encode(mac).decode(),
    }))


def open_envelope(secret_b64, envelope):
    encryption_key, mac_key = keys(secret_b64)
    document = json.loads(envelope)
    iv, ciphertext = base64.b64decode(document["iv"]), base64.b64decode(document["payload"])
    if not hmac.compare_digest(hmac.new(mac_key, iv + ciphertext, hashlib.sha256).digest(), base64.b64decode(document["mac"])):
        sys.exit(1)
    decryptor = Cipher(algorithms.AES(encryption_key), modes.CBC(iv)).decryptor()
    unpadder = padding.PKCS7(128).unpadder()
    plaintext = unpadder.update(decryptor.update(ciphertext) + decryptor.finalize()) + unpadder.finalize()
    sys.stdout.write(plaintext.decode())


if __name__ == "__main__":
    if sys.argv[1] == "seal":
        seal(*sys.argv[2:5])
    else:
        open_envelope(*sys.argv[2:4])

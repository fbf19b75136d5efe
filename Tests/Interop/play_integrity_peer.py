#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Play Integrity tokens as Google Play makes them, by an independent JOSE implementation (joserfc):
a compact JWE (A256KW, A256GCM) around a compact JWS (ES256) of the verdict.

  play_integrity_peer.py make DECRYPTION_KEY_B64 SIGNING_KEY.pem VERDICT.json [--jws-alg ALG] [--enc ENC]
      -> prints the token
"""
import base64
import sys

from joserfc import jwe, jws
from joserfc.jwk import ECKey, OctKey


def main():
    assert sys.argv[1] == "make"
    decryption_key = OctKey.import_key(base64.b64decode(sys.argv[2]))
    signing_key = ECKey.import_key(open(sys.argv[3]).read())
    verdict = open(sys.argv[4], "rb").read()
    options = dict(zip(sys.argv[5::2], sys.argv[6::2]))
    inner = jws.serialize_compact({"alg": options.get("--jws-alg", "ES256")}, verdict, signing_key)
    enc = options.get("--enc", "A256GCM")
    token = jwe.encrypt_compact({"alg": "A256KW", "enc": enc}, inner.encode(), decryption_key, algorithms=["A256KW", enc])
    print(token)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An independent JOSE implementation for Signet's trust documents: PyJWT.

  jose_peer.py verify PUBLIC_KEY.pem JWS      -> prints the verified claims as JSON, or exits 1
  jose_peer.py sign PRIVATE_KEY.pem KID CLAIMS.json -> prints a compact JWS (ES256 for P-256, EdDSA for Ed25519)
"""
import json
import sys

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.serialization import load_pem_private_key, load_pem_public_key


def main():
    mode = sys.argv[1]
    if mode == "verify":
        key = load_pem_public_key(open(sys.argv[2], "rb").read())
        algorithm = "EdDSA" if isinstance(key, ed25519.Ed25519PublicKey) else "ES256"
        try:
            claims = jwt.decode(sys.argv[3].strip(), key, algorithms=[algorithm], options={"verify_exp": True})
        except jwt.PyJWTError as error:
            print(f"invalid: {type(error).__name__}: {error}", file=sys.stderr)
            sys.exit(1)
        print(json.dumps(claims))
    else:
        key = load_pem_private_key(open(sys.argv[2], "rb").read(), password=None)
        algorithm = "EdDSA" if isinstance(key, ed25519.Ed25519PrivateKey) else "ES256"
        assert isinstance(key, (ec.EllipticCurvePrivateKey, ed25519.Ed25519PrivateKey))
        claims = json.load(open(sys.argv[4]))
        print(jwt.encode(claims, key, algorithm=algorithm, headers={"kid": sys.argv[3]}))


if __name__ == "__main__":
    main()

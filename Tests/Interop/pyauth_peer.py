#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An independent RFC 9421 peer for Signet's interop tests: pyauth's http-message-signatures.

  pyauth_peer.py sign   ALG KEYFILE KEYID MESSAGE.json   -> prints the signed message as JSON
  pyauth_peer.py verify ALG KEYFILE KEYID MESSAGE.json   -> prints {"ok": true, ...} or {"ok": false, "error": ...}

MESSAGE.json: {"method", "url", "headers": [[name, value], ...], "body_b64"}. KEYFILE is a PEM file,
or for hmac-sha256 a file holding the base64 secret.
"""
import base64
import json
import sys

import requests
from http_message_signatures import HTTPMessageSigner, HTTPMessageVerifier, MappingKeyResolver, algorithms

ALGORITHMS = {
    "hmac-sha256": algorithms.HMAC_SHA256,
    "ecdsa-p256-sha256": algorithms.ECDSA_P256_SHA256,
    "ed25519": algorithms.ED25519,
    "rsa-pss-sha512": algorithms.RSA_PSS_SHA512,
    "rsa-v1_5-sha256": algorithms.RSA_V1_5_SHA256,
}


def load_key(alg, path):
    data = open(path, "rb").read()
    return base64.b64decode(data.strip()) if alg == "hmac-sha256" else data


def prepared(message):
    body = base64.b64decode(message["body_b64"])
    request = requests.Request(message["method"], message["url"], headers=dict(message["headers"]), data=body or None)
    return request.prepare(), body


def main():
    mode, alg, key_path, key_id, message_path = sys.argv[1:6]
    message = json.load(open(message_path))
    key = load_key(alg, key_path)
    request, body = prepared(message)
    if mode == "sign":
        signer = HTTPMessageSigner(
            signature_algorithm=ALGORITHMS[alg], key_resolver=MappingKeyResolver(public_keys={}, private_keys={key_id: key})
        )
        signer.sign(
            request,
            key_id=key_id,
            label="sig1",
            nonce=message.get("nonce", "pyauth-nonce"),
            covered_component_ids=("@method", "@target-uri", "content-type"),
            body=body,
        )
        print(json.dumps({
            "method": request.method,
            "url": request.url,
            "headers": [[name, value] for name, value in request.headers.items()],
            "body_b64": base64.b64encode(body).decode(),
        }))
    else:
        verifier = HTTPMessageVerifier(
            signature_algorithm=ALGORITHMS[alg], key_resolver=MappingKeyResolver(public_keys={key_id: key}, private_keys={})
        )
        try:
            results = verifier.verify(request, body=body, require_components=("@method", "@target-uri"))
        except Exception as error:  # the verdict is the output; any failure is a rejection
            print(json.dumps({"ok": False, "error": f"{type(error).__name__}: {error}"}))
            return
        result = results[0]
        print(json.dumps({
            "ok": True,
            "label": result.label,
            "components": list(result.covered_components.keys()),
            "nonce": result.parameters.get("nonce"),
            "body_verified": result.body is not None,
        }, default=str))


if __name__ == "__main__":
    main()

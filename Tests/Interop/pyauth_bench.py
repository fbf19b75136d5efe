#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""pyauth's http-message-signatures verifying the request `signet bench` verifies: a POST with a
1 KiB JSON body, Content-Digest and a nonce, one thread. Prints `ALG verifies/s` per algorithm."""
import base64
import sys
import time

import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from http_message_signatures import HTTPMessageSigner, HTTPMessageVerifier, MappingKeyResolver, algorithms

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
BODY = ("{" + ",".join(f'"field{i}":"value-{i}"' for i in range(40)) + "}").encode()[:1024]


def keys(alg):
    if alg == "hmac-sha256":
        secret = b"k" * 32
        return algorithms.HMAC_SHA256, secret, secret
    private = ec.generate_private_key(ec.SECP256R1()) if alg == "ecdsa-p256-sha256" else ed25519.Ed25519PrivateKey.generate()
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    public = private.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return (algorithms.ECDSA_P256_SHA256 if alg == "ecdsa-p256-sha256" else algorithms.ED25519), pem, public


for alg in ("hmac-sha256", "ecdsa-p256-sha256", "ed25519"):
    algorithm, private, public = keys(alg)
    request = requests.Request("POST", "https://api.example.com/v1/scores?game=42", headers={"Content-Type": "application/json"}, data=BODY).prepare()
    HTTPMessageSigner(signature_algorithm=algorithm, key_resolver=MappingKeyResolver(public_keys={}, private_keys={"bench": private})).sign(
        request, key_id="bench", nonce="n", covered_component_ids=("@method", "@target-uri", "content-type"), body=BODY)
    verifier = HTTPMessageVerifier(signature_algorithm=algorithm, key_resolver=MappingKeyResolver(public_keys={"bench": public}, private_keys={}))
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < SECONDS:
        verifier.verify(request, body=BODY)
        count += 1
    print(f"{alg} {count / (time.perf_counter() - start):.0f}")

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A Web Bot Auth request signed by pyauth's http-message-signatures (not Signet's code).

    web_bot_auth_peer.py KEY_PEM AGENT_URL TAG URL

Prints the signed GET as JSON ({"method", "url", "headers": [[name, value]...], "keyid"}): its
Signature-Agent a dictionary naming AGENT_URL for label sig1, the signature covering @method,
@target-uri and that member ("signature-agent";key="sig1"), with created, expires an hour later, a
nonce, TAG, and the key's RFC 7638 thumbprint as keyid (computed here, from Python's cryptography).
"""
import base64
import datetime
import hashlib
import json
import secrets
import sys

import requests
from cryptography.hazmat.primitives import serialization
from http_message_signatures import HTTPMessageSigner, MappingKeyResolver, algorithms


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def main() -> None:
    key_path, agent, tag, url = sys.argv[1:5]
    pem = open(key_path, "rb").read()
    public = serialization.load_pem_private_key(pem, password=None).public_key()
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    canonical = json.dumps({"crv": "Ed25519", "kty": "OKP", "x": b64url(raw)}, separators=(",", ":"), sort_keys=True)
    key_id = b64url(hashlib.sha256(canonical.encode()).digest())
    request = requests.Request("GET", url, headers={"Signature-Agent": f'sig1="{agent}"'}).prepare()
    now = datetime.datetime.now(datetime.timezone.utc)
    signer = HTTPMessageSigner(signature_algorithm=algorithms.ED25519, key_resolver=MappingKeyResolver(public_keys={}, private_keys={key_id: pem}))
    signer.sign(
        request,
        key_id=key_id,
        label="sig1",
        tag=tag,
        created=now,
        expires=now + datetime.timedelta(hours=1),
        nonce=secrets.token_urlsafe(16),
        covered_component_ids=("@method", "@target-uri", '"signature-agent";key="sig1"'),
    )
    print(json.dumps({
        "method": request.method,
        "url": request.url,
        "headers": [[name, value] for name, value in request.headers.items()],
        "keyid": key_id,
    }))


if __name__ == "__main__":
    main()

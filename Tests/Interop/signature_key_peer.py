#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Requests whose key travels in Signature-Key (draft-hardt-httpbis-signature-key-08), signed by pyauth's
http-message-signatures, with the key written by Python's cryptography (not Signet's code).

    signature_key_peer.py hwk ALG KEY_PEM JOSE_ALG MESSAGE.json   -> the signed message as JSON
    signature_key_peer.py jwt ALG KEY_PEM JWT MESSAGE.json        -> the signed message as JSON
    signature_key_peer.py agent ALG KEY_PEM ORIGIN,TAG MESSAGE.json -> the signed message as JSON

The agent form is Web Bot Auth (draft-meunier-web-bot-auth-architecture, draft-ietf-webbotauth-
httpsig-protocol-01): no key in the request, `Signature-Agent: sig1="ORIGIN"` naming the agent's key
directory, covered as its dictionary member (`"signature-agent";key="sig1"`), with `tag` (Visa's
`agent-browser-auth`, `agent-payer-auth`, or `web-bot-auth`) and a one-hour `expires`.

ALG is the RFC 9421 name (ed25519, ecdsa-p256-sha256, rsa-pss-sha512); JOSE_ALG the key's alg in the
hwk member (Ed25519, ES256, PS512). The signature covers @method, @target-uri and signature-key, its
keyid is the key's RFC 7638 thumbprint. MESSAGE.json: {"method", "url", "headers": [[name, value]...],
"body_b64", "nonce"}.
"""
import base64
import datetime
import hashlib
import json
import sys

import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from http_message_signatures import HTTPMessageSigner, MappingKeyResolver, algorithms

ALGORITHMS = {
    "ecdsa-p256-sha256": algorithms.ECDSA_P256_SHA256,
    "ed25519": algorithms.ED25519,
    "rsa-pss-sha512": algorithms.RSA_PSS_SHA512,
}


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def public_jwk(private_key) -> dict:
    public = private_key.public_key()
    if isinstance(public, ed25519.Ed25519PublicKey):
        raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return {"kty": "OKP", "crv": "Ed25519", "x": b64url(raw)}
    if isinstance(public, ec.EllipticCurvePublicKey):
        numbers = public.public_numbers()
        return {"kty": "EC", "crv": "P-256", "x": b64url(numbers.x.to_bytes(32, "big")), "y": b64url(numbers.y.to_bytes(32, "big"))}
    if isinstance(public, rsa.RSAPublicKey):
        numbers = public.public_numbers()
        n = numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")
        e = numbers.e.to_bytes((numbers.e.bit_length() + 7) // 8, "big")
        return {"kty": "RSA", "n": b64url(n), "e": b64url(e)}
    raise SystemExit("unsupported key")


def thumbprint(jwk: dict) -> str:
    required = {"OKP": ("crv", "kty", "x"), "EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n")}[jwk["kty"]]
    canonical = json.dumps({name: jwk[name] for name in required}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode()).digest())


def main() -> None:
    scheme, alg, key_path, extra, message_path = sys.argv[1:6]
    with open(key_path, "rb") as handle:
        pem = handle.read()
    private_key = serialization.load_pem_private_key(pem, password=None)
    jwk = public_jwk(private_key)
    message = json.load(open(message_path))
    body = base64.b64decode(message["body_b64"])
    headers = dict(message["headers"])
    tag = None
    expires = None
    if scheme == "agent":
        origin, tag = extra.rsplit(",", 1)
        headers["Signature-Agent"] = f'sig1="{origin}"'
        covered = ("@method", "@target-uri", '"signature-agent";key="sig1"')
        expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
    else:
        if scheme == "hwk":
            members = ";".join(f'{name}="{value}"' for name, value in jwk.items())
            headers["Signature-Key"] = f'sig1=hwk;{members};alg="{extra}"'
        else:
            headers["Signature-Key"] = f'sig1=jwt;jwt="{extra}"'
        covered = ("@method", "@target-uri", "signature-key")
    request = requests.Request(message["method"], message["url"], headers=headers, data=body or None).prepare()
    key_id = thumbprint(jwk)
    signer = HTTPMessageSigner(signature_algorithm=ALGORITHMS[alg], key_resolver=MappingKeyResolver(public_keys={}, private_keys={key_id: pem}))
    signer.sign(
        request,
        key_id=key_id,
        label="sig1",
        nonce=message.get("nonce", "pyauth-nonce"),
        tag=tag,
        expires=expires,
        covered_component_ids=covered,
        body=body,
    )
    print(json.dumps({
        "method": request.method,
        "url": request.url,
        "headers": [[name, value] for name, value in request.headers.items()],
        "body_b64": base64.b64encode(body).decode(),
        "keyid": key_id,
    }))


if __name__ == "__main__":
    main()

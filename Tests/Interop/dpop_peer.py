#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""DPoP (RFC 9449) clients and a verifier Signet did not write.

  dpop_peer.py client URL TOKEN JWK_FILE COUNT [FIXED_JTI] [IAT_OFFSET]
      requests-oauth2client's DPoPToken as a `requests` auth handler: its own proofs (jti, iat,
      htu without the query, ath) and its own retry when the server answers `use_dpop_nonce`.
      Sends COUNT GETs to URL, each on the answer of the one before; FIXED_JTI makes every proof
      carry that jti, IAT_OFFSET moves iat by that many seconds. Prints one JSON object: each
      final answer's status and reason, and the DPoP-Nonce values the client was handed.
  dpop_peer.py joserfc METHOD URL TOKEN JWK_FILE [NONCE]
      a proof written with joserfc's JWS (typ dpop+jwt, the public JWK in the header), sent with
      python-requests as `Authorization: DPoP TOKEN`. Prints {"status", "reason", "nonce"}.
  dpop_peer.py validate PROOF METHOD URL TOKEN
      requests-oauth2client's validate_dpop_proof on a proof Signet made; prints its claims.
"""
import base64
import hashlib
import json
import sys
import time
import uuid

import jwskate
import requests
from joserfc import jws
from joserfc.jwk import JWKRegistry
from requests_oauth2client import DPoPKey, DPoPToken
from requests_oauth2client.dpop import MissingDPoPNonce, validate_dpop_proof


def load_jwk(path):
    with open(path) as file:
        return json.load(file)


def alg_of(jwk):
    return "EdDSA" if jwk.get("kty") == "OKP" else "ES256"


def answer(response):
    try:
        reason = response.json().get("reason")
    except ValueError:
        reason = None
    return {"status": response.status_code, "reason": reason, "nonce": response.headers.get("DPoP-Nonce")}


def client(url, token, jwk_file, count, fixed_jti=None, iat_offset=0):
    jwk = load_jwk(jwk_file)
    key = DPoPKey(
        private_key=jwskate.Jwk(jwk),
        alg=alg_of(jwk),
        jti_generator=(lambda: fixed_jti) if fixed_jti else (lambda: str(uuid.uuid4())),
        iat_generator=lambda: int(time.time()) + iat_offset,
    )
    auth = DPoPToken(token, _dpop_key=key)
    answers, nonces = [], []
    with requests.Session() as session:
        for _ in range(count):
            try:
                response = session.get(url, auth=auth)
            except MissingDPoPNonce as error:
                response = error.response
            answers.append(answer(response))
            if key.rs_nonce and key.rs_nonce not in nonces:
                nonces.append(key.rs_nonce)
    print(json.dumps({"answers": answers, "nonces": nonces, "jkt": key.dpop_jkt}))


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def with_joserfc(method, url, token, jwk_file, nonce=None):
    private = load_jwk(jwk_file)
    key = JWKRegistry.import_key(private)
    public = {name: value for name, value in private.items() if name not in ("d", "p", "q", "dp", "dq", "qi")}
    claims = {
        "jti": str(uuid.uuid4()),
        "htm": method,
        "htu": url.split("?")[0].split("#")[0],
        "iat": int(time.time()),
        "ath": b64url(hashlib.sha256(token.encode()).digest()),
    }
    if nonce:
        claims["nonce"] = nonce
    header = {"typ": "dpop+jwt", "alg": alg_of(private), "jwk": public}
    proof = jws.serialize_compact(header, json.dumps(claims).encode(), key, algorithms=[alg_of(private)])
    response = requests.request(method, url, headers={"Authorization": f"DPoP {token}", "DPoP": proof})
    print(json.dumps(answer(response)))


def validate(proof, method, url, token):
    ath = b64url(hashlib.sha256(token.encode()).digest())
    checked = validate_dpop_proof(proof, htm=method, htu=url, ath=ath, algs=["ES256", "EdDSA"])
    print(json.dumps({"claims": checked.claims, "jkt": checked.headers["jwk"] and jwskate.Jwk(checked.headers["jwk"]).thumbprint()}))


if __name__ == "__main__":
    command, arguments = sys.argv[1], sys.argv[2:]
    if command == "client":
        url, token, jwk_file, count = arguments[:4]
        fixed = arguments[4] if len(arguments) > 4 and arguments[4] else None
        offset = int(arguments[5]) if len(arguments) > 5 else 0
        client(url, token, jwk_file, int(count), fixed, offset)
    elif command == "joserfc":
        with_joserfc(*arguments)
    elif command == "validate":
        validate(*arguments)
    else:
        sys.exit(f"unknown command {command}")

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""OAuth 2.0 Attestation-Based Client Authentication (draft-ietf-oauth-attestation-based-client-auth-11)
with implementations Signet did not write.

  client_attestation_peer.py verify ATTESTATION JWKS_URL ISSUER CLIENT_ID
      PyJWT checks a Client Attestation JWT the gateway issued, as an authorization server would:
      the key from the gateway's JWKS by kid (PyJWKClient), ES256, the issuer, exp, and the draft's
      typ. Prints {"header", "claims"}.
  client_attestation_peer.py client URL ATTESTATION JWK_FILE AUDIENCE COUNT [FIXED_JTI] [CHALLENGE_URL] [IAT_OFFSET]
      COUNT GETs to URL with python-requests, each with a PoP written with joserfc's JWS (typ
      oauth-client-attestation-pop+jwt, aud, jti, iat, and the latest challenge: first from
      CHALLENGE_URL when given, then from each answer's OAuth-Client-Attestation-Challenge).
      FIXED_JTI makes every PoP carry that jti; IAT_OFFSET moves iat. Prints {"answers": [{status,
      reason, error}], "challenges": n}.
  client_attestation_peer.py combined URL ATTESTATION JWK_FILE COUNT
      DPoP combined mode (draft -11 §5.2): COUNT GETs to URL, each with the attestation and, instead
      of a PoP, a DPoP proof (RFC 9449) written with joserfc by the attested key, its nonce the
      latest DPoP-Nonce (-11 takes no attestation challenge in a DPoP proof). Prints
      {"answers": [...], "nonces": n, "challenges": n}, each answer with its WWW-Authenticate.
"""
import json
import sys
import time
import uuid

import jwt
import requests
from joserfc import jws
from joserfc.jwk import JWKRegistry


def verify(attestation, jwks_url, issuer, client_id):
    header = jwt.get_unverified_header(attestation)
    if header.get("typ") != "oauth-client-attestation+jwt":
        raise SystemExit("typ is %r" % header.get("typ"))
    key = jwt.PyJWKClient(jwks_url).get_signing_key_from_jwt(attestation)
    claims = jwt.decode(
        attestation,
        key.key,
        algorithms=["ES256"],
        issuer=issuer,
        options={"require": ["exp", "sub", "cnf", "iss"], "verify_aud": False},
    )
    if claims["sub"] != client_id:
        raise SystemExit("sub is %r" % claims["sub"])
    print(json.dumps({"header": header, "claims": claims}))


def outcome(answer):
    """An answer's status, and a refusal's reason code and OAuth error."""
    body = answer.json() if answer.headers.get("Content-Type", "").startswith("application/problem+json") else {}
    return {"status": answer.status_code, "reason": body.get("reason"), "error": body.get("error")}


def client(url, attestation, jwk_file, audience, count, fixed_jti="", challenge_url="", iat_offset=0):
    with open(jwk_file) as file:
        private = json.load(file)
    key = JWKRegistry.import_key(private)
    alg = "EdDSA" if private.get("kty") == "OKP" else "ES256"
    challenge = None
    seen = 0
    if challenge_url:
        challenge = requests.post(challenge_url, timeout=10).json()["attestation_challenge"]
        seen += 1
    answers = []
    for _ in range(count):
        claims = {"aud": audience, "jti": fixed_jti or str(uuid.uuid4()), "iat": int(time.time()) + iat_offset}
        if challenge:
            claims["challenge"] = challenge
        pop = jws.serialize_compact(
            {"typ": "oauth-client-attestation-pop+jwt", "alg": alg},
            json.dumps(claims).encode(),
            key,
            algorithms=[alg],
        )
        answer = requests.get(
            url,
            headers={"OAuth-Client-Attestation": attestation, "OAuth-Client-Attestation-PoP": pop},
            timeout=10,
        )
        answers.append(outcome(answer))
        if answer.headers.get("OAuth-Client-Attestation-Challenge"):
            challenge = answer.headers["OAuth-Client-Attestation-Challenge"]
            seen += 1
    print(json.dumps({"answers": answers, "challenges": seen}))


def combined(url, attestation, jwk_file, count):
    with open(jwk_file) as file:
        private = json.load(file)
    key = JWKRegistry.import_key(private)
    alg = "EdDSA" if private.get("kty") == "OKP" else "ES256"
    public = {name: value for name, value in private.items() if name in ("kty", "crv", "x", "y")}
    nonce = None
    nonces = 0
    challenges = 0
    answers = []
    for _ in range(count):
        claims = {"jti": str(uuid.uuid4()), "htm": "GET", "htu": url.split("?")[0], "iat": int(time.time())}
        if nonce:
            claims["nonce"] = nonce
        proof = jws.serialize_compact({"typ": "dpop+jwt", "alg": alg, "jwk": public}, json.dumps(claims).encode(), key, algorithms=[alg])
        answer = requests.get(url, headers={"OAuth-Client-Attestation": attestation, "DPoP": proof}, timeout=10)
        result = outcome(answer)
        result["wwwAuthenticate"] = answer.headers.get("WWW-Authenticate")
        answers.append(result)
        if answer.headers.get("DPoP-Nonce"):
            nonce = answer.headers["DPoP-Nonce"]
            nonces += 1
        if answer.headers.get("OAuth-Client-Attestation-Challenge"):
            challenges += 1
    print(json.dumps({"answers": answers, "nonces": nonces, "challenges": challenges}))


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "verify":
        verify(*args)
    elif command == "client":
        url, attestation, jwk_file, audience, count = args[:5]
        rest = args[5:] + [""] * (3 - len(args[5:]))
        client(url, attestation, jwk_file, audience, int(count), rest[0], rest[1], int(rest[2] or 0))
    elif command == "combined":
        combined(args[0], args[1], args[2], int(args[3]))
    else:
        raise SystemExit("unknown command " + command)

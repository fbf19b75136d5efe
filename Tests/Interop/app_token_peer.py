#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""PyJWT on both sides of Signet's tokens.

  app_token_peer.py verify JWKS_URL ISSUER AUDIENCE TOKEN
      -> fetches the gateway's JWKS over HTTP (PyJWKClient), checks the token as a backend would
         (ES256, issuer, audience, exp), prints its header and claims as JSON, or exits 1.
  app_token_peer.py firebase MAX_AGE
      -> a Firebase App Check stand-in on loopback; prints its port, then serves:
         GET /v1/jwks (RSA keys, Cache-Control: max-age=MAX_AGE), GET /fetches (how many JWKS
         fetches), POST /mint {"claims": {...}, "alg"?, "typ"?, "kid"?} -> an RS256 token,
         POST /rotate -> a new key replaces the old one in the JWKS.
"""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm


def verify(jwks_url, issuer, audience, token):
    client = jwt.PyJWKClient(jwks_url)
    try:
        key = client.get_signing_key_from_jwt(token)
        claims = jwt.decode(token, key.key, algorithms=["ES256"], issuer=issuer, audience=audience,
                            options={"require": ["exp", "iat", "iss", "aud", "sub", "jti"]})
    except jwt.PyJWTError as error:
        print(f"invalid: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps({"header": jwt.get_unverified_header(token), "claims": claims}))


class Firebase:
    def __init__(self, max_age):
        self.max_age = max_age
        self.lock = threading.Lock()
        self.fetches = 0
        self.generation = 0
        self.rotate()

    def rotate(self):
        with self.lock:
            self.generation += 1
            self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            self.kid = f"firebase-key-{self.generation}"

    def jwks(self):
        with self.lock:
            self.fetches += 1
            jwk = json.loads(RSAAlgorithm.to_jwk(self.key.public_key()))
            jwk.update({"kid": self.kid, "alg": "RS256", "use": "sig"})
            return {"keys": [jwk]}

    def mint(self, request):
        # PyJWT leaves typ out of the header when it is given as None.
        headers = {"typ": request.get("typ", "JWT"), "kid": request.get("kid", self.kid)}
        return jwt.encode(request["claims"], self.key, algorithm=request.get("alg", "RS256"), headers=headers)


def serve(max_age):
    firebase = Firebase(max_age)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, status, body, content_type="application/json", extra=None):
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/v1/jwks":
                self.answer(200, json.dumps(firebase.jwks()), extra={"Cache-Control": f"public, max-age={firebase.max_age}"})
            elif self.path == "/fetches":
                self.answer(200, str(firebase.fetches), "text/plain")
            else:
                self.answer(404, "{}")

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path == "/mint":
                self.answer(200, firebase.mint(body), "text/plain")
            elif self.path == "/rotate":
                firebase.rotate()
                self.answer(200, "{}")
            else:
                self.answer(404, "{}")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    if sys.argv[1] == "verify":
        verify(*sys.argv[2:6])
    else:
        serve(int(sys.argv[2]))

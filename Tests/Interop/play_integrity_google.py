#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A stand-in for Google's side of standard Play Integrity tokens, checking what the gateway sends
with PyJWT as Google's OAuth server would: the JWT-bearer grant (RFC 7523) with an RS256 assertion
from the service account, then decodeIntegrityToken with the access token it issued.

  play_integrity_google.py serve SERVICE_ACCOUNT_PUBLIC.pem CLIENT_EMAIL PACKAGE
      prints its port; POST /verdicts {"token": verdict, ...} registers what tokens decode to;
      POST /revoke-access revokes the access tokens issued; GET /stats says how many access tokens
      and decodes it served.
"""
import json
import secrets
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt

SCOPE = "https://www.googleapis.com/auth/playintegrity"


def serve(public_key_file, email, package):
    public_key = open(public_key_file).read()
    state = {"verdicts": {}, "access": set(), "tokens": 0, "decodes": 0, "refused": []}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/stats":
                with lock:
                    self.answer(200, {"tokens": state["tokens"], "decodes": state["decodes"], "refused": state["refused"]})
            else:
                self.answer(404, {})

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            port = self.server.server_address[1]
            if self.path == "/token":
                form = urllib.parse.parse_qs(raw.decode())
                if form.get("grant_type") != ["urn:ietf:params:oauth:grant-type:jwt-bearer"]:
                    return self.answer(400, {"error": "unsupported_grant_type"})
                try:
                    claims = jwt.decode(
                        form["assertion"][0], public_key, algorithms=["RS256"],
                        audience=f"http://127.0.0.1:{port}/token", issuer=email,
                        options={"require": ["exp", "iat", "iss", "aud"]},
                    )
                except Exception as error:  # noqa: BLE001 - any refusal is the client's fault
                    with lock:
                        state["refused"].append(f"{type(error).__name__}: {error}")
                    return self.answer(400, {"error": "invalid_grant"})
                if claims.get("scope") != SCOPE or claims["exp"] - claims["iat"] > 3600:
                    return self.answer(400, {"error": "invalid_scope"})
                access = secrets.token_urlsafe(24)
                with lock:
                    state["access"].add(access)
                    state["tokens"] += 1
                return self.answer(200, {"access_token": access, "expires_in": 3599, "token_type": "Bearer"})
            if self.path == "/revoke-access":
                # Google revoking the access tokens it issued: the next decode answers 401.
                with lock:
                    state["access"].clear()
                return self.answer(200, {})
            if self.path == "/verdicts":
                with lock:
                    state["verdicts"].update(json.loads(raw))
                return self.answer(200, {})
            if self.path == f"/v1/{package}:decodeIntegrityToken":
                bearer = self.headers.get("Authorization", "")
                with lock:
                    known = bearer.startswith("Bearer ") and bearer[7:] in state["access"]
                if not known:
                    return self.answer(401, {"error": {"code": 401, "status": "UNAUTHENTICATED"}})
                token = json.loads(raw).get("integrity_token")
                with lock:
                    state["decodes"] += 1
                    verdict = state["verdicts"].get(token)
                if verdict is None:
                    return self.answer(400, {"error": {"code": 400, "status": "INVALID_ARGUMENT"}})
                return self.answer(200, {"tokenPayloadExternal": verdict})
            self.answer(404, {})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    serve(sys.argv[2], sys.argv[3], sys.argv[4])

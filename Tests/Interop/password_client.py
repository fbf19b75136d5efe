"""python-requests logging in to a Signet password route, as an app's Python client would.

    password_client.py URL --user U --password P --auth digest|basic --cacert CA.pem
                       [--requests N] [--pause SECONDS] [--method GET|POST] [--data TEXT]

Sends N requests in one session (the Digest nonce is reused with a growing nc, so a pause longer
than the gateway's nonce lifetime makes the next answer stale and requests retries by itself) and
prints one JSON line per request: {"status", "user", "authorization", "trust", "reason", "history"}.
"""
import argparse
import json
import time

import requests
from requests.auth import HTTPBasicAuth, HTTPDigestAuth


def _reason(response):
    try:
        return response.json().get("reason")
    except ValueError:
        return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--auth", choices=["digest", "basic"], required=True)
    parser.add_argument("--cacert", required=True)
    parser.add_argument("--requests", type=int, default=1)
    parser.add_argument("--pause", type=float, default=0)
    parser.add_argument("--method", default="GET")
    parser.add_argument("--data", default=None)
    args = parser.parse_args()

    auth = HTTPDigestAuth(args.user, args.password) if args.auth == "digest" else HTTPBasicAuth(args.user, args.password)
    session = requests.Session()
    session.auth = auth
    session.verify = args.cacert
    for index in range(args.requests):
        if index and args.pause:
            time.sleep(args.pause)
        response = session.request(args.method, args.url, data=args.data, timeout=20, verify=args.cacert)
        line = {"status": response.status_code}
        try:
            body = response.json()
        except ValueError:
            body = {}
        headers = body.get("headers", {}) if isinstance(body, dict) else {}
        line["user"] = headers.get("signet-user")
        line["trust"] = headers.get("signet-trust-level")
        line["authorization"] = headers.get("authorization")
        line["reason"] = body.get("reason") if isinstance(body, dict) else None
        # What came before the final answer (a 401 challenge, or a stale nonce answered again).
        line["history"] = [_reason(earlier) for earlier in response.history]
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An independent Oblivious HTTP peer for Signet's interop tests: HPKE from pyhpke, AES-GCM and
HMAC from Python, Binary HTTP (RFC 9292, known-length) and the OHTTP framing (RFC 9458) written
here from the RFCs, request signing from pyauth's http-message-signatures.

  ohttp_peer.py client GATEWAY_URL PATH KEYID SECRET_B64 JSON_BODY
      fetches GATEWAY_URL/signet/v1/ohttp-keys, signs POST GATEWAY_URL+PATH with HMAC-SHA256 under
      KEYID, encapsulates it, posts it to /signet/v1/ohttp, opens the answer; prints
      {"status", "fields", "body"} of the inner response (or {"outer_status", "outer_body"}).
  ohttp_peer.py keygen DIR
      writes DIR/key.bin (X25519 private key) and DIR/config.bin (key configuration, key id 3).
  ohttp_peer.py open DIR REQUEST_FILE RESPONSE_FILE
      decapsulates REQUEST_FILE with DIR/key.bin, prints the Binary HTTP request as JSON, and
      writes an encapsulated 200 response echoing the request's content to RESPONSE_FILE.
  ohttp_peer.py serve DIR
      an Oblivious HTTP gateway on 127.0.0.1 (the port printed first): GET /signet/v1/ohttp-keys
      serves DIR/config.bin, POST /signet/v1/ohttp answers each request with a 200 whose JSON body
      is the decapsulated request.
"""
import base64
import hashlib
import hmac
import json
import os
import struct
import sys

import requests
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
from http_message_signatures import HTTPMessageSigner, MappingKeyResolver, algorithms
from pyhpke import AEADId, CipherSuite, KDFId, KEMId

KEY_ID = 3
AEADS = {1: (AEADId.AES128_GCM, 16), 2: (AEADId.AES256_GCM, 32), 3: (AEADId.CHACHA20_POLY1305, 32)}


# QUIC variable-length integers and Binary HTTP, known-length (RFC 9292 §3).
def varint(value):
    if value < 1 << 6:
        return struct.pack(">B", value)
    if value < 1 << 14:
        return struct.pack(">H", value | 0x4000)
    if value < 1 << 30:
        return struct.pack(">I", value | 0x80000000)
    return struct.pack(">Q", value | 0xC000000000000000)


def read_varint(data, offset):
    first = data[offset]
    length = 1 << (first >> 6)
    value = first & 0x3F
    for index in range(1, length):
        value = (value << 8) | data[offset + index]
    return value, offset + length


def prefixed(data):
    return varint(len(data)) + data


def field_section(fields):
    return prefixed(b"".join(prefixed(name.lower().encode()) + prefixed(value.encode()) for name, value in fields))


def encode_request(method, scheme, authority, path, fields, content):
    control = b"".join(prefixed(part.encode()) for part in (method, scheme, authority, path))
    return varint(0) + control + field_section(fields) + prefixed(content) + prefixed(b"")


def read_prefixed(data, offset):
    length, offset = read_varint(data, offset)
    return data[offset:offset + length], offset + length


def read_fields(data, offset):
    section, offset = read_prefixed(data, offset)
    fields, inner = [], 0
    while inner < len(section):
        name, inner = read_prefixed(section, inner)
        value, inner = read_prefixed(section, inner)
        fields.append([name.decode(), value.decode()])
    return fields, offset


def decode_message(data):
    framing, offset = read_varint(data, 0)
    message = {}
    if framing == 0:
        for part in ("method", "scheme", "authority", "path"):
            value, offset = read_prefixed(data, offset)
            message[part] = value.decode()
    elif framing == 1:
        status, offset = read_varint(data, offset)
        while 100 <= status < 200:
            _, offset = read_fields(data, offset)
            status, offset = read_varint(data, offset)
        message["status"] = status
    else:
        raise ValueError(f"framing {framing} is not known-length")
    message["fields"], message["body"] = [], ""
    if offset < len(data):
        message["fields"], offset = read_fields(data, offset)
    if offset < len(data):
        content, offset = read_prefixed(data, offset)
        message["body"] = content.decode()
    return message


# RFC 9458 §3 key configurations, §4.3 requests, §4.4 responses.
def suite(kem_id, aead_id):
    kem = {0x20: KEMId.DHKEM_X25519_HKDF_SHA256, 0x10: KEMId.DHKEM_P256_HKDF_SHA256}[kem_id]
    return CipherSuite.new(kem, KDFId.HKDF_SHA256, AEADS[aead_id][0])


def parse_configs(data):
    configs, offset = [], 0
    while offset < len(data):
        (length,) = struct.unpack_from(">H", data, offset)
        config = data[offset + 2:offset + 2 + length]
        offset += 2 + length
        key_id, kem_id = config[0], struct.unpack_from(">H", config, 1)[0]
        npk = {0x20: 32, 0x10: 65}[kem_id]
        public_key = config[3:3 + npk]
        (algs_length,) = struct.unpack_from(">H", config, 3 + npk)
        algs = [struct.unpack_from(">HH", config, 5 + npk + i) for i in range(0, algs_length, 4)]
        configs.append((key_id, kem_id, public_key, algs))
    return configs


def expand(prk, label, length):
    return hmac.new(prk, label + b"\x01", hashlib.sha256).digest()[:length]


def response_keys(secret, enc, response_nonce, aead_id):
    prk = hmac.new(enc + response_nonce, secret, hashlib.sha256).digest()
    return expand(prk, b"key", AEADS[aead_id][1]), expand(prk, b"nonce", 12)


def aead(aead_id, key):
    return ChaCha20Poly1305(key) if aead_id == 3 else AESGCM(key)


def header(key_id, kem_id, kdf_id, aead_id):
    return struct.pack(">BHHH", key_id, kem_id, kdf_id, aead_id)


def client(gateway, path, key_id, secret_b64, body):
    configs = parse_configs(requests.get(gateway + "/signet/v1/ohttp-keys", timeout=10).content)
    config_id, kem_id, public_key, algs = configs[0]
    kdf_id, aead_id = algs[0]
    hpke = suite(kem_id, aead_id)

    request = requests.Request("POST", gateway + path, headers={"Content-Type": "application/json"}, data=body.encode())
    prepared = request.prepare()
    signer = HTTPMessageSigner(
        signature_algorithm=algorithms.HMAC_SHA256,
        key_resolver=MappingKeyResolver(public_keys={}, private_keys={key_id: base64.b64decode(secret_b64)}),
    )
    signer.sign(
        prepared, key_id=key_id, label="sig1", nonce=base64.urlsafe_b64encode(os.urandom(16)).decode(),
        covered_component_ids=("@method", "@target-uri", "content-type"), body=body.encode(),
    )
    authority = gateway.split("://", 1)[1]
    fields = [(name, value) for name, value in prepared.headers.items() if name.lower() not in ("content-length", "host")]
    message = encode_request("POST", gateway.split("://")[0], authority, path, fields, body.encode())

    hdr = header(config_id, kem_id, kdf_id, aead_id)
    enc, sender = hpke.create_sender_context(hpke.kem.deserialize_public_key(public_key), info=b"message/bhttp request\x00" + hdr)
    sealed = sender.seal(message)
    answer = requests.post(
        gateway + "/signet/v1/ohttp", data=hdr + enc + sealed, headers={"Content-Type": "message/ohttp-req"}, timeout=10
    )
    if answer.status_code != 200:
        print(json.dumps({"outer_status": answer.status_code, "outer_body": answer.text}))
        return
    nonce_length = max(AEADS[aead_id][1], 12)
    secret = sender.export(b"message/bhttp response", nonce_length)
    response_nonce, ciphertext = answer.content[:nonce_length], answer.content[nonce_length:]
    key, nonce = response_keys(secret, enc, response_nonce, aead_id)
    print(json.dumps(decode_message(aead(aead_id, key).decrypt(nonce, ciphertext, b""))))


def keygen(folder):
    hpke = suite(0x20, 1)
    key_pair = hpke.kem.derive_key_pair(os.urandom(32))
    private = key_pair.private_key.to_private_bytes()
    public = key_pair.public_key.to_public_bytes()
    open(os.path.join(folder, "key.bin"), "wb").write(private)
    algs = b"".join(struct.pack(">HH", 1, aead_id) for aead_id in (1, 2, 3))
    config = struct.pack(">BH", KEY_ID, 0x20) + public + struct.pack(">H", len(algs)) + algs
    open(os.path.join(folder, "config.bin"), "wb").write(config)


def answer_request(folder, data):
    """Decapsulates `data`; returns (request as a dict, encapsulated response for `body`)."""
    key_id, kem_id, kdf_id, aead_id = struct.unpack_from(">BHHH", data, 0)
    assert key_id == KEY_ID and kem_id == 0x20 and kdf_id == 1, "unexpected header"
    hpke = suite(kem_id, aead_id)
    enc, ciphertext = data[7:39], data[39:]
    private = hpke.kem.deserialize_private_key(open(os.path.join(folder, "key.bin"), "rb").read())
    recipient = hpke.create_recipient_context(enc, private, info=b"message/bhttp request\x00" + data[:7])
    request = decode_message(recipient.open(ciphertext))
    nonce_length = max(AEADS[aead_id][1], 12)
    secret = recipient.export(b"message/bhttp response", nonce_length)
    response_nonce = os.urandom(nonce_length)
    key, nonce = response_keys(secret, enc, response_nonce, aead_id)

    def seal(body, content_type):
        response = varint(1) + varint(200) + field_section([("content-type", content_type)]) + prefixed(body)
        return response_nonce + aead(aead_id, key).encrypt(nonce, response, b"")

    return request, seal


def serve(folder):
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def reply(self, status, content_type, body):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path != "/signet/v1/ohttp-keys":
                return self.reply(404, "text/plain", b"not found")
            config = open(os.path.join(folder, "config.bin"), "rb").read()
            self.reply(200, "application/ohttp-keys", struct.pack(">H", len(config)) + config)

        def do_POST(self):
            data = self.rfile.read(int(self.headers["Content-Length"]))
            if self.path != "/signet/v1/ohttp" or self.headers["Content-Type"] != "message/ohttp-req":
                return self.reply(400, "text/plain", b"not an encapsulated request")
            request, seal = answer_request(folder, data)
            self.reply(200, "message/ohttp-res", seal(json.dumps(request).encode(), "application/json"))

    server = HTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


def open_request(folder, request_file, response_file):
    request, seal = answer_request(folder, open(request_file, "rb").read())
    print(json.dumps(request))
    open(response_file, "wb").write(seal(request["body"].encode(), "text/plain"))


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "client":
        client(*sys.argv[2:7])
    elif mode == "keygen":
        keygen(sys.argv[2])
    elif mode == "serve":
        serve(sys.argv[2])
    else:
        open_request(*sys.argv[2:5])

"""Envoy's ext_authz client without Envoy: CheckRequests built with the generated code of Envoy's
own protocol definitions (the xds-protos package) and sent with grpcio, as Envoy's ext_authz filter
sends them (the fields a client sent in `headers`, lower-case, with Envoy's pseudo-fields; the body
in `raw_body` with pack_as_bytes, else in `body`; the downstream's address in `source`).

    ext_authz_peer.py HOST:PORT checks.json [ca.pem [client.pem client.key]]
    ext_authz_peer.py health HOST:PORT SERVICE


checks.json is a list of {method, path, host, headers: [[name, value]], body_b64?, as_text?,
raw_headers?, source?}; prints, for each in order, {code, ok_headers, headers_to_remove,
denied_status, denied_headers, denied_body}.
"""
import base64
import json
import sys

import grpc
from envoy.config.core.v3 import address_pb2, base_pb2
from envoy.service.auth.v3 import attribute_context_pb2, external_auth_pb2, external_auth_pb2_grpc


def check_request(spec):
    http = attribute_context_pb2.AttributeContext.HttpRequest(
        id="1", method=spec["method"], path=spec["path"], host=spec["host"], scheme="https", protocol="HTTP/1.1"
    )
    fields = [(":authority", spec["host"]), (":method", spec["method"]), (":path", spec["path"])]
    fields += [(name.lower(), value) for name, value in spec["headers"]]
    if spec.get("raw_headers"):
        for name, value in fields:
            http.header_map.headers.append(base_pb2.HeaderValue(key=name, raw_value=value.encode()))
    else:
        for name, value in fields:
            http.headers[name] = http.headers[name] + "," + value if name in http.headers else value
    body = base64.b64decode(spec.get("body_b64", ""))
    http.size = len(body) if body else -1
    if body and spec.get("as_text"):
        http.body = body.decode()
    elif body:
        http.raw_body = body
    source = attribute_context_pb2.AttributeContext.Peer(
        address=address_pb2.Address(socket_address=address_pb2.SocketAddress(address=spec.get("source", "203.0.113.9"), port_value=51000))
    )
    request = attribute_context_pb2.AttributeContext.Request(http=http)
    return external_auth_pb2.CheckRequest(attributes=attribute_context_pb2.AttributeContext(source=source, request=request))


def answer(response):
    out = {"code": response.status.code}
    kind = response.WhichOneof("http_response")
    if kind == "ok_response":
        out["ok_headers"] = {h.header.key: h.header.value for h in response.ok_response.headers}
        out["append_actions"] = sorted({h.append_action for h in response.ok_response.headers})
        out["headers_to_remove"] = list(response.ok_response.headers_to_remove)
    elif kind in ("denied_response", "error_response"):
        denied = getattr(response, kind)
        out["denied_status"] = denied.status.code
        out["denied_headers"] = {h.header.key: h.header.value for h in denied.headers}
        out["denied_body"] = denied.body
    return out


def health(target, service):
    """grpc.health.v1.Health/Check as Envoy's gRPC health check calls it, by its wire format
    (HealthCheckRequest: field 1, the service name): prints the status number, or the error code."""
    name = service.encode()
    request = (b"\x0a" + bytes([len(name)]) + name) if name else b""
    check = grpc.insecure_channel(target).unary_unary("/grpc.health.v1.Health/Check")
    try:
        response = check(request, timeout=10)
    except grpc.RpcError as error:
        print(json.dumps({"error": error.code().name}))
        return
    status = response[1] if len(response) >= 2 and response[0] == 0x08 else 0
    print(json.dumps({"status": status}))


def main():
    if sys.argv[1] == "health":
        health(sys.argv[2], sys.argv[3])
        return
    target, path = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3:
        with open(sys.argv[3], "rb") as ca:
            roots = ca.read()
        chain = key = None
        if len(sys.argv) > 5:
            with open(sys.argv[4], "rb") as f:
                chain = f.read()
            with open(sys.argv[5], "rb") as f:
                key = f.read()
        credentials = grpc.ssl_channel_credentials(root_certificates=roots, private_key=key, certificate_chain=chain)
        channel = grpc.secure_channel(target, credentials)
    else:
        channel = grpc.insecure_channel(target)
    stub = external_auth_pb2_grpc.AuthorizationStub(channel)
    with open(path) as f:
        checks = json.load(f)
    print(json.dumps([answer(stub.Check(check_request(spec), timeout=10)) for spec in checks]))


if __name__ == "__main__":
    main()

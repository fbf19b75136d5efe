#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""HTTP/2 clients we did not write, for Signet's HTTP/2 tests: httpx (with its h2 support) for
ordinary requests, and the h2 state machine itself, over Python's ssl, for what a well-behaved
client never sends (the floods of 2023 and oversized header lists).

  http2_peer.py send CA_FILE REQUESTS_JSON
      sends every request of REQUESTS_JSON ([{"method", "url", "headers": [[name, value]...],
      "body_b64"}]) at once through one httpx client with HTTP/2 on (one connection, a stream
      each), each header line as its own field; prints [{"status", "http_version", "reason",
      "body"}] in the same order.
  http2_peer.py settings HOST PORT CA_FILE
      prints the ALPN protocol chosen and the server's SETTINGS as
      {"alpn", "max_concurrent_streams", "max_header_list_size"}.
  http2_peer.py rapid-reset HOST PORT CA_FILE PATH COUNT
      opens COUNT streams, each GET PATH reset by the client at once (CVE-2023-44487), then reads
      until the server ends the connection; prints {"goaway", "error_code", "answered"}.
  http2_peer.py streams HOST PORT CA_FILE PATH COUNT
      opens COUNT streams at once without waiting for SETTINGS to be honoured; prints
      {"refused", "answered", "goaway"}: streams past the server's limit are refused.
  http2_peer.py held HOST PORT CA_FILE PATH COUNT [announced|unannounced] [SECONDS]
      opens COUNT POST streams whose bodies never come (10 bytes announced, or no content-length
      with `unannounced`, none sent), reads for SECONDS (2); prints {"answers": ["STATUS REASON"...]}
      of the answers that came whole meanwhile, in the order they ended.
  http2_peer.py unread HOST PORT CA_FILE PATH FIRST THEN [SECONDS]
      with a receive window of 0, so no answer's body can ever come: opens FIRST GET streams,
      waits (up to 30 s) for their answers' heads, opens THEN more, and reads until SECONDS (3)
      pass in silence; prints {"statuses": [STATUS...]} of the answers' heads in the order they
      came, with {"streams": [[ID, STATUS]...], "resets": [[ID, CODE]...], "goaway": CODE|null}
      to tell, when it goes wrong, which stream ended how.
  http2_peer.py big-headers HOST PORT CA_FILE PATH BYTES
      one GET PATH with a header field of BYTES; prints {"status"} or {"reset", "goaway"}.
"""
import asyncio
import collections
import base64
import json
import socket
import ssl
import sys

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
import httpx


async def send(ca_file, requests_file):
    with open(requests_file) as handle:
        requests = json.load(handle)
    context = ssl.create_default_context(cafile=ca_file)
    async with httpx.AsyncClient(http2=True, verify=context, timeout=30) as client:
        async def one(request):
            response = await client.request(
                request["method"],
                request["url"],
                headers=[(name, value) for name, value in request["headers"]],
                content=base64.b64decode(request.get("body_b64", "")),
            )
            reason = None
            if response.headers.get("content-type", "").startswith("application/problem+json"):
                reason = response.json().get("reason")
            return {"status": response.status_code, "http_version": response.http_version, "reason": reason,
                    "body": response.text[:8192]}

        answers = await asyncio.gather(*(one(request) for request in requests))
    print(json.dumps(answers))


def connect(host, port, ca_file, window=None):
    context = ssl.create_default_context(cafile=ca_file)
    context.set_alpn_protocols(["h2"])
    raw = socket.create_connection((host, int(port)), timeout=10)
    tls = context.wrap_socket(raw, server_hostname="localhost")
    connection = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    if window is not None:
        connection.local_settings = h2.settings.Settings(
            client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: window})
    connection.initiate_connection()
    tls.sendall(connection.data_to_send())
    return tls, connection


def read_events(tls, connection):
    """Events of one read; an empty list once the server has closed."""
    try:
        data = tls.recv(65536)
    except (ConnectionResetError, ssl.SSLError, socket.timeout, OSError):
        return None
    if not data:
        return None
    try:
        events = connection.receive_data(data)
    except h2.exceptions.ProtocolError:
        return None
    pending = connection.data_to_send()
    if pending:
        try:
            tls.sendall(pending)
        except OSError:
            pass
    return events


def lift(settings, code, value):
    """Replaces a setting the server sent, as if it had sent `value`: h2 honours what servers ask."""
    settings._settings[code] = collections.deque([value])


def request_headers(host, port, path, extra=()):
    return [(":method", "GET"), (":scheme", "https"), (":authority", f"localhost:{port}"), (":path", path)] + list(extra)


def settings(host, port, ca_file):
    tls, connection = connect(host, port, ca_file)
    found = {"alpn": tls.selected_alpn_protocol()}
    while "max_concurrent_streams" not in found:
        events = read_events(tls, connection)
        if events is None:
            break
        for event in events:
            if isinstance(event, h2.events.RemoteSettingsChanged):
                changed = event.changed_settings
                found["max_concurrent_streams"] = getattr(
                    changed.get(h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS), "new_value", None)
                found["max_header_list_size"] = getattr(
                    changed.get(h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE), "new_value", None)
    tls.close()
    print(json.dumps(found))


def until_closed(tls, connection, result):
    while True:
        events = read_events(tls, connection)
        if events is None:
            return
        for event in events:
            if isinstance(event, h2.events.ConnectionTerminated):
                result["goaway"] = True
                result["error_code"] = int(event.error_code)
            elif isinstance(event, h2.events.ResponseReceived):
                result["answered"] += 1
            elif isinstance(event, h2.events.StreamReset):
                result["refused"] = result.get("refused", 0) + 1


def rapid_reset(host, port, ca_file, path, count):
    tls, connection = connect(host, port, ca_file)
    # The server's SETTINGS first, so the flood is not a protocol error of another kind.
    read_events(tls, connection)
    result = {"goaway": False, "error_code": None, "answered": 0}
    try:
        for _ in range(int(count)):
            stream = connection.get_next_available_stream_id()
            connection.send_headers(stream, request_headers(host, port, path), end_stream=True)
            connection.reset_stream(stream)
            tls.sendall(connection.data_to_send())
    except (OSError, h2.exceptions.ProtocolError):
        pass  # the server ended the connection mid-flood
    tls.settimeout(10)
    until_closed(tls, connection, result)
    tls.close()
    print(json.dumps(result))


def streams(host, port, ca_file, path, count):
    tls, connection = connect(host, port, ca_file)
    read_events(tls, connection)
    # Ignore the server's limit as an attacker would: h2 itself refuses to, so lift it locally.
    lift(connection.remote_settings, h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS, 1 << 20)
    result = {"goaway": False, "error_code": None, "answered": 0, "refused": 0}
    for _ in range(int(count)):
        stream = connection.get_next_available_stream_id()
        connection.send_headers(stream, request_headers(host, port, path), end_stream=True)
    tls.sendall(connection.data_to_send())
    tls.settimeout(10)
    opened = int(count)
    while result["answered"] + result["refused"] < opened and not result["goaway"]:
        events = read_events(tls, connection)
        if events is None:
            break
        for event in events:
            if isinstance(event, h2.events.ResponseReceived):
                result["answered"] += 1
            elif isinstance(event, h2.events.StreamReset):
                result["refused"] += 1
            elif isinstance(event, h2.events.ConnectionTerminated):
                result["goaway"] = True
                result["error_code"] = int(event.error_code)
    tls.close()
    print(json.dumps(result))


def held(host, port, ca_file, path, count, announce="announced", seconds="2"):
    tls, connection = connect(host, port, ca_file)
    read_events(tls, connection)
    for _ in range(int(count)):
        stream = connection.get_next_available_stream_id()
        length = [("content-length", "10")] if announce == "announced" else []
        headers = request_headers(host, port, path, length)
        headers[0] = (":method", "POST")
        connection.send_headers(stream, headers, end_stream=False)
    tls.sendall(connection.data_to_send())
    tls.settimeout(float(seconds))
    statuses, bodies, ended = {}, {}, []
    closed = False
    while True:
        try:
            data = tls.recv(65536)
        except (socket.timeout, ssl.SSLError, OSError):
            break  # still open when the time was up
        if not data:
            closed = True
            break
        events = connection.receive_data(data)
        tls.sendall(connection.data_to_send())
        for event in events:
            if isinstance(event, h2.events.ResponseReceived):
                statuses[event.stream_id] = int(dict(event.headers)[":status"])
            elif isinstance(event, h2.events.DataReceived):
                bodies[event.stream_id] = bodies.get(event.stream_id, b"") + event.data
                connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                ended.append(event.stream_id)
    tls.close()
    answers = []
    for stream in ended:
        try:
            reason = json.loads(bodies.get(stream, b"{}")).get("reason")
        except ValueError:
            reason = None
        answers.append(f"{statuses.get(stream)} {reason}")
    print(json.dumps({"answers": answers, "closed": closed}))


def unread(host, port, ca_file, path, first, then, seconds="3"):
    tls, connection = connect(host, port, ca_file, window=0)
    read_events(tls, connection)
    statuses, streams, resets, goaway = [], [], [], [None]

    def open_streams(count):
        for _ in range(int(count)):
            connection.send_headers(connection.get_next_available_stream_id(), request_headers(host, port, path), end_stream=True)
        tls.sendall(connection.data_to_send())

    def read_until(done):
        while not done():
            try:
                data = tls.recv(65536)
            except (socket.timeout, ssl.SSLError, OSError):
                return
            if not data:
                return
            for event in connection.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    status = int(dict(event.headers)[":status"])
                    statuses.append(status)
                    streams.append([event.stream_id, status])
                elif isinstance(event, h2.events.StreamReset):
                    resets.append([event.stream_id, int(event.error_code)])
                elif isinstance(event, h2.events.ConnectionTerminated):
                    goaway[0] = int(event.error_code)
            tls.sendall(connection.data_to_send())

    # The first heads may be slow on a loaded machine: the next streams must not race them.
    tls.settimeout(30)
    open_streams(first)
    read_until(lambda: len(statuses) >= int(first))
    tls.settimeout(float(seconds))
    open_streams(then)
    read_until(lambda: False)
    tls.close()
    print(json.dumps({"statuses": statuses, "streams": streams, "resets": resets, "goaway": goaway[0]}))


def big_headers(host, port, ca_file, path, size):
    tls, connection = connect(host, port, ca_file)
    read_events(tls, connection)
    lift(connection.remote_settings, h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE, 1 << 20)
    headers = request_headers(host, port, path, [("x-padding", "a" * int(size))])
    connection.send_headers(1, headers, end_stream=True)
    tls.sendall(connection.data_to_send())
    tls.settimeout(10)
    result = {"status": None, "reset": None, "goaway": None}
    while result["status"] is None and result["reset"] is None and result["goaway"] is None:
        events = read_events(tls, connection)
        if events is None:
            break
        for event in events:
            if isinstance(event, h2.events.ResponseReceived):
                result["status"] = int(dict(event.headers)[":status"])
            elif isinstance(event, h2.events.StreamReset):
                result["reset"] = int(event.error_code)
            elif isinstance(event, h2.events.ConnectionTerminated):
                result["goaway"] = int(event.error_code)
    tls.close()
    print(json.dumps(result))


COMMANDS = {
    "send": lambda *rest: asyncio.run(send(*rest)),
    "settings": settings,
    "rapid-reset": rapid_reset,
    "streams": streams,
    "held": held,
    "unread": unread,
    "big-headers": big_headers,
}


def main(arguments):
    if not arguments or arguments[0] not in COMMANDS:
        raise SystemExit(__doc__)
    COMMANDS[arguments[0]](*arguments[1:])


if __name__ == "__main__":
    main(sys.argv[1:])

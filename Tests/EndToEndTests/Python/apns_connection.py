"""A third-party HTTP/2 client (h2 over the standard library's ssl) against the sandbox's APNs listener.

Run by ProviderConnectionTests with NOTIFY_APNS_PORT, NOTIFY_CA_FILE and NOTIFY_IDLE_SECONDS (the idle time the
test set). Prints one JSON object:
  idle:        one request (no provider token: answered 403), then held idle past the idle time: the GOAWAY seen
               (errorCode, lastStreamId, reason from its JSON debug data) and how soon after it the server closed.
  closeNotify: half-closed with TLS close_notify: seconds until the server closed.
  fin:         half-closed with a bare TCP FIN beneath TLS: seconds until the server closed.
"""

import json
import os
import socket
import ssl
import sys
import time

import h2.config
import h2.connection
import h2.events

HOST = "127.0.0.1"
PORT = int(os.environ["NOTIFY_APNS_PORT"])
CA_FILE = os.environ["NOTIFY_CA_FILE"]
IDLE_SECONDS = float(os.environ["NOTIFY_IDLE_SECONDS"])


def connect():
    context = ssl.create_default_context(cafile=CA_FILE)
    context.set_alpn_protocols(["h2"])
    raw = socket.create_connection((HOST, PORT), timeout=10)
    tls = context.wrap_socket(raw, server_hostname="localhost")
    if tls.selected_alpn_protocol() != "h2":
        raise SystemExit("the APNs listener did not choose h2")
    connection = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True))
    connection.initiate_connection()
    tls.sendall(connection.data_to_send())
    return tls, connection


def read_events(tls, connection, deadline):
    """The events of the next bytes read before `deadline`; None at end of stream (the server closed)."""
    tls.settimeout(max(deadline - time.monotonic(), 0.01))
    try:
        data = tls.recv(65535)
    except (ConnectionResetError, ssl.SSLError):
        return None
    if not data:
        return None
    events = connection.receive_data(data)
    pending = connection.data_to_send()
    if pending:
        try:
            tls.sendall(pending)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            pass
    return events


def idle_connection():
    tls, connection = connect()
    stream_id = connection.get_next_available_stream_id()
    device_path = "/3/device/" + "ab" * 32
    headers = [(":method", "POST"), (":scheme", "https"), (":authority", "localhost"), (":path", device_path),
               ("apns-topic", "com.example.python")]
    connection.send_headers(stream_id, headers)
    connection.send_data(stream_id, b'{"aps":{"alert":"hi"}}', end_stream=True)
    tls.sendall(connection.data_to_send())
    result = {"goAway": False}
    deadline = time.monotonic() + IDLE_SECONDS + 10
    go_away_at = None
    while time.monotonic() < deadline:
        try:
            events = read_events(tls, connection, deadline)
        except socket.timeout:
            break
        if events is None:
            if go_away_at is not None:
                result["closedSecondsAfterGoAway"] = time.monotonic() - go_away_at
            break
        for event in events:
            if isinstance(event, h2.events.ResponseReceived):
                result["requestStatus"] = int(dict(event.headers)[b":status"])
            elif isinstance(event, h2.events.ConnectionTerminated):
                go_away_at = time.monotonic()
                result["goAway"] = True
                result["errorCode"] = int(event.error_code)
                result["lastStreamId"] = event.last_stream_id
                try:
                    result["reason"] = json.loads(event.additional_data or b"{}").get("reason")
                except ValueError:
                    result["reason"] = None
    tls.close()
    return result


def half_closed(close_notify):
    tls, connection = connect()
    # The server's SETTINGS first, so the connection is up at both ends.
    read_events(tls, connection, time.monotonic() + 5)
    started = time.monotonic()
    deadline = started + 5
    if close_notify:
        # close_notify; unwrap() returns once the server answered with its own, then its FIN follows.
        tls.settimeout(5)
        try:
            plain = tls.unwrap()
        except (OSError, ssl.SSLError):
            plain = socket.socket(fileno=os.dup(tls.fileno()))
        return {"closedAfterSeconds": seconds_until_eof(plain, started, deadline)}
    # A bare FIN beneath TLS, as a client that shuts its socket's write side does.
    socket.socket(fileno=os.dup(tls.fileno())).shutdown(socket.SHUT_WR)
    while time.monotonic() < deadline:
        try:
            if read_events(tls, connection, deadline) is None:
                return {"closedAfterSeconds": time.monotonic() - started}
        except socket.timeout:
            break
    return {"closedAfterSeconds": None}


def seconds_until_eof(plain, started, deadline):
    """Reads the plain socket until the server's FIN; None if it did not come before `deadline`."""
    while time.monotonic() < deadline:
        plain.settimeout(max(deadline - time.monotonic(), 0.01))
        try:
            if not plain.recv(65535):
                return time.monotonic() - started
        except socket.timeout:
            return None
        except OSError:
            return time.monotonic() - started
    return None


def main():
    results = {"idle": idle_connection(), "closeNotify": half_closed(True), "fin": half_closed(False)}
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())

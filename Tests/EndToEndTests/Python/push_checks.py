"""Checks what push-dispatch sent with implementations that are not the project's: http_ece (RFC 8188/8291) and PyJWT.

Takes a check as JSON, its one argument, with a request as the provider sandbox captured it (`GET /captures/{id}`:
method, path, headers as [{"name", "value"}], body base64):
  {"check": "webpush", "request": {...}, "privateKey": "<the browser's P-256 private key, raw, base64url>",
   "auth": "<auth secret, base64url>", "vapidPublicKey": "<the app's VAPID key, base64url>", "audience": "<origin>"}
    decrypts the aes128gcm body with the subscription's keys and verifies the VAPID JWT of `Authorization: vapid t=, k=`
    (ES256 by the app's key, aud the push service's origin, exp within 24 hours, sub present);
    writes {"plaintext": <the decrypted JSON>, "claims": {...}, "header": {...}}.
  {"check": "fcm-assertion", "requests": [{...}, ...], "serviceAccount": <the key file>}
    among OAuth token requests (other accounts' too), takes those whose assertion names the account as its issuer and
    verifies each one's JWT-bearer assertion (RS256 by the account's key, kid its key id, iss its email, aud its
    token_uri, scope FCM's, iat now, exp at most an hour after iat);
    writes {"requests": <how many were the account's>, "claims": {...}, "header": {...}, "grantType": "..."} (the last one's).
Exits 1 with the reason on stderr when a check fails.
"""
import base64
import json
import sys
import time
import urllib.parse

import http_ece
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

FCM_SCOPES = {"https://www.googleapis.com/auth/firebase.messaging", "https://www.googleapis.com/auth/cloud-platform"}


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def header(request, name):
    values = [h["value"] for h in request["headers"] if h["name"].lower() == name]
    if len(values) != 1:
        raise SystemExit(f"expected one {name} header, found {len(values)}")
    return values[0]


def webpush(check):
    request = check["request"]
    if header(request, "content-encoding") != "aes128gcm":
        raise SystemExit("Content-Encoding is not aes128gcm")
    body = base64.b64decode(request["body"])
    private_key = ec.derive_private_key(int.from_bytes(b64url(check["privateKey"]), "big"), ec.SECP256R1())
    plaintext = http_ece.decrypt(body, private_key=private_key, auth_secret=b64url(check["auth"]), version="aes128gcm")

    scheme, _, parameters = header(request, "authorization").partition(" ")
    if scheme.lower() != "vapid":
        raise SystemExit(f"the Authorization scheme is {scheme!r}, not vapid")
    fields = dict(part.strip().split("=", 1) for part in parameters.split(","))
    if fields.get("k") != check["vapidPublicKey"]:
        raise SystemExit(f"k is {fields.get('k')!r}, not the app's VAPID public key")
    public_key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64url(check["vapidPublicKey"]))
    claims = jwt.decode(
        fields["t"], key=public_key, algorithms=["ES256"], audience=check["audience"],
        options={"require": ["aud", "exp", "sub"]})
    if not claims["exp"] <= time.time() + 24 * 3600 + 60:
        raise SystemExit(f"exp is more than 24 hours ahead: {claims['exp']}")
    return {"plaintext": json.loads(plaintext), "claims": claims, "header": jwt.get_unverified_header(fields["t"])}


def fcm_assertion(check):
    account = check["serviceAccount"]
    public_key = serialization.load_pem_private_key(account["private_key"].encode(), password=None).public_key()
    result = {"requests": 0}
    for request in check["requests"]:
        if not header(request, "content-type").startswith("application/x-www-form-urlencoded"):
            raise SystemExit("a token request is not a form")
        form = urllib.parse.parse_qs(base64.b64decode(request["body"]).decode(), strict_parsing=True)
        assertion = form["assertion"][0]
        if jwt.decode(assertion, options={"verify_signature": False}).get("iss") != account["client_email"]:
            continue  # another app's service account
        claims = jwt.decode(
            assertion, key=public_key, algorithms=["RS256"], audience=account["token_uri"], issuer=account["client_email"],
            options={"require": ["iss", "aud", "iat", "exp", "scope"]})
        token_header = jwt.get_unverified_header(assertion)
        if token_header.get("kid") != account["private_key_id"]:
            raise SystemExit(f"kid is {token_header.get('kid')!r}, not the key's id")
        if not FCM_SCOPES & set(claims["scope"].split()):
            raise SystemExit(f"scope {claims['scope']!r} does not allow sending messages")
        if abs(claims["iat"] - time.time()) > 120 or not 0 < claims["exp"] - claims["iat"] <= 3600:
            raise SystemExit(f"iat {claims['iat']} and exp {claims['exp']} are not now and within an hour of it")
        result = {"requests": result["requests"] + 1, "claims": claims, "header": token_header, "grantType": form["grant_type"][0]}
    if result["requests"] == 0:
        raise SystemExit(f"no token request of {account['client_email']} among {len(check['requests'])}")
    return result


def main():
    check = json.loads(sys.argv[1])
    checks = {"webpush": webpush, "fcm-assertion": fcm_assertion}
    try:
        result = checks[check["check"]](check)
    except jwt.InvalidTokenError as error:
        raise SystemExit(f"PyJWT refused the token: {error}")
    except http_ece.ECEException as error:
        raise SystemExit(f"http_ece could not decrypt the body: {error}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()

"""An identity provider's side of the identity provider tests, with PyJWT and cryptography (a third party's JWT code,
not the service's jwt-kit): makes signing keys, publishes their public halves as key sets (JWKS), and signs ID tokens.

Takes a plan as JSON, its one argument:
  {"keys": {"<kid>": "RS256" | "ES256", ...},
   "keySets": {"<name>": ["<kid>", ...], ...},
   "tokens": {"<name>": {"key": "<kid>", "kid": "<kid in the header, default the key's>",
                         "claims": {...}, "expiresIn": seconds, "notBeforeIn": seconds}, ...}}
and writes {"keySets": {"<name>": JWKS}, "tokens": {"<name>": "<JWT>"}} on stdout. A token's exp and nbf are set from
expiresIn and notBeforeIn (seconds from now, negative in the past; nbf only when given), iat to now.
"""
import json
import sys
import time

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa


def main():
    plan = json.loads(sys.argv[1])
    keys = {}
    for kid, algorithm in plan["keys"].items():
        if algorithm == "RS256":
            keys[kid] = (algorithm, rsa.generate_private_key(public_exponent=65537, key_size=2048))
        elif algorithm == "ES256":
            keys[kid] = (algorithm, ec.generate_private_key(ec.SECP256R1()))
        else:
            raise SystemExit(f"unknown algorithm {algorithm}")

    def public_jwk(kid):
        algorithm, private_key = keys[kid]
        codec = jwt.algorithms.RSAAlgorithm if algorithm == "RS256" else jwt.algorithms.ECAlgorithm
        jwk = codec.to_jwk(private_key.public_key(), as_dict=True)
        jwk.update({"kid": kid, "use": "sig", "alg": algorithm})
        return jwk

    key_sets = {name: {"keys": [public_jwk(kid) for kid in kids]} for name, kids in plan.get("keySets", {}).items()}
    now = int(time.time())
    tokens = {}
    for name, spec in plan.get("tokens", {}).items():
        algorithm, private_key = keys[spec["key"]]
        claims = dict(spec.get("claims", {}))
        claims["iat"] = now
        claims["exp"] = now + spec.get("expiresIn", 3600)
        if "notBeforeIn" in spec:
            claims["nbf"] = now + spec["notBeforeIn"]
        tokens[name] = jwt.encode(claims, private_key, algorithm=algorithm, headers={"kid": spec.get("kid", spec["key"])})
    json.dump({"keySets": key_sets, "tokens": tokens}, sys.stdout)


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# A Python environment with the independent verifiers used by the interop tests:
# pyca/cryptography (ML-DSA, ECDSA, RSA-PSS, Ed25519), hsslms (RFC 8554), dilithium-py,
# selenium for the WebDriver end-to-end tests, and CycloneDX's own library to validate
# CBOM documents against the official JSON schema. Pinned in scripts/requirements-test.txt.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/target/pyenv"
req="$root/scripts/requirements-test.txt"
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$req" | cut -c1-64)"
if [[ -x "$venv/bin/python3" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "python: verifiers present ($venv)"
  exit 0
fi
echo "python: creating $venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
echo "$want" >"$stamp"

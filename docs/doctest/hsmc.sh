source "$REPO/docs/doctest/_ca.sh"
hsmc keys gen -a ec-p256 -l release_ec --persistent >/dev/null
hsmc keys cert label:release_ec --csr --subject "CN=Release signing" --out release_ec.csr >/dev/null
issue release_ec.csr release_ec.pem
hsmc objects import release_ec.pem >/dev/null
hsmc keys gen -a ed25519 -l release_ed25519 --persistent >/dev/null
hsmc keys gen -a p256 -l fw_sign --persistent >/dev/null 2>&1 || hsmc keys gen -a ec-p256 -l fw_sign --persistent >/dev/null
echo "tree 0" > payload

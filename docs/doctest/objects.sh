source "$REPO/docs/doctest/_ca.sh"
hsmc keys gen -a ec-p256 -l release_ec --persistent >/dev/null
hsmc keys cert label:release_ec --csr --subject "CN=Release signing" --out pre.csr >/dev/null
issue pre.csr release.pem
openssl crl2pkcs7 -nocrl -certfile root.pem -out bundle.p7b
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 2>/dev/null | openssl pkey -pubout -out partner-wrap.pub.pem
echo "notes" > notes.txt

# The target's public key, made by OpenSSL; token B is a SoftHSM2 token labelled b.
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out transport.key 2>/dev/null
openssl pkey -in transport.key -pubout -out transport.pub.pem
hsmc keys gen -a aes-256 -l other_tools_key --persistent --extractable >/dev/null
hsmc keys gen -a aes-256 -l data_key --persistent --extractable >/dev/null
source "$REPO/docs/doctest/_softhsm.sh" b
HSMC_DATA_DIR=~/machine-b hsmc --module /usr/lib/softhsm/libsofthsm2.so --token b keys gen -a rsa-2048 -l b_wrapping --persistent >/dev/null

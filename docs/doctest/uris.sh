# SoftHSM2's token "release" (osslsigncode's libp11 cannot read the built-in partition).
source "$REPO/docs/doctest/_softhsm.sh" release
export HSMC_MODULE=/usr/lib/softhsm/libsofthsm2.so HSMC_TOKEN=release
hsmc keys gen -a ec-p256 -l release_ec --persistent >/dev/null
cp dist/app.tar.gz app.tar.gz
hsmc keys cert label:release_ec --self-signed --subject "CN=Release signing" --out CERT.pem >/dev/null

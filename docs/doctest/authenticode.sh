# SoftHSM2's token "release" (the built-in partition holds ML-DSA, which libp11 cannot read).
source "$REPO/docs/doctest/_softhsm.sh" release
export HSMC_MODULE=/usr/lib/softhsm/libsofthsm2.so HSMC_TOKEN=release PIN=12345678
printf '%s' "$PIN" > PIN-FILE
cp /usr/lib/systemd/boot/efi/systemd-bootx64.efi app.exe
